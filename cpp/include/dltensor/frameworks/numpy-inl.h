// dltensor/frameworks/numpy-inl.h: the bodies of numpy.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "numpy.h"

#include "../core/export-inl.h"
#include "../python/handle.h"
#include "../core/import_result.h"
#include "numpy_arrays-inl.h"
#include "numpy_c_api.h"

namespace dlt {

/// `numpy.asarray(src).astype(c.dtype(), order=c.order_name())`. Empty, with the error set, on failure
/// (and without one when the dtype is unknown).
inline py_ref convert_through_numpy(PyObject *src, const conversion_request &c) noexcept {
    PyObject *asarray = numpy_public_api::get().asarray;
    py_ref arr(asarray && c.dtype() ? PyObject_CallOneArg(asarray, src) : nullptr);
    return arr ? astype_copy(arr.get(), c) : py_ref();
}

/// An uninitialized C- or F-ordered CPU NumPy array (`empty()` of NumPy, JAX, TensorFlow, none): through the C API
/// where it has the dtype and fast paths are on, else `numpy.empty` (bfloat16, float8: needs ml_dtypes). Fills `out`
/// (view of `out.shape[0..ndim)`, array as `out.owner`); returns the array (borrowed), or NULL with an error set.
DLTENSOR_CORE PyObject *numpy_empty_cpu(dlpack::DataType dtype, size_t ndim, char order, imported &out) noexcept {
    const numpy_c_api &capi = numpy_c_api::get();
    const int type = numpy_c_api::type_number(dtype);
    py_ref array;
    if (fast_paths_enabled() && capi.array_type && type >= 0) {
        PyObject *descr = capi.descr_from_type(type);
        array = py_ref(descr ? capi.new_from_descr(capi.array_type, descr, (int) ndim,
                                                   extents_as<Py_ssize_t, int64_t>(out.shape, ndim).get(), nullptr,
                                                   nullptr, order == 'F' ? 1 : 0, nullptr)
                             : nullptr);
        if (array) {  // made here: its layout is known (C or F order over out.shape); only its data is read
            dlpack::Tensor &t = out.tensor;
            t.data = reinterpret_cast<const numpy_arrays::array_fields *>(array.get())->data;
            t.device = {dlpack::cpu, 0};
            t.ndim = (int32_t) ndim;
            t.dtype = dtype;
            t.shape = out.shape;
            t.strides = out.strides;
            t.byte_offset = 0;
            contiguous_strides(out.shape, ndim, order, out.strides);
            out.stream = nullptr;
            out.owner = std::move(array);
            return out.owner.get();
        }
    } else {
        char name[dtype_name_capacity];
        if (!dtype_name(dtype, name)) {
            PyErr_SetString(PyExc_RuntimeError, "dltensor::empty(): allocation failed");
            return nullptr;
        }
        py_ref np = import_module("numpy");
        if (!np) return nullptr;
        if ((dtype.code == dlpack::bfloat_ || is_float8_code(dtype.code)) && !import_module("ml_dtypes")) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "dltensor::empty(): NumPy has no %s dtype without the ml_dtypes package "
                         "(pip install ml_dtypes)",
                         name);
            return nullptr;
        }
        py_ref dims(PyTuple_New((Py_ssize_t) ndim));
        for (size_t i = 0; dims && i < ndim; ++i) {
            PyObject *d = PyLong_FromLongLong(out.shape[i]);
            if (!d) return nullptr;
            PyTuple_SET_ITEM(dims.get(), (Py_ssize_t) i, d);
        }
        array = py_ref(dims ? PyObject_CallMethod(np.get(), "empty", "Oss", dims.get(), name, order == 'F' ? "F" : "C")
                            : nullptr);
    }
    if (!array) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "dltensor::empty(): allocation failed");
        return nullptr;
    }
    bool read_only;
    if (!numpy_arrays::get().view_made(array.get(), out.tensor, out.shape, out.strides, read_only)) {
        PyErr_SetString(PyExc_RuntimeError, "dltensor::empty(): NumPy allocated an unreadable array");
        return nullptr;
    }
    out.stream = nullptr;
    out.owner = std::move(array);
    return out.owner.get();
}

namespace frameworks {
namespace numpy {

inline bool read(PyObject *obj, dlpack::Tensor &t, int64_t *shape, int64_t *strides, bool &read_only,
                 bool exact) noexcept {
    return numpy_arrays::get().view(obj, t, shape, strides, read_only, exact);
}

/// NumPy's C API for exact ndarrays (as array_t's forcecast): C order unless F is asked for (the copy of a
/// parameter without an order annotation is C-ordered); else `astype`.
DLTENSOR_CORE py_ref convert(PyObject *src, const conversion_request &c) noexcept {
    if (fast_paths_enabled() && c.name) {
        const numpy_c_api &capi = numpy_c_api::get();
        if (capi.array_type && Py_IS_TYPE(src, capi.array_type) && numpy_c_api::type_number(c.target) >= 0)
            return py_ref(capi.converted(src, c.target, c.order == 'F'));
    }
    return c.name ? astype_copy(src, c) : py_ref();
}

DLTENSOR_HOT_INLINE PyObject *to_python(tensor_handle *h, bool copy) noexcept {
    const dlpack::Tensor &t = h->tensor();
    if (t.ndim > numpy_max_ndim) {
        PyErr_Format(PyExc_ValueError, "dltensor: a NumPy array has at most %d dimensions; this tensor has %d",
                     (int) numpy_max_ndim, (int) t.ndim);
        return nullptr;
    }
    if (t.dtype.code == dlpack::bfloat_ || is_float8_code(t.dtype.code)) {
        // bits as uint16 (bfloat16) or uint8 (float8), relabeled as the ml_dtypes type
        const bool bf16 = t.dtype.code == dlpack::bfloat_;
        dlpack::Tensor bits = t;
        bits.dtype = {dlpack::uint_, (uint8_t) (bf16 ? 16 : 8), 1};
        return numpy_ml_dtypes_view(detail::export_view_of(h, bits, fw_numpy, copy),
                                    bf16 ? "bfloat16" : small_float_name(t.dtype.code));
    }
    // NumPy's C API where it can describe the tensor; the array's base is the tensor's owner (NumPy copies
    // shape and strides; the owner keeps the memory alive), the keeper's Python object, or a capsule
    // holding the handle. Else numpy.asarray over the buffer protocol (CPU), or numpy.from_dlpack.
    if (fast_paths_enabled()) {
        const numpy_c_api &np = numpy_c_api::get();
        const int type = np.describable_type(t);
        if (type >= 0) {
            // A read-only array's base must refuse writable buffers (NumPy then refuses setflags(write=True),
            // as for the public route's read-only memoryview): an owner with the buffer protocol (a writable
            // NumPy array) is kept through a capsule holding the tensor instead.
            PyObject *owner = h->owner();
            PyObject *base =
                h->read_only() && owner && PyObject_CheckBuffer(owner) ? nullptr : h->new_owner_reference();
            if (!base && !PyErr_Occurred()) base = detail::handle_capsule(h);
            if (!base) return nullptr;
            PyObject *arr = np.array_over(t, type, h->read_only(), base);
            return copy ? np.copy_of(arr) : arr;
        }
    }
    const py_ref obj(make_exported(h));
    const numpy_public_api &np_public = numpy_public_api::get();
    if (!obj || !np_public.ok()) {
        if (obj && !PyErr_Occurred()) PyErr_SetString(PyExc_ImportError, "dltensor: numpy is not importable");
        return nullptr;
    }
    const bool buffer = t.device.device_type == dlpack::cpu;  // bfloat16 and float8 were relabeled above
    py_ref arr(PyObject_CallOneArg(buffer ? np_public.asarray : np_public.from_dlpack, obj.get()));
    return arr && copy ? call_method(arr.get(), "copy").release() : arr.release();
}

/// `empty()` of a `py::numpy` tensor, on the CPU (other devices: not NumPy's, 1): returned as that very
/// array; a read-only tensor as a read-only view of it whose base refuses writable buffers (the array
/// owns its memory, and NumPy lets an array that owns its memory be made writable again).
DLTENSOR_CORE int empty(dlpack::DataType dtype, size_t ndim, dlpack::Device device, char order, bool read_only,
                        imported &out) noexcept {
    if (device.device_type != dlpack::cpu) return 1;
    PyObject *array = numpy_empty_cpu(dtype, ndim, order, out);
    if (!array) return -1;
    if (read_only) {  // array.setflags(write=False)
        PyObject *args[] = {Py_False};
        if (!call_method(array, "setflags", args, 1)) {
            out.owner = py_ref();
            return -1;
        }
    }
    if (read_only) return 0;  // exported on return (to_python): a view
    out.source = array;       // out.owner holds it
    out.source_framework = fw_numpy;
    return 0;
}

inline constexpr const char *packages[] = {"numpy", nullptr};

}  // namespace numpy
}  // namespace frameworks

inline constexpr framework numpy_framework = {
    fw_numpy,
    "NumPy",
    frameworks::numpy::packages,
    nullptr,
    false,
    /*immutable*/ false,
    /*copies_read_only*/ false,
    /*reason*/ nullptr,
    /*ignores_byte_offset*/ false,
    /*deleter_not_reentrant*/ false,
    /*classify*/ nullptr,
    frameworks::numpy::read,
    /*check_view*/ nullptr,
    /*export_capsule*/ nullptr,
    /*written*/ nullptr,
    frameworks::numpy::convert,
    frameworks::numpy::to_python,
    frameworks::numpy::empty,
};

}  // namespace dlt
