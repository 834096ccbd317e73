// dltensor/interpreter.h: the interpreter's state as release paths need it: does this thread hold the
// GIL, is the interpreter still there, and dropping a reference from any thread at any time (including
// from C++ statics destroyed after the interpreter finalized). Written against the CPython C API only.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

namespace dlt {

/// Does the calling thread hold the GIL? From Python 3.12 the current thread state is thread-local, and
/// reading it is cheaper than PyGILState_Check(); before, it names whichever thread holds the GIL.
/// Meaningless after finalization (PyGILState_Check() then says 1 on 3.11): ask `interpreter_alive()`
/// first where that can happen.
inline bool thread_holds_gil() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
    return PyThreadState_GetUnchecked() != nullptr;
#elif PY_VERSION_HEX >= 0x030C0000
    return _PyThreadState_UncheckedGet() != nullptr;
#else
    return PyGILState_Check() != 0;
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

/// Drops a reference from any thread: directly when this thread holds the GIL, else after taking it.
/// Once the interpreter is gone (a C++ static destroyed at exit) or finalizing (a thread that does not
/// hold the GIL), the reference is leaked: the process is ending, and touching Python would crash it.
inline void release_reference(PyObject *o) noexcept {
    if (!o || !Py_IsInitialized()) return;
    if (thread_holds_gil()) {
        Py_DECREF(o);
    } else if (interpreter_alive()) {
        PyGILState_STATE st = PyGILState_Ensure();
        Py_DECREF(o);
        PyGILState_Release(st);
    }
}

/// Runs `f()` with the GIL held, from any thread; skips it once the interpreter is gone or finalizing
/// (then returns false). For releases that are more than one decref (a deleter, a nanobind handle).
template <typename F> inline bool with_gil(F &&f) noexcept {
    if (!Py_IsInitialized()) return false;
    if (thread_holds_gil()) { f(); return true; }
    if (!interpreter_alive()) return false;
    PyGILState_STATE st = PyGILState_Ensure();
    f();
    PyGILState_Release(st);
    return true;
}

} // namespace dlt
