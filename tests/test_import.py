"""Accepting tensors: __dlpack__ producers (versioned first), raw capsules consumed exactly once,
buffer-protocol objects, and reading every element back through strides, byte_offset, 0-d and
zero-size tensors."""
import array
import gc

import numpy as np
import pytest

from producer import FLOAT32, Exporter, LegacyExporter, Returning, capsule

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
tf = pytest.importorskip("tensorflow")


def test_numpy_array_is_read_in_place(m):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    info = m.common.describe(a)
    assert (info["ndim"], info["shape"], info["strides"], info["dtype"], info["device_type"],
            info["device_id"]) == (2, (2, 3), (3, 1), FLOAT32, 1, 0)
    assert info["data"] == a.ctypes.data  # zero-copy
    assert (info["size"], info["itemsize"], info["nbytes"]) == (6, 4, 24)
    assert m.common.values(a) == a.ravel().tolist()


def test_nbytes_of_a_huge_broadcast_saturates_instead_of_wrapping(m):
    # Stride-0 broadcasts bind whatever their shape: bits * size() no longer fits in size_t.
    a = np.broadcast_to(np.bool_(1), (2**31, 2**31))  # 2^62 one-byte elements: 2^62 bytes
    assert (m.common.describe(a)["size"], m.common.describe(a)["nbytes"]) == (2**62, 2**62)
    b = np.broadcast_to(np.float32(1), (2**30, 2**30))  # 2^60 elements, 2^62 bytes
    assert (m.common.describe(b)["size"], m.common.describe(b)["nbytes"]) == (2**60, 2**62)


def test_torch_tensor_is_read_in_place(m):
    t = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    info = m.common.describe(t)
    assert (info["shape"], info["strides"], info["dtype"]) == ((3, 4), (4, 1), (2, 64, 1))
    assert info["data"] == t.data_ptr()
    assert m.common.values(t) == t.ravel().tolist()


def test_jax_array_is_read_in_place(m):
    x = jnp.arange(10, dtype=jnp.int32).reshape(2, 5)
    info = m.common.describe(x)
    assert info["shape"] == (2, 5) and info["dtype"] == (0, 32, 1)
    assert info["data"] == x.unsafe_buffer_pointer()
    assert m.common.values(x) == np.asarray(x).ravel().tolist()


def test_tensorflow_tensor_is_read(m):
    x = tf.constant([[1.5, 2.5], [3.5, 4.5]])
    assert m.common.describe(x)["shape"] == (2, 2)
    assert m.common.values(x) == [1.5, 2.5, 3.5, 4.5]


def test_versioned_dlpack_is_requested_first(m):
    storage = np.arange(4, dtype=np.float32)
    e = Exporter(m, storage, shape=(4,))
    assert m.common.values(e) == [0, 1, 2, 3]
    assert e.calls == [(1, 3)]


def test_unversioned_fallback_for_producers_without_max_version(m):
    storage = np.arange(4, dtype=np.float32)
    e = LegacyExporter(m, storage, shape=(4,))
    assert m.common.values(e) == [0, 1, 2, 3]
    assert e.calls == [None]


@pytest.mark.parametrize("versioned", [True, False])
def test_raw_capsule_is_consumed_exactly_once(m, versioned):
    storage = np.arange(3, dtype=np.float32)
    before = m.common.deleter_calls()
    cap = capsule(m, storage, shape=(3,), versioned=versioned)
    assert m.common.values(cap) == [0, 1, 2]
    gc.collect()
    assert m.common.deleter_calls() == before + 1  # released when the call's tensor died
    used = "used_dltensor_versioned" if versioned else "used_dltensor"
    assert repr(cap).startswith(f'<capsule object "{used}"')  # renamed as its layout's spec says
    with pytest.raises(TypeError, match="incompatible function arguments"):
        m.common.values(cap)  # a second use
    del cap
    gc.collect()
    assert m.common.deleter_calls() == before + 1  # never twice


def test_capsule_its_producer_still_holds_is_consumed(m):
    # A __dlpack__ that returns a capsule it also keeps (not a fresh one): someone else can reach the
    # capsule, so it cannot be its own owner; it is consumed, and its tensor freed once, by the owner.
    storage = np.arange(3, dtype=np.float32)
    gc.collect()
    before = m.common.deleter_calls()
    cap = capsule(m, storage, shape=(3,))
    assert m.common.values(Returning(cap)) == [0, 1, 2]
    gc.collect()
    assert m.common.deleter_calls() == before + 1
    assert repr(cap).startswith('<capsule object "used_dltensor_versioned"')
    with pytest.raises(TypeError):
        m.common.values(cap)
    del cap
    gc.collect()
    assert m.common.deleter_calls() == before + 1


def test_capsule_rejected_for_a_mismatch_is_not_consumed(m):
    storage = np.arange(4, dtype=np.float64)
    cap = capsule(m, storage, shape=(4,), dtype=(2, 64, 1))
    with pytest.raises(TypeError):
        m.common.take_f32(cap)  # wrong dtype: not this parameter
    assert repr(cap).startswith('<capsule object "dltensor_versioned"')
    assert m.common.values(cap) == [0, 1, 2, 3]  # still usable


@pytest.mark.parametrize("make, expected", [
    (lambda: b"\x01\x02\x03", [1, 2, 3]),
    (lambda: bytearray(b"\x04\x05"), [4, 5]),
    (lambda: array.array("d", [1.5, -2.0]), [1.5, -2.0]),
    (lambda: array.array("i", [7, 8, 9]), [7, 8, 9]),
    (lambda: memoryview(bytearray(range(12))).cast("B", (3, 4))[::2], [0, 1, 2, 3, 8, 9, 10, 11]),
    (lambda: memoryview(array.array("q", [1, 2, 3, 4, 5, 6]))[::-2], [6, 4, 2]),
])
def test_buffer_protocol_objects_are_accepted(m, make, expected):
    assert m.common.values(make()) == expected


def test_buffer_export_is_released_with_its_last_tensor(m):
    b = bytearray(b"\x01\x02\x03")
    m.common.keep(b)  # C++ holds the buffer export
    with pytest.raises(BufferError):
        b.extend(b"\x04")  # an exported bytearray cannot resize
    m.common.release_kept()
    b.extend(b"\x04")  # released with the tensor
    assert b == bytearray(b"\x01\x02\x03\x04")


def test_buffer_protocol_dtypes_and_read_only(m):
    assert m.common.describe(array.array("f", [1.0]))["dtype"] == FLOAT32
    assert m.common.describe(array.array("H", [1]))["dtype"] == (1, 16, 1)
    assert m.common.describe(b"x")["dtype"] == (1, 8, 1)
    with pytest.raises(TypeError):
        m.imports.describe_rw(b"immutable bytes")
    buf = bytearray(3)
    m.common.fill(buf, 9)
    assert buf == bytearray(b"\x09\x09\x09")


def test_byte_offset_is_applied(m):
    storage = np.arange(8, dtype=np.float32)
    cap = capsule(m, storage, shape=(3,), byte_offset=8)
    info = m.common.describe(capsule(m, storage, shape=(3,), byte_offset=8))
    assert info["data"] == storage.ctypes.data + 8
    assert m.common.values(cap) == [2, 3, 4]


def test_byte_offset_counts_for_alignment(m):
    # The first element is at data + byte_offset: an aligned data pointer with an offset of 2 bytes is
    # misaligned for float32, and a typed parameter refuses it (a raw capsule has no producer to copy it).
    storage = np.arange(4, dtype=np.float32)
    assert storage.ctypes.data % 4 == 0
    with pytest.raises(TypeError):
        m.common.take_f32(capsule(m, storage, shape=(3,), byte_offset=2))
    assert m.common.take_f32(capsule(m, storage, shape=(3,), byte_offset=4)) == 1


def test_64_dimensions_are_accepted(m):
    # DLPack's and NumPy's dimension limit is inclusive (65 is refused: test_bad_input.py).
    storage = np.arange(2, dtype=np.float32)
    assert m.common.values(capsule(m, storage, shape=(2,), ndim=64)) == [0, 1]  # extents (2, 1, ..., 1)
    a = np.zeros((1,) * 63 + (2,), np.float32)
    assert m.common.describe(a)["ndim"] == 64 and m.common.values(a) == [0, 0]


def test_null_strides_read_as_c_order(m):
    storage = np.arange(6, dtype=np.float32)
    cap = capsule(m, storage, shape=(2, 3), strides=None)
    assert m.common.describe(capsule(m, storage, shape=(2, 3), strides=None))["strides"] == (3, 1)
    assert m.common.values(cap) == [0, 1, 2, 3, 4, 5]
    assert m.imports.c_contig_values(capsule(m, storage, shape=(2, 3), strides=None)) == [0, 1, 2, 3, 4, 5]


def test_negative_strides(m):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = a[::-1, ::-2]
    assert m.common.describe(v)["strides"] == (-4, -2)
    assert m.common.values(v) == v.ravel().tolist()
    storage = np.arange(5, dtype=np.float32)
    assert m.common.values(capsule(m, storage, shape=(5,), strides=(-1,), byte_offset=16)) == [4, 3, 2, 1, 0]


def test_numpy_strides_that_are_not_whole_elements_read_the_right_values(m):
    # complex128 with a byte stride of 24: aligned (a multiple of 8) but no element stride says it, so
    # NumPy's structures cannot be read as DLPack; the values must still come out right (a copy).
    raw = np.arange(12, dtype=np.float64)
    a = np.lib.stride_tricks.as_strided(raw.view(np.complex128), shape=(4,), strides=(24,))
    assert a.flags.aligned and a.tolist() == [complex(3 * i, 3 * i + 1) for i in range(4)]
    assert m.common.values(a) == a.tolist()
    with pytest.raises(TypeError):  # a writable parameter never gets the copy
        m.common.fill(a, 0.0)
    assert a.tolist() == [complex(3 * i, 3 * i + 1) for i in range(4)]


def test_zero_strides_broadcast(m):
    row = np.arange(3, dtype=np.float64)
    b = np.broadcast_to(row, (4, 3))
    assert m.common.describe(b)["strides"] == (0, 1)
    assert m.common.values(b) == b.ravel().tolist()
    t = torch.arange(3.0).expand(2, 3)
    assert m.common.values(t) == t.ravel().tolist()


@pytest.mark.parametrize("make", [
    lambda: np.array(3.25),
    lambda: torch.tensor(3.25, dtype=torch.float64),
    lambda: jnp.array(3.25, dtype=jnp.float32),
])
def test_zero_dimensional_tensors(m, make):
    x = make()
    info = m.common.describe(x)
    assert (info["ndim"], info["shape"], info["strides"]) == (0, (), ())
    assert m.common.values(x) == [3.25]
    assert m.imports.scalar_0d(np.array(2.5)) == 2.5


@pytest.mark.parametrize("make", [
    lambda: np.zeros((0, 3), dtype=np.float32),
    lambda: torch.zeros(0, 3),
    lambda: jnp.zeros((0, 3)),
])
def test_zero_size_tensors(m, make):
    x = make()
    assert m.common.describe(x)["shape"] == (0, 3)
    assert m.common.values(x) == []


def test_zero_size_capsule_with_null_data_is_accepted(m):
    assert m.common.values(capsule(m, None, shape=(0, 4), null_data=True)) == []


def test_writes_reach_the_callers_strided_tensor(m):
    a = np.zeros((4, 4), dtype=np.int32)
    m.common.fill(a[1::2, ::-3], 5)
    expected = np.zeros((4, 4), dtype=np.int32)
    expected[1::2, ::-3] = 5
    assert (a == expected).all()
    t = torch.zeros(3, 4, dtype=torch.float32)
    m.common.fill(t.T[1], 2.5)  # a column: stride 4
    assert t[:, 1].tolist() == [2.5, 2.5, 2.5] and t.sum().item() == 7.5


def test_none_is_accepted_only_where_declared(m):
    assert m.imports.count_none(None) == 0
    assert m.imports.count_none(np.zeros(2)) == 1
    with pytest.raises(TypeError):
        m.common.values(None)


def _dlpack_class(module, storage):
    """A producer type defined in `module`, exporting `storage` through __dlpack__."""
    return type("P", (), {"__module__": module,
                          "__dlpack__": lambda self, **kw: storage.__dlpack__(**kw),
                          "__dlpack_device__": lambda self: (1, 0)})


def test_type_cache_never_confuses_a_freed_type_with_a_new_one(m):
    # An immutable-framework type (classified as JAX by its module) is freed, and new types, likely at its
    # address, follow: the cache holds each type, so no later type inherits "immutable".
    import gc
    for _ in range(40):
        imm = _dlpack_class("jax._fake", np.zeros(3))()
        with pytest.raises(TypeError, match="incompatible function arguments"):
            m.common.fill(imm, 1.0)
        del imm
        gc.collect(0)  # the class is young: a young-generation collection frees it
        storage = np.zeros(3)
        m.common.fill(_dlpack_class("user_module", storage)(), 1.0)
        assert storage.tolist() == [1, 1, 1]


def test_more_producer_types_than_the_cache_holds(m):
    storages = [np.zeros(2) for _ in range(80)]
    types = [_dlpack_class("jax._fake" if i % 2 else "user_module", s) for i, s in enumerate(storages)]
    for _ in range(2):
        for i, t in enumerate(types):
            if i % 2:
                with pytest.raises(TypeError, match="incompatible function arguments"):
                    m.common.fill(t(), 1.0)
            else:
                m.common.fill(t(), float(i))
                assert storages[i].tolist() == [i, i]
