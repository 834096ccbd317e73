// dltensor/conversion.h: copies for read-only parameters that allow conversion: the producer's own
// conversion (NumPy/CuPy `astype`, PyTorch `.to()` (torch.h), JAX `astype` or NumPy, TensorFlow
// `tf.cast`, any array-API library's `xp.astype`), and `numpy.asarray` for objects that are no tensor
// (lists, tuples, numbers, `__array__` objects). Never on the argument hot path: only after a tensor was
// refused. Written against the CPython C API only, so every backend shares it.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstring>

#include "dlpack.h"
#include "dtypes.h"
#include "frameworks.h"
#include "numpy_c_api.h"
#include "process_state.h"
#include "producer.h"
#include "producer_error.h"
#include "py_ref.h"
#include "refusal.h"
#include "requirements.h"
#include "torch.h"

namespace dlt {
namespace detail {

/// `numpy.asarray(src).astype(dtype, order=order)`. Empty, with the error set, on failure.
inline py_ref convert_through_numpy(PyObject *src, PyObject *dtype, PyObject *order) noexcept {
    PyObject *asarray = numpy_public_api::get().asarray;
    py_ref arr(asarray ? PyObject_CallOneArg(asarray, src) : nullptr);
    PyObject *args[] = {dtype, order};
    return arr ? call_method(arr.get(), "astype", args, 1, py_names::get().order_kwnames) : py_ref();
}

/// Is JAX's 64-bit mode on (`jax.config.jax_enable_x64`)? Without it JAX has no 64-bit dtypes.
inline bool jax_x64_enabled() noexcept {
    py_ref jax = import_module("jax");
    py_ref config = attribute(jax.get(), "config");
    py_ref flag = attribute(config.get(), "jax_enable_x64");
    const bool on = flag && PyObject_IsTrue(flag.get()) == 1;
    PyErr_Clear();
    return on;
}

/// `numpy.asarray(src, dtype=<r's dtype>)` for an object that is no tensor (a list, a number): NumPy checks
/// the values against the dtype (an out-of-range Python int raises, as array_t's `forcecast` does). Empty
/// on failure, with NumPy's reason kept in `last_refusal().detail` and no error set.
inline py_ref numpy_array_of(PyObject *src, const requirements &r) noexcept {
    char name[dtype_name_capacity];
    PyObject *asarray = numpy_public_api::get().asarray;
    py_ref dtype(r.dtype.bits && dtype_name(r.dtype, name) ? PyUnicode_FromString(name) : nullptr);
    PyObject *args[] = {src, dtype.get()};
    py_ref arr(asarray ? PyObject_Vectorcall(asarray, args, dtype ? 2 : 1, nullptr) : nullptr);
    char *detail = last_refusal().detail;
    detail[0] = '\0';
    if (!arr && PyErr_Occurred() && error_must_reach_caller()) absorb_producer_error(src);  // kept for the caller
    if (!arr && PyErr_Occurred()) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        const py_ref t(type), v(value), b(tb);
        const py_ref text(value ? PyObject_Str(value) : nullptr);
        const char *utf8 = text ? PyUnicode_AsUTF8(text.get()) : nullptr;
        if (utf8) {
            std::strncpy(detail, utf8, sizeof last_refusal().detail - 1);
            detail[sizeof last_refusal().detail - 1] = '\0';
        }
    }
    PyErr_Clear();
    return arr;
}

/// Can `numpy.asarray` make a tensor of `src`, an object that is no tensor itself: a list, tuple, Python
/// number, or an object with `__array__` / `__array_interface__` / `__array_struct__`?
inline bool is_array_like(PyObject *src) noexcept {
    if (PyList_Check(src) || PyTuple_Check(src) || PyLong_Check(src) || PyFloat_Check(src) ||
        PyComplex_Check(src))
        return true;
    PyObject *tp = (PyObject *) Py_TYPE(src);
    const bool has = PyObject_HasAttrString(tp, "__array__") || PyObject_HasAttrString(tp, "__array_interface__") ||
                     PyObject_HasAttrString(tp, "__array_struct__");
    PyErr_Clear();
    return has;
}

/// `xp.astype(src, xp.<dtype>)` with `xp = src.__array_namespace__()`: any array-API object.
inline py_ref convert_through_array_api(PyObject *src, PyObject *dtype) noexcept {
    PyObject *self[] = {src};
    py_ref xp(PyObject_VectorcallMethod(py_names::get().array_namespace, self, 1, nullptr));
    py_ref xdtype(xp ? PyObject_GetAttr(xp.get(), dtype) : nullptr);
    PyObject *args[] = {src, xdtype.get()};
    return xdtype ? call_method(xp.get(), "astype", args, 2) : py_ref();
}

/// Asks the producer for a copy of `src` with the dtype and order that `r` needs, on the same device:
/// NumPy/CuPy `astype(dtype, order=...)`, PyTorch (torch_converted), JAX `astype` (on the CPU, and for
/// 64-bit dtypes without JAX's x64 mode, NumPy), TensorFlow `tf.cast` (F order on the CPU: NumPy), other
/// array-API objects `xp.astype`; plain buffers go through NumPy (as a memoryview of their bytes).
/// `seen`: the refused tensor's dtype; `why`: why it was refused; `on_cpu`: it lives on the CPU. Empty,
/// with no error set, when the producer cannot convert.
inline py_ref convert_with_producer(PyObject *src, producer kind, bool is_buffer, const requirements &r,
                                    dlpack::DataType seen, mismatch why, bool on_cpu = false) noexcept {
    char name[dtype_name_capacity];
    // The target dtype: the parameter's, else the source's. Unknown only for a PyTorch lazy view that
    // __dlpack__ refused to export; resolving it needs no dtype.
    const dlpack::DataType target = r.dtype.bits ? r.dtype : seen;
    const bool have_dtype = dtype_name(target, name);
    if (!have_dtype && kind != producer::torch) return py_ref();
    const char order = r.order == 'F' ? 'F' : r.order ? 'C' : 'K';
    const char order_str[2] = {order, '\0'};
    const py_ref dtype(have_dtype ? PyUnicode_FromString(name) : nullptr), order_obj(PyUnicode_FromString(order_str));
    if ((have_dtype && !dtype) || !order_obj) {
        PyErr_Clear();
        return py_ref();
    }
    py_ref res;
    switch (kind) {
        case producer::numpy:
            // NumPy's C API for exact ndarrays (as array_t's forcecast): C order unless F is asked for (the
            // copy of a parameter without an order annotation is C-ordered).
            if (fast_paths_enabled() && have_dtype) {
                const numpy_c_api &capi = numpy_c_api::get();
                if (capi.array_type && Py_IS_TYPE(src, capi.array_type) && numpy_c_api::type_number(target) >= 0) {
                    res = py_ref(capi.converted(src, target, order == 'F'));
                    break;
                }
            }
            [[fallthrough]];
        case producer::cupy: {
            PyObject *args[] = {dtype.get(), order_obj.get()};
            res = call_method(src, "astype", args, 1, py_names::get().order_kwnames);
            break;
        }
        case producer::torch:  // same dtype and order when misaligned: only a fresh copy is aligned
            res = torch_converted(src, dtype.get(), order, why == mismatch::misaligned);
            break;
        case producer::jax: {
            // On the CPU NumPy converts a JAX array (viewed without a copy) far faster than JAX's own
            // dispatch; and without 64-bit mode JAX truncates a 64-bit astype back to 32 bits.
            if (on_cpu || (target.bits >= 64 && !jax_x64_enabled())) {
                res = convert_through_numpy(src, dtype.get(), order_obj.get());
                break;
            }
            PyObject *args[] = {dtype.get()};
            res = call_method(src, "astype", args, 1);
            break;
        }
        case producer::tensorflow: {
            // tf.cast keeps TensorFlow's C order: an F-order copy of a CPU tensor comes from NumPy.
            if (order == 'F' && on_cpu) {
                res = convert_through_numpy(src, dtype.get(), order_obj.get());
                break;
            }
            py_ref tf = import_module("tensorflow");
            PyObject *args[] = {src, dtype.get()};
            res = call_method(tf.get(), "cast", args, 2);
            break;
        }
        default:
            if (is_buffer) {  // bytes, array.array, memoryview: NumPy reads the buffer (a memoryview, so
                              // that `bytes` is its bytes, not one string) and converts
                const py_ref view(PyMemoryView_FromObject(src));
                if (view) res = convert_through_numpy(view.get(), dtype.get(), order_obj.get());
                break;
            }
            res = convert_through_array_api(src, dtype.get());
            // Any other DLPack producer on the CPU (pyarrow, a dltensor.Tensor, ...): NumPy imports it
            // (numpy.from_dlpack) and converts.
            if (!res && on_cpu && PyErr_Occurred() && !error_must_reach_caller()) {
                PyErr_Clear();
                PyObject *from_dlpack = numpy_public_api::get().from_dlpack;
                const py_ref arr(from_dlpack ? PyObject_CallOneArg(from_dlpack, src) : nullptr);
                PyObject *args[] = {dtype.get(), order_obj.get()};
                if (arr) res = call_method(arr.get(), "astype", args, 1, py_names::get().order_kwnames);
            }
    }
    if (!res) absorb_producer_error(src);  // an interrupt is kept for the caller
    PyErr_Clear();
    return res;
}

} // namespace detail
} // namespace dlt
