// dltensor/core/import.h: Python object (raw DLPack capsule, `__dlpack__`, buffer) -> validated DLPack tensor plus an
// owner: `import_tensor()` takes the route its type was given (producer.h), checks the `requirements`, accepts or
// converts (conversion.h). Every function is noexcept, allocates at most the owner, and leaves no error set.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "import_result.h"
#include "../tensor/requirements.h"

namespace dlt {

DLTENSOR_CORE bool import_tensor(PyObject *src, const requirements &r, bool convert, imported &out) noexcept;
DLTENSOR_CORE bool of_annotated_framework(PyObject *src, const requirements &r) noexcept;

/// Imports `src` for a parameter with requirements `r`: true, `out` filled (the caller takes over `out.owner`); else
/// false, nothing consumed, no error set, and `last_refusal()` says why. `convert`: conversion allowed (no
/// `.noconvert()`): a read-only parameter then takes a copy, or `numpy.asarray` of a list, number, `__array__` object.
DLTENSOR_CORE bool import_tensor(PyObject *src, const requirements &r, bool convert, imported &out) noexcept;

/// Is `src` a tensor (or subclass) of the framework `r.framework` (not 0)? Asked before import_tensor() when
/// conversion is off, so that overloads tell frameworks apart (`py::numpy` vs `py::pytorch`). False: refused
/// (`last_refusal()` says why), nothing read or consumed.
DLTENSOR_CORE bool of_annotated_framework(PyObject *src, const requirements &r) noexcept;

}  // namespace dlt
