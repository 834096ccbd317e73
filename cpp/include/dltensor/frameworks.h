// dltensor/frameworks.h: framework-specific shortcuts for returning tensors, measured against the
// frameworks' public DLPack entry points. Each is an optimization with a checked fallback: when the
// shortcut is unavailable (another version of the framework), callers use the public route.
// Written against the CPython C API only, so every backend shares it.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdlib>
#include <cstring>

#include "dlpack.h"
#include "dtypes.h"
#include "strides.h"

namespace dlt {

/// JAX: turns an unversioned DLPack capsule of CPU memory into a `jax.Array` through jaxlib's
/// `dlpack_managed_tensor_to_buffer` (about 2.5 us), skipping `jax.dlpack.from_dlpack`'s Python
/// wrapper (about 17 us); zero-copy when the data is 64-byte aligned, a copy otherwise, as the public
/// route. Returns NULL with no error set when the shortcut does not apply (jaxlib without the 5-argument
/// entry point, 64-bit dtypes that JAX canonicalizes when x64 is off, non-CPU devices): use the public
/// route then. Returns NULL with an error set when the call itself failed.
inline PyObject *jax_array_from_capsule(PyObject *capsule, dlpack::DataType dtype, int32_t device_type) noexcept {
    if (device_type != dlpack::cpu) return nullptr;
    const bool canonicalized = ((dtype.code == dlpack::int_ || dtype.code == dlpack::uint_ ||
                                 dtype.code == dlpack::float_) && dtype.bits == 64) ||
                               (dtype.code == dlpack::complex_ && dtype.bits == 128);
    if (canonicalized) return nullptr;

    static PyObject *convert = nullptr, *device = nullptr;
    static bool looked = false;
    if (!looked) {
        looked = true;
        PyObject *version_mod = PyImport_ImportModule("jax._src.lib");
        PyObject *version = version_mod ? PyObject_GetAttrString(version_mod, "jaxlib_extension_version") : nullptr;
        long v = version ? PyLong_AsLong(version) : -1;
        PyObject *ext = version_mod && v >= 467 ? PyObject_GetAttrString(version_mod, "_jax") : nullptr;
        PyObject *fn = ext ? PyObject_GetAttrString(ext, "dlpack_managed_tensor_to_buffer") : nullptr;
        PyObject *jax = fn ? PyImport_ImportModule("jax") : nullptr;
        PyObject *devices = jax ? PyObject_CallMethod(jax, "devices", "s", "cpu") : nullptr;
        PyObject *cpu = devices && PySequence_Check(devices) && PySequence_Size(devices) > 0
                            ? PySequence_GetItem(devices, 0) : nullptr;
        if (fn && cpu) { convert = fn; device = cpu; fn = cpu = nullptr; }  // kept for the process
        Py_XDECREF(version_mod); Py_XDECREF(version); Py_XDECREF(ext); Py_XDECREF(fn);
        Py_XDECREF(jax); Py_XDECREF(devices); Py_XDECREF(cpu);
        PyErr_Clear();
    }
    if (!convert) return nullptr;
    PyObject *type = PyLong_FromLong(dlpack::cpu);
    if (!type) return nullptr;
    PyObject *args[] = {capsule, device, Py_None, Py_None, type};
    PyObject *out = PyObject_Vectorcall(convert, args, 5, nullptr);
    Py_DECREF(type);
    return out;
}

/// JAX: a DLPack capsule for a single-device CPU `jax.Array` through jaxlib's
/// `buffer_to_dlpack_managed_tensor` (about 0.35 us) instead of `Array.__dlpack__`, whose Python
/// wrapper costs about 1.8 us. Returns NULL with no error set when the shortcut does not apply (jaxlib
/// without the entry point, arrays on several devices, deleted arrays, non-CPU devices, which need the
/// public route's stream handling): use `__dlpack__` then, which refuses what it cannot export.
inline PyObject *jax_capsule_from_array(PyObject *array) noexcept {
    static PyObject *export_fn = nullptr;
    static bool looked = false;
    if (!looked) {
        looked = true;
        PyObject *lib = PyImport_ImportModule("jax._src.lib");
        PyObject *ext = lib ? PyObject_GetAttrString(lib, "_jax") : nullptr;
        export_fn = ext ? PyObject_GetAttrString(ext, "buffer_to_dlpack_managed_tensor") : nullptr;  // kept
        Py_XDECREF(lib);
        Py_XDECREF(ext);
        PyErr_Clear();
    }
    if (!export_fn) return nullptr;
    // One device only, as `Array.__dlpack__` requires: jaxlib would export a sharded or replicated array's
    // first shard as if it were the whole array. And, as `__dlpack__` does, export a new single-device
    // array over the same buffer (`addressable_data(0)`, which is `_fully_replicated_shard()` here), not
    // the caller's array: jaxlib aborts the process when an array is deleted while its own export holds it.
    static PyObject *arrays_name = PyUnicode_InternFromString("_arrays");
    static PyObject *replicated_name = PyUnicode_InternFromString("is_fully_replicated");
    static PyObject *shard_name = PyUnicode_InternFromString("_fully_replicated_shard");
    if (!arrays_name || !replicated_name || !shard_name) { PyErr_Clear(); return nullptr; }
    PyObject *arrays = PyObject_GetAttr(array, arrays_name);
    const bool one_device = arrays && PyList_Check(arrays) && PyList_GET_SIZE(arrays) == 1;
    Py_XDECREF(arrays);
    PyObject *replicated = one_device ? PyObject_GetAttr(array, replicated_name) : nullptr;
    const bool whole = replicated == Py_True;  // one shard that is the whole array (not one process's part)
    Py_XDECREF(replicated);
    PyObject *shard = whole ? PyObject_CallMethodNoArgs(array, shard_name) : nullptr;
    if (!shard) { PyErr_Clear(); return nullptr; }  // deleted, donated, sharded: the public route decides
    PyObject *capsule = PyObject_Vectorcall(export_fn, &shard, 1, nullptr);
    Py_DECREF(shard);
    if (!capsule) { PyErr_Clear(); return nullptr; }
    // Only CPU tensors: device memory needs the stream synchronization that __dlpack__ performs.
    const char *name = PyCapsule_CheckExact(capsule) ? PyCapsule_GetName(capsule) : nullptr;
    const dlpack::Tensor *t = nullptr;
    if (name && std::strcmp(name, dlpack::capsule_name) == 0) {
        if (auto *mt = static_cast<dlpack::ManagedTensor *>(PyCapsule_GetPointer(capsule, name))) t = &mt->dl_tensor;
    } else if (name && std::strcmp(name, dlpack::capsule_name_versioned) == 0) {
        if (auto *mt = static_cast<dlpack::ManagedTensorVersioned *>(PyCapsule_GetPointer(capsule, name)))
            t = &mt->dl_tensor;
    }
    PyErr_Clear();
    if (!t || t->device.device_type != dlpack::cpu) {
        Py_DECREF(capsule);  // unused: its destructor frees the tensor
        return nullptr;
    }
    return capsule;
}

/// Framework numbers (the annotations' `value`s; nanobind's numbering).
enum framework_id : int { fw_none = 0, fw_numpy = 1, fw_pytorch = 2, fw_tensorflow = 3, fw_jax = 4,
                          fw_cupy = 5, fw_memview = 6, fw_array_api = 7, fw_mlx = 8 };

/// The error of a copying return policy on a tensor that has no framework to be copied into: no
/// framework annotation, and not imported from a framework's tensor.
inline constexpr const char *no_framework_to_copy_into =
    "dltensor: this return policy copies, but the tensor has no framework to be copied into (no framework "
    "annotation, and it was not imported from a framework's tensor): annotate one (py::numpy, py::pytorch, "
    "...), or return a view";

/// Must a CPU tensor reach JAX or TensorFlow as a copy? JAX adopts only compact strides (C or F order:
/// "Only DLPack tensors with trivial (compact) striding are supported"); TensorFlow only C order, and it
/// aborts the process in the first kernel that needs 64-byte alignment of memory it adopted. Their arrays
/// are immutable, so a copy cannot be told from a view.
inline bool immutable_needs_copy(const dlpack::Tensor &t, int framework) noexcept {
    if (t.device.device_type != dlpack::cpu) return false;  // device memory: the framework decides
    if (framework == fw_jax) return !has_order(t, 'A');
    if (framework != fw_tensorflow) return false;
    return !has_order(t, 'C') || ((uintptr_t) t.data + t.byte_offset) % 64 != 0;
}

/// Hands a NumPy array (a C-ordered copy) to JAX (`jax.numpy.asarray`) or TensorFlow
/// (`tensorflow.convert_to_tensor`), which copy it into memory of their own. Steals `array`; a new
/// reference, or NULL with an error set.
inline PyObject *immutable_from_numpy(PyObject *array, int framework) noexcept {
    if (!array) return nullptr;
    const bool jax = framework == fw_jax;
    PyObject *mod = PyImport_ImportModule(jax ? "jax.numpy" : "tensorflow");
    PyObject *fn = mod ? PyObject_GetAttrString(mod, jax ? "asarray" : "convert_to_tensor") : nullptr;
    PyObject *out = fn ? PyObject_Vectorcall(fn, &array, 1, nullptr) : nullptr;
    Py_XDECREF(fn);
    Py_XDECREF(mod);
    Py_DECREF(array);
    return out;
}

/// TensorFlow: can `__dlpack__` be called on this tensor? TensorFlow aborts the process (a failed CHECK)
/// when asked to export a string, variant or resource tensor, so those are refused before the call.
inline bool tensorflow_exportable(PyObject *tensor) noexcept {
    PyObject *dtype = PyObject_GetAttrString(tensor, "dtype");
    PyObject *name = dtype ? PyObject_GetAttrString(dtype, "name") : nullptr;
    const char *s = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
    const bool ok = s && std::strcmp(s, "string") != 0 && std::strcmp(s, "variant") != 0 &&
                    std::strcmp(s, "resource") != 0;
    Py_XDECREF(name);
    Py_XDECREF(dtype);
    PyErr_Clear();
    return ok;
}

/// NumPy's largest `ndim` (NPY_MAXDIMS in NumPy 2; 32 in NumPy 1, which refuses more itself).
inline constexpr int32_t numpy_max_ndim = 64;

/// NumPy has no bfloat16 of its own: relabels a uint16 array holding bfloat16 bits as
/// `ml_dtypes.bfloat16` (what JAX hands NumPy), a view. Steals `uint16_array`; a new reference, or NULL
/// with an error set (TypeError naming ml_dtypes when it is not installed).
inline PyObject *numpy_bfloat16_view(PyObject *uint16_array) noexcept {
    if (!uint16_array) return nullptr;
    PyObject *ml = PyImport_ImportModule("ml_dtypes");
    PyObject *bf16 = ml ? PyObject_GetAttrString(ml, "bfloat16") : nullptr;
    Py_XDECREF(ml);
    if (!bf16) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "dltensor: NumPy has no bfloat16 dtype; returning a bfloat16 tensor "
                                         "as a NumPy array needs the ml_dtypes package (pip install ml_dtypes)");
        Py_DECREF(uint16_array);
        return nullptr;
    }
    static PyObject *name = PyUnicode_InternFromString("view");
    PyObject *args[] = {uint16_array, bf16};
    PyObject *out = name ? PyObject_VectorcallMethod(name, args, 2, nullptr) : nullptr;
    Py_DECREF(bf16);
    Py_DECREF(uint16_array);
    return out;
}

/// NumPy: a view of an exact `numpy.ndarray` read from NumPy's C structures, as pybind11's `array_t`
/// does (`PyArrayObject_fields`, and `PyArray_Descr` in its NumPy 1.x or 2.x layout), instead of a
/// `__dlpack__` call. Only builtin numeric dtypes in native byte order, aligned, with strides that are
/// whole elements; anything else returns false and takes the public route.
struct numpy_arrays {
    PyTypeObject *ndarray = nullptr;  ///< `numpy.ndarray`, held for the process.
    int major = 0;                    ///< NumPy's major version: picks the `PyArray_Descr` layout.

    struct array_fields {  // PyArrayObject_fields: stable since NumPy 1.7
        PyObject_HEAD
        char *data;
        int nd;
        Py_ssize_t *dimensions;
        Py_ssize_t *strides;
        PyObject *base;
        PyObject *descr;
        int flags;
    };
    struct descr_head {  // the common start of PyArray_Descr in NumPy 1.x and 2.x
        PyObject_HEAD
        PyTypeObject *typeobj;
        char kind, type, byteorder, flags_or_unused;
        int type_num;
    };
    struct descr_v1 { descr_head head; int elsize; };
    struct descr_v2 { descr_head head; uint64_t flags; Py_ssize_t elsize; };
    static constexpr int writeable = 0x0400, aligned = 0x0100;  // NPY_ARRAY_WRITEABLE, NPY_ARRAY_ALIGNED

    /// Found once; `ndarray` stays NULL (no shortcut) unless NumPy 1.x or 2.x is importable.
    static const numpy_arrays &get() noexcept {
        static numpy_arrays np = [] {
            numpy_arrays r;
            PyObject *mod = PyImport_ImportModule("numpy");
            PyObject *type = mod ? PyObject_GetAttrString(mod, "ndarray") : nullptr;
            PyObject *version = mod ? PyObject_GetAttrString(mod, "__version__") : nullptr;
            const char *v = version && PyUnicode_Check(version) ? PyUnicode_AsUTF8(version) : nullptr;
            int major = v ? std::atoi(v) : 0;
            if (type && PyType_Check(type) && (major == 1 || major == 2)) {
                r.ndarray = (PyTypeObject *) type;
                r.major = major;
                type = nullptr;  // kept
            }
            Py_XDECREF(type);
            Py_XDECREF(version);
            Py_XDECREF(mod);
            PyErr_Clear();
            return r;
        }();
        return np;
    }

    /// `ml_dtypes.bfloat16`, the scalar type of the bfloat16 arrays that JAX and ml_dtypes hand NumPy
    /// (NumPy has none of its own, and its DLPack export and buffer protocol refuse it). Looked up in
    /// `sys.modules` (never imported) each time until found, then held for the process.
    static PyTypeObject *ml_bfloat16() noexcept {
        static PyTypeObject *type = nullptr;
        if (type) return type;
        PyObject *modules = PyImport_GetModuleDict();  // borrowed
        PyObject *mod = modules ? PyDict_GetItemString(modules, "ml_dtypes") : nullptr;  // borrowed
        PyObject *t = mod ? PyObject_GetAttrString(mod, "bfloat16") : nullptr;
        if (t && PyType_Check(t)) type = (PyTypeObject *) t;  // kept
        else Py_XDECREF(t);
        PyErr_Clear();
        return type;
    }

    /// Fills `t` (shape and strides in the caller's `shape`/`strides`, max_ndim entries each) and
    /// `read_only`. The view is valid while `obj` is alive. `exact`: only `numpy.ndarray` itself (the
    /// fast path); else also subclasses, for the dtypes that only this reader can read (bfloat16).
    bool view(PyObject *obj, dlpack::Tensor &t, int64_t *shape, int64_t *strides, bool &read_only,
              bool exact = true) const noexcept {
        if (!ndarray || !(Py_TYPE(obj) == ndarray || (!exact && PyObject_TypeCheck(obj, ndarray)))) return false;
        const auto *a = reinterpret_cast<const array_fields *>(obj);
        const auto *d = reinterpret_cast<const descr_head *>(a->descr);
        // Misaligned arrays take the public route (exact), or are read here and refused or copied by the
        // alignment check (the bfloat16 route, which has no other).
        if (a->nd < 0 || a->nd > dlpack::max_ndim || (exact && !(a->flags & aligned))) return false;
        const Py_ssize_t elsize = major >= 2 ? reinterpret_cast<const descr_v2 *>(d)->elsize
                                             : reinterpret_cast<const descr_v1 *>(d)->elsize;
        const uint16_t probe = 1;
        const bool little = *reinterpret_cast<const uint8_t *>(&probe) == 1;
        if (!(d->byteorder == '=' || d->byteorder == '|' || d->byteorder == (little ? '<' : '>'))) return false;
        uint8_t code;
        switch (d->kind) {
            case 'b': code = dlpack::bool_; break;
            case 'i': code = dlpack::int_; break;
            case 'u': code = dlpack::uint_; break;
            case 'f': code = dlpack::float_; break;
            case 'c': code = dlpack::complex_; break;
            case 'V':  // user-defined dtypes: only ml_dtypes' bfloat16
                if (elsize != 2 || d->typeobj != ml_bfloat16() || !d->typeobj) return false;
                code = dlpack::bfloat_;
                break;
            default: return false;  // strings, objects, structured, datetime
        }
        if (!exact && code != dlpack::bfloat_) return false;  // everything else: the public route
        if (elsize <= 0 || elsize > 16) return false;
        t.dtype = {code, (uint8_t) (elsize * 8), 1};
        if (!is_supported_dtype(t.dtype)) return false;  // e.g. long double
        for (int i = 0; i < a->nd; ++i) {
            if (a->strides[i] % elsize != 0) return false;
            shape[i] = (int64_t) a->dimensions[i];
            strides[i] = (int64_t) (a->strides[i] / elsize);
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

} // namespace dlt
