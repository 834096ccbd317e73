// dltensor/frameworks/numpy_arrays-inl.h: the bodies of numpy_arrays.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "numpy_arrays.h"
#include "../python/process_state-inl.h"

namespace dlt {

DLTENSOR_CORE PyObject *numpy_ml_dtypes_view(PyObject *bits_array, const char *name) noexcept {
    const py_ref bits(bits_array);
    if (!bits) return nullptr;
    py_ref ml = import_module("ml_dtypes");
    py_ref type = attribute(ml.get(), name);
    if (!type) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "dltensor: NumPy has no %s dtype; returning a %s tensor as a NumPy array "
                     "needs the ml_dtypes package (pip install ml_dtypes)%s",
                     name, name, ml ? ", of a version that has it" : "");
        return nullptr;
    }
    PyObject *args[] = {type.get()};
    return call_method(bits.get(), "view", args, 1).release();
}

}  // namespace dlt
