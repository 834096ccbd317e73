"""Every supported dtype maps to its C++ type on NumPy, PyTorch and JAX, including the float16 and
bfloat16 storage types."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jnp = pytest.importorskip("jax.numpy")

CODES = {"bool": 6, "int": 0, "uint": 1, "float": 2, "bfloat": 4, "complex": 5}
NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


def code_bits(name):
    if name == "bool":
        return (6, 8, 1)
    prefix = name.rstrip("0123456789")
    return (CODES[prefix], int(name[len(prefix):]), 1)


def sample(name):
    if name == "bool":
        return [True, False, True]
    if name.startswith("complex"):
        return [1 + 2j, -0.5j, 3]
    if name.startswith("uint"):
        return [0, 7, 200]
    if name.startswith("int"):
        return [-3, 0, 100]
    return [0.5, -1.25, 3.0]


def frameworks(name):
    out = [("numpy", lambda v: np.array(v, dtype=name))] if name != "bfloat16" else []
    tdt = getattr(torch, name, None)
    if tdt is not None:
        out.append(("torch", lambda v: torch.tensor(v, dtype=tdt)))
    out.append(("jax", lambda v: jnp.array(v, dtype=name)))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_dtype_maps_to_its_cpp_type(m, name):
    for fw, make in frameworks(name):
        x = make(sample(name))
        got = getattr(m.dtypes, "dtype_" + name)(x)
        values = got["values"]
        assert got["dtype"] == code_bits(name), fw
        assert values == [type(v)(e) for v, e in zip(values, sample(name))] or values == sample(name), fw


@pytest.mark.parametrize("name", NAMES)
def test_read_only_dtype_parameters_convert_other_dtypes(m, name):
    src = torch.tensor([1, 0, 1], dtype=torch.int32 if name != "int32" else torch.int64)
    got = getattr(m.dtypes, "dtype_" + name)(src)
    assert got["dtype"] == code_bits(name)
    assert got["values"] == [1, 0, 1]


def test_float16_storage_type(m):
    x = np.array([0.5, 1.5, 2.0], dtype=np.float16)
    assert m.dtypes.half_sum(x) == 4.0
    assert m.dtypes.half_sum(torch.tensor([1.0, 0.25], dtype=torch.float16)) == 1.25


@pytest.mark.parametrize("value", [0.0, -0.0, 1.0, 0.1, 65504.0, 70000.0, 1e-5, 6e-8, 2e-8, 3e-8,
                                   -2.5e-6, 1.0009765625, 1.00048828125, 1.00146484375,
                                   float("inf"), -float("inf")])
def test_float16_rounding_matches_numpy(m, value):
    with np.errstate(over="ignore"):  # 70000.0 overflows to inf: the rounding checked, not a mistake
        expected = float(np.float32(value).astype(np.float16))
    got = m.dtypes.float16_roundtrip(value)
    assert got == expected and math.copysign(1, got) == math.copysign(1, expected)


def test_float16_nan(m):
    assert math.isnan(m.dtypes.float16_roundtrip(float("nan")))
    assert math.isnan(m.dtypes.bfloat16_roundtrip(float("nan")))


@pytest.mark.parametrize("value", [0.0, 1.0, 0.1, 3.14159, 1e30, -2.5e-20, 1.00390625, 1.01171875])
def test_bfloat16_rounding_matches_torch(m, value):
    expected = torch.tensor(value, dtype=torch.float32).to(torch.bfloat16).item()
    assert m.dtypes.bfloat16_roundtrip(value) == expected


def test_bfloat16_written_in_place(m):
    t = torch.tensor([1.0, -2.5, 3.0], dtype=torch.bfloat16)
    m.dtypes.double_bfloat16(t)
    assert t.tolist() == [2.0, -5.0, 6.0]
    j = jnp.array([1.0], dtype=jnp.bfloat16)
    with pytest.raises(TypeError):
        m.dtypes.double_bfloat16(j)  # immutable
