// dltensor/python/py_ref-inl.h: the bodies of py_ref.h's core entry points (config.h: DLTENSOR_CORE).
#pragma once

#include "py_ref.h"

namespace dlt {

DLTENSOR_CORE py_ref call_method(PyObject *obj, const char *name, PyObject *const *args, size_t nargs,
                                 PyObject *kwnames) noexcept {
    py_ref fn = attribute(obj, name);
    return py_ref(fn ? PyObject_Vectorcall(fn.get(), args, nargs, kwnames) : nullptr);
}

DLTENSOR_CORE py_ref call_function(const char *module, const char *function, PyObject *arg) noexcept {
    py_ref mod = import_module(module);
    py_ref fn = attribute(mod.get(), function);
    return py_ref(fn ? PyObject_CallOneArg(fn.get(), arg) : nullptr);
}

}  // namespace dlt
