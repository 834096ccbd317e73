// dltensor/frameworks.h: framework-specific shortcuts for returning tensors, measured against the
// frameworks' public DLPack entry points. Each is an optimization with a checked fallback: when the
// shortcut is unavailable (another version of the framework), callers use the public route.
// Written against the CPython C API only, so every backend shares it.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstring>

#include "dlpack.h"

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
/// without the entry point, sharded or deleted arrays, non-CPU devices, which need the public route's
/// stream handling): use `__dlpack__` then.
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
    PyObject *capsule = PyObject_Vectorcall(export_fn, &array, 1, nullptr);
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

} // namespace dlt
