// dltensor/interpreter.h: the interpreter's state as release paths need it (handle.h drops references
// from any thread at any time, including from C++ statics destroyed after the interpreter finalized):
// does this thread hold the GIL, and is the interpreter still there. Written against the CPython C API
// only.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

namespace dlt {

/// Does the calling thread hold the GIL? From Python 3.12 the current thread state is thread-local, and
/// reading it is cheaper than PyGILState_Check(). Before, it names whichever thread holds the GIL, so its
/// OS thread is compared with the caller's (cheaper than PyGILState_Check()'s thread-specific lookup).
/// Meaningless after finalization: ask `Py_IsInitialized()` first where that can happen.
inline bool thread_holds_gil() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
    return PyThreadState_GetUnchecked() != nullptr;
#elif PY_VERSION_HEX >= 0x030C0000
    return _PyThreadState_UncheckedGet() != nullptr;
#else
    const PyThreadState *holder = _PyThreadState_UncheckedGet();
    return holder && holder->thread_id == PyThread_get_thread_ident();
#endif
}

/// Is the interpreter initialized and not finalizing? After this turns false, taking the GIL from a
/// thread that does not hold it hangs or crashes, and reference counts must not be touched.
inline bool interpreter_alive() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsInitialized() && !Py_IsFinalizing();
#else
    return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

} // namespace dlt
