"""Runs in the interpreter under test (stdlib only, Python 3.9 syntax): imports the module built for it,
exercises import, export and ownership with stdlib producers, and exits normally while C++ statics
still hold tensors (their releases must be skipped after finalization, never crash).

    python exercise.py BUILD_DIR MODULE_NAME

Prints one "ok ..." line per stage and "holding N tensors until exit" last.
"""
import array
import gc
import importlib
import importlib.util
import struct
import sys

sys.path.insert(0, sys.argv[1])
m = importlib.import_module(sys.argv[2])


def raises(exc, f, *args):
    try:
        f(*args)
    except exc:
        return True
    return False


def frees():
    gc.collect()
    return m.frees()


def check(cond, what):
    if not cond:
        raise AssertionError(what)


check(m.python_version_hex >> 16 == sys.hexversion >> 16, "module built for %x, run on %x"
      % (m.python_version_hex, sys.hexversion))
print("python %d.%d %s" % (sys.version_info[0], sys.version_info[1], m.backend))

# Import, read-only parameters: buffers (writable and not) and C++-produced capsules of both layouts.
doubles = struct.pack("3d", 1.0, 2.0, 3.0)
check(m.sum(array.array("d", [1.0, 2.0, 3.0])) == 6.0, "sum(array.array)")
check(m.sum(memoryview(array.array("d", [1.0, 2.0, 3.0]))) == 6.0, "sum(memoryview(array.array))")
check(m.sum(memoryview(doubles).cast("d")) == 6.0, "sum(read-only memoryview)")
check(m.sum(memoryview(bytearray(doubles)).cast("d")[::2]) == 4.0, "sum(strided memoryview)")
check(m.byte_sum(bytearray(b"\x01\x02\x03")) == 6, "byte_sum(bytearray)")
check(m.byte_sum(b"\x01\x02\x03") == 6, "byte_sum(bytes)")
before = frees()[0]
check(m.sum(m.produce(4)) == 6.0, "sum(versioned capsule)")
check(m.sum(m.produce(5, False)) == 10.0, "sum(unversioned capsule)")
check(frees()[0] == before + 2, "each consumed capsule freed once: %r" % (frees(),))
unused = m.produce(3)
del unused
check(frees()[0] == before + 3, "an unconsumed capsule is freed by its destructor")
# A dtype mismatch: a read-only parameter converts buffers through NumPy, and refuses them without it.
if importlib.util.find_spec("numpy") is None:
    check(raises(TypeError, m.sum, array.array("i", [1, 2, 3])), "no NumPy: a dtype mismatch is refused")
else:
    check(m.sum(array.array("i", [1, 2, 3])) == 6.0, "a dtype mismatch is converted through NumPy")
check(raises(TypeError, m.scale, array.array("i", [1, 2, 3]), 2.0), "a writable parameter never converts")
if importlib.util.find_spec("numpy") is None:
    check(raises(TypeError, m.sum, [1.0, 2.0]), "no NumPy: a list is refused")
else:
    check(m.sum([1.0, 2.0]) == 3.0, "a list is read through numpy.asarray by a read-only parameter")
check(raises(TypeError, m.scale, [1.0, 2.0], 2.0), "a writable parameter refuses a list")
print("ok import")

# Import, writable parameters: writes reach the caller; read-only sources are refused.
a = array.array("d", [1.0, 2.0, 3.0])
m.scale(a, 2.0)
check(list(a) == [2.0, 4.0, 6.0], "scale(array.array): %r" % (a,))
ba = bytearray(doubles)
m.scale(memoryview(ba).cast("d"), 10.0)
check(struct.unpack("3d", bytes(ba)) == (10.0, 20.0, 30.0), "scale(memoryview(bytearray))")
ba = bytearray(3)
m.fill_bytes(ba, 7)
check(ba == bytearray(b"\x07\x07\x07"), "fill_bytes(bytearray)")
check(raises(TypeError, m.scale, memoryview(doubles).cast("d"), 2.0), "a read-only buffer is not writable")
check(raises(TypeError, m.fill_bytes, b"abc", 1), "bytes are not writable")
before = frees()[0]
m.scale(m.produce(3), 2.0)
check(frees()[0] == before + 1, "a capsule bound to a writable parameter is freed once")
print("ok write")

# Export: a return without a framework annotation has the buffer protocol and comes back through the
# module; its owner is freed exactly once, after the last view.
before = frees()[1]
r = m.arange(4)
check(memoryview(r).tolist() == [0.0, 1.0, 2.0, 3.0], "memoryview(arange(4))")
check(m.sum(r) == 6.0, "sum(arange(4))")
m.scale(r, 2.0)
check(memoryview(r).tolist() == [0.0, 2.0, 4.0, 6.0], "scale(arange(4))")
view = memoryview(r)
del r
check(frees()[1] == before, "owner alive while a memoryview holds the export")
check(view.tolist() == [0.0, 2.0, 4.0, 6.0], "memoryview outlives the returned object")
view.release()
del view
check(frees()[1] == before + 1, "owner freed once after the last view: %r" % (frees(),))
print("ok export")

# Ownership: tensors kept in a C++ static outlive their Python producers; release frees each owner once.
before = frees()
a = array.array("d", [1.0, 2.0])
m.keep(a)
check(raises(BufferError, a.append, 3.0), "array.array stays exported while C++ keeps it")
c = m.produce(4)
m.keep(c)
del c
r = m.arange(3)
m.keep(r)
del r
check(frees() == before, "nothing freed while kept: %r" % (frees(),))
check(m.kept_sum() == 3.0 + 6.0 + 3.0, "kept_sum")
m.release()
after = frees()
check(after == (before[0] + 1, before[1] + 1),
      "each kept owner freed once on release: %r -> %r" % (before, after))
a.append(3.0)  # the buffer export was released
m.release()
check(frees() == after, "nothing freed twice")
print("ok ownership")

# Tensors held in C++ statics until the interpreter exits: array.array, a C++-produced capsule, a
# memoryview, and a returned tensor.
n = m.keep_until_exit(array.array("d", [1.0, 2.0]))
n = m.keep_until_exit(m.produce(3))
n = m.keep_until_exit(memoryview(bytearray(b"abcd")))
n = m.keep_until_exit(m.arange(2))
print("holding %d tensors until exit" % n)
