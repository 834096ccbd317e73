// dltensor/core/refusal_errors.h: dltensor's reasons in the TypeError of a call that no overload took, for the
// functions of a module that opts in with `py::explain_refusals(m)` (docs/reference.md §16).
//
// Neither binding library lets a caster add to the "incompatible function arguments" TypeError it raises
// after every overload failed, and a caster cannot raise its own without ending overload resolution. So
// `explain_refusals()` points each function's vectorcall slot (CPython's public call protocol, found
// through `tp_vectorcall_offset`) at `explained_call()`, which calls the original and, when the call failed
// with that TypeError after dltensor refused arguments in it, appends one line per refusal: which argument,
// what was passed, what the parameter requires. Any other error, a call without a refusal, and the functions
// of other modules are left as they are. Backend-independent: CPython's C API only.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "../tensor/refusal.h"
#include "refusal_log.h"

namespace dlt {

/// Every function of the extension module `module`, and every method of its classes: where a call fails
/// because no overload took its arguments and a `py::dltensor` parameter refused one, the TypeError names
/// each refused argument, what was passed and what the parameter requires (the text of
/// `dltensor.explain()`, without dltensor installed). Call it once at the end of the module's body, after
/// the last `def`; functions added later are not covered, nor functions without a vectorcall (pybind11 2.x).
/// Returns false, with a Python error set, on failure.
DLTENSOR_CORE bool explain_refusals(PyObject *module) noexcept;

}  // namespace dlt
