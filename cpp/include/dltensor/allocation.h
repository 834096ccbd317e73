// dltensor/allocation.h: new tensors for `dltensor<...>::empty()`, allocated by the framework that will
// own them (frameworks/registry.h), on every backend. Written against the CPython C API only.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "dlpack.h"
#include "frameworks/registry.h"
#include "import_result.h"
#include "process_state.h"

namespace dlt {

/// Allocates an uninitialized tensor for `dltensor<...>::empty()` on every backend, by the framework that
/// will own it (frameworks/registry.h: allocate_for()): its own allocator where it has one (PyTorch's and
/// Paddle's exchange API `managed_tensor_allocator`, on CUDA their caching allocators; NumPy's on the
/// CPU, a `py::numpy` tensor returning as that very array); else NumPy's on the CPU (JAX and TensorFlow
/// adopt or copy it on return) and PyTorch's on other devices. `order`: 'F' for column-major, else
/// row-major (NumPy only; PyTorch and Paddle allocate row-major). On success fills `out` (view, owner,
/// the device's current stream) and returns 0. Returns 1 (nothing set) when `ndim` differs from `expected_ndim` (-1: any) or exceeds max_ndim, and -1 with a
/// Python error set when allocation fails. `read_only` (a `const` or `py::ro` tensor): a `py::numpy`
/// array, returned as itself, is made read-only for Python (C++ still fills it).
inline int allocate_framework_tensor(int framework, dlpack::DataType dtype, const size_t *shape, size_t ndim,
                                     int32_t expected_ndim, dlpack::Device device, char order,
                                     imported &out, bool read_only = false) noexcept {
    if ((expected_ndim >= 0 && ndim != (size_t) expected_ndim) || ndim > (size_t) dlpack::max_ndim) return 1;
    if (!enter_interpreter()) {
        PyErr_SetString(PyExc_RuntimeError, sub_interpreter_message);
        return -1;
    }
    for (size_t i = 0; i < ndim; ++i) {
        if (shape[i] > (size_t) INT64_MAX) return 1;
        out.shape[i] = (int64_t) shape[i];
    }
    return allocate_for(framework, dtype, ndim, device, order, read_only, out);
}

} // namespace dlt
