// dltensor/allocation.h: new tensors for `dltensor<...>::empty()`, allocated by the framework that will
// own them (NumPy's `empty`, PyTorch's allocator through its exchange API), on every backend. Written
// against the CPython C API only.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "capsule_import.h"
#include "dlpack.h"
#include "dtypes.h"
#include "exchange.h"
#include "frameworks.h"
#include "import.h"
#include "import_result.h"
#include "numpy_c_api.h"
#include "py_ref.h"
#include "requirements.h"
#include "torch.h"

namespace dlt {

namespace detail {
/// An uninitialized NumPy array for `allocate_framework_tensor`: through NumPy's C API where it has the
/// dtype (numpy_c_api.h; fast paths on), else `numpy.empty(shape, dtype, order)` (bfloat16 and float8 need
/// ml_dtypes, which registers their names with NumPy); read back through the NumPy route. Returns the array (its view in
/// `out`, the array as `out.owner`), or empty with an error set.
inline py_ref numpy_empty(dlpack::DataType dtype, size_t ndim, char order, imported &out) noexcept {
    requirements any;
    const numpy_c_api &capi = numpy_c_api::get();
    const int type = numpy_c_api::type_number(dtype);
    if (fast_paths_enabled() && capi.array_type && type >= 0) {
        // NumPy's C API (`PyArray_NewFromDescr` allocating, as `array_t(shape)` does): no Python-level call.
        Py_ssize_t dims[dlpack::max_ndim];
        for (size_t i = 0; i < ndim; ++i) dims[i] = (Py_ssize_t) out.shape[i];
        PyObject *descr = capi.descr_from_type(type);
        py_ref array(descr ? capi.new_from_descr(capi.array_type, descr, (int) ndim, dims, nullptr, nullptr,
                                                 order == 'F' ? 1 : 0, nullptr)
                           : nullptr);
        if (!array) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "dltensor::empty(): allocation failed");
            return array;
        }
        if (import_numpy(array.get(), any, out, true) != mismatch::none) {
            PyErr_SetString(PyExc_RuntimeError, "dltensor::empty(): NumPy allocated an unreadable array");
            return py_ref();
        }
        return array;
    }
    char name[dtype_name_capacity];
    if (!dtype_name(dtype, name)) {
        PyErr_SetString(PyExc_RuntimeError, "dltensor::empty(): allocation failed");
        return py_ref();
    }
    py_ref np = import_module("numpy");
    if (!np) return np;
    if ((dtype.code == dlpack::bfloat_ || is_float8_code(dtype.code)) && !import_module("ml_dtypes")) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "dltensor::empty(): NumPy has no %s dtype without the ml_dtypes package "
                     "(pip install ml_dtypes)", name);
        return py_ref();
    }
    py_ref dims(PyTuple_New((Py_ssize_t) ndim));
    for (size_t i = 0; dims && i < ndim; ++i) {
        PyObject *d = PyLong_FromLongLong(out.shape[i]);
        if (!d) return py_ref();
        PyTuple_SET_ITEM(dims.get(), (Py_ssize_t) i, d);
    }
    py_ref array(dims ? PyObject_CallMethod(np.get(), "empty", "Oss", dims.get(), name, order == 'F' ? "F" : "C")
                      : nullptr);
    if (!array) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "dltensor::empty(): allocation failed");
        return array;
    }
    if (import_numpy(array.get(), any, out, true) != mismatch::none &&
        import_numpy(array.get(), any, out, false) != mismatch::none) {
        PyErr_SetString(PyExc_RuntimeError, "dltensor::empty(): NumPy allocated an unreadable array");
        return py_ref();
    }
    return array;
}
} // namespace detail

/// Allocates an uninitialized tensor for `dltensor<...>::empty()` on every backend, by the framework that
/// will own it: PyTorch's allocator (the exchange API's `managed_tensor_allocator`; on CUDA its caching
/// allocator) for `py::pytorch` and every non-CPU device; `numpy.empty` for CPU tensors of every other
/// framework or none (JAX and TensorFlow adopt or copy it on return; a `py::numpy` tensor returns as
/// that very array). `order`: 'F' for column-major, else row-major (NumPy only; PyTorch allocates
/// row-major). On success fills `out` (view, owner, the device's current stream) and returns 0. Returns 1
/// (nothing set) when `ndim` differs from `expected_ndim` (-1: any) or exceeds max_ndim, and -1 with a
/// Python error set when allocation fails. `read_only` (a `const` or `py::ro` tensor): a `py::numpy`
/// array, returned as itself, is made read-only for Python (C++ still fills it).
inline int allocate_framework_tensor(int framework, dlpack::DataType dtype, const size_t *shape, size_t ndim,
                                     int32_t expected_ndim, dlpack::Device device, char order,
                                     imported &out, bool read_only = false) noexcept {
    if ((expected_ndim >= 0 && ndim != (size_t) expected_ndim) || ndim > (size_t) dlpack::max_ndim) return 1;
    if (!in_main_interpreter()) {
        PyErr_SetString(PyExc_RuntimeError, sub_interpreter_message);
        return -1;
    }
    for (size_t i = 0; i < ndim; ++i) {
        if (shape[i] > (size_t) INT64_MAX) return 1;
        out.shape[i] = (int64_t) shape[i];
    }
    if (framework != fw_pytorch && device.device_type == dlpack::cpu) {
        py_ref array = detail::numpy_empty(dtype, ndim, order, out);
        if (!array) return -1;
        if (framework == fw_numpy && read_only) {  // array.setflags(write=False)
            PyObject *args[] = {Py_False};
            if (!call_method(array.get(), "setflags", args, 1)) {
                out.owner = py_ref();
                return -1;
            }
        }
        if (framework == fw_numpy) {
            out.source = array.get();  // out.owner holds it
            out.source_framework = fw_numpy;
        }
        return 0;
    }
    if (is_float8_code(dtype.code) && !torch_has_dtype(small_float_name(dtype.code))) return -1;  // TypeError set
    const dlpack::ExchangeAPI *api = torch_exchange_api();
    detail::managed_tensor_ref mt;
    *mt.out() = allocate(api, dtype, (int32_t) ndim, out.shape, device);
    if (!mt.get()) return -1;
    out.tensor = mt.get()->dl_tensor;
    out.stream = nullptr;
    if (out.tensor.device.device_type != dlpack::cpu &&
        api->current_work_stream(out.tensor.device.device_type, out.tensor.device.device_id, &out.stream) != 0)
        return -1;  // the tensor is freed here
    out.owner = mt.into_owner();
    return out.owner ? 0 : -1;
}

} // namespace dlt
