"""The producer matrix: tensors as users bring them (subclasses, read-only and misaligned buffers, memmaps,
PyTorch views autograd tracks, inference tensors, JAX and TensorFlow arrays, ml_dtypes bfloat16, raw
capsules), each through every parameter kind (typed read-only, read-only without conversion, writable),
on both backends and both import paths (the `m` fixture); and returns of every dtype, in every layout,
to every framework. Process-level lifecycles (deletion, exit, other threads) are in test_lifecycle.py."""
import array
import struct

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
tf = pytest.importorskip("tensorflow")
ml_dtypes = pytest.importorskip("ml_dtypes")

from returns_matrix import DTYPES, LAYOUTS, expected_2x3  # noqa: E402

INCOMPATIBLE = "incompatible function arguments"
VALUES = [1.0, 2.0, 3.0]


class MyTensor(torch.Tensor):
    """A user's torch.Tensor subclass (as torchvision's tv_tensors are)."""


class MyArray(np.ndarray):
    """A user's numpy.ndarray subclass."""


class Case:
    """One producer's float32 tensor holding VALUES (logically). `writable`: a writable parameter must
    accept it, and a write must be visible through `readback()`; `direct`: accepted without a conversion
    (`.noconvert()` parameters)."""

    def __init__(self, obj, readback=None, writable=True, direct=True, keep=()):
        self.obj, self.readback, self.writable, self.direct, self.keep = obj, readback, writable, direct, keep


def _np(writeable=True):
    a = np.array(VALUES, np.float32)
    a.flags.writeable = writeable
    return Case(a, lambda: a.tolist(), writable=writeable)


def _np_misaligned():
    buf = bytearray(4 * 3 + 1)
    a = np.frombuffer(buf, np.float32, count=3, offset=1)
    a[:] = VALUES
    assert a.ctypes.data % 4 != 0
    # A typed pointer is never misaligned: read-only parameters get an aligned copy, writable ones refuse.
    return Case(a, lambda: a.tolist(), writable=False, direct=False)


def _np_memmap(tmp_path):
    mm = np.memmap(tmp_path / "mm.bin", dtype=np.float32, mode="w+", shape=(3,))
    mm[:] = VALUES
    return Case(mm, lambda: mm.tolist())


def _torch_neg(subclass):
    base = torch.tensor([-v for v in VALUES])
    t = torch._neg_view(base)  # logically VALUES; memory holds their negation
    if subclass:
        t = t.as_subclass(MyTensor)
    assert t.is_neg()
    # Memory does not hold the values: read-only parameters get them materialized, writable ones refuse.
    return Case(t, lambda: t.tolist(), writable=False, direct=False)


def _torch_conj_real_view(subclass):
    c = torch.tensor([v - 1j for v in VALUES], dtype=torch.complex64).conj()  # logically v + 1j
    if subclass:
        c = c.as_subclass(MyTensor)
    return Case(c.real, lambda: c.real.tolist(), writable=True)


def _torch_inference():
    with torch.inference_mode():
        t = torch.tensor(VALUES)
    return Case(t, lambda: t.tolist(), writable=False)  # only inside torch.inference_mode()


def _capsule():
    a = np.array(VALUES, np.float32)
    return Case(a.__dlpack__(max_version=(1, 0)), lambda: a.tolist(), keep=(a,))


def _read_only_memoryview():
    return Case(memoryview(struct.pack("3f", *VALUES)).cast("f"), None, writable=False)


def _array_array():
    a = array.array("f", VALUES)
    return Case(a, lambda: list(a))


def _memoryview():
    b = bytearray(struct.pack("3f", *VALUES))
    return Case(memoryview(b).cast("f"), lambda: list(struct.unpack("3f", b)))


PRODUCERS = {
    "numpy": lambda tmp: _np(),
    "numpy read-only": lambda tmp: _np(writeable=False),
    "numpy subclass": lambda tmp: (lambda a: Case(a, lambda: a.tolist()))(np.array(VALUES, np.float32).view(MyArray)),
    "numpy matrix": lambda tmp: (lambda a: Case(a, lambda: np.asarray(a).ravel().tolist()))(np.matrix([VALUES], np.float32)),
    "numpy memmap": _np_memmap,
    "numpy strided": lambda tmp: (lambda b: Case(b[::2], lambda: b[::2].tolist()))(np.array([1, 0, 2, 0, 3], np.float32)),
    "numpy misaligned": lambda tmp: _np_misaligned(),
    "numpy big-endian": lambda tmp: (lambda a: Case(a, lambda: a.tolist(), writable=False, direct=False))(np.array(VALUES, ">f4")),
    "torch": lambda tmp: (lambda t: Case(t, lambda: t.tolist()))(torch.tensor(VALUES)),
    "torch subclass": lambda tmp: (lambda t: Case(t, lambda: t.tolist()))(torch.tensor(VALUES).as_subclass(MyTensor)),
    "torch negative view": lambda tmp: _torch_neg(False),
    "torch negative view subclass": lambda tmp: _torch_neg(True),
    "torch real of conjugate": lambda tmp: _torch_conj_real_view(False),
    "torch real of conjugate subclass": lambda tmp: _torch_conj_real_view(True),
    "torch parameter": lambda tmp: (lambda p: Case(p, lambda: p.tolist(), writable=False))(torch.nn.Parameter(torch.tensor(VALUES))),
    "torch requires_grad subclass": lambda tmp: (lambda t: Case(t, lambda: t.tolist(), writable=False))(
        torch.tensor(VALUES, requires_grad=True).as_subclass(MyTensor)),
    "torch non-leaf": lambda tmp: (lambda t: Case(t, lambda: t.tolist(), writable=False))(
        torch.tensor(VALUES, requires_grad=True) * 1),
    "torch detached": lambda tmp: (lambda t: Case(t, lambda: t.tolist()))(torch.tensor(VALUES, requires_grad=True).detach()),
    "torch inference": lambda tmp: _torch_inference(),
    "torch misaligned": lambda tmp: (lambda b: Case(torch.frombuffer(b, dtype=torch.float32, offset=1, count=3), None,
                                                    writable=False, direct=False))(bytearray(b"\0" + struct.pack("3f", *VALUES))),
    "jax": lambda tmp: Case(jnp.array(VALUES, jnp.float32), None, writable=False),
    "tensorflow": lambda tmp: Case(tf.constant(VALUES, tf.float32), None, writable=False),
    "capsule": lambda tmp: _capsule(),
    "read-only memoryview": lambda tmp: _read_only_memoryview(),
    "array.array": lambda tmp: _array_array(),
    "memoryview": lambda tmp: _memoryview(),
}
try:  # producers the test extras install (pyproject.toml); absent elsewhere
    import pyarrow as pa
    PRODUCERS["pyarrow array"] = lambda tmp: Case(pa.array(VALUES, pa.float32()), None, writable=False)
    PRODUCERS["pyarrow slice"] = lambda tmp: Case(pa.array([0.0, *VALUES], pa.float32()).slice(1), None, writable=False)
    # No __dlpack__: read through numpy.asarray, so only for read-only parameters that allow conversion.
    PRODUCERS["pyarrow chunked"] = lambda tmp: Case(pa.chunked_array([pa.array(VALUES[:1], pa.float32()),
                                                                      pa.array(VALUES[1:], pa.float32())]),
                                                    None, writable=False, direct=False)
except ImportError:
    pass
try:
    import array_api_strict as xp
    PRODUCERS["array_api_strict"] = lambda tmp: (lambda b: Case(b, lambda: b._array.tolist()))(
        xp.asarray(VALUES, dtype=xp.float32))
except ImportError:
    pass


def _framework_less(m):
    t = m.producers.framework_less_copy(np.array(VALUES, np.float32))
    assert type(t).__name__ == "Tensor"
    return Case(t, lambda: memoryview(t).tolist())


MODULE_PRODUCERS = {  # producers made by the extension under test
    "dltensor.Tensor": _framework_less,
}


@pytest.fixture(params=sorted(PRODUCERS) + sorted(MODULE_PRODUCERS))
def case(request, tmp_path, m):
    if request.param in MODULE_PRODUCERS:
        return MODULE_PRODUCERS[request.param](m)
    return PRODUCERS[request.param](tmp_path)


def test_read_only_parameter_reads_the_logical_values(m, case):
    assert m.producers.read_f32(case.obj) == VALUES


def test_read_only_parameter_without_conversion_binds_only_direct_sources(m, case):
    if case.direct:
        assert m.producers.read_f32_noconvert(case.obj) == VALUES
    else:
        with pytest.raises(TypeError, match=INCOMPATIBLE):
            m.producers.read_f32_noconvert(case.obj)


def test_writable_parameter_writes_reach_the_caller_or_the_call_fails(m, case):
    if case.writable:
        m.producers.write_f32(case.obj, 7.0)
        assert case.readback() == [7.0] * 3
    else:
        with pytest.raises(TypeError, match=INCOMPATIBLE):
            m.producers.write_f32(case.obj, 7.0)
        if case.readback:
            assert case.readback() == VALUES  # nothing was written


def test_typed_pointers_are_aligned(m):
    buf = bytearray(8 * 4 + 1)
    a = np.frombuffer(buf, np.float64, count=4, offset=1)
    a[:] = [1, 2, 3, 4]
    assert m.producers.f64_address(a) % 8 == 0
    b = np.frombuffer(bytearray(8 * 4 + 1), np.float64, count=4, offset=1)
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_f64_address(b)  # writable never receives a misaligned pointer (nor a copy)


# ---- PyTorch's in-place rules ----------------------------------------------------------------------

def test_writes_bump_the_autograd_version_counter(m):
    a = torch.ones(3)
    w = torch.ones(3, requires_grad=True)
    loss = (w * a).sum()  # autograd saved `a`
    version = a._version
    m.producers.write_f32(a, 2.0)
    assert a._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_writes_through_a_view_bump_the_base_version(m):
    base = torch.ones(6)
    version = base._version
    m.producers.write_f32(base[::2], 5.0)
    assert base._version > version and base.tolist() == [5, 1, 5, 1, 5, 1]


def test_leaf_requiring_grad_is_writable_under_no_grad_only(m):
    p = torch.nn.Parameter(torch.zeros(3))
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_f32(p, 1.0)
    with torch.no_grad():
        m.producers.write_f32(p, 1.0)
    assert p.tolist() == [1, 1, 1] and p.requires_grad


def test_inference_tensor_is_writable_inside_inference_mode_only(m):
    with torch.inference_mode():
        t = torch.zeros(3)
        m.producers.write_f32(t, 4.0)
    assert t.tolist() == [4, 4, 4]
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_f32(t, 5.0)


def test_subclass_negative_view_reads_the_sign_and_refuses_writes(m):
    t = torch._neg_view(torch.tensor([1.0, 2.0, 3.0])).as_subclass(MyTensor)
    assert m.producers.read_f32(t) == [-1.0, -2.0, -3.0]
    assert m.common.values(t) == [-1.0, -2.0, -3.0]
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_f32(t, 1.0)


def test_subclass_overriding_queries_cannot_hide_a_negative_view(m):
    class Liar(torch.Tensor):
        def is_neg(self):
            return False

    t = torch._neg_view(torch.tensor([1.0, 2.0])).as_subclass(Liar)
    assert m.producers.read_f32(t) == [-1.0, -2.0]


def test_subclass_conjugate_view_reads_the_sign(m):
    c = torch.tensor([1 + 2j]).conj().as_subclass(MyTensor)
    assert m.common.values(c) == [1 - 2j]


# ---- bfloat16 from every producer that has it --------------------------------------------------------

BF16 = [1.0, -2.5, 3.0]


@pytest.mark.parametrize("make", [
    lambda: np.array(BF16, ml_dtypes.bfloat16),
    lambda: np.array(BF16, ml_dtypes.bfloat16).view(MyArray),
    lambda: np.asarray(jnp.array(BF16, jnp.bfloat16)),
    lambda: jnp.array(BF16, jnp.bfloat16),
    lambda: torch.tensor(BF16, dtype=torch.bfloat16),
    lambda: tf.constant(BF16, tf.bfloat16),
], ids=["ml_dtypes", "ml_dtypes subclass", "numpy from jax", "jax", "torch", "tensorflow"])
def test_bfloat16_parameters_read_every_producer(m, make):
    assert m.producers.read_bf16(make()) == BF16


def test_bfloat16_numpy_writes_reach_the_array(m):
    a = np.zeros(3, ml_dtypes.bfloat16)
    m.producers.write_bf16(a, 1.5)
    assert a.astype(np.float32).tolist() == [1.5] * 3


# ---- JAX -----------------------------------------------------------------------------------------------

def test_deleted_jax_array_is_refused(m):
    z = jnp.arange(3.0, dtype=jnp.float32)
    z.delete()
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.read_f32(z)


def test_const_jax_float64_return(m):
    out = m.producers.ret_jax_const_f64(3)
    assert isinstance(out, jax.Array) and out.tolist() == [0.5, 1.5, 2.5]


# ---- returns: every dtype, every layout, every framework -------------------------------------------

FRAMEWORKS = ["numpy", "pytorch", "jax", "tensorflow", "none"]  # paddle: tests/paddle_cases.py


def as_lists(fw, out, dtype, m):
    if fw == "pytorch":
        assert isinstance(out, torch.Tensor) and out.dtype == getattr(torch, dtype)
        if dtype != "bool":
            out = out.to(torch.complex128 if dtype.startswith("complex") else torch.float64)
        return out.tolist()
    if fw == "none":
        assert hasattr(out, "__dlpack__") and hasattr(out, "__dlpack_device__")
        flat = m.common.values(out)
        return [flat[:3], flat[3:]]
    if fw == "numpy":
        assert isinstance(out, np.ndarray)
        arr = out
    elif fw == "jax":
        assert isinstance(out, jax.Array)
        arr = np.asarray(out)
    else:
        assert isinstance(out, tf.Tensor)
        arr = out.numpy()
    want = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    assert arr.dtype == want
    if dtype == "bool":
        return arr.tolist()
    return arr.astype(np.complex128 if dtype.startswith("complex") else np.float64).tolist()


# PyTorch aborts the process on negative strides it is handed: those returns run in a subprocess
# (test_lifecycle.py::test_negative_stride_pytorch_returns_do_not_abort), through as_lists below.
RETURNS = [(fw, dtype, layout) for fw in FRAMEWORKS for dtype in DTYPES for layout in LAYOUTS
           if not (fw == "pytorch" and layout == "neg")]


@pytest.mark.parametrize("fw, dtype, layout", RETURNS)
def test_return_has_the_framework_dtype_and_values(backend_module, fw, dtype, layout):
    m = backend_module
    out = getattr(m.producers, "ret_" + fw)(dtype, layout)
    assert as_lists(fw, out, dtype, m) == expected_2x3(dtype, layout)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_numpy_returns_are_the_same_array_through_numpys_c_api_and_the_public_route(backend_module, dtype, layout):
    # With the fast paths on, NumPy returns are made through NumPy's C API (numpy_c_api.h); off, through
    # numpy.asarray / numpy.from_dlpack: the same dtype (scalar type too), shape, strides, flags, values.
    m = backend_module
    try:
        arrays = []
        for fast in (True, False):
            m.common.set_fast_paths(fast)
            arrays.append(m.producers.ret_numpy(dtype, layout))
    finally:
        m.common.set_fast_paths(True)
    fast, public = arrays
    assert fast.dtype == public.dtype
    if dtype != "bfloat16":
        assert fast.dtype.type is np.dtype(dtype).type  # numpy.int64, not numpy.longlong
        assert public.dtype.type is np.dtype(dtype).type
    assert (fast.shape, fast.strides) == (public.shape, public.strides)
    for flag in ("c_contiguous", "f_contiguous", "aligned", "writeable", "owndata"):
        assert getattr(fast.flags, flag) == getattr(public.flags, flag), flag
    assert fast.tobytes() == public.tobytes()


def test_consumer_errors_survive_the_capsule(backend_module):
    # NumPy refuses bfloat16 DLPack: its own error reaches the caller, not a SystemError.
    out = backend_module.producers.ret_none("bfloat16", "C")
    with pytest.raises((BufferError, TypeError, RuntimeError)) as info:
        np.from_dlpack(out)
    assert not isinstance(info.value, SystemError)


def test_subclass_whose_torch_function_lies_about_its_state(m):
    class Lie(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func in (torch.Tensor.is_neg, torch.Tensor.is_conj, torch.Tensor.requires_grad.__get__):
                return False
            return super().__torch_function__(func, types, args, kwargs or {})

    # A plain tensor first, so that its type's checks exist when the subclass's are looked up (they are
    # interned: the subclass must not share them, since it needs its dispatch disabled).
    assert m.common.values(torch.zeros(1)) == [0.0]
    base = torch.tensor([1 + 2j, 3 - 4j])
    x = base.conj().imag.as_subclass(Lie)  # a negative view: logically [-2, 4]
    assert m.common.values(x) == [-2.0, 4.0]
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_f32(x, 1.0)
    assert base.tolist() == [1 + 2j, 3 - 4j]


def test_misaligned_bfloat16_numpy_is_copied_for_read_only_parameters(m):
    buf = np.zeros(7, np.uint8)
    a = buf[1:7].view(ml_dtypes.bfloat16)
    a[:] = BF16
    assert a.ctypes.data % 2 == 1
    assert m.producers.read_bf16(a) == BF16
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_bf16(a, 1.0)


def test_tensorflow_string_tensor_is_refused_not_aborted(m):
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.read_f32(tf.constant(["a", "b"]))


# ---- allocation by shape: Out::empty() for every framework ---------------------------------------------

@pytest.mark.parametrize("fw, check", [
    ("numpy", lambda out: isinstance(out, np.ndarray) and out.dtype == np.float32 and out.flags.c_contiguous),
    ("numpy_f", lambda out: isinstance(out, np.ndarray) and out.flags.f_contiguous),
    ("numpy_bf16", lambda out: isinstance(out, np.ndarray) and out.dtype == ml_dtypes.bfloat16),
    ("pytorch", lambda out: isinstance(out, torch.Tensor) and out.dtype == torch.float64),
    ("jax", lambda out: isinstance(out, jax.Array) and out.dtype == jnp.int32),
    ("tensorflow", lambda out: isinstance(out, tf.Tensor) and out.dtype == tf.float32),
    ("none", lambda out: hasattr(out, "__dlpack__") and not isinstance(out, np.ndarray)),
])
def test_empty_allocates_for_every_framework(backend_module, fw, check):
    out = getattr(backend_module.producers, "empty_" + fw)()
    assert check(out), type(out)
    values = (backend_module.common.values(out) if fw == "none"
              else np.asarray(out).astype(np.float64).ravel().tolist())
    assert values == [0, 1, 2, 3, 4, 5]


def test_empty_of_a_framework_without_an_allocator_takes_numpys_on_the_cpu(backend_module):
    """JAX has no allocator of its own: its CPU tensors are NumPy arrays that it adopts on return
    (registry-inl.h: fallback_allocators), so that empty() needs no PyTorch (a process that never imports it)."""
    import os
    import subprocess
    import sys
    build = os.path.dirname(backend_module.__file__)
    script = (f"import sys; sys.path[:0] = [{build!r}]\n"
              "import jax, numpy\n"
              f"m = __import__({backend_module.__name__!r})\n"
              "out = m.producers.empty_jax()\n"
              "assert isinstance(out, jax.Array) and numpy.asarray(out).ravel().tolist() == [0, 1, 2, 3, 4, 5]\n"
              "assert 'torch' not in sys.modules, 'empty() imported PyTorch'\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_empty_checks_the_annotated_rank(backend_module):
    with pytest.raises(ValueError, match="annotated ndim"):
        backend_module.producers.empty_bad_rank()


# --- a subclass with a __dlpack__ of its own: every route reads what its export gives ----------------------

class DoubledExport(torch.Tensor):
    """A torch.Tensor subclass whose export is twice its values (what torch.from_dlpack reads)."""

    def __dlpack__(self, **kwargs):
        return (self.as_subclass(torch.Tensor) * 2).__dlpack__(**kwargs)


class RefusedExport(torch.Tensor):
    """A torch.Tensor subclass that refuses to export."""

    def __dlpack__(self, **kwargs):
        raise BufferError("this tensor refuses export")


class DoubledArray(np.ndarray):
    """A numpy.ndarray subclass whose export is twice its values."""

    def __dlpack__(self, **kwargs):
        return (np.asarray(self) * 2).__dlpack__(**kwargs)


def test_subclass_with_its_own_dlpack_export_is_read_through_it(m):
    x = torch.ones(3).as_subclass(DoubledExport)
    assert torch.from_dlpack(x).tolist() == [2.0] * 3  # what the public route gives
    assert m.producers.read_f32(x) == [2.0] * 3
    assert m.producers.read_f32_noconvert(x) == [2.0] * 3
    a = np.ones(3, np.float32).view(DoubledArray)
    assert m.producers.read_f32(a) == [2.0] * 3
    assert m.producers.read_f32_noconvert(a) == [2.0] * 3


def test_subclass_refusing_export_binds_to_no_parameter(m):
    x = torch.ones(3).as_subclass(RefusedExport)
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.read_f32_noconvert(x)
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_f32(x, 5.0)
    assert x.as_subclass(torch.Tensor).tolist() == [1.0] * 3


def test_subclass_without_its_own_export_keeps_its_frameworks_route(m):
    x = torch.ones(3).as_subclass(MyTensor)
    m.producers.write_f32(x, 4.0)
    assert x.tolist() == [4.0] * 3


# --- a producer's capsule kept as an owner is consumed: no consumer can take its tensor again ---------------

class PlainExporter:
    """A plain __dlpack__ producer (as pyarrow, array-api-strict and users' classes are)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def reachable_capsules(obj, depth=4):
    """The capsules reachable from a NumPy array through its base chain and the tuples on it."""
    found, todo = [], [obj]
    for _ in range(depth):
        nxt = []
        for o in todo:
            if type(o).__name__ == "PyCapsule":
                found.append(o)
            elif isinstance(o, tuple):
                nxt.extend(o)
            elif getattr(o, "base", None) is not None:
                nxt.append(o.base)
        todo = nxt
    return found


def test_numpy_return_of_an_adopted_export_leaves_no_live_capsule(m):
    src = np.arange(3, dtype=np.float32) + 7
    a = m.producers.as_numpy_f32(PlainExporter(src))
    assert a.tolist() == [7.0, 8.0, 9.0]
    for capsule in reachable_capsules(a):
        with pytest.raises(Exception):  # consumed: no consumer may take (and later free) its tensor
            torch.utils.dlpack.from_dlpack(capsule)
    import gc
    gc.collect()
    junk = [np.full(3, -1.0, np.float32) for _ in range(100)]
    assert a.tolist() == [7.0, 8.0, 9.0]
    del junk


# --- writable parameters follow PyTorch's in-place rules: no overlapping memory, no producer's copy ---------

OVERLAPPING = {
    "torch expand": lambda: torch.zeros(1).expand(4),
    "torch as_strided": lambda: torch.zeros(8).as_strided((4, 2), (1, 1)),
    "numpy zero stride": lambda: np.lib.stride_tricks.as_strided(np.zeros(4, np.float32), (4,), (0,)),
    "numpy 2-D overlap": lambda: np.lib.stride_tricks.as_strided(np.zeros(8, np.float32), (3, 3), (8, 4)),
}
DISJOINT = {
    "every other": lambda: np.zeros(8, np.float32)[::2],
    "reversed": lambda: np.zeros(4, np.float32)[::-1],
    "transposed": lambda: np.zeros((3, 2), np.float32).T,
    "every other column": lambda: np.zeros((4, 6), np.float32)[:, ::2],  # strides (6, 2): largest first
    "c matrix": lambda: torch.zeros(3, 4),
    "torch column": lambda: torch.zeros(3, 4)[:, 1],
    "one element broadcast": lambda: torch.zeros(1).expand(1),
}


@pytest.mark.parametrize("make", OVERLAPPING.values(), ids=OVERLAPPING.keys())
def test_overlapping_memory_is_refused_for_writable_parameters_only(m, make):
    x = make()
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_f32(x, 4.0)
    assert all(v == 0.0 for v in m.producers.read_f32(x))  # read-only parameters take it as it is


@pytest.mark.parametrize("make", DISJOINT.values(), ids=DISJOINT.keys())
def test_strided_memory_without_overlap_binds_to_writable_parameters(m, make):
    x = make()
    m.producers.write_f32(x, 4.0)
    assert all(v == 4.0 for v in m.producers.read_f32(x))


def test_a_producers_copy_is_refused_for_a_writable_parameter(m):
    from producer import Exporter, capsule
    storage = np.zeros(3, np.float32)
    copied = 2  # DLPack 1.1's DLPACK_FLAG_BITMASK_IS_COPIED
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_f32(capsule(m, storage, shape=(3,), versioned=True, flags=copied), 1.0)
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_f32(Exporter(m, storage, shape=(3,), flags=copied), 1.0)
    assert m.producers.read_f32_noconvert(capsule(m, storage, shape=(3,), versioned=True, flags=copied)) == [0.0] * 3
    m.producers.write_f32(capsule(m, storage, shape=(3,), versioned=True), 1.0)  # not a copy: written
    assert storage.tolist() == [1.0] * 3
