// dltensor/python/process_state-inl.h: the bodies of process_state.h's core entry points (config.h: DLTENSOR_CORE).
#pragma once

#include "process_state.h"
#include "atomic_value.h"
#include "py_ref-inl.h"

namespace dlt {

namespace detail {

DLTENSOR_CORE_COLD
DLTENSOR_CORE interpreter_states *sub_interpreter_states(PyInterpreterState *interp) noexcept {
    const int64_t id = PyInterpreterState_GetID(interp);
    cached_states &c = states_cache();
    if (c.id == id) return c.states;
    PyObject *dict = PyInterpreterState_GetDict(interp);  // borrowed
    // The key names this copy of dltensor's core: every module (or shared core) keeps its own states.
    PyObject *key =
        dict ? PyUnicode_FromFormat("%s.%p", interpreter_states_name, (void *) &sub_interpreters_in_use()) : nullptr;
    PyObject *capsule = key ? PyDict_GetItemWithError(dict, key) : nullptr;  // borrowed
    interpreter_states *s = nullptr;
    if (capsule) {
        s = static_cast<interpreter_states *>(PyCapsule_GetPointer(capsule, interpreter_states_name));
    } else if (key && !PyErr_Occurred()) {
        s = new (std::nothrow) interpreter_states();
        PyObject *fresh = s ? PyCapsule_New(s, interpreter_states_name, free_interpreter_states) : nullptr;
        if (!fresh) {
            delete s;
            s = nullptr;
        } else {
            s->id = id;
            sub_interpreters_in_use().fetch_add(1, atomic_order::acq_rel);  // undone by the capsule's end
            PyObject *kept = PyDict_SetDefault(dict, key, fresh);           // borrowed: the first one set
            s = kept ? static_cast<interpreter_states *>(PyCapsule_GetPointer(kept, interpreter_states_name)) : nullptr;
            Py_DECREF(fresh);  // the dict's now, or freed (and uncounted) when another thread's came first
        }
    }
    Py_XDECREF(key);
    PyErr_Clear();
    if (s) c = cached_states{id, s};
    return s;
}

}  // namespace detail

}  // namespace dlt
