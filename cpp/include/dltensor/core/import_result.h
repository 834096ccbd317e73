// dltensor/core/import_result.h: what an import hands a backend: the validated view, the reference that keeps
// it alive, and where it came from. Every import route (import.h) fills one.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdint>

#include "../tensor/dlpack.h"
#include "../frameworks/framework.h"
#include "../python/py_ref.h"

namespace dlt {

/// The result of an import; only `seen` is meaningful when a route refuses the tensor. On every argument's hot path:
/// nothing over 32 bytes is cleared or copied (docs/architecture.md: hot paths under `-Os`).
struct imported {
    /// The validated view; strides may be NULL (C order). Set by the route that accepts it, and not read
    /// otherwise (left uninitialized until then).
    dlpack::Tensor tensor;
    py_ref owner;  ///< Keeps `tensor` alive; a backend takes it over (`owner.release()`).
    /// The caller's object the tensor came from (after a conversion: the converted copy), borrowed: `owner`
    /// keeps it alive. What a binding returns for the tensor (`f(x) is x`). NULL for raw capsules.
    PyObject *source = nullptr;
    int source_framework = fw_none;  ///< The framework `source` belongs to (frameworks/ numbers).
    void *stream = nullptr;          ///< The producer's current work stream (exchange API, non-CPU), else NULL.
    /// The caller's raw DLPack capsule this import consumed (borrowed), else NULL: a backend hands the tensor
    /// back to it (capsule_import.h: restore_consumed_capsule) when the call does not go ahead.
    PyObject *consumed = nullptr;
    /// The dtype of the tensor a route found, also when it refused it: what a conversion starts from
    /// (`bits == 0`: no tensor was found).
    dlpack::DataType seen{0, 0, 0};
    int64_t shape[dlpack::max_ndim];    ///< Storage for `tensor.shape` when the importer derives it.
    int64_t strides[dlpack::max_ndim];  ///< Storage for `tensor.strides` when the importer derives them.
};

}  // namespace dlt
