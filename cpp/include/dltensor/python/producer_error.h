// dltensor/python/producer_error.h: what a producer's own code (`__dlpack__`, `astype`, ...) raised during an import:
// its first line, quoted by the refusal's explanation, or, for an exception that must reach the caller, the exception,
// kept per thread until the backend raises it (docs/reference.md §14).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#include "../tensor/config.h"

#include <csignal>
#include <cstring>

namespace dlt {

/// The calling thread's producer errors.
struct producer_error_state {
    PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;  ///< kept for the caller (owned)
    const void *reason_of = nullptr;  ///< the object whose producer gave `reason` (compared, never read)
    char reason[160] = {};            ///< "TypeError: ..." (first line, truncated)

    /// The calling thread's record (one per module, or one per shared core: DLTENSOR_PROCESS_WIDE).
    DLTENSOR_CORE_VISIBILITY static producer_error_state &of_this_thread() noexcept;
};

/// Must the current Python error reach the caller rather than become a refusal? (KeyboardInterrupt, SystemExit and
/// any other BaseException that is no Exception, MemoryError, RecursionError.)
inline bool error_must_reach_caller() noexcept {
    return !PyErr_ExceptionMatches(PyExc_Exception) || PyErr_ExceptionMatches(PyExc_MemoryError) ||
           PyErr_ExceptionMatches(PyExc_RecursionError);
}

/// Clears the current error, if any, raised by the producer of `src`: an exception that must reach the
/// caller is kept (the first one; see has_pending_error()), any other becomes `src`'s producer reason.
inline void absorb_producer_error(const void *src) noexcept {
    if (!PyErr_Occurred()) return;
    producer_error_state &s = producer_error_state::of_this_thread();
    if (error_must_reach_caller()) {
        if (!s.type) PyErr_Fetch(&s.type, &s.value, &s.traceback);
        else PyErr_Clear();
        return;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    s.reason[0] = '\0';
    s.reason_of = src;
    PyObject *text = value ? PyObject_Str(value) : nullptr;
    const char *utf8 = text ? PyUnicode_AsUTF8(text) : nullptr;
    const char *name = type ? ((PyTypeObject *) type)->tp_name : "Exception";
    if (const char *dot = std::strrchr(name, '.')) name = dot + 1;
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < sizeof s.reason; ++p) s.reason[n++] = *p;
    if (utf8 && *utf8) {
        for (const char *p = ": "; *p && n + 1 < sizeof s.reason; ++p) s.reason[n++] = *p;
        for (const char *p = utf8; *p && *p != '\n' && n + 1 < sizeof s.reason; ++p) s.reason[n++] = *p;
    }
    s.reason[n] = '\0';
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
}

/// The reason the producer of `src` gave when it last failed an import of it on this thread, else NULL.
inline const char *producer_reason(const void *src) noexcept {
    const producer_error_state &s = producer_error_state::of_this_thread();
    return s.reason_of == src && s.reason[0] ? s.reason : nullptr;
}

/// Forgets the producer reason (a refusal consumed it, or a later import of the object succeeded).
inline void forget_producer_reason() noexcept { producer_error_state::of_this_thread().reason_of = nullptr; }

/// Is an exception that must reach the caller kept on this thread?
inline bool has_pending_error() noexcept { return producer_error_state::of_this_thread().type != nullptr; }

/// Makes the kept exception the current Python error; false (nothing changed) when none is kept.
DLTENSOR_CORE bool restore_pending_error() noexcept;

namespace detail {
inline int raise_kept_error(void *kept) noexcept {
    auto **e = static_cast<PyObject **>(kept);
    PyErr_Restore(e[0], e[1], e[2]);
    PyMem_RawFree(kept);
    return -1;
}

/// Does a Python handler run for SIGINT (`signal.getsignal(SIGINT)` callable)? Not when the process ignores it
/// (a background job of a shell, `signal.signal(SIGINT, SIG_IGN)`) or left it to the system: then
/// re-arming SIGINT would drop the interrupt. Called with no error set; leaves none.
inline bool python_handles_sigint() noexcept {
    PyObject *signal = PyImport_ImportModule("_signal");
    PyObject *handler = signal ? PyObject_CallMethod(signal, "getsignal", "i", SIGINT) : nullptr;
    const bool handled = handler && PyCallable_Check(handler);
    Py_XDECREF(handler);
    Py_XDECREF(signal);
    PyErr_Clear();
    return handled;
}
}  // namespace detail

/// For a backend whose casters cannot raise (nanobind): the kept exception is raised at the next check for pending
/// work: a KeyboardInterrupt by re-arming SIGINT where a Python handler runs for it, else as a main-thread pending
/// call, or, where none is taken, as an unraisable error (`sys.unraisablehook`). Leaves no error set.
DLTENSOR_CORE void rearm_pending_error() noexcept;

}  // namespace dlt
