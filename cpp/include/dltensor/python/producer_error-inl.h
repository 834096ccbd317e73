// dltensor/python/producer_error-inl.h: the bodies of producer_error.h's core entry points (config.h: DLTENSOR_CORE).
#pragma once

#include "producer_error.h"

namespace dlt {

DLTENSOR_CORE bool restore_pending_error() noexcept {
    producer_error_state &s = producer_error_state::of_this_thread();
    if (!s.type) return false;
    PyErr_Restore(s.type, s.value, s.traceback);
    s.type = s.value = s.traceback = nullptr;
    return true;
}

DLTENSOR_CORE void rearm_pending_error() noexcept {
    if (!restore_pending_error()) return;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt) && detail::python_handles_sigint()) {
#if PY_VERSION_HEX >= 0x030A0000
        const bool rearmed = PyErr_SetInterruptEx(SIGINT) == 0;
#else
        const bool rearmed = (PyErr_SetInterrupt(), true);
#endif
        if (rearmed) {
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(traceback);
            return;
        }
    }
    auto **kept = static_cast<PyObject **>(PyMem_RawMalloc(3 * sizeof(PyObject *)));
    if (kept) {
        kept[0] = type, kept[1] = value, kept[2] = traceback;
        if (Py_AddPendingCall(detail::raise_kept_error, kept) == 0) return;
        PyMem_RawFree(kept);
    }
    PyErr_Restore(type, value, traceback);
    PyErr_WriteUnraisable(nullptr);
}

}  // namespace dlt
