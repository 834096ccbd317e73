// dltensor/producer.h: who made a Python object, and which import route its type takes, decided once per
// type and cached. Written against the CPython C API only, so every backend shares it.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "dlpack.h"
#include "exchange.h"
#include "frameworks.h"
#include "process_state.h"
#include "py_ref.h"
#include "torch.h"

namespace dlt {

/// The library that produced a Python object, by the top-level package of its type's `__module__`.
enum class producer : uint8_t { other, numpy, torch, jax, tensorflow, cupy, mlx };

/// How a type's tensors are imported while the fast paths are on (process_state.h); with them off, every
/// type takes `portable`. import.h implements each.
enum class route : uint8_t {
    exchange,  ///< the type's DLPack C exchange API (PyTorch): a non-owning view, no Python call
    numpy,     ///< NumPy's C structures for exact `numpy.ndarray`s, else `portable`
    portable,  ///< `__dlpack__` (JAX: jaxlib's export first), else the buffer protocol
};

/// What the importer remembers about a Python type.
struct producer_info {
    producer kind = producer::other;
    route path = route::portable;             ///< The route its tensors take (fast paths on).
    bool immutable = false;                   ///< Immutable arrays, although they export no read-only flag.
    /// PyTorch's lazy modules' placeholders (`torch.nn.parameter.UninitializedParameter` / `UninitializedBuffer`):
    /// no tensor until the module's first forward pass, so never imported.
    bool uninitialized = false;
    const dlpack::ExchangeAPI *api = nullptr; ///< The type's DLPack C exchange API, if it publishes one.
    /// PyTorch types: the checks the C API skips (interned: the entry stays 24 bytes, copied on every
    /// argument); NULL for other types, or when the queries could not be found (see has_torch_checks()).
    const torch_checks *torch = nullptr;

    /// Were all of PyTorch's queries found for this type?
    bool has_torch_checks() const noexcept { return torch && torch->ok(); }
};

/// The framework a producer's tensors are (frameworks.h numbers); `fw_none` for other producers.
constexpr int framework_of(producer p) noexcept {
    switch (p) {
        case producer::numpy: return fw_numpy;
        case producer::torch: return fw_pytorch;
        case producer::jax: return fw_jax;
        case producer::tensorflow: return fw_tensorflow;
        case producer::cupy: return fw_cupy;
        case producer::mlx: return fw_mlx;
        default: return fw_none;
    }
}

namespace detail {

inline producer classify_module(const char *module) noexcept {
    std::size_t n = std::strcspn(module, ".");
    auto is = [&](const char *pkg) { return std::strlen(pkg) == n && std::strncmp(module, pkg, n) == 0; };
    if (is("numpy")) return producer::numpy;
    if (is("torch")) return producer::torch;
    if (is("jax") || is("jaxlib")) return producer::jax;
    if (is("tensorflow")) return producer::tensorflow;
    if (is("cupy") || is("cupy_backends")) return producer::cupy;
    if (is("mlx")) return producer::mlx;
    return producer::other;
}

/// The public, module-qualified name of a type, for explanations: `jax.Array` and `tensorflow.Tensor`
/// for those frameworks' private array types, `module.Name` for other classes (`torch.Tensor`,
/// `numpy.ndarray`, `dltensor.Tensor`), builtins unqualified (`list`, `PyCapsule`). Refusal path only;
/// leaves no error set.
inline void public_type_name(PyTypeObject *tp, char *out, std::size_t size) noexcept {
    const char *name = tp->tp_name;
    py_ref mod = std::strchr(name, '.') ? py_ref() : attribute((PyObject *) tp, "__module__");
    const char *m = mod && PyUnicode_Check(mod.get()) ? PyUnicode_AsUTF8(mod.get()) : nullptr;
    PyErr_Clear();
    const producer kind = classify_module(m ? m : name);
    if (kind == producer::jax) m = "jax", name = "Array";
    else if (kind == producer::tensorflow) m = "tensorflow", name = "Tensor";
    else if (kind == producer::torch && m && std::strcmp(name, "Tensor") == 0) m = "torch";
    if (m && std::strcmp(m, "builtins") == 0) m = nullptr;
    std::snprintf(out, size, "%s%s%s", m ? m : "", m ? "." : "", name);
}

inline bool has_buffer_protocol(PyTypeObject *tp) noexcept {
    return tp->tp_as_buffer && tp->tp_as_buffer->bf_getbuffer;
}

/// What `producer_of` learns of a type it has not seen: classified by the first type in its MRO that a
/// library defines (a user's `class T(torch.Tensor)`, torchvision's tv_tensors, `np.matrix` are their base
/// library's tensors); PyTorch's queries come from the last PyTorch type (`torch._C.TensorBase`), which no
/// subclass overrides. May run Python (`__module__` lookups); leaves no error set.
inline producer_info classify_type(PyTypeObject *tp) noexcept {
    producer_info info;
    PyTypeObject *torch_base = nullptr;
    PyObject *mro = tp->tp_mro;
    const Py_ssize_t n = mro && PyTuple_Check(mro) ? PyTuple_GET_SIZE(mro) : 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *base = PyTuple_GET_ITEM(mro, i);
        py_ref mod = attribute(base, "__module__");
        const char *s = mod && PyUnicode_Check(mod.get()) ? PyUnicode_AsUTF8(mod.get()) : nullptr;
        producer kind = s ? classify_module(s) : producer::other;
        PyErr_Clear();
        if (info.kind == producer::other) info.kind = kind;
        if (kind == producer::torch && info.kind == producer::torch) torch_base = (PyTypeObject *) base;
        if (kind == producer::torch && std::strcmp(((PyTypeObject *) base)->tp_name, "UninitializedTensorMixin") == 0)
            info.uninitialized = true;
    }
    info.immutable = info.kind == producer::jax || info.kind == producer::tensorflow;
    if (info.kind == producer::torch && torch_base) info.torch = torch_checks::interned(torch_checks::of(torch_base, tp));
    // The exchange route is only taken where every check it needs is available.
    if (info.kind != producer::torch || info.has_torch_checks()) info.api = find_exchange_api(tp);
    info.path = info.api ? route::exchange : info.kind == producer::numpy ? route::numpy : route::portable;
    return info;
}

/// Serializes the producer cache on free-threaded builds (where no GIL does); nothing elsewhere. Never
/// held while Python runs.
class producer_cache_lock {
public:
#ifdef Py_GIL_DISABLED
    producer_cache_lock() noexcept { PyMutex_Lock(&mutex()); }
    ~producer_cache_lock() { PyMutex_Unlock(&mutex()); }
#else
    producer_cache_lock() noexcept { }  // user-provided: no unused-variable warning
#endif
    producer_cache_lock(const producer_cache_lock &) = delete;
    producer_cache_lock &operator=(const producer_cache_lock &) = delete;

#ifdef Py_GIL_DISABLED
private:
    static PyMutex &mutex() noexcept {
        static PyMutex m = {0};
        return m;
    }
#endif
};

/// Per-type producer lookup with a small cache (most recent type first). Each cached type is held by a
/// strong reference, so a cached type can never be freed and its address reused by another type while
/// the entry exists. Returns false, caching nothing, for a type with neither `__dlpack__` nor the
/// buffer protocol (not a tensor type at all).
inline bool producer_of(PyTypeObject *tp, producer_info &info) noexcept {
    struct entry { PyTypeObject *type; producer_info info; };
    constexpr unsigned capacity = 32;
    static entry cache[capacity] = {};
    static unsigned next = 0, last = 0;
    {
        producer_cache_lock lock;
        if (cache[last].type == tp) { info = cache[last].info; return true; }
        for (unsigned i = 0; i < capacity; ++i)
            if (cache[i].type == tp) { last = i; info = cache[i].info; return true; }
    }
    if (!_PyType_Lookup(tp, py_names::get().dlpack_method) && !has_buffer_protocol(tp)) return false;
    info = classify_type(tp);  // outside the lock: runs Python
    PyObject *evicted;
    {
        producer_cache_lock lock;
        last = next++ % capacity;
        entry &slot = cache[last];
        evicted = (PyObject *) slot.type;
        Py_INCREF((PyObject *) tp);
        slot = entry{tp, info};
    }
    Py_XDECREF(evicted);  // last, and unlocked: freeing a type may run arbitrary code
    return true;
}

} // namespace detail
} // namespace dlt
