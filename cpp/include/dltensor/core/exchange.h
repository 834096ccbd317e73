// dltensor/core/exchange.h: the DLPack C exchange API (`type(t).__dlpack_c_exchange_api__`) as a consumer uses it:
// per-type discovery and framework-side allocation (frameworks/pytorch_checks.h: what PyTorch needs beyond it).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstring>

#include "../tensor/config.h"
#include "capsule_import.h"
#include "../tensor/dlpack.h"
#include "import_result.h"
#include "../tensor/dtypes.h"
#include "../python/interpreter.h"
#include "../python/process_state.h"
#include "../tensor/strides.h"

namespace dlt {

/// The exchange API that a type publishes, at a major version dltensor reads (walking `prev_api` from a
/// newer table), or NULL. Leaves no Python error set.
DLTENSOR_CORE const dlpack::ExchangeAPI *find_exchange_api(PyTypeObject *tp) noexcept;

/// Error sink for `managed_tensor_allocator`: raises `kind(message)` (RuntimeError for unknown kinds).
inline void set_allocator_error(void *, const char *kind, const char *message) {
    PyGILState_STATE st = PyGILState_Ensure();
    PyObject *exc = PyExc_RuntimeError;
    if (kind && std::strcmp(kind, "MemoryError") == 0) exc = PyExc_MemoryError;
    else if (kind && std::strcmp(kind, "ValueError") == 0) exc = PyExc_ValueError;
    else if (kind && std::strcmp(kind, "TypeError") == 0) exc = PyExc_TypeError;
    PyErr_SetString(exc, message ? message : "tensor allocation failed");
    PyGILState_Release(st);
}

/// Allocates an uninitialized tensor through the framework's allocator (on CUDA, its caching allocator).
/// Returns the owning managed tensor, or NULL with a Python error set.
inline dlpack::ManagedTensorVersioned *allocate(const dlpack::ExchangeAPI *api, dlpack::DataType dtype, int32_t ndim,
                                                const int64_t *shape, dlpack::Device device) noexcept {
    if (!api) {
        PyErr_SetString(PyExc_RuntimeError, "dltensor: the framework publishes no DLPack exchange API to "
                                            "allocate through (its tensor type has no usable "
                                            "__dlpack_c_exchange_api__: a newer version of it may)");
        return nullptr;
    }
    dlpack::Tensor proto{};
    proto.device = device;
    proto.ndim = ndim;
    proto.dtype = dtype;
    proto.shape = const_cast<int64_t *>(shape);
    dlpack::ManagedTensorVersioned *out = nullptr;
    if (api->managed_tensor_allocator(&proto, &out, nullptr, set_allocator_error) != 0 || !out) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "dltensor: tensor allocation failed");
        return nullptr;
    }
    return out;
}

/// `empty()` through a framework's exchange API allocator: fills `out` (a view of `out.shape[0..ndim)` in `order`, its
/// owner, the device's current stream). The allocators are row-major: an 'F' tensor is the transpose of a C one of
/// the reversed shape (strides in `out.strides`). 0, or -1 with a Python error set.
inline int allocate_through_exchange_api(const dlpack::ExchangeAPI *api, dlpack::DataType dtype, size_t ndim,
                                         dlpack::Device device, char order, imported &out) noexcept {
    const bool transposed = order == 'F' && ndim > 1;
    int64_t reversed[dlpack::max_ndim];
    for (size_t i = 0; transposed && i < ndim; ++i) reversed[i] = out.shape[ndim - 1 - i];
    detail::managed_tensor_ref mt;
    *mt.out() = allocate(api, dtype, (int32_t) ndim, transposed ? reversed : out.shape, device);
    if (!mt.get()) return -1;
    out.tensor = mt.get()->dl_tensor;
    if (transposed) {
        out.tensor.shape = out.shape;
        contiguous_strides(out.shape, ndim, 'F', out.strides);
        out.tensor.strides = out.strides;
    }
    out.stream = nullptr;
    if (out.tensor.device.device_type != dlpack::cpu &&
        api->current_work_stream(out.tensor.device.device_type, out.tensor.device.device_id, &out.stream) != 0)
        return -1;  // the tensor is freed here
    out.owner = mt.into_owner();
    return out.owner ? 0 : -1;
}

}  // namespace dlt
