// dltensor/frameworks.h: framework-specific shortcuts for returning tensors, measured against the
// frameworks' public DLPack entry points. Each is an optimization with a checked fallback: when the
// shortcut is unavailable (another version of the framework), callers use the public route.
// Written against the CPython C API only, so every backend shares it.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "dlpack.h"
#include "dtypes.h"
#include "process_state.h"
#include "py_ref.h"
#include "requirements.h"
#include "strides.h"

namespace dlt {

/// jaxlib's DLPack entry points and JAX's CPU device, looked up once (process_state.h); each stays NULL
/// when this jaxlib lacks it (the shortcuts below then do not apply). Interned names of the single-device
/// check too.
struct jax_entry_points {
    PyObject *to_buffer = nullptr;    ///< `_jax.dlpack_managed_tensor_to_buffer` (5 arguments; jaxlib >= 467)
    PyObject *cpu_device = nullptr;   ///< `jax.devices("cpu")[0]`, what `to_buffer` places arrays on
    PyObject *from_buffer = nullptr;  ///< `_jax.buffer_to_dlpack_managed_tensor`
    PyObject *arrays_name = nullptr, *replicated_name = nullptr, *shard_name = nullptr;

    static const jax_entry_points &get() noexcept { return process_state<jax_entry_points>(make); }

    static jax_entry_points make() noexcept {
        jax_entry_points r;
        py_ref lib = import_module("jax._src.lib");
        py_ref version = attribute(lib.get(), "jaxlib_extension_version");
        const long v = version ? PyLong_AsLong(version.get()) : -1;
        py_ref ext = attribute(lib.get(), "_jax");
        r.from_buffer = attribute(ext.get(), "buffer_to_dlpack_managed_tensor").release();  // kept
        py_ref to_buffer = v >= 467 ? attribute(ext.get(), "dlpack_managed_tensor_to_buffer") : py_ref();
        py_ref jax = to_buffer ? import_module("jax") : py_ref();
        py_ref devices(jax ? PyObject_CallMethod(jax.get(), "devices", "s", "cpu") : nullptr);
        py_ref cpu(devices && PySequence_Check(devices.get()) && PySequence_Size(devices.get()) > 0
                       ? PySequence_GetItem(devices.get(), 0) : nullptr);
        if (to_buffer && cpu) {  // kept for the process
            r.to_buffer = to_buffer.release();
            r.cpu_device = cpu.release();
        }
        r.arrays_name = PyUnicode_InternFromString("_arrays");
        r.replicated_name = PyUnicode_InternFromString("is_fully_replicated");
        r.shard_name = PyUnicode_InternFromString("_fully_replicated_shard");
        PyErr_Clear();
        return r;
    }
};

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
    const jax_entry_points &jax = jax_entry_points::get();
    if (!jax.to_buffer) return nullptr;
    const py_ref type(PyLong_FromLong(dlpack::cpu));
    if (!type) return nullptr;
    PyObject *args[] = {capsule, jax.cpu_device, Py_None, Py_None, type.get()};
    return PyObject_Vectorcall(jax.to_buffer, args, 5, nullptr);
}

/// JAX: a DLPack capsule for a single-device CPU `jax.Array` through jaxlib's
/// `buffer_to_dlpack_managed_tensor` (about 0.35 us) instead of `Array.__dlpack__`, whose Python
/// wrapper costs about 1.8 us. Returns NULL with no error set when the shortcut does not apply (jaxlib
/// without the entry point, arrays on several devices, deleted arrays, non-CPU devices, which need the
/// public route's stream handling): use `__dlpack__` then, which refuses what it cannot export.
inline PyObject *jax_capsule_from_array(PyObject *array) noexcept {
    const jax_entry_points &jax = jax_entry_points::get();
    if (!jax.from_buffer || !jax.arrays_name || !jax.replicated_name || !jax.shard_name) return nullptr;
    // One device only, as `Array.__dlpack__` requires: jaxlib would export a sharded or replicated array's
    // first shard as if it were the whole array. And, as `__dlpack__` does, export a new single-device
    // array over the same buffer (`addressable_data(0)`, which is `_fully_replicated_shard()` here), not
    // the caller's array: jaxlib aborts the process when an array is deleted while its own export holds it.
    const py_ref arrays(PyObject_GetAttr(array, jax.arrays_name));
    const bool one_device = arrays && PyList_Check(arrays.get()) && PyList_GET_SIZE(arrays.get()) == 1;
    const py_ref replicated(one_device ? PyObject_GetAttr(array, jax.replicated_name) : nullptr);
    const bool whole = replicated.get() == Py_True;  // one shard that is the whole array (not one process's part)
    py_ref shard(whole ? PyObject_CallMethodNoArgs(array, jax.shard_name) : nullptr);
    if (!shard) { PyErr_Clear(); return nullptr; }  // deleted, donated, sharded: the public route decides
    PyObject *args[] = {shard.get()};
    py_ref capsule(PyObject_Vectorcall(jax.from_buffer, args, 1, nullptr));
    if (!capsule) { PyErr_Clear(); return nullptr; }
    // Only CPU tensors: device memory needs the stream synchronization that __dlpack__ performs.
    const char *name = PyCapsule_CheckExact(capsule.get()) ? PyCapsule_GetName(capsule.get()) : nullptr;
    const dlpack::Tensor *t = nullptr;
    if (name && std::strcmp(name, dlpack::capsule_name) == 0) {
        if (auto *mt = static_cast<dlpack::ManagedTensor *>(PyCapsule_GetPointer(capsule.get(), name)))
            t = &mt->dl_tensor;
    } else if (name && std::strcmp(name, dlpack::capsule_name_versioned) == 0) {
        if (auto *mt = static_cast<dlpack::ManagedTensorVersioned *>(PyCapsule_GetPointer(capsule.get(), name)))
            t = &mt->dl_tensor;
    }
    PyErr_Clear();
    if (!t || t->device.device_type != dlpack::cpu) return nullptr;  // unused: its destructor frees the tensor
    return capsule.release();
}

/// Framework numbers (the annotations' `value`s; nanobind's numbering).
enum framework_id : int { fw_none = 0, fw_numpy = 1, fw_pytorch = 2, fw_tensorflow = 3, fw_jax = 4,
                          fw_cupy = 5, fw_memview = 6, fw_array_api = 7, fw_mlx = 8 };

/// The error of a copying return policy on a tensor that has no framework to be copied into: no
/// framework annotation (or `array_api` / `memview`, which cannot own a copy), and not imported from a
/// framework's tensor.
inline constexpr const char *no_framework_to_copy_into =
    "dltensor: this return policy copies, which is not supported for this framework (a tensor without a "
    "framework annotation, py::array_api or py::memview cannot own a copy, and it was not imported from a "
    "framework's tensor): annotate one (py::numpy, py::pytorch, ...), or return a view";

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
    const py_ref copy(array);
    if (!copy) return nullptr;
    const bool jax = framework == fw_jax;
    return call_function(jax ? "jax.numpy" : "tensorflow", jax ? "asarray" : "convert_to_tensor", copy.get()).release();
}

/// TensorFlow: can `__dlpack__` be called on this tensor? TensorFlow aborts the process (a failed CHECK)
/// when asked to export a string, variant or resource tensor, so those are refused before the call.
inline bool tensorflow_exportable(PyObject *tensor) noexcept {
    py_ref dtype = attribute(tensor, "dtype");
    py_ref name = attribute(dtype.get(), "name");
    const char *s = name && PyUnicode_Check(name.get()) ? PyUnicode_AsUTF8(name.get()) : nullptr;
    const bool ok = s && std::strcmp(s, "string") != 0 && std::strcmp(s, "variant") != 0 &&
                    std::strcmp(s, "resource") != 0;
    PyErr_Clear();
    return ok;
}

/// NumPy's largest `ndim` (NPY_MAXDIMS in NumPy 2; 32 in NumPy 1, which refuses more itself).
inline constexpr int32_t numpy_max_ndim = 64;

/// NumPy has no bfloat16 or float8 of its own: relabels a uint16 (bfloat16) or uint8 (float8) array holding
/// the bits as the ml_dtypes type named `name` ("bfloat16", "float8_e4m3fn", ...; what JAX hands NumPy), a
/// view. Steals `bits_array`; a new reference, or NULL with an error set (TypeError naming ml_dtypes when it
/// is not installed, or lacks the type).
inline PyObject *numpy_ml_dtypes_view(PyObject *bits_array, const char *name) noexcept {
    const py_ref bits(bits_array);
    if (!bits) return nullptr;
    py_ref ml = import_module("ml_dtypes");
    py_ref type = attribute(ml.get(), name);
    if (!type) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "dltensor: NumPy has no %s dtype; returning a %s tensor as a NumPy array "
                     "needs the ml_dtypes package (pip install ml_dtypes)%s", name, name,
                     ml ? ", of a version that has it" : "");
        return nullptr;
    }
    PyObject *args[] = {type.get()};
    return call_method(bits.get(), "view", args, 1).release();
}

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

    /// Found once (process_state.h); `ndarray` stays NULL (no shortcut) unless NumPy 1.x or 2.x is
    /// importable.
    static const numpy_arrays &get() noexcept { return process_state<numpy_arrays>(make); }

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
    struct ml_dtype { const char *name; dlpack::DataType dtype; };
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

    /// `ml_dtypes.<ml_dtypes[i].name>`, looked up in `sys.modules` (never imported) each time until found,
    /// then held for the process.
    static PyTypeObject *ml_type(size_t i) noexcept {
        static std::atomic<PyTypeObject *> found[ml_dtype_count] = {};
        if (PyTypeObject *type = found[i].load(std::memory_order_acquire)) return type;
        PyObject *modules = PyImport_GetModuleDict();  // borrowed
        PyObject *mod = modules ? PyDict_GetItemString(modules, "ml_dtypes") : nullptr;  // borrowed
        py_ref t = attribute(mod, ml_dtypes[i].name);
        PyErr_Clear();
        if (!t || !PyType_Check(t.get())) return nullptr;
        PyTypeObject *expected = nullptr;
        if (found[i].compare_exchange_strong(expected, (PyTypeObject *) t.get(), std::memory_order_acq_rel))
            return (PyTypeObject *) t.release();  // kept for the process
        return expected;  // another thread kept the same type first
    }

    /// The DLPack dtype of an ml_dtypes scalar type of `elsize` bytes (its `tp_name` is "ml_dtypes.<name>",
    /// and it is that module's type), else false.
    static bool ml_dtype_of(PyTypeObject *type, Py_ssize_t elsize, dlpack::DataType &out) noexcept {
        const char *n = type ? type->tp_name : nullptr;
        if (!n || std::strncmp(n, "ml_dtypes.", 10) != 0) return false;
        for (size_t i = 0; i < ml_dtype_count; ++i) {
            const ml_dtype &e = ml_dtypes[i];
            if (std::strcmp(n + 10, e.name) != 0) continue;
            if (elsize != (e.dtype.bits + 7) / 8 || ml_type(i) != type) return false;
            out = e.dtype;
            return true;
        }
        return false;
    }

    /// Fills `t` (shape and strides in the caller's `shape`/`strides`, max_ndim entries each) and
    /// `read_only`. The view is valid while `obj` is alive. `exact`: only `numpy.ndarray` itself (the
    /// fast path); else also subclasses, for the dtypes that only this reader can read (ml_dtypes' bfloat16
    /// and float8).
    bool view(PyObject *obj, dlpack::Tensor &t, int64_t *shape, int64_t *strides, bool &read_only,
              bool exact = true) const noexcept {
        if (!ndarray || !(Py_TYPE(obj) == ndarray || (!exact && PyObject_TypeCheck(obj, ndarray)))) return false;
        const auto *a = reinterpret_cast<const array_fields *>(obj);
        const auto *d = reinterpret_cast<const descr_head *>(a->descr);
        // Misaligned arrays take the public route (exact), or are read here and refused or copied by the
        // alignment check (the ml_dtypes route, bfloat16 and float8, which has no other).
        if (a->nd < 0 || a->nd > dlpack::max_ndim || (exact && !(a->flags & aligned))) return false;
        const Py_ssize_t elsize = major >= 2 ? reinterpret_cast<const descr_v2 *>(d)->elsize
                                             : reinterpret_cast<const descr_v1 *>(d)->elsize;
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
                if (elsize == 1) { ml = true; break; }
                code = dlpack::float_;
                break;
            case 'c': code = dlpack::complex_; break;
            case 'V': ml = true; break;  // user-defined dtypes: only ml_dtypes' (bfloat16, float8)
            default: return false;  // strings, objects, structured, datetime
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
        // Every supported element size is a power of two: strides are checked and divided by shifts (a
        // division by a run-time value costs tens of cycles per dimension).
        if (elsize <= 0 || elsize > 16 || (elsize & (elsize - 1)) != 0) return false;
        const int shift = __builtin_ctzll((unsigned long long) elsize);
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

} // namespace dlt
