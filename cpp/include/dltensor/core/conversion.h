// dltensor/core/conversion.h: copies for read-only parameters that allow conversion, made after a refusal: the
// producer's own (its framework's `convert` hook, an array-API `xp.astype`), and `numpy.asarray` for objects that
// are no tensor (lists, tuples, numbers, `__array__` objects).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstring>

#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "../tensor/dtypes.h"
#include "../frameworks/registry.h"
#include "../python/process_state.h"
#include "producer.h"
#include "../python/producer_error.h"
#include "../python/py_ref.h"
#include "../tensor/refusal.h"
#include "../tensor/requirements.h"

namespace dlt {
namespace detail {

/// `numpy.asarray(src, dtype=<r's dtype>)` for an object that is no tensor (a list, a number): NumPy checks
/// the values against the dtype (an out-of-range Python int raises, as array_t's `forcecast` does). Empty
/// on failure, with NumPy's reason kept in `last_refusal().detail` and no error set.
inline py_ref numpy_array_of(PyObject *src, const requirements &r) noexcept {
    char name[dtype_name_capacity];
    PyObject *asarray = numpy_public_api::get().asarray;
    py_ref dtype(r.dtype.bits && dtype_name(r.dtype, name) ? PyUnicode_FromString(name) : nullptr);
    PyObject *args[] = {src, dtype.get()};
    py_ref arr(asarray ? PyObject_Vectorcall(asarray, args, dtype ? 2 : 1, nullptr) : nullptr);
    refusal &rec = last_refusal();
    rec.detail[0] = '\0';
    if (!arr) {  // NumPy's reason ("could not convert string to float: ..."), or kept for the caller
        absorb_producer_error(src);
        const char *reason = producer_reason(src);  // "ValueError: ...": NumPy's words alone
        const char *words = reason ? std::strstr(reason, ": ") : nullptr;
        rec.set_detail(words ? words + 2 : nullptr);
        forget_producer_reason();
    }
    PyErr_Clear();
    return arr;
}

/// Can `numpy.asarray` make a tensor of `src`, an object that is no tensor itself: a list, tuple, Python
/// number, or an object with `__array__` / `__array_interface__` / `__array_struct__`?
inline bool is_array_like(PyObject *src) noexcept {
    if (PyList_Check(src) || PyTuple_Check(src) || PyLong_Check(src) || PyFloat_Check(src) || PyComplex_Check(src))
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

/// `numpy.from_dlpack(src).astype(dtype, order=...)`: a copy of any DLPack producer's CPU tensor by NumPy.
/// Empty, with the error set, on failure (and without one when the dtype is unknown).
inline py_ref convert_through_numpy_dlpack(PyObject *src, const conversion_request &c) noexcept {
    PyObject *from_dlpack = numpy_public_api::get().from_dlpack;
    const py_ref arr(from_dlpack && c.dtype() ? PyObject_CallOneArg(from_dlpack, src) : nullptr);
    return arr ? astype_copy(arr.get(), c) : py_ref();
}

/// A copy of `src` with the dtype and order `r` needs, on its device: `f`'s `convert` hook (`f`: its framework, NULL:
/// none), else `xp.astype`, or NumPy for plain buffers and CPU DLPack producers. `seen`: the refused dtype; `why`:
/// the refusal; `on_cpu`: it lives on the CPU. Empty, with no error set, when the producer cannot convert.
inline py_ref convert_with_producer(PyObject *src, const framework *f, bool is_buffer, const requirements &r,
                                    dlpack::DataType seen, mismatch why, bool on_cpu = false) noexcept {
    char name[dtype_name_capacity];
    // The target dtype: the parameter's, else the source's. Unknown only for a PyTorch lazy view that
    // __dlpack__ refused to export; resolving it needs no dtype (the hooks that need one refuse).
    const dlpack::DataType target = r.dtype.bits ? r.dtype : seen;
    const bool have_dtype = dtype_name(target, name);
    if (!have_dtype && !(f && f->convert)) return py_ref();
    const char order = r.order == 'F' ? 'F' : r.order ? 'C' : 'K';
    const conversion_request c{target, have_dtype ? name : nullptr, order, why == mismatch::misaligned, on_cpu, {}, {}};
    py_ref res;
    if (f && f->convert) {
        res = f->convert(src, c);
    } else if (is_buffer) {  // bytes, array.array, memoryview: NumPy converts a memoryview of it
        const py_ref view(PyMemoryView_FromObject(src));
        if (view) res = convert_through_numpy(view.get(), c);
    } else {
        // A CPU copy in an order: NumPy's (`xp.astype` cannot ask for one); else `xp.astype`.
        const bool ordered_by_numpy = on_cpu && c.order != 'K';
        if (ordered_by_numpy) res = convert_through_numpy_dlpack(src, c);
        if (!res && !(PyErr_Occurred() && error_must_reach_caller())) {
            PyErr_Clear();
            res = c.dtype() ? convert_through_array_api(src, c.dtype()) : py_ref();
        }
        // Any other CPU DLPack producer (pyarrow, a dltensor.Tensor, ...): numpy.from_dlpack, then converted.
        if (!res && on_cpu && PyErr_Occurred() && !error_must_reach_caller()) {
            PyErr_Clear();
            res = convert_through_numpy_dlpack(src, c);
        }
    }
    if (!res) absorb_producer_error(src);  // an interrupt is kept for the caller
    PyErr_Clear();
    return res;
}

}  // namespace detail
}  // namespace dlt
