"""Bad input never crashes and never leaks: non-tensors, producers whose __dlpack__ raises or returns
garbage, and capsules with every malformed field get a TypeError ("not this parameter"); a rejected
capsule is not consumed, and its producer still frees it exactly once."""
import gc

import numpy as np
import pytest

from producer import Raising, Returning, capsule

INCOMPATIBLE = "incompatible function arguments"


@pytest.mark.parametrize("value", [None, 0, 1.5, 2j, True, "text", b"", [1, 2], (1.0,), {"a": 1},
                                   object(), np.float64(1.0).item, type, range(3)])
def test_non_tensors_are_rejected(m, value):
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.common.take_f32(value)


# (MemoryError, KeyboardInterrupt and the other exceptions that must reach the caller are no refusal:
# tests/test_seams.py, in subprocesses.)
@pytest.mark.parametrize("exc", [RuntimeError("boom"), BufferError("no"), TypeError("bad kw"),
                                 ValueError("x"), AttributeError("gone")])
def test_dlpack_that_raises_is_rejected(m, exc):
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.common.values(Raising(exc))


@pytest.mark.parametrize("value", [None, 42, "dltensor", np.zeros(2), object()])
def test_dlpack_returning_garbage_is_rejected(m, value):
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.common.values(Returning(value))


MALFORMED = {
    "wrong name": dict(shape=(2,), name="not_dltensor"),
    "used name": dict(shape=(2,), name="used_dltensor"),
    "ndim -1": dict(shape=(2,), ndim=-1),
    "ndim 65": dict(shape=(2,), ndim=65),
    "ndim 1000": dict(shape=(2,), ndim=1000),
    "negative extent": dict(shape=(2, -3)),
    "NULL shape": dict(shape=(2,), null_shape=True),
    "NULL data with elements": dict(shape=(2,), null_data=True),
    "unknown dtype code": dict(shape=(2,), dtype=(99, 32, 1)),
    "opaque dtype": dict(shape=(2,), dtype=(3, 64, 1)),
    "sub-byte float4 dtype": dict(shape=(2,), dtype=(17, 4, 1)),  # (float8, code 10, is valid: test_float8.py)
    "odd float width": dict(shape=(2,), dtype=(2, 12, 1)),
    "vector lanes": dict(shape=(2,), dtype=(2, 32, 4)),
    "zero lanes": dict(shape=(2,), dtype=(2, 32, 0)),
    "bool of 1 bit": dict(shape=(2,), dtype=(6, 1, 1)),
    "unknown device": dict(shape=(2,), device=(99, 0)),
    "device 0": dict(shape=(2,), device=(0, 0)),
    "version major 2": dict(shape=(2,), version=(2, 0)),
    "version major 0": dict(shape=(2,), version=(0, 9)),
    "element count overflows": dict(shape=(2**62, 2**62)),
    "byte size overflows": dict(shape=(2**61, 8), dtype=(2, 64, 1)),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize("via", ["capsule", "__dlpack__"])
def test_malformed_capsule_is_rejected_and_not_consumed(m, case, via):
    spec = MALFORMED[case]
    storage = np.zeros(4, np.float32)
    gc.collect()
    before = m.common.deleter_calls()
    cap = capsule(m, storage, **spec)
    name_before = repr(cap).split('"')[1]
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.common.values(cap if via == "capsule" else Returning(cap))
    assert repr(cap).split('"')[1] == name_before  # not consumed
    assert m.common.deleter_calls() == before  # not freed by the consumer
    del cap
    gc.collect()
    assert m.common.deleter_calls() == before + 1  # the producer frees it, exactly once


def test_newer_minor_version_is_accepted(m):
    storage = np.arange(2, dtype=np.float32)
    assert m.common.values(capsule(m, storage, shape=(2,), version=(1, 99))) == [0, 1]


def test_unknown_flags_do_not_matter(m):
    # Flags other than read-only and is-copied (sub-byte padded, and undefined bits) never make a tensor
    # read-only: a writable parameter binds and the write lands. (IS_COPIED: test_producers.py.)
    storage = np.arange(2, dtype=np.float32)
    assert m.common.values(capsule(m, storage, shape=(2,), flags=0b110)) == [0, 1]
    m.common.fill(capsule(m, storage, shape=(2,), flags=0b100 | (1 << 40)), 3.0)
    assert storage.tolist() == [3, 3]


def test_big_endian_buffer_is_rejected_or_converted(m):
    be = np.arange(3, dtype=">f4")
    with pytest.raises(TypeError):
        m.common.take_f32(be)  # writable: needs a byte swap, i.e. a copy
    assert m.conversion.ro_f64(be)["values"] == [0, 1, 2]  # read-only: converted by NumPy


def test_non_native_struct_formats_are_rejected(m):
    mv = memoryview(bytearray(8)).cast("B").cast("d")
    assert m.common.values(mv) == [0.0]
    import array
    with pytest.raises(TypeError):
        m.common.take_f32(memoryview(array.array("u", "ab")))  # unicode chars: no DLPack dtype
