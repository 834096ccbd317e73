// dltensor/core/converted_arguments.h: the arguments of this thread's calls in progress whose tensor is not the
// caller's object's memory (a converted copy, a consumed raw capsule's tensor): a `reference_internal` view whose
// parent is such an argument (pybind11) also keeps the tensor's owner.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"

namespace dlt {

/// One argument of a call in progress: the caller's object and the owner of the tensor bound instead. Held by the
/// argument's caster (no allocation), so it lives as long as the call's arguments (pybind11: past the return's cast).
struct converted_argument {
    PyObject *argument = nullptr;        ///< the caller's object (borrowed: the call holds it)
    PyObject *owner = nullptr;           ///< keeps the tensor bound for `argument` alive (a reference)
    converted_argument *next = nullptr;  ///< the one remembered before it on this thread
};

namespace detail {
/// The newest converted argument remembered on the calling thread.
DLTENSOR_CORE converted_argument *&converted_arguments() noexcept;
}  // namespace detail

/// Remembers in `a`, for the calling thread, that `argument` was bound as the tensor `owner` keeps alive,
/// holding a reference to `owner` until forget_converted_argument(a).
inline void remember_converted_argument(converted_argument &a, PyObject *argument, PyObject *owner) noexcept {
    Py_INCREF(owner);
    a.argument = argument;
    a.owner = owner;
    a.next = detail::converted_arguments();
    detail::converted_arguments() = &a;
}

/// Forgets `a` (anywhere in the thread's list; nothing when it remembers nothing) and releases its owner.
inline void forget_converted_argument(converted_argument &a) noexcept {
    if (!a.owner) return;
    for (converted_argument **p = &detail::converted_arguments(); *p; p = &(*p)->next)
        if (*p == &a) {
            *p = a.next;
            break;
        }
    Py_CLEAR(a.owner);
}

/// Moves what `from` remembers into `to` (a caster returned by value), keeping its place in the list.
inline void move_converted_argument(converted_argument &to, converted_argument &from) noexcept {
    to = from;
    from.owner = nullptr;
    if (!to.owner) return;
    for (converted_argument **p = &detail::converted_arguments(); *p; p = &(*p)->next)
        if (*p == &from) {
            *p = &to;
            break;
        }
}

/// The owner of the tensor bound last for `argument` by a call in progress on this thread (borrowed), or
/// NULL when `argument` was bound as itself (or by no call in progress).
DLTENSOR_CORE PyObject *converted_owner_of(PyObject *argument) noexcept;

}  // namespace dlt
