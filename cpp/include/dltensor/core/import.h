// dltensor/core/import.h: Python object -> validated DLPack tensor plus an owner that keeps it alive: the
// import routes, and `import_tensor()`, which takes the route its producer's type was given once
// (producer.h), accepts, or converts.
//
// The importer accepts raw DLPack capsules, objects with `__dlpack__` and buffer-protocol objects,
// validates every field before anything reads through it, checks a parameter's `requirements`, and (for
// read-only parameters, when the binding allows conversions) asks the producer for a converted copy
// (conversion.h). How capsules are consumed and owned: capsule_import.h.
//
// Hot path: no C++ exceptions, no allocation beyond the owner object, straight-line code from the type's
// route to the result. Every function is noexcept and leaves no Python error set.
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

/// Imports `src` for a parameter with requirements `r`. On success fills `out` (the caller takes over
/// `out.owner`) and returns true; otherwise returns false with no Python error set and nothing consumed,
/// and the calling thread's `last_refusal()` says why. `convert`: the binding allows implicit conversion
/// for this argument (not `.noconvert()`); a copy is still only made for read-only parameters. Objects
/// that are no tensor (lists, tuples, Python numbers, `__array__` objects) are read through
/// `numpy.asarray` under the same condition.
DLTENSOR_CORE bool import_tensor(PyObject *src, const requirements &r, bool convert, imported &out) noexcept;

/// Does `src` belong to the framework `r` annotates (`r.framework`, not 0)? What a framework-annotated
/// parameter asks before import_tensor() when conversion is off (overload resolution's first pass,
/// `.noconvert()`), so that overloads tell frameworks apart (`py::numpy` vs `py::pytorch`). A tensor of the
/// framework's subclasses belongs to it; a raw capsule, a buffer or another framework's tensor does not.
/// False: refused (the calling thread's `last_refusal()` says why), nothing read or consumed.
DLTENSOR_CORE bool of_annotated_framework(PyObject *src, const requirements &r) noexcept;

}  // namespace dlt
