// dltensor/python/interpreter.h: interpreter state for release paths (handle.h releases from any thread at any time,
// also from statics destroyed after finalization): does this thread hold the GIL, is the interpreter alive, and
// which interpreter runs (state is per interpreter, and an owner is released only in its own).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdint>

#include "../tensor/config.h"
#include "atomic_value.h"

namespace dlt {

/// The calling thread's state, or NULL (no GIL needed): Python 3.13's public call, earlier its private one.
DLTENSOR_HOT_INLINE PyThreadState *current_thread_state() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
    return PyThreadState_GetUnchecked();
#else
    return _PyThreadState_UncheckedGet();
#endif
}

namespace detail {
/// How many sub-interpreters hold dltensor state now (per extension module, or per shared core: process_state.h).
/// While none does, all state is the main interpreter's and hot paths ask nothing more.
DLTENSOR_PROCESS_WIDE atomic_value<int> &sub_interpreters_in_use() noexcept;

/// The main interpreter (found once).
DLTENSOR_HOT_INLINE PyInterpreterState *main_interpreter() noexcept {
    static atomic_value<PyInterpreterState *> main{nullptr};
    PyInterpreterState *m = main.load(atomic_order::relaxed);
    if (!m) main.store(m = PyInterpreterState_Main(), atomic_order::relaxed);
    return m;
}

/// The interpreter the calling thread runs, or NULL for the main one (also without a thread state).
DLTENSOR_HOT_INLINE PyInterpreterState *running_sub_interpreter() noexcept {
    PyThreadState *ts = current_thread_state();
    return ts && ts->interp != main_interpreter() ? ts->interp : nullptr;
}
}  // namespace detail

/// The ID of the interpreter the calling thread runs (`PyInterpreterState_GetID`; 0: the main one, also
/// the answer for a thread with no thread state). IDs are never reused within a process. Needs no GIL.
inline int64_t current_interpreter_id() noexcept {
    PyThreadState *ts = current_thread_state();
    return ts ? PyInterpreterState_GetID(ts->interp) : 0;
}

/// The calling thread's state when it holds the GIL, else NULL (before 3.12: the GIL holder's, if its OS thread is
/// the caller's). Meaningless after finalization: ask `Py_IsInitialized()` first where that can happen.
inline PyThreadState *thread_state_holding_gil() noexcept {
#if PY_VERSION_HEX >= 0x030C0000
    return current_thread_state();
#else
    PyThreadState *holder = current_thread_state();
    return holder && holder->thread_id == PyThread_get_thread_ident() ? holder : nullptr;
#endif
}

/// Does the calling thread hold the GIL? (See thread_state_holding_gil().)
inline bool thread_holds_gil() noexcept { return thread_state_holding_gil() != nullptr; }

/// Is the interpreter initialized and not finalizing? After this turns false, taking the GIL from a
/// thread that does not hold it hangs or crashes, and reference counts must not be touched.
inline bool interpreter_alive() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsInitialized() && !Py_IsFinalizing();
#else
    return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

}  // namespace dlt
