"""The 8-bit floats (`py::float8_e4m3fn`, `py::float8_e5m2`, ... : DLPack 1.1's codes 7..14): the storage
types' conversions bit-exact against ml_dtypes (every one of the 256 patterns to float, a sweep of floats
from float); every format from every producer that has it (ml_dtypes NumPy arrays, PyTorch, JAX, any
`__dlpack__` producer) for read-only and writable parameters; every return framework (TensorFlow: its
formats, at any alignment; the others refused, named) and `empty()`; a
different format never binds without the producer's own conversion; sub-byte types (float6, float4, int4)
are refused with an explanation that names them."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from producer import Exporter, capsule

ml_dtypes = pytest.importorskip("ml_dtypes")

try:
    import torch
except ImportError:  # pragma: no cover - the test extras install it
    torch = None
try:
    import jax
    import jax.numpy as jnp
except ImportError:  # pragma: no cover
    jax = jnp = None

# DLPack 1.1's codes (dlpack.h: kDLFloat8_e3m4 = 7 ... kDLFloat8_e8m0fnu = 14).
CODES = {"float8_e3m4": 7, "float8_e4m3": 8, "float8_e4m3b11fnuz": 9, "float8_e4m3fn": 10,
         "float8_e4m3fnuz": 11, "float8_e5m2": 12, "float8_e5m2fnuz": 13, "float8_e8m0fnu": 14}
FORMATS = list(CODES)
PATTERNS = np.arange(256, dtype=np.uint8)

# The checkout's Python package (as tests/test_explain.py): dltensor.explain
_spec = importlib.util.spec_from_file_location(
    "dltensor_explain_float8", Path(__file__).resolve().parent.parent / "python" / "dltensor" / "explain.py")
_explain_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_explain_module)
explain = _explain_module.explain


def fn(m, what, name):
    return getattr(m.float8, f"{what}_{name}")


def ml(name):
    return getattr(ml_dtypes, name)


def torch_dtype(name):
    return getattr(torch, name, None) if torch is not None else None


def jax_dtype(name):
    return getattr(jnp, name, None) if jnp is not None else None


def explanation(function, *args) -> str:
    with pytest.raises(TypeError) as info:
        explain(function, *args)
    return "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])


def values(name, count=12):
    """`count` finite values of the format (as its bits) that are not NaN, spread over its range."""
    f = PATTERNS.view(ml(name)).astype(np.float32)
    finite = PATTERNS[np.isfinite(f)]
    return finite[np.linspace(0, finite.size - 1, count).astype(int)]


# --- the storage types' conversions, bit-exact against ml_dtypes -----------------------------------------

def test_codes_are_dlpacks(m):
    assert m.float8.codes() == CODES


@pytest.mark.parametrize("name", FORMATS)
def test_every_pattern_widens_exactly(m, name):
    got = fn(m, "decode", name)()
    expected = PATTERNS.view(ml(name)).astype(np.float32)
    # NaN too: the same float bits (the quiet NaN, with ml_dtypes' sign)
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), expected.view(np.uint32))


def sweep(name):
    """float32 values that exercise every rounding case of the format: its values and their float
    neighbours, the midpoints between neighbouring values (ties) and theirs, beyond the largest value,
    below the smallest subnormal, zeros, infinities, NaNs with payloads and signs, float32 subnormals,
    and random bit patterns."""
    f = PATTERNS.view(ml(name)).astype(np.float64)
    finite = np.unique(f[np.isfinite(f)])
    mids = (finite[1:] + finite[:-1]) / 2  # exact in float32: at most 5 significant bits
    top, low = finite.max(), finite[finite > 0].min()
    extra = [top * 1.03125, top * 1.0625, top * 1.5, top * 2, top * 4, low / 2, low / 3, low / 4, low * 0.75,
             1e-30, 1e30, 3.4e38, 1.2e-38, 1e-45, 0.0]
    with np.errstate(over="ignore"):  # e8m0fnu's largest value times 4 is beyond float32: infinity
        base = np.concatenate([finite, mids, extra]).astype(np.float32)
    base = np.concatenate([base, -base])
    up = np.nextafter(base, np.float32(np.inf))
    down = np.nextafter(base, np.float32(-np.inf))
    specials = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA00000, 0xFF900000,
                         0x7FFFFFFF, 0x00000001, 0x00400000, 0x00600000, 0x00600001, 0x005FFFFF, 0x007FFFFF,
                         0x80000001, 0x80400000, 0x80000000, 0x7F7FFFFF, 0xFF7FFFFF], np.uint32).view(np.float32)
    rng = np.random.default_rng(CODES[name])
    random_bits = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    in_range = rng.uniform(-2 * top, 2 * top, 50_000).astype(np.float32)
    return np.ascontiguousarray(np.concatenate([base, up, down, specials, random_bits, in_range]))


@pytest.mark.parametrize("name", FORMATS)
def test_rounding_matches_ml_dtypes(m, name):
    x = sweep(name)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = x.astype(ml(name)).view(np.uint8)
    got = fn(m, "encode", name)(x)
    bad = np.nonzero(got != expected)[0]
    assert bad.size == 0, [(hex(int(x[i:i + 1].view(np.uint32)[0])), hex(got[i]), hex(expected[i]))
                           for i in bad[:10]]


# --- parameters: every format from every producer, read-only and writable --------------------------------

def producers(name):
    """(label, make(bits) -> (source, read back its bits), writable) for each producer of the format."""
    out = []

    def numpy_array(bits):
        a = bits.copy().view(ml(name))
        return a, lambda: a.view(np.uint8).copy()
    out.append(("ml_dtypes numpy", numpy_array, True))

    class Sub(np.ndarray):
        pass

    def numpy_subclass(bits):
        a = bits.copy().view(ml(name)).view(Sub)
        return a, lambda: np.asarray(a).view(np.uint8).copy()
    out.append(("ml_dtypes numpy subclass", numpy_subclass, True))
    if torch_dtype(name) is not None:
        def torch_tensor(bits):
            t = torch.from_numpy(bits.copy()).view(torch_dtype(name))
            return t, lambda: t.view(torch.uint8).numpy().copy()
        out.append(("torch", torch_tensor, True))
    if jax_dtype(name) is not None:
        def jax_array(bits):
            a = jnp.asarray(bits.copy().view(ml(name)))
            return a, lambda: np.asarray(a).view(np.uint8).copy()
        out.append(("jax", jax_array, False))
    return out


def exporter(m, bits, name, **spec):
    """Any producer whose `__dlpack__` carries the code: the test producer over a bytearray."""
    storage = bytearray(bits.tobytes())
    return Exporter(m, storage, shape=[len(storage)], dtype=(CODES[name], 8, 1), **spec), storage


CASES = [(name, label) for name in FORMATS for label, _, _ in producers(name)]


@pytest.mark.parametrize("name,label", CASES)
def test_read_only_parameter_reads_the_bits_zero_copy(m, name, label):
    make = dict((lbl, mk) for lbl, mk, _ in producers(name))[label]
    bits = values(name)
    src, _ = make(bits)
    for read in (fn(m, "read", name), fn(m, "read_noconvert", name)):
        got = read(src)
        assert got["dtype"] == (CODES[name], 8, 1)
        assert got["bits"] == bits.tolist()
    if label.startswith("ml_dtypes"):
        assert got["data"] == np.asarray(src).ctypes.data  # NumPy's own memory: no copy
    elif label == "torch":
        assert got["data"] == src.data_ptr()


@pytest.mark.parametrize("name,label", CASES)
def test_writable_parameter_writes_in_place(m, name, label):
    make, writable = dict((lbl, (mk, w)) for lbl, mk, w in producers(name))[label]
    bits = values(name)
    src, read_back = make(bits)
    if not writable:  # JAX arrays are immutable
        with pytest.raises(TypeError):
            fn(m, "scale", name)(src, 2.0)
        assert "immutable" in explanation(fn(m, "scale", name), src, 2.0)
        return
    fn(m, "scale", name)(src, 2.0)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = (bits.view(ml(name)).astype(np.float32) * np.float32(2)).astype(ml(name)).view(np.uint8)
    assert read_back().tolist() == expected.tolist()
    fn(m, "set_patterns", name)(src)
    assert read_back().tolist() == [i & 0xFF for i in range(len(bits))]


@pytest.mark.parametrize("name", FORMATS)
def test_any_dlpack_producer_with_the_code(m, name):
    bits = values(name)
    src, storage = exporter(m, bits, name)
    assert fn(m, "read", name)(src)["bits"] == bits.tolist()
    src, storage = exporter(m, bits, name)
    fn(m, "set_patterns", name)(src)
    assert list(storage) == list(range(len(bits)))
    raw = capsule(m, bytearray(bits.tobytes()), shape=[len(bits)], dtype=(CODES[name], 8, 1))
    assert fn(m, "read", name)(raw)["bits"] == bits.tolist()


@pytest.mark.parametrize("name", FORMATS)
def test_malformed_float8_dtypes_are_refused(m, name):
    for dtype in [(CODES[name], 16, 1), (CODES[name], 4, 1), (CODES[name], 8, 2)]:
        raw = capsule(m, bytearray(16), shape=[4], dtype=dtype)
        with pytest.raises(TypeError):
            m.float8.any_dtype(raw)


def other_format(name):
    return FORMATS[(FORMATS.index(name) + 3) % len(FORMATS)]


@pytest.mark.parametrize("name", FORMATS)
def test_another_format_never_binds_a_writable_parameter(m, name):
    other = other_format(name)
    a = values(other).view(ml(other))
    before = a.view(np.uint8).copy()
    with pytest.raises(TypeError):
        fn(m, "scale", name)(a, 1.0)
    assert np.array_equal(a.view(np.uint8), before)
    text = explanation(fn(m, "scale", name), a, 1.0)
    assert f"dtype {other}, expected {name}; a writable parameter never converts" in text
    src, _ = exporter(m, values(other), other)
    with pytest.raises(TypeError):
        fn(m, "set_patterns", name)(src)
    with pytest.raises(TypeError):  # not even a read-only one without conversion
        fn(m, "read_noconvert", name)(a)


@pytest.mark.parametrize("name", FORMATS)
def test_read_only_parameter_converts_through_the_producer(m, name):
    """A read-only parameter may convert another format (or float32) by the producer's own conversion
    (NumPy's and JAX's astype, PyTorch's .to()): values, never a reinterpretation of the bits."""
    other = other_format(name)
    src = values(other).view(ml(other))
    with np.errstate(invalid="ignore", over="ignore"):
        expected = src.astype(ml(name)).view(np.uint8).tolist()
    got = fn(m, "read", name)(src)
    assert got["bits"] == expected and got["data"] != src.ctypes.data
    assert fn(m, "read", name)([0.5, 2.0])["bits"] == np.array([0.5, 2.0], ml(name)).view(np.uint8).tolist()
    f32 = np.array([0.5, -1.0, 3.0, 1e-3], np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        assert fn(m, "read", name)(f32)["bits"] == f32.astype(ml(name)).view(np.uint8).tolist()
    if torch_dtype(name) is not None:
        t = torch.tensor([0.5, -1.0, 3.0, 1e-3])
        assert fn(m, "read", name)(t)["bits"] == t.to(torch_dtype(name)).view(torch.uint8).tolist()
        for tother in FORMATS:
            if tother != name and torch_dtype(tother) is not None:
                t8 = torch.tensor([0.5, 2.0]).to(torch_dtype(tother))
                expected = t8.to(torch_dtype(name)).view(torch.uint8).tolist()
                assert fn(m, "read", name)(t8)["bits"] == expected
                break
    if jax_dtype(name) is not None:
        j = jnp.asarray(src)
        with np.errstate(invalid="ignore", over="ignore"):
            expected = np.asarray(j.astype(jax_dtype(name))).view(np.uint8).tolist()
        assert fn(m, "read", name)(j)["bits"] == expected


# --- returns: every framework, from C++ memory and from empty() -------------------------------------------

@pytest.mark.parametrize("how", ["return", "empty", "reversed"])
@pytest.mark.parametrize("name", FORMATS)
def test_numpy_returns_the_ml_dtypes_dtype(m, name, how):
    a = fn(m, f"{how}_numpy", name)()
    assert type(a) is np.ndarray and a.dtype == np.dtype(ml(name))
    assert np.array_equal(a.view(np.uint8), PATTERNS)


@pytest.mark.parametrize("how", ["return", "empty", "reversed"])
@pytest.mark.parametrize("name", FORMATS)
def test_pytorch_returns_torch_float8(m, name, how):
    if torch is None:
        pytest.skip("no torch")
    if torch_dtype(name) is None:  # PyTorch 2.13 has no float8_e3m4, float8_e4m3, float8_e4m3b11fnuz
        with pytest.raises(TypeError, match=f"PyTorch has no {name} dtype"):
            fn(m, f"{how}_pytorch", name)()
        return
    t = fn(m, f"{how}_pytorch", name)()
    assert isinstance(t, torch.Tensor) and t.dtype == torch_dtype(name)
    assert t.view(torch.uint8).tolist() == PATTERNS.tolist()


@pytest.mark.parametrize("how", ["return", "empty", "reversed"])
@pytest.mark.parametrize("name", FORMATS)
def test_jax_returns_jnp_float8(m, name, how):
    if jnp is None:
        pytest.skip("no jax")
    a = fn(m, f"{how}_jax", name)()
    assert isinstance(a, jax.Array) and a.dtype == jax_dtype(name)
    assert np.array_equal(np.asarray(a).view(np.uint8), PATTERNS)


# TensorFlow 2.21's float8 dtypes (its NumPy import takes ml_dtypes' arrays of these; its DLPack import none).
TENSORFLOW_FLOAT8 = ["float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"]


@pytest.mark.parametrize("misaligned", [False, True], ids=["aligned", "misaligned"])
@pytest.mark.parametrize("name", FORMATS)
def test_tensorflow_returns_its_float8_at_any_alignment(m, name, misaligned):
    # 64-byte aligned memory would otherwise go to TensorFlow's DLPack import, which has no float8 code.
    tf = pytest.importorskip("tensorflow")
    returned = fn(m, "placed_tensorflow", name)
    if name not in TENSORFLOW_FLOAT8:
        with pytest.raises(TypeError, match=f"TensorFlow has no {name} dtype"):
            returned(misaligned)
        return
    t = returned(misaligned)
    assert isinstance(t, tf.Tensor) and t.dtype.name == name
    assert t.numpy().view(np.uint8).tolist() == PATTERNS.tolist()


@pytest.mark.parametrize("how", ["return", "empty"])
@pytest.mark.parametrize("name", FORMATS)
def test_framework_less_returns_carry_the_code(m, name, how):
    t = fn(m, f"{how}_none", name)()
    assert hasattr(t, "__dlpack__")
    assert fn(m, "read_noconvert", name)(t)["bits"] == PATTERNS.tolist()
    if jnp is not None:  # a DLPack consumer that knows the code
        assert np.array_equal(np.asarray(jax.dlpack.from_dlpack(fn(m, f"{how}_none", name)())).view(np.uint8),
                              PATTERNS)


@pytest.mark.parametrize("name", FORMATS)
def test_returned_input_is_the_callers_object(m, name):
    a = values(name).view(ml(name))
    assert fn(m, "identity", name)(a) is a
    if torch_dtype(name) is not None:
        t = torch.zeros(3, dtype=torch_dtype(name))
        assert fn(m, "identity", name)(t) is t


def test_numpy_return_without_ml_dtypes_names_it(m, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # `import ml_dtypes` raises ImportError
    with pytest.raises(TypeError, match="ml_dtypes"):
        m.float8.return_numpy_float8_e4m3fn()
    with pytest.raises(TypeError, match="ml_dtypes"):
        m.float8.empty_numpy_float8_e5m2()


# --- signatures and refusals ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FORMATS)
def test_signatures_name_the_format(m, name):
    # both backends: dict(dtype='float8_e4m3fn', ...), the type saying read-only (ArrayLike) or writable
    import re
    for what, kind in (("read", "ArrayLike"), ("scale", "Array")):
        doc = fn(m, what, name).__doc__
        assert re.search(rf"dltensor\.typing\.{kind}, dict\(dtype='{name}'(, shape=\([^)]*\))?\)\]", doc), doc


def sub_byte_sources(m):
    """(source, the format's name) of sub-byte types from every producer that makes them."""
    out = [
        (capsule(m, bytearray(8), shape=[8], dtype=(17, 4, 1)), "float4_e2m1fn"),
        (capsule(m, bytearray(8), shape=[8], dtype=(15, 6, 1)), "float6_e2m3fn"),
        (capsule(m, bytearray(8), shape=[8], dtype=(16, 6, 1)), "float6_e3m2fn"),
        # int4 padded to a byte per element (DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED), and packed
        (capsule(m, bytearray(8), shape=[8], dtype=(0, 4, 1), versioned=True, flags=4), "int4"),
        (capsule(m, bytearray(8), shape=[16], dtype=(1, 4, 1)), "uint4"),
        (np.zeros(4, ml_dtypes.int4), "int4"),
        (np.zeros(4, ml_dtypes.float4_e2m1fn), "float4_e2m1fn"),
        (np.zeros(4, ml_dtypes.float6_e3m2fn), "float6_e3m2fn"),
    ]
    if torch is not None and hasattr(torch, "float4_e2m1fn_x2"):
        out.append((torch.zeros(4, dtype=torch.uint8).view(torch.float4_e2m1fn_x2), "float4_e2m1fn"))
    if jnp is not None and hasattr(jnp, "float4_e2m1fn"):
        out.append((jnp.zeros(4, jnp.float4_e2m1fn), "float4_e2m1fn"))
    return out


def test_sub_byte_types_are_refused_naming_the_format(m):
    for src, name in sub_byte_sources(m):
        with pytest.raises(TypeError):
            m.float8.any_dtype(src)
        text = explanation(m.float8.any_dtype, src)
        assert f"dtype {name} (" in text and "sub-byte" in text, (name, text)
        with pytest.raises(TypeError):
            m.float8.read_float8_e4m3fn(src)


# --- the oldest supported ml_dtypes (README: Supported versions) ------------------------------------------
# ml_dtypes names its types "ml_dtypes.<name>" only from 0.5.1 on; TensorFlow 2.16/2.17 and the JAX of that
# time pin older releases. dltensor knows the types by identity with `ml_dtypes.<name>`, whatever their name.
OLDEST_ML_DTYPES = "0.4.0"  # the first release built for NumPy 2
OLD_ML_DTYPES = Path(__file__).resolve().parent / ".build" / f"ml_dtypes-{OLDEST_ML_DTYPES}"


def old_ml_dtypes() -> Path:
    """ml_dtypes OLDEST_ML_DTYPES, installed from PyPI into tests/.build on first use."""
    import subprocess
    import sys
    if not (OLD_ML_DTYPES / "ml_dtypes" / "__init__.py").exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target",
                        str(OLD_ML_DTYPES), f"ml_dtypes=={OLDEST_ML_DTYPES}"], check=True, timeout=600)
    return OLD_ML_DTYPES


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_oldest_supported_ml_dtypes_arrays_bind(backend):
    import os
    import subprocess
    import sys
    from conftest import HERE, load_backend
    build = os.path.dirname(load_backend(backend).__file__)
    script = f"""
import sys
sys.path[:0] = [{str(old_ml_dtypes())!r}, {build!r}, {str(HERE)!r}]
import numpy as np, ml_dtypes
assert ml_dtypes.__version__ == {OLDEST_ML_DTYPES!r}, ml_dtypes.__version__
assert not ml_dtypes.bfloat16.__name__.startswith("ml_dtypes."), "not the old naming"
m = __import__("dltensor_test_{backend}")
for fast in (True, False):
    m.common.set_fast_paths(fast)
    assert m.producers.read_bf16(np.array([1.0, -2.5, 3.0], ml_dtypes.bfloat16)) == [1.0, -2.5, 3.0]
    for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz"):  # kind 'V', kind 'f'
        bits = np.arange(8, dtype=np.uint8)
        got = getattr(m.float8, "read_" + name)(bits.view(getattr(ml_dtypes, name)))
        assert got["bits"] == bits.tolist(), (name, got)
    out = m.float8.return_numpy_float8_e4m3fn()
    assert out.dtype == ml_dtypes.float8_e4m3fn, out.dtype
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
