// dltensor/core/refusal_log-inl.h: the bodies of refusal_log.h's core entry points (config.h: DLTENSOR_CORE).
#pragma once

#include "refusal_log.h"
#include "../python/process_state-inl.h"
#include "../tensor/refusal-inl.h"

#include <chrono>  // the record's time stamp (the definitions only)

namespace dlt {

DLTENSOR_CORE void log_refusal(PyObject *src, const char *signature) noexcept {
    refusal_log &log = refusal_log::of_this_thread();
    refusal_log::slot &slot = log.entries[log.written % refusal_log::capacity];
    slot.r = last_refusal();  // begins the member's lifetime (a trivial assignment to a union member)
    slot.r.object = (uintptr_t) src;
    slot.r.signature = signature;
    slot.r.when = (uint64_t) std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
    ++log.written;
    if (log.count < refusal_log::capacity) ++log.count;
    detail::register_refusal_reader();
}

DLTENSOR_CORE DLTENSOR_CORE_COLD std::string refusal_message(PyObject *src, const char *signature) {
    return std::string("cannot convert ") + Py_TYPE(src)->tp_name + " to " + parameter_form(signature) + ": " +
           explain_last_refusal();
}

DLTENSOR_CORE DLTENSOR_CORE_COLD void set_refusal_type_error(PyObject *src, const char *signature) noexcept {
    try {
        PyErr_SetString(PyExc_TypeError, refusal_message(src, signature).c_str());
    } catch (...) {  // no memory for the message
        PyErr_Format(PyExc_TypeError, "cannot convert %s to a tensor parameter", Py_TYPE(src)->tp_name);
    }
}

}  // namespace dlt
