// dltensor/frameworks/numpy_c_api.h: NumPy arrays over a tensor's memory made through NumPy's C API (`_ARRAY_API`,
// found at first use, without NumPy's headers), as `array_t` makes them. Without the table, with another NumPy major
// version, or for a tensor it cannot describe (bfloat16, other devices): the public route (`numpy.asarray`, ...).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <new>

#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "../tensor/strides.h"
#include "numpy_arrays.h"

namespace dlt {

/// The few entries of NumPy's C API table that returns need; `array_type` is NULL when NumPy (1.x or 2.x)
/// or its table is unavailable.
struct numpy_c_api {
    // Slots of `_ARRAY_API`, the same in NumPy 1.x and 2.x.
    static constexpr int slot_array_type = 2, slot_descr_from_type = 45, slot_cast_to_type = 49, slot_new_copy = 85,
                         slot_new_from_descr = 94, slot_feature_version = 211, slot_set_base_object = 282;
    static constexpr int writeable = 0x0400;  ///< NPY_ARRAY_WRITEABLE
    static constexpr int c_order = 0;         ///< NPY_CORDER

    PyTypeObject *array_type = nullptr;                ///< `PyArray_Type`
    PyObject *(*descr_from_type)(int) = nullptr;       ///< `PyArray_DescrFromType`: new reference
    PyObject *(*new_copy)(PyObject *, int) = nullptr;  ///< `PyArray_NewCopy(array, order)`
    /// `PyArray_CastToType(array, descr, fortran)`: a converted copy (C order, F when `fortran`); steals `descr`.
    PyObject *(*cast_to_type)(PyObject *, PyObject *, int) = nullptr;
    /// `PyArray_NewFromDescr(type, descr, nd, dims, byte strides, data, flags, obj)`: steals `descr`.
    PyObject *(*new_from_descr)(PyTypeObject *, PyObject *, int, const Py_ssize_t *, const Py_ssize_t *, void *, int,
                                PyObject *) = nullptr;
    int (*set_base_object)(PyObject *, PyObject *) = nullptr;  ///< `PyArray_SetBaseObject`: steals the base

    /// The table, looked up once (process_state.h).
    static const numpy_c_api &get() noexcept { return process_state<numpy_c_api>(lookup); }

    /// NumPy's type number for `dtype` (native byte order), or -1 when NumPy has none (bfloat16, float8,
    /// lanes): such tensors take the public route. A table lookup by code and size.
    DLTENSOR_HOT_INLINE static int type_number(dlpack::DataType dtype) noexcept {
        constexpr int long64 = sizeof(long) == 8;
        // By code (int, uint, float, opaque, bfloat, complex, bool), then by bits: 8, 16, 32, 64, 128.
        constexpr signed char numbers[7][5] = {
            {1, 3, 5, long64 ? 7 : 9, -1},   // BYTE, SHORT, INT, LONG or LONGLONG
            {2, 4, 6, long64 ? 8 : 10, -1},  // UBYTE, USHORT, UINT, ULONG or ULONGLONG
            {-1, 23, 11, 12, -1},            // HALF, FLOAT, DOUBLE
            {-1, -1, -1, -1, -1},            // opaque handles
            {-1, -1, -1, -1, -1},            // bfloat16: no NumPy type
            {-1, -1, -1, 14, 15},            // CFLOAT, CDOUBLE
            {0, -1, -1, -1, -1},             // BOOL
        };
        const unsigned bits = dtype.bits;
        // 8..128 bits, a power of two: its index is trailing_zeros(bits) - 3
        if (dtype.lanes != 1 || dtype.code > dlpack::bool_ || bits < 8 || bits > 128 || (bits & (bits - 1))) return -1;
        return numbers[dtype.code][trailing_zeros(bits) - 3];
    }

    /// NumPy's type number for `t` when `array_over` can make an array of it (the table was found, a CPU
    /// tensor, a NumPy dtype), else -1.
    DLTENSOR_HOT_INLINE int describable_type(const dlpack::Tensor &t) const noexcept {
        return array_type && t.device.device_type == dlpack::cpu && t.ndim <= dlpack::max_ndim ? type_number(t.dtype)
                                                                                               : -1;
    }

    /// A new `numpy.ndarray` over the memory of `t`, of NumPy's type number `type` (describable_type(t)),
    /// writable unless `read_only`, whose base is `base` (stolen, also on failure): the object that keeps
    /// the memory alive. NULL with an error set on failure.
    DLTENSOR_HOT_INLINE PyObject *array_over(const dlpack::Tensor &t, int type, bool read_only,
                                             PyObject *base) const noexcept {
        Py_ssize_t strides[dlpack::max_ndim];  // in bytes
        const Py_ssize_t item = (Py_ssize_t) (t.dtype.bits / 8);
        Py_ssize_t step = item;
        for (int32_t i = t.ndim; i-- > 0;) {
            strides[i] = t.strides ? (Py_ssize_t) t.strides[i] * item : step;
            step *= (Py_ssize_t) t.shape[i];
        }
        PyObject *descr = descr_from_type(type);
        if (!descr) {
            Py_DECREF(base);
            return nullptr;
        }
        const extents_as<Py_ssize_t, int64_t> dims(t.shape, (size_t) t.ndim);
        PyObject *arr = new_from_descr(array_type, descr, (int) t.ndim, dims.get(), strides,
                                       (char *) t.data + t.byte_offset, read_only ? 0 : writeable, nullptr);
        if (!arr) {
            Py_DECREF(base);
            return nullptr;
        }
        if (set_base_object(arr, base) != 0) {
            Py_DECREF(arr);
            return nullptr;
        }
        return arr;
    }

    /// A copy of the exact `numpy.ndarray` `array` (borrowed) converted to `dtype` (which type_number knows),
    /// F-ordered when `fortran`, else C-ordered: what `array.astype(dtype, order=...)` gives, without a
    /// Python-level call (as `array_t`'s forcecast converts). NULL with an error set on failure.
    PyObject *converted(PyObject *array, dlpack::DataType dtype, bool fortran) const noexcept {
        PyObject *descr = descr_from_type(type_number(dtype));
        return descr ? cast_to_type(array, descr, fortran ? 1 : 0) : nullptr;
    }

    /// A C-ordered copy of `array` (stolen). NULL with an error set on failure.
    PyObject *copy_of(PyObject *array) const noexcept {
        if (!array) return nullptr;
        PyObject *out = new_copy(array, c_order);
        Py_DECREF(array);
        return out;
    }

private:
    static numpy_c_api lookup() noexcept {
        numpy_c_api r;
        const int major = numpy_arrays::get().major;  // 0 unless NumPy 1.x or 2.x is importable
        PyObject *umath = nullptr;
        if (major == 1 || major == 2)
            umath =
                PyImport_ImportModule(major == 2 ? "numpy._core._multiarray_umath" : "numpy.core._multiarray_umath");
        PyObject *table = umath ? PyObject_GetAttrString(umath, "_ARRAY_API") : nullptr;
        void **api = table && PyCapsule_CheckExact(table)
                         ? static_cast<void **>(PyCapsule_GetPointer(table, PyCapsule_GetName(table)))
                         : nullptr;
        if (api && reinterpret_cast<unsigned (*)()>(api[slot_feature_version])() >= 7) {  // NumPy >= 1.7
            r.array_type = static_cast<PyTypeObject *>(api[slot_array_type]);
            r.descr_from_type = reinterpret_cast<decltype(r.descr_from_type)>(api[slot_descr_from_type]);
            r.new_copy = reinterpret_cast<decltype(r.new_copy)>(api[slot_new_copy]);
            r.cast_to_type = reinterpret_cast<decltype(r.cast_to_type)>(api[slot_cast_to_type]);
            r.new_from_descr = reinterpret_cast<decltype(r.new_from_descr)>(api[slot_new_from_descr]);
            r.set_base_object = reinterpret_cast<decltype(r.set_base_object)>(api[slot_set_base_object]);
        }
        Py_XDECREF(table);  // the table lives as long as NumPy's extension module, which is never unloaded
        Py_XDECREF(umath);
        PyErr_Clear();
        return r;
    }
};

}  // namespace dlt
