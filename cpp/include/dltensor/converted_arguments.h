// dltensor/converted_arguments.h: the arguments of this thread's calls in progress whose tensor is not
// the caller's object's memory (a converted copy, or a raw capsule's tensor, which the capsule no longer
// owns once consumed). A backend whose `reference_internal` parent is the first argument (pybind11's,
// also for functions) keeps such a tensor's owner with the view as well: the parent keeps nothing of it
// alive. Written against the CPython C API only.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <new>

#include "config.h"
#include "keep_alive.h"

namespace dlt {

/// One argument of a call in progress: the caller's object and the owner of the tensor bound instead.
struct converted_argument {
    PyObject *argument;        ///< the caller's object (borrowed: the call holds it)
    PyObject *owner;           ///< keeps the tensor bound for `argument` alive (a reference)
    converted_argument *next;  ///< the previous one remembered on this thread
};

namespace detail {
/// The newest converted argument remembered on the calling thread.
DLTENSOR_CORE converted_argument *&converted_arguments() noexcept
#if DLTENSOR_CORE_DEFINITIONS
{
    static thread_local converted_argument *newest = nullptr;
    return newest;
}
#else
;
#endif

inline constexpr char converted_argument_name[] = "dltensor.converted_argument";

/// Forgets `a` (wherever it is in the thread's list) and releases its owner.
inline void forget_converted_argument(converted_argument *a) noexcept {
    for (converted_argument **p = &converted_arguments(); *p; p = &(*p)->next)
        if (*p == a) { *p = a->next; break; }
    Py_DECREF(a->owner);
    delete a;
}
} // namespace detail

/// Remembers, for the calling thread, that `argument` was bound as the tensor `owner` keeps alive, until
/// the returned object (an owner capsule, which also holds `owner`) is freed: the backend keeps it with
/// the call. New reference, or NULL with a Python error set.
DLTENSOR_CORE PyObject *remember_converted_argument(PyObject *argument, PyObject *owner) noexcept
#if DLTENSOR_CORE_DEFINITIONS
{
    auto *a = new (std::nothrow) converted_argument{argument, owner, detail::converted_arguments()};
    if (!a) return PyErr_NoMemory();
    Py_INCREF(owner);
    PyObject *keeper = owner_capsule<converted_argument, detail::forget_converted_argument,
                                     detail::converted_argument_name>(a);
    if (!keeper) {
        Py_DECREF(owner);
        delete a;
        return nullptr;
    }
    detail::converted_arguments() = a;
    return keeper;
}
#else
;
#endif

/// The owner of the tensor bound last for `argument` by a call in progress on this thread (borrowed), or
/// NULL when `argument` was bound as itself (or by no call in progress).
DLTENSOR_CORE PyObject *converted_owner_of(PyObject *argument) noexcept
#if DLTENSOR_CORE_DEFINITIONS
{
    for (converted_argument *a = detail::converted_arguments(); a; a = a->next)
        if (a->argument == argument) return a->owner;
    return nullptr;
}
#else
;
#endif

} // namespace dlt
