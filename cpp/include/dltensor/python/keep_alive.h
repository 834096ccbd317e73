// dltensor/python/keep_alive.h: the one way dltensor keeps memory alive for Python. An owner is a Python object
// (what a tensor handle, a NumPy array's base or a framework's tensor holds) that, when freed, ends what
// keeps the memory: an *owner capsule* holds one C++ object or C struct and ends it exactly once; an
// *owner pair* keeps two owners alive together. Every owner dltensor makes is one of these: the
// accepted DLPack tensors (capsule_import.h), buffer exports (buffer_import.h), adopted containers
// (construction.h), references to a tensor handle (export.h) and the nanobind backend's handle keeper.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"

namespace dlt {

/// While alive, the calling thread's Python error indicator is put aside (and restored at the end): for
/// code that runs while a caller may be raising (a destructor during unwinding, a consumer refusing a
/// capsule), so that what that code raises or clears never replaces the caller's error. What that code
/// leaves set is cleared at the end. Costs one PyErr_Occurred() (twice) when no error is set.
class saved_error {
public:
    DLTENSOR_HOT_INLINE saved_error() noexcept {
        if (PyErr_Occurred()) PyErr_Fetch(&type_, &value_, &traceback_);
    }
    DLTENSOR_HOT_INLINE ~saved_error() {
        if (PyErr_Occurred()) PyErr_Clear();
        if (type_) PyErr_Restore(type_, value_, traceback_);
    }
    saved_error(const saved_error &) = delete;
    saved_error &operator=(const saved_error &) = delete;

private:
    PyObject *type_ = nullptr, *value_ = nullptr, *traceback_ = nullptr;
};

namespace detail {
template <typename T, void (*End)(T *) noexcept, const char *Name>
void owner_capsule_destructor(PyObject *self) noexcept {
    saved_error saved;  // clears what the lookup or End raised; restores the caller's
    if (T *obj = static_cast<T *>(PyCapsule_GetPointer(self, Name))) End(obj);
}
}  // namespace detail

/// A new owner capsule named `Name` (a `char` array with linkage: `PyCapsule_IsValid(o, Name)` tells this
/// kind of owner) that calls `End(obj)` exactly once, when it is freed: with the GIL held, whatever the
/// caller's error state, which stays as it was. NULL, with a Python error set, when it cannot be made;
/// `obj` is then still the caller's to end. A consumer may take `End`'s job over by clearing the
/// destructor (`PyCapsule_SetDestructor(capsule, NULL)`, as restore_consumed_capsule() does).
template <typename T, void (*End)(T *) noexcept, const char *Name> PyObject *owner_capsule(T *obj) noexcept {
    return PyCapsule_New(obj, Name, detail::owner_capsule_destructor<T, End, Name>);
}

/// `End` for an object made with `new`.
template <typename T> void delete_object(T *obj) noexcept { delete obj; }

/// A new owner that keeps both `first` and `second` alive (a tuple), or NULL with a Python error set.
/// Invisible to the garbage collector, like the C++ tensor that holds it: a class that reports its tensor
/// members (nb::find) accounts for their references itself.
inline PyObject *owner_pair(PyObject *first, PyObject *second) noexcept {
    PyObject *pair = PyTuple_Pack(2, first, second);
    if (pair) PyObject_GC_UnTrack(pair);
    return pair;
}

}  // namespace dlt
