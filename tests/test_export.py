"""Returning tensors: the framework tag picks the Python type; no tag gives an object with __dlpack__ and
__dlpack_device__ (not a bare capsule); owners are released exactly once, after the last Python
reference, with the GIL, also for one tensor returned twice; a byte_offset reaches every framework;
return-value policies behave as the binding library documents. (PaddlePaddle's returns: paddle_cases.py.)"""
import gc
import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
tf = pytest.importorskip("tensorflow")


def frees(m):
    gc.collect()
    return m.common.owner_frees()


@pytest.mark.parametrize("fw, cls", [
    ("numpy", lambda: np.ndarray),
    ("pytorch", lambda: torch.Tensor),
    ("jax", lambda: jax.Array),
    ("tensorflow", lambda: tf.Tensor),
])
def test_framework_tag_picks_the_returned_type(m, fw, cls):
    r = getattr(m.export, "arange_" + fw)(4)
    assert isinstance(r, cls())
    assert np.asarray(r).tolist() == [0, 1, 2, 3]


def test_no_framework_returns_a_dlpack_object_not_a_capsule(m):
    r = m.export.arange_none(3)
    assert not repr(r).startswith("<capsule")
    assert hasattr(r, "__dlpack__") and hasattr(r, "__dlpack_device__")
    assert r.__dlpack_device__() == (1, 0)
    assert np.from_dlpack(r).tolist() == [0, 1, 2]
    assert torch.from_dlpack(m.export.arange_none(2)).tolist() == [0, 1]


@pytest.mark.parametrize("fw", ["numpy", "pytorch", "jax", "tensorflow", "none"])
def test_owner_is_released_exactly_once_after_the_last_reference(m, fw):
    before = frees(m)
    r = getattr(m.export, "arange_" + fw)(16)
    view = r[1:] if fw != "none" else None
    del r
    if fw in ("numpy", "pytorch"):
        assert frees(m) == before  # the view still uses the memory
    del view
    assert frees(m) == before + 1
    assert m.common.owner_frees_without_gil() == 0
    assert frees(m) == before + 1


# Every return framework of this process (PaddlePaddle's: tests/paddle_cases.py, the same C++ functions).
FRAMEWORKS = ["numpy", "pytorch", "jax", "tensorflow", "none", "memview"]


def values(r):
    """The elements of a returned tensor of any framework, as a list."""
    if isinstance(r, memoryview):
        return r.tolist()
    if type(r).__module__ == "dltensor":  # no framework: read through __dlpack__ (the buffer: memview)
        return np.from_dlpack(r).tolist()
    return np.asarray(r).tolist()


@pytest.mark.parametrize("offset", [4, 16], ids=["misaligned", "aligned"])
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_byte_offset_reaches_every_framework(m, fw, offset):
    # data is 64-byte aligned; the first element is `offset` floats further: 16 bytes (misaligned) or 64
    # (aligned, which TensorFlow adopts without a copy and refuses with a non-zero byte_offset).
    before = frees(m)
    r = getattr(m.export, "offset_" + fw)(offset, 8)
    assert values(r) == [float(offset + i) for i in range(8)]
    if fw == "none":
        assert torch.from_dlpack(r).tolist() == [float(offset + i) for i in range(8)]
    del r
    assert frees(m) == before + 1


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_one_tensor_returned_twice_releases_its_owner_once(m, fw):
    before = frees(m)
    a, b = getattr(m.export, "twice_" + fw)(16)
    assert values(a) == values(b) == list(range(16))
    del a
    assert values(b) == list(range(16))
    del b
    assert frees(m) == before + 1
    assert m.common.owner_frees_without_gil() == 0


def test_numpy_return_shares_the_cpp_memory(m):
    before = frees(m)
    r = m.export.arange_numpy(3)
    r[0] = 42  # writable, and the write lands in the C++ buffer that the owner will free
    assert r.tolist() == [42, 1, 2] and r.flags.writeable
    del r
    assert frees(m) == before + 1


def test_const_return_is_read_only(m):
    r = m.export.arange_const_numpy(3)
    assert not r.flags.writeable
    with pytest.raises(ValueError):
        r[0] = 1


def test_strides_and_byte_offset_on_export(m):
    f = m.export.fortran_2x3()
    assert f.tolist() == [[0, 1, 2], [10, 11, 12]]
    assert f.strides == (4, 8) and f.flags.f_contiguous
    assert m.export.reversed_view().tolist() == [4, 3, 2, 1, 0]


def test_ownerless_return_is_copied_by_the_automatic_policy(m):
    assert m.export.ownerless_numpy().tolist() == [7, 8, 9]


def test_reference_internal_without_a_parent_copies_memory_nothing_owns(m):
    assert m.export.ownerless_reference_internal_without_parent().tolist() == [7, 8, 9]


@pytest.mark.parametrize("make", [
    lambda: np.arange(8, dtype=np.float64),  # converted to float32: the copy is the call's
    lambda: list(range(8)),  # numpy.asarray's array
    lambda: np.arange(8, dtype=np.float32).__dlpack__(),  # consumed: the capsule no longer owns it
    lambda: np.arange(8, dtype=np.float32),  # the argument's own memory
], ids=["converted", "list", "raw capsule", "own memory"])
@pytest.mark.parametrize("by", ["value", "reference"])
def test_reference_internal_view_of_an_argument_outlives_the_call(m, make, by):
    view = getattr(m.export, "ownerless_view_of_argument" + ("_ref" if by == "reference" else ""))(make())
    gc.collect()
    churn = [np.full(8, -7.0, np.float32) for _ in range(2000)]  # reuses freed memory of that size
    churn += [np.full(n, -7.0) for n in range(1, 64) for _ in range(20)]
    assert view.tolist() == list(range(8))
    del churn


@pytest.mark.parametrize("fast_paths", [True, False], ids=["fast paths", "public route"])
@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_reference_internal_view_alive_at_exit_releases_its_parent(backend, fast_paths):
    # The public route's array is over a dltensor.Tensor's buffer (base: a memoryview): released while
    # the interpreter finalizes, the Tensor releases its parent as the C API route's array does, so that
    # nanobind's leak check at exit finds no Holder left.
    import os
    import subprocess
    import sys
    from conftest import HERE, load_backend
    build = os.path.dirname(load_backend(backend).__file__)
    script = (f"import sys; sys.path[:0] = [{build!r}, {str(HERE)!r}]\n"
              f"m = __import__('dltensor_test_{backend}'); m.common.set_fast_paths({fast_paths})\n"
              "h = m.export.Holder(); view = h.view(); ro = m.export.arange_const_numpy(3)\n"
              "assert view.tolist() == [[0, 1, 2], [3, 4, 5]]\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "leaked" not in proc.stderr, proc.stderr


def test_read_only_numpy_returns_cannot_be_made_writable(m):
    # On NumPy's C API route (fast paths on) and the public one alike (both paths: the `m` fixture).
    a = np.arange(4, dtype=np.float32)
    outs = {"empty": m.porting.empty_const(3), "copy_of": m.porting.copy_of_const(4),
            "view over a writable owner": m.export.const_view_with_owner(a, a)}
    for what, out in outs.items():
        assert type(out) is np.ndarray and not out.flags.writeable, what
        with pytest.raises(ValueError):
            out.setflags(write=True)
        with pytest.raises(ValueError):
            out[0] = 1
    assert a.flags.writeable and a.tolist() == [0, 1, 2, 3]  # the owner itself stays writable
    assert m.porting.copy_of_matrix(2, 3).flags.writeable  # a writable return stays so


def test_reference_internal_keeps_the_parent_alive(m):
    h = m.export.Holder()
    v = h.view()
    v[0, 1] = 42.0
    assert h.get(1) == 42.0  # a view, not a copy
    w = weakref.ref(h)
    del h
    gc.collect()
    assert w() is not None  # the view keeps its parent alive
    assert v.tolist() == [[0, 42, 2], [3, 4, 5]]
    del v
    gc.collect()
    assert w() is None


def test_copy_policy_returns_an_independent_copy(m):
    h = m.export.Holder()
    c = h.view_copy()
    c[0, 0] = -1.0
    assert h.get(0) == 0.0


def test_input_returned_unchanged_shares_memory(m):
    a = np.arange(5.0)
    r = m.export.identity_numpy(a)
    assert isinstance(r, np.ndarray) and np.shares_memory(a, r) and r.tolist() == a.tolist()
    t = torch.arange(3.0)
    rt = m.export.identity_pytorch(t)
    assert isinstance(rt, torch.Tensor) and rt.data_ptr() == t.data_ptr()
    o = m.export.identity(np.arange(2.0))
    assert hasattr(o, "__dlpack__") and np.from_dlpack(o).tolist() == [0.0, 1.0]
