// dltensor/frameworks/jax-inl.h: the bodies of jax.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "jax.h"

#include <cstring>
#include "../core/capsule_import-inl.h"
#include "../python/handle.h"
#include "numpy-inl.h"

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
    void release() noexcept {
        for (PyObject **o : {&to_buffer, &cpu_device, &from_buffer, &arrays_name, &replicated_name, &shard_name})
            Py_CLEAR(*o);
    }

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
                       ? PySequence_GetItem(devices.get(), 0)
                       : nullptr);
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

/// JAX: an unversioned DLPack capsule of CPU memory as a `jax.Array` through jaxlib's `dlpack_managed_tensor_to_buffer`
/// (zero-copy when 64-byte aligned, else a copy). NULL, no error set: not applicable (older jaxlib, 64-bit dtypes,
/// which JAX canonicalizes without x64, non-CPU): take the public route. NULL with an error set: the call failed.
inline PyObject *jax_array_from_capsule(PyObject *capsule, dlpack::DataType dtype, int32_t device_type) noexcept {
    if (device_type != dlpack::cpu) return nullptr;
    const bool canonicalized =
        ((dtype.code == dlpack::int_ || dtype.code == dlpack::uint_ || dtype.code == dlpack::float_) &&
         dtype.bits == 64) ||
        (dtype.code == dlpack::complex_ && dtype.bits == 128);
    if (canonicalized) return nullptr;
    const jax_entry_points &jax = jax_entry_points::get();
    if (!jax.to_buffer) return nullptr;
    const py_ref type(PyLong_FromLong(dlpack::cpu));
    if (!type) return nullptr;
    PyObject *args[] = {capsule, jax.cpu_device, Py_None, Py_None, type.get()};
    return PyObject_Vectorcall(jax.to_buffer, args, 5, nullptr);
}

/// JAX: a DLPack capsule for a single-device CPU `jax.Array`, through jaxlib's `buffer_to_dlpack_managed_tensor`.
/// NULL, no error set, where that does not apply (jaxlib without it, several devices, deleted arrays, non-CPU
/// devices): use `__dlpack__` then, which refuses what it cannot export.
inline PyObject *jax_capsule_from_array(PyObject *array) noexcept {
    const jax_entry_points &jax = jax_entry_points::get();
    if (!jax.from_buffer || !jax.arrays_name || !jax.replicated_name || !jax.shard_name) return nullptr;
    // One device only (jaxlib would export a sharded array's first shard as the whole array); export, as `__dlpack__`
    // does, a new single-device array over the same buffer, not the caller's: jaxlib aborts the process when an
    // array is deleted while its own export holds it.
    const py_ref arrays(PyObject_GetAttr(array, jax.arrays_name));
    const bool one_device = arrays && PyList_Check(arrays.get()) && PyList_GET_SIZE(arrays.get()) == 1;
    const py_ref replicated(one_device ? PyObject_GetAttr(array, jax.replicated_name) : nullptr);
    const bool whole = replicated.get() == Py_True;  // one shard that is the whole array (not one process's part)
    py_ref shard(whole ? PyObject_CallMethodNoArgs(array, jax.shard_name) : nullptr);
    if (!shard) {
        PyErr_Clear();
        return nullptr;
    }  // deleted, donated, sharded: the public route decides
    PyObject *args[] = {shard.get()};
    py_ref capsule(PyObject_Vectorcall(jax.from_buffer, args, 1, nullptr));
    if (!capsule) {
        PyErr_Clear();
        return nullptr;
    }
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

/// Is JAX's 64-bit mode on (`jax.config.jax_enable_x64`)? Without it JAX has no 64-bit dtypes.
inline bool jax_x64_enabled() noexcept {
    py_ref jax = import_module("jax");
    py_ref config = attribute(jax.get(), "config");
    py_ref flag = attribute(config.get(), "jax_enable_x64");
    const bool on = flag && PyObject_IsTrue(flag.get()) == 1;
    PyErr_Clear();
    return on;
}

namespace frameworks {
namespace jax {

inline constexpr const char *packages[] = {"jax", "jaxlib", nullptr};

/// jaxlib's export where the fast paths are on, else `__dlpack__`.
DLTENSOR_CORE mismatch export_capsule(PyObject *src, const producer_info &, const requirements &, PyObject *method,
                                      py_ref &capsule, dlpack::DataType &) noexcept {
    if (fast_paths_enabled()) capsule = py_ref(jax_capsule_from_array(src));
    if (!capsule) capsule = detail::call_dlpack(src, method);
    return mismatch::none;
}

/// On the CPU NumPy converts a JAX array (viewed without a copy) far faster than JAX's own dispatch; and
/// without 64-bit mode JAX truncates a 64-bit astype back to 32 bits.
DLTENSOR_CORE py_ref convert(PyObject *src, const conversion_request &c) noexcept {
    if (!c.name) return py_ref();
    if (c.on_cpu || (c.target.bits >= 64 && !jax_x64_enabled())) return convert_through_numpy(src, c);
    return astype_copy(src, c, false);
}

/// JAX adopts only compact (C- or F-ordered) CPU memory: other CPU tensors, and copies, reach it as a C-ordered
/// NumPy copy through `jax.numpy.asarray` (which copies again; JAX arrays are immutable, so copies pass for views).
DLTENSOR_CORE PyObject *to_python(tensor_handle *h, bool copy) noexcept {
    const dlpack::Tensor &t = h->tensor();
    if (copy || (t.device.device_type == dlpack::cpu && !has_order(t, 'A'))) {
        const py_ref array(export_tensor(h, fw_numpy, true));
        return array ? call_function("jax.numpy", "asarray", array.get()).release() : nullptr;
    }
    if (fast_paths_enabled()) {
        const py_ref cap(make_capsule(h, false));
        if (!cap) PyErr_Clear();
        PyObject *arr = cap ? jax_array_from_capsule(cap.get(), t.dtype, t.device.device_type) : nullptr;
        if (arr || PyErr_Occurred()) return arr;
    }
    const py_ref obj(make_exported(h, true));
    return obj ? call_function("jax.dlpack", "from_dlpack", obj.get()).release() : nullptr;
}

}  // namespace jax
}  // namespace frameworks

inline constexpr framework jax_framework = {
    fw_jax,
    "JAX",
    frameworks::jax::packages,
    "jax.Array",
    true,
    /*immutable*/ true,
    /*copies_read_only*/ false,
    /*reason*/ nullptr,
    /*ignores_byte_offset*/ false,
    /*deleter_not_reentrant*/ false,
    /*classify*/ nullptr,
    /*read*/ nullptr,
    /*check_view*/ nullptr,
    frameworks::jax::export_capsule,
    /*written*/ nullptr,
    frameworks::jax::convert,
    frameworks::jax::to_python,
    /*empty*/ nullptr,
};

}  // namespace dlt
