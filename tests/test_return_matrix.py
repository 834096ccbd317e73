"""The return matrix: a 2x3 tensor constructed over C++ memory (tests/test_return_matrix.cpp) for every
framework x dtype (float8_e4m3fn, bfloat16, float16, float32, complex64) x layout (C, F, strided) x
byte offset (none, one element: misaligned, 64 bytes: aligned, which TensorFlow adopts without a copy) x
returned once or as one tensor twice, each checked by value, dtype, strides where the framework keeps
them, writability, and its owner's release count (exactly once, after the last reference, with the GIL).
`py::memview` has no buffer format for bfloat16 and float8: those returns are refused, naming the dtype.
PaddlePaddle's rows run in tests/paddle_cases.py, the same C++ functions (`return_matrix.*_paddle_*`)."""
import gc

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
    """Owners released so far; when short of `expected`, after collecting cycles a framework may hold."""
    n = m.common.owner_frees()
    if expected is not None and n < expected:
        gc.collect()
        n = m.common.owner_frees()
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
