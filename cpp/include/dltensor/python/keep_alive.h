// dltensor/python/keep_alive.h: the one way dltensor keeps memory alive for Python, a Python owner: an *owner
// capsule* holds one C++ object or C struct and ends it exactly once when freed; an *owner pair* keeps two owners.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"

namespace dlt {

/// While alive, the thread's Python error is put aside; at the end what was raised meanwhile is cleared and it is
/// restored. For code that runs while a caller may be raising (a destructor, a consumer refusing a capsule).
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

/// A new owner capsule named `Name` (a `char` array with linkage; `PyCapsule_IsValid(o, Name)` tells the kind) that
/// calls `End(obj)` exactly once when freed, with the GIL, leaving the caller's error as it was (clearing its
/// destructor takes `End`'s job over). NULL, with an error set, when it cannot be made: `obj` stays the caller's.
template <typename T, void (*End)(T *) noexcept, const char *Name> PyObject *owner_capsule(T *obj) noexcept {
    return PyCapsule_New(obj, Name, detail::owner_capsule_destructor<T, End, Name>);
}

/// `End` for an object made with `new`.
template <typename T> void delete_object(T *obj) noexcept { delete obj; }

/// A new owner that keeps both `first` and `second` alive (a tuple untracked by the garbage collector, like the C++
/// tensor that holds it), or NULL with a Python error set.
inline PyObject *owner_pair(PyObject *first, PyObject *second) noexcept {
    PyObject *pair = PyTuple_Pack(2, first, second);
    if (pair) PyObject_GC_UnTrack(pair);
    return pair;
}

}  // namespace dlt
