// dltensor/frameworks/numpy_arrays.h: NumPy's structures read directly (exact ndarrays; the only route of ml_dtypes'
// bfloat16/float8 arrays, which NumPy's `__dlpack__` refuses), ml_dtypes relabelling, NumPy's public entry points.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdlib>

#include "../tensor/config.h"
#include "../python/atomic_value.h"
#include "../tensor/dlpack.h"
#include "../tensor/dtypes.h"
#include "../python/process_state.h"
#include "../python/py_ref.h"
#include "../tensor/requirements.h"

namespace dlt {

/// NumPy's largest `ndim` (NPY_MAXDIMS in NumPy 2; 32 in NumPy 1, which refuses more itself).
inline constexpr int32_t numpy_max_ndim = 64;

/// A view of a uint16 (bfloat16) or uint8 (float8) array of the bits as the ml_dtypes type `name` ("bfloat16",
/// "float8_e4m3fn", ...). Steals `bits_array`; a new reference, or NULL with an error set (a TypeError naming
/// ml_dtypes when it is not installed or lacks the type).
DLTENSOR_CORE PyObject *numpy_ml_dtypes_view(PyObject *bits_array, const char *name) noexcept;

/// `numpy_ml_dtypes_view(uint16_array, "bfloat16")`.
inline PyObject *numpy_bfloat16_view(PyObject *uint16_array) noexcept {
    return numpy_ml_dtypes_view(uint16_array, "bfloat16");
}

/// NumPy's public entry points, looked up once (process_state.h): for exports that NumPy's C API cannot
/// describe (export.h) and for conversions (conversion.h). Both NULL when NumPy is not importable.
struct numpy_public_api {
    PyObject *asarray = nullptr;      ///< `numpy.asarray` (CPU memory, through the buffer protocol)
    PyObject *from_dlpack = nullptr;  ///< `numpy.from_dlpack`
    bool ok() const noexcept { return asarray && from_dlpack; }
    void release() noexcept {
        Py_CLEAR(asarray);
        Py_CLEAR(from_dlpack);
    }
    static const numpy_public_api &get() noexcept {
        return process_state<numpy_public_api>([] {
            numpy_public_api r;
            py_ref np = import_module("numpy");
            py_ref asarray = attribute(np.get(), "asarray"), from_dlpack = attribute(np.get(), "from_dlpack");
            PyErr_Clear();
            if (asarray && from_dlpack) {  // kept for the process
                r.asarray = asarray.release();
                r.from_dlpack = from_dlpack.release();
            }
            return r;
        });
    }
};

/// NumPy: a view of a `numpy.ndarray` read from its C structures as `array_t` does (`PyArray_Descr` in the NumPy
/// 1.x or 2.x layout), without `__dlpack__`. Only builtin numeric dtypes in native byte order, aligned, strides of
/// whole elements; anything else returns false and takes the public route.
struct numpy_arrays {
    PyTypeObject *ndarray = nullptr;  ///< `numpy.ndarray`, held for the process.
    int major = 0;                    ///< NumPy's major version: picks the `PyArray_Descr` layout.

    struct array_fields {  // PyArrayObject_fields: stable since NumPy 1.7
        PyObject_HEAD char *data;
        int nd;
        Py_ssize_t *dimensions;
        Py_ssize_t *strides;
        PyObject *base;
        PyObject *descr;
        int flags;
    };
    struct descr_head {  // the common start of PyArray_Descr in NumPy 1.x and 2.x
        PyObject_HEAD PyTypeObject *typeobj;
        char kind, type, byteorder, flags_or_unused;
        int type_num;
    };
    struct descr_v1 {
        descr_head head;
        int elsize;
    };
    struct descr_v2 {
        descr_head head;
        uint64_t flags;
        Py_ssize_t elsize;
    };
    static constexpr int writeable = 0x0400, aligned = 0x0100;  // NPY_ARRAY_WRITEABLE, NPY_ARRAY_ALIGNED

    /// Found once (process_state.h); `ndarray` stays NULL (no shortcut) unless NumPy 1.x or 2.x is
    /// importable.
    static const numpy_arrays &get() noexcept { return process_state<numpy_arrays>(make); }
    void release() noexcept { Py_CLEAR(ndarray); }

    static numpy_arrays make() noexcept {
        numpy_arrays r;
        py_ref mod = import_module("numpy");
        py_ref type = attribute(mod.get(), "ndarray");
        py_ref version = attribute(mod.get(), "__version__");
        const char *v = version && PyUnicode_Check(version.get()) ? PyUnicode_AsUTF8(version.get()) : nullptr;
        const int major = v ? std::atoi(v) : 0;
        if (type && PyType_Check(type.get()) && (major == 1 || major == 2)) {
            r.ndarray = (PyTypeObject *) type.release();  // kept
            r.major = major;
        }
        PyErr_Clear();
        return r;
    }

    /// ml_dtypes' scalar types, which NumPy's own DLPack export and buffer protocol refuse: bfloat16 and the
    /// float8 formats, read here; and the sub-byte types (one element per byte in NumPy), only named in
    /// the refusal (requirements.h: unsupported_dtype_seen()).
    struct ml_dtype {
        const char *name;
        dlpack::DataType dtype;
    };
    static constexpr ml_dtype ml_dtypes[] = {
        {"bfloat16", {dlpack::bfloat_, 16, 1}},
        {"float8_e3m4", {dlpack::float8_e3m4, 8, 1}},
        {"float8_e4m3", {dlpack::float8_e4m3, 8, 1}},
        {"float8_e4m3b11fnuz", {dlpack::float8_e4m3b11fnuz, 8, 1}},
        {"float8_e4m3fn", {dlpack::float8_e4m3fn, 8, 1}},
        {"float8_e4m3fnuz", {dlpack::float8_e4m3fnuz, 8, 1}},
        {"float8_e5m2", {dlpack::float8_e5m2, 8, 1}},
        {"float8_e5m2fnuz", {dlpack::float8_e5m2fnuz, 8, 1}},
        {"float8_e8m0fnu", {dlpack::float8_e8m0fnu, 8, 1}},
        {"float6_e2m3fn", {dlpack::float6_e2m3fn, 6, 1}},
        {"float6_e3m2fn", {dlpack::float6_e3m2fn, 6, 1}},
        {"float4_e2m1fn", {dlpack::float4_e2m1fn, 4, 1}},
        {"int4", {dlpack::int_, 4, 1}},
        {"uint4", {dlpack::uint_, 4, 1}},
        {"int2", {dlpack::int_, 2, 1}},
        {"uint2", {dlpack::uint_, 2, 1}},
        {"int1", {dlpack::int_, 1, 1}},
        {"uint1", {dlpack::uint_, 1, 1}},
    };
    static constexpr size_t ml_dtype_count = sizeof(ml_dtypes) / sizeof(ml_dtypes[0]);

    /// `ml_dtypes.<ml_dtypes[i].name>` from `sys.modules` (never imported), else NULL (nothing raised); once found,
    /// held for the process (main interpreter; a sub-interpreter looks it up each time).
    static PyTypeObject *ml_type(size_t i) noexcept {
        static atomic_value<PyTypeObject *> found[ml_dtype_count] = {};
        if (PyTypeObject *type = found[i].load(atomic_order::acquire)) return type;
        PyObject *modules = PyImport_GetModuleDict();                                    // borrowed
        PyObject *mod = modules ? PyDict_GetItemString(modules, "ml_dtypes") : nullptr;  // borrowed
        if (!mod || !PyModule_Check(mod)) return nullptr;
        PyObject *t = PyDict_GetItemString(PyModule_GetDict(mod), ml_dtypes[i].name);  // borrowed
        if (!t || !PyType_Check(t)) return nullptr;
        if (detail::running_sub_interpreter()) return (PyTypeObject *) t;  // the module keeps it; not cached
        PyTypeObject *expected = nullptr;
        Py_INCREF(t);  // kept for the process
        if (found[i].compare_exchange_strong(expected, (PyTypeObject *) t, atomic_order::acq_rel))
            return (PyTypeObject *) t;
        Py_DECREF(t);
        return expected;  // another thread kept the same type first
    }

    /// The DLPack dtype of an ml_dtypes scalar type of `elsize` bytes, else false. By identity with
    /// `ml_dtypes.<name>` alone, never by the type's name: ml_dtypes names its types "ml_dtypes.<name>"
    /// only from 0.5.1 on ("<name>" before; TensorFlow 2.16/2.17 and the JAX of that time pin older ones).
    static bool ml_dtype_of(PyTypeObject *type, Py_ssize_t elsize, dlpack::DataType &out) noexcept {
        if (!type) return false;
        for (size_t i = 0; i < ml_dtype_count; ++i) {
            const ml_dtype &e = ml_dtypes[i];
            if (elsize != (e.dtype.bits + 7) / 8 || ml_type(i) != type) continue;
            out = e.dtype;
            return true;
        }
        return false;
    }

    /// view() of an array dltensor had NumPy make (a copy, an allocation): the fast path's reader, else
    /// (misaligned ml_dtypes arrays) the ml_dtypes one.
    bool view_made(PyObject *obj, dlpack::Tensor &t, int64_t *shape, int64_t *strides, bool &read_only) const noexcept {
        return view(obj, t, shape, strides, read_only, true) || view(obj, t, shape, strides, read_only, false);
    }

    /// Fills `t` (shape and strides in the caller's `shape`/`strides`, max_ndim entries each) and `read_only`; valid
    /// while `obj` lives. `exact`: only `numpy.ndarray` itself (the fast path); else also subclasses, for the dtypes
    /// only this reader reads (ml_dtypes' bfloat16 and float8).
    bool view(PyObject *obj, dlpack::Tensor &t, int64_t *shape, int64_t *strides, bool &read_only,
              bool exact = true) const noexcept {
        if (!ndarray || !(Py_TYPE(obj) == ndarray || (!exact && PyObject_TypeCheck(obj, ndarray)))) return false;
        const auto *a = reinterpret_cast<const array_fields *>(obj);
        const auto *d = reinterpret_cast<const descr_head *>(a->descr);
        // Misaligned arrays take the public route (exact), or are read here and refused or copied by the
        // alignment check (the ml_dtypes route, bfloat16 and float8, which has no other).
        if (a->nd < 0 || a->nd > dlpack::max_ndim || (exact && !(a->flags & aligned))) return false;
        const Py_ssize_t elsize =
            major >= 2 ? reinterpret_cast<const descr_v2 *>(d)->elsize : reinterpret_cast<const descr_v1 *>(d)->elsize;
        const uint16_t probe = 1;
        const bool little = *reinterpret_cast<const uint8_t *>(&probe) == 1;
        if (!(d->byteorder == '=' || d->byteorder == '|' || d->byteorder == (little ? '<' : '>'))) return false;
        uint8_t code = 0;
        bool ml = false;  // an ml_dtypes type (bfloat16, float8): no public route reads it
        switch (d->kind) {
            case 'b': code = dlpack::bool_; break;
            case 'i': code = dlpack::int_; break;
            case 'u': code = dlpack::uint_; break;
            case 'f':  // ml_dtypes registers float8_e5m2 with kind 'f'; NumPy has no 1-byte float
                if (elsize == 1) {
                    ml = true;
                    break;
                }
                code = dlpack::float_;
                break;
            case 'c': code = dlpack::complex_; break;
            case 'V': ml = true; break;  // user-defined dtypes: only ml_dtypes' (bfloat16, float8)
            default: return false;       // strings, objects, structured, datetime
        }
        if (ml) {
            dlpack::DataType seen;
            if (!ml_dtype_of(d->typeobj, elsize, seen)) return false;
            if (!is_supported_dtype(seen)) {  // a sub-byte type: refused, and named in the refusal
                unsupported_dtype_seen() = seen;
                return false;
            }
            t.dtype = seen;
        } else {
            if (!exact) return false;  // everything else: the public route
            t.dtype = {code, (uint8_t) (elsize * 8), 1};
        }
        // Every supported element size is a power of two: strides are checked and divided by shifts.
        if (elsize <= 0 || elsize > 16 || (elsize & (elsize - 1)) != 0) return false;
        const int shift = trailing_zeros((unsigned long long) elsize);
        if (!is_supported_dtype(t.dtype)) return false;  // e.g. long double
        for (int i = 0; i < a->nd; ++i) {
            if ((a->strides[i] & (elsize - 1)) != 0) return false;  // not whole elements
            shape[i] = (int64_t) a->dimensions[i];
            strides[i] = (int64_t) (a->strides[i] >> shift);  // exact: arithmetic shift of a multiple
        }
        t.data = a->data;
        t.device = {dlpack::cpu, 0};
        t.ndim = a->nd;
        t.shape = shape;
        t.strides = strides;
        t.byte_offset = 0;
        read_only = !(a->flags & writeable);
        return true;
    }
};

}  // namespace dlt
