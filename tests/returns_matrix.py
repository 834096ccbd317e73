"""The returns matrix every framework's return tests share (tests/test_producers.py, tests/paddle_cases.py):
a 2x3 tensor of each dtype in each layout, made by `producers.ret_<framework>(dtype, layout)`
(tests/test_producers.cpp), and the values it must hold."""

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "bfloat16", "float32", "float64", "complex64", "complex128"]
LAYOUTS = ["C", "F", "neg", "zero"]


def expected_2x3(dtype, layout):
    def value(k):
        if dtype == "bool":
            return k % 2 == 1
        if dtype.startswith("complex"):
            return complex(k, -k)
        return float(k)
    rows = [[value(3 * i + j) for j in range(3)] for i in range(2)]
    return [rows[0], rows[0]] if layout == "zero" else rows


def to_numpy_by_framework(framework, out):
    """A returned tensor of `framework` ("numpy", "pytorch", "jax", "tensorflow", "paddle", "memview",
    "none") as a NumPy array, type-checked: the framework's own conversion, or the buffer protocol."""
    import numpy as np
    if framework == "numpy":
        assert isinstance(out, np.ndarray), type(out)
        return out
    if framework == "memview":
        assert isinstance(out, memoryview), type(out)
        return np.asarray(out)
    if framework == "none":
        assert type(out).__name__ == "Tensor" and hasattr(out, "__dlpack__"), type(out)
        return np.from_dlpack(out)
    if framework == "jax":
        import jax
        assert isinstance(out, jax.Array), type(out)
        return np.asarray(out)
    module = {"pytorch": "torch", "tensorflow": "tensorflow", "paddle": "paddle"}[framework]
    assert type(out).__module__.split(".")[0] == module, type(out)
    return out.numpy()


# The constructed matrix (tests/test_return_matrix.cpp, `return_matrix.once_<framework>_<dtype>` and
# `twice_...`): [[0, 1, 2], [3, 4, 5]] (complex: k - k i), and the byte offsets each dtype is tried with.
MATRIX_ITEMSIZE = {"float8_e4m3fn": 1, "bfloat16": 2, "float16": 2, "float32": 4, "complex64": 8}


def matrix_values(dtype):
    import numpy as np
    k = np.arange(6, dtype=np.float64).reshape(2, 3)
    return k - 1j * k if dtype.startswith("complex") else k


def matrix_cases(dtype):
    """(byte offset, returned twice) pairs: no offset, one element (misaligned), 64 bytes (aligned)."""
    return [(offset, twice) for offset in (0, MATRIX_ITEMSIZE[dtype], 64) for twice in (False, True)]


def matrix_case_ids(offset, twice):
    return f"byte_offset={offset}, {'twice' if twice else 'once'}"
