"""Implicit conversion: only for read-only parameters, never with .noconvert(), through the producer's
own conversion, on the same device. A writable parameter never silently receives a copy."""
import array
import gc

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jnp = pytest.importorskip("jax.numpy")
tf = pytest.importorskip("tensorflow")


def test_matching_tensor_is_not_copied(m):
    a = np.arange(4, dtype=np.float64)
    got = m.conversion.ro_f64(a)
    assert got["values"] == [0, 1, 2, 3] and got["data"] == a.ctypes.data


@pytest.mark.parametrize("make", [
    lambda: np.arange(4, dtype=np.int32),
    lambda: np.arange(4, dtype=np.float32),
    lambda: torch.arange(4, dtype=torch.int64),
    lambda: torch.arange(4, dtype=torch.float16),
    lambda: jnp.arange(4, dtype=jnp.int32),
    lambda: tf.range(4),
    lambda: array.array("i", [0, 1, 2, 3]),
])
def test_read_only_parameter_converts_dtype(m, make):
    assert m.conversion.ro_f64(make())["values"] == [0.0, 1.0, 2.0, 3.0]


def test_noconvert_refuses_a_copy(m):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        m.conversion.ro_f64_noconvert(np.arange(3, dtype=np.int32))
    assert m.conversion.ro_f64_noconvert(np.arange(3, dtype=np.float64)) == [0, 1, 2]


def test_order_conversion_for_read_only_parameters(m):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = m.conversion.ro_c_f32(np.asfortranarray(a))
    assert got["values"] == a.ravel().tolist() and got["strides"] == (3, 1)
    got = m.conversion.ro_f_f32(a)
    assert got["values"] == a.ravel().tolist() and got["strides"] == (1, 2)
    t = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    got = m.conversion.ro_f_f32(t)
    assert got["values"] == t.ravel().tolist() and got["strides"] == (1, 2, 6)
    got = m.conversion.ro_c_f32(t.transpose(0, 2))
    assert got["values"] == t.transpose(0, 2).ravel().tolist() and got["strides"] == (6, 2, 1)
    assert m.conversion.ro_c_any(a[:, ::2]) == (2, 1)


@pytest.mark.parametrize("dtype", ["float32", "float64"], ids=["order only", "order and dtype"])
def test_array_api_objects_are_copied_into_the_parameters_order(m, dtype):
    # xp.astype keeps the layout: on the CPU the copy in an order is NumPy's.
    xp = pytest.importorskip("array_api_strict")
    a = xp.reshape(xp.arange(6, dtype=getattr(xp, dtype)), (2, 3))
    got = m.conversion.ro_c_f32(a.mT)  # strides (1, 3)
    assert got["values"] == [0, 3, 1, 4, 2, 5] and got["strides"] == (2, 1)
    got = m.conversion.ro_f_f32(a)
    assert got["values"] == [0, 1, 2, 3, 4, 5] and got["strides"] == (1, 2)
    got = m.conversion.ro_f_f32(a.mT)  # F order already: float32 binds as it is
    assert got["values"] == [0, 3, 1, 4, 2, 5] and got["strides"] == (1, 3)


@pytest.mark.parametrize("make", [
    lambda: b"\x01\x02\x03",
    lambda: bytearray(b"\x01\x02\x03"),
    lambda: memoryview(b"\x01\x02\x03"),
    lambda: array.array("B", [1, 2, 3]),
], ids=["bytes", "bytearray", "memoryview", "array.array"])
def test_buffer_objects_convert_as_their_bytes(m, make):
    # numpy.asarray(bytes) alone would be one 3-character string, not three uint8 elements.
    assert m.conversion.ro_f64(make())["values"] == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("make", [
    np.asarray, torch.from_numpy, jnp.asarray, tf.constant,
    lambda a: np.ascontiguousarray(a.astype(np.int32)), lambda a: tf.constant(a.astype(np.int32)),
], ids=["numpy", "torch", "jax", "tensorflow", "numpy int32", "tensorflow int32"])
def test_f_order_conversion_from_every_producer(m, make):
    # TensorFlow's tf.cast keeps C order: its F-order copies come from NumPy.
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = m.conversion.ro_f_f32(make(a))
    assert got["values"] == a.ravel().tolist() and got["strides"] == (1, 2)


def test_writable_parameter_never_receives_a_copy(m):
    a = np.zeros(3, np.float32)
    with pytest.raises(TypeError):
        m.conversion.add_one_f64(a)  # float32: would need a copy
    f = np.zeros((3, 2), np.float32, order="F")
    with pytest.raises(TypeError):
        m.conversion.add_one_c_f32(f)  # F order: would need a copy
    t = torch.zeros(4, dtype=torch.int32)
    with pytest.raises(TypeError):
        m.conversion.add_one_f64(t)
    assert (a == 0).all() and (f == 0).all() and (t == 0).all()


def test_writable_parameter_writes_reach_the_caller(m):
    a = np.zeros((3, 4))
    m.conversion.add_one_f64(a[::2, 1::2])
    assert a.sum() == 4 and a[0, 1] == 1 and a[2, 3] == 1
    t = torch.zeros(5, dtype=torch.float64)
    m.conversion.add_one_f64(t[1:4])
    assert t.tolist() == [0, 1, 1, 1, 0]
    c = np.zeros(4, np.float32)
    m.conversion.add_one_c_f32(c)
    assert c.tolist() == [1, 1, 1, 1]


def test_complex_is_never_converted_to_real(m):
    with pytest.raises(TypeError):
        m.conversion.ro_f64(np.ones(2, np.complex128))


def test_shape_and_device_mismatches_are_not_converted(m):
    with pytest.raises(TypeError):
        m.common.squared_norms(np.zeros((2, 4), np.float64))
    assert m.common.squared_norms(np.ones((1, 3), np.float64)) == [3.0]  # dtype + order are fixable


def test_converted_temporary_stays_alive_while_kept(m):
    n0 = m.common.keep(np.arange(5, dtype=np.int16))  # converted? no: keep takes any dtype
    a = torch.arange(5, dtype=torch.int32)
    vals = m.conversion.ro_f64(a)["values"]
    gc.collect()
    assert vals == [0, 1, 2, 3, 4]
    assert m.common.kept_values(n0 - 1) == [0, 1, 2, 3, 4]
    m.common.release_kept()
