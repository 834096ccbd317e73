// dltensor/core/refusal_errors.h: dltensor's reasons in the TypeError of a call no overload took, for a module that
// opts in with `py::explain_refusals(m)` (docs/reference.md §16): each function's vectorcall slot calls the original
// and appends one line per refused argument to its "incompatible function arguments" TypeError.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "../tensor/refusal.h"
#include "refusal_log.h"

namespace dlt {

/// For every function and class method of the extension module `module`: a call no overload took names each argument
/// a `py::dltensor` parameter refused, and why, in its TypeError. Call once after the last `def` (later functions, and
/// pybind11 2.x's without a vectorcall, are not covered). False, with a Python error set, on failure.
DLTENSOR_CORE bool explain_refusals(PyObject *module) noexcept;

}  // namespace dlt
