"""The return matrix: a 2x3 tensor constructed over C++ memory (tests/test_return_matrix.cpp) for every
framework x dtype (float8_e4m3fn, bfloat16, float16, float32, complex64) x layout (C, F, strided) x
byte offset (none, one element: misaligned, 64 bytes: aligned, which TensorFlow adopts without a copy) x
returned once or as one tensor twice, each checked by value, dtype, strides where the framework keeps
them, writability, and its owner's release count (exactly once, after the last reference, with the GIL).
`py::memview` has no buffer format for bfloat16 and float8: those returns are refused, naming the dtype.
PaddlePaddle's rows run in tests/paddle_cases.py, the same C++ functions (`return_matrix.*_paddle_*`)."""
import gc
import time

import numpy as np
import pytest

from returns_matrix import matrix_case_ids, matrix_cases, matrix_values

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
tf = pytest.importorskip("tensorflow")

FRAMEWORKS = ["numpy", "pytorch", "jax", "tensorflow", "memview", "none"]
ELEMENT_STRIDES = {"C": (3, 1), "F": (1, 2), "s": (6, 2)}
NO_BUFFER_FORMAT = ("float8_e4m3fn", "bfloat16")
ZERO_COPY = ("numpy", "pytorch", "memview", "none")  # views of the C++ memory: it lives while they do


def read(fw, r, dtype):
    """(values as float64 / complex128, element strides or None where the framework hides them, writable
    or None) of a returned tensor, type-checked, read through the framework's own API."""
    wide = np.complex128 if dtype.startswith("complex") else np.float64
    if fw == "numpy":
        assert type(r) is np.ndarray and r.dtype.name == dtype
        return r.astype(wide), tuple(s // r.itemsize for s in r.strides), r.flags.writeable
    if fw == "memview":
        assert isinstance(r, memoryview)
        a = np.asarray(r)
        assert a.dtype.name == dtype
        return a.astype(wide), tuple(s // r.itemsize for s in r.strides), not r.readonly
    if fw in ("pytorch", "none"):
        if fw == "none":
            assert type(r).__name__ == "Tensor" and type(r).__module__ == "dltensor"
            r = torch.from_dlpack(r)  # a consumer that knows every one of these dtypes
        assert isinstance(r, torch.Tensor) and r.dtype == getattr(torch, dtype)
        t = r.to(torch.complex128 if dtype.startswith("complex") else torch.float64)
        return t.numpy(), tuple(r.stride()), None
    if fw == "jax":
        assert isinstance(r, jax.Array) and r.dtype.name == dtype
        return np.asarray(r).astype(wide), None, None
    assert isinstance(r, tf.Tensor) and r.dtype.name == dtype
    return r.numpy().astype(wide), None, None


@pytest.fixture(scope="module")
def no_automatic_gc():
    """A collected heap and no automatic collection during this file's tests, so that the owner's release count
    moves only when the test drops a reference (collections cost ~0.2 s with every framework loaded)."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def frees(m, expected=None):
    """Owners released so far; when short of `expected`, after collecting cycles a framework may hold and
    waiting (up to 10 s) for a release that a framework's own thread makes (JAX copies an F-ordered array
    asynchronously, and drops the source when the copy is done)."""
    n = m.common.owner_frees()
    deadline = time.monotonic() + 10
    while expected is not None and n < expected and time.monotonic() < deadline:
        gc.collect()
        n = m.common.owner_frees()
        if n < expected:
            time.sleep(0.01)
    return n


@pytest.mark.parametrize("layout", ELEMENT_STRIDES)
@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "bfloat16", "float16", "float32", "complex64"])
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_constructed_return_holds_its_values_owner_and_flags(backend_module, no_automatic_gc, fw, dtype,
                                                              layout):
    m = backend_module
    for offset, twice in matrix_cases(dtype):
        case = matrix_case_ids(offset, twice)
        make = getattr(m.return_matrix, f"{'twice' if twice else 'once'}_{fw}_{dtype}")
        before = frees(m)
        if fw == "memview" and dtype in NO_BUFFER_FORMAT:
            with pytest.raises(TypeError, match=f"py::memview cannot return {dtype}: the buffer protocol"):
                make(layout, offset)
            assert frees(m, before + 1) == before + 1, case  # the refused tensor's owner is released all the same
            continue
        out = make(layout, offset)
        results = list(out) if twice else [out]
        del out
        for r in results:
            values, strides, writable = read(fw, r, dtype)
            np.testing.assert_array_equal(values, matrix_values(dtype), err_msg=case)
            if strides is not None:
                assert strides == ELEMENT_STRIDES[layout], case
            assert writable in (True, None), case
        r = results.pop()
        if fw in ZERO_COPY:
            assert frees(m) == before, case  # the other reference still holds the memory
        del r
        results.clear()
        assert frees(m, before + 1) == before + 1, case
    assert m.common.owner_frees_without_gil() == 0


# --- the dtype axis: every DLPack dtype code x bits x lanes C++ can construct, to every return route -------

# Type codes 0..17 (DLPack 1.1) and one no version defines; widths from none to 128 bits; lanes 0, 1, 2, 4.
DTYPE_CODES = [*range(18), 99]
DTYPE_BITS = [0, 1, 4, 6, 8, 16, 32, 64, 128]
DTYPE_LANES = [0, 1, 2, 4]
BASE_NAMES = ["int", "uint", "float", "opaque", "bfloat", "complex", "bool"]
SMALL_FLOATS = ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
                "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
BUFFER_FORMATS = {(0, 8): "b", (0, 16): "h", (0, 32): "i", (0, 64): "l", (1, 8): "B", (1, 16): "H", (1, 32): "I",
                  (1, 64): "L", (2, 16): "e", (2, 32): "f", (2, 64): "d", (5, 64): "Zf", (5, 128): "Zd", (6, 8): "?"}


def carried(code, bits, lanes):
    """The dtypes dltensor carries to a framework (dtypes.h, is_supported_dtype)."""
    if lanes != 1:
        return False
    if 7 <= code <= 14:
        return bits == 8
    return bits in {0: (8, 16, 32, 64), 1: (8, 16, 32, 64), 2: (16, 32, 64), 4: (16,), 5: (64, 128),
                    6: (8,)}.get(code, ())


def description(code, bits, lanes):
    """dtypes.h's dtype_description(), for the messages."""
    if carried(code, bits, lanes):
        if 7 <= code <= 14:
            return SMALL_FLOATS[code - 7]
        return "bool" if code == 6 else f"{BASE_NAMES[code]}{bits}"
    name = (f"{BASE_NAMES[code]}{bits}" if code <= 6 else f"{SMALL_FLOATS[code - 7]} ({bits} bits)" if code <= 17
            else f"type code {code} ({bits} bits)")
    return name + (f" x {lanes} lanes" if lanes != 1 else "")


def returned_bytes(fw, r):
    """The bytes of a returned 1-D tensor, read through the framework's own API."""
    if fw == "numpy":
        assert type(r) is np.ndarray
        return r.tobytes()
    if fw == "pytorch":
        assert isinstance(r, torch.Tensor)
        return r.contiguous().view(torch.uint8).numpy().tobytes() if r.numel() else b""
    if fw == "jax":
        return np.asarray(r).tobytes()
    if fw == "tensorflow":
        return r.numpy().tobytes()
    if fw == "memview":
        return bytes(r)
    return bytes(memoryview(r))


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_every_dtype_returns_by_value_or_raises_a_type_error_naming_it(m, fw):
    make = getattr(m.return_matrix, f"any_dtype_{fw}")
    n = 3
    for code in DTYPE_CODES:
        for bits in DTYPE_BITS:
            for lanes in DTYPE_LANES:
                case = f"{fw}: code {code}, {bits} bits, {lanes} lanes"
                expected = bytes(range(1, (n * bits * lanes + 7) // 8 + 1))
                ok = carried(code, bits, lanes)
                if fw == "none":  # a dltensor.Tensor: its buffer only where a format names the dtype exactly
                    t = make(code, bits, lanes, n)
                    if lanes == 1 and (code, bits) in BUFFER_FORMATS:
                        assert memoryview(t).format == BUFFER_FORMATS[code, bits], case
                        assert returned_bytes(fw, t) == expected, case
                    else:
                        with pytest.raises(BufferError, match="no buffer for this dtype"):
                            memoryview(t)
                    continue
                if fw == "memview":
                    ok = ok and lanes == 1 and (code, bits) in BUFFER_FORMATS
                if not ok:
                    with pytest.raises(TypeError) as e:
                        make(code, bits, lanes, n)
                    assert description(code, bits, lanes) in str(e.value), (case, str(e.value))
                    continue
                try:
                    r = make(code, bits, lanes, n)
                except Exception as e:  # a framework without this dtype: JAX's or TensorFlow's own error,
                    # PyTorch's float8 formats it lacks (reference §13): a TypeError naming it
                    assert fw in ("jax", "tensorflow") or (fw == "pytorch" and isinstance(e, TypeError) and
                                                           7 <= code <= 14 and SMALL_FLOATS[code - 7] in str(e)), \
                        (case, repr(e))
                    continue
                assert returned_bytes(fw, r) == expected, case
