// dltensor/core/producer.h: who made a Python object, and which import route its type takes, decided once per
// type and cached.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdint>
#include <cstring>

#include "../tensor/config.h"
#include "../python/atomic_value.h"
#include "../tensor/dlpack.h"
#include "exchange.h"
#include "../frameworks/registry.h"
#include "../python/process_state.h"
#include "../python/py_ref.h"

namespace dlt {

/// How a type's tensors are imported while the fast paths are on (process_state.h); with them off, every
/// type takes `portable`. import.h implements each.
enum class route : uint8_t {
    exchange,          ///< the type's DLPack C exchange API (PyTorch, Paddle): a non-owning view, no Python call
    framework_reader,  ///< the framework's reader of its C structures (NumPy: exact `numpy.ndarray`s), else `portable`
    portable,          ///< `__dlpack__` (or the framework's export hook: jaxlib's), else the buffer protocol
};

namespace detail {

/// A type's public, module-qualified name for explanations: its framework's public type for the framework's classes
/// (`jax.Array` for jaxlib's private ones), else `module.Name`, builtins unqualified (`list`). `f`: the type's
/// framework, NULL for none. Refusal path only; leaves no error set.
inline void public_type_name(PyTypeObject *tp, const framework *f, char *out, std::size_t size) noexcept {
    const char *name = tp->tp_name;
    py_ref holder;
    const char *m = std::strchr(name, '.') ? nullptr : module_of((PyObject *) tp, holder);
    if (f && f->public_type && in_packages(m ? m : name, f->packages)) {
        const char *dot = std::strrchr(f->public_type, '.');
        if (f->public_type_always || std::strcmp(dot ? dot + 1 : f->public_type, name) == 0)
            m = nullptr, name = f->public_type;
    }
    if (m && std::strcmp(m, "builtins") == 0) m = nullptr;
    // "module.name", truncated to `size` (no snprintf: too slow for a refused overload)
    std::size_t n = 0;
    bool cut = false;
    auto put = [&](const char *text) {
        for (; *text && n + 1 < size; ++text) out[n++] = *text;
        cut |= *text != '\0';
    };
    if (m) put(m), put(".");
    put(name);
    if (cut) {  // whole UTF-8 characters only: a character cut at the end is dropped (no valid str else)
        std::size_t lead = n;
        while (lead > 0 && ((unsigned char) out[lead - 1] & 0xC0) == 0x80) --lead;  // continuation bytes
        if (lead > 0 && (unsigned char) out[lead - 1] >= 0xC0) {
            const unsigned char c = (unsigned char) out[lead - 1];
            const std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            if (n - (lead - 1) < len) n = lead - 1;
        }
    }
    if (size) out[n] = '\0';
}

inline bool has_buffer_protocol(PyTypeObject *tp) noexcept {
    return tp->tp_as_buffer && tp->tp_as_buffer->bf_getbuffer;
}

/// What `producer_of` learns of a new type: classified by the first type in its MRO that a framework defines (a
/// user's `class T(torch.Tensor)`, `np.matrix`), then by that framework's `classify` hook. May run Python (`__module__`
/// lookups); leaves no error set.
inline producer_info classify_type(PyTypeObject *tp) noexcept {
    producer_info info;
    const framework *f = nullptr;
    PyObject *mro = tp->tp_mro;
    PyObject *framework_type = nullptr;
    const Py_ssize_t n = mro && PyTuple_Check(mro) ? PyTuple_GET_SIZE(mro) : 0;
    for (Py_ssize_t i = 0; i < n && !f; ++i) {
        py_ref holder;
        framework_type = PyTuple_GET_ITEM(mro, i);
        const char *m = module_of(framework_type, holder);
        f = m ? framework_of_module(m) : nullptr;
    }
    // A subclass with a `__dlpack__` of its own (and no exchange API of its own): only the public route
    // gives its export's result.
    const py_names &names = py_names::get();
    auto own = [&](PyObject *name) {
        return name && _PyType_Lookup(tp, name) != _PyType_Lookup((PyTypeObject *) framework_type, name);
    };
    const bool own_export =
        f && framework_type != (PyObject *) tp && own(names.dlpack_method) && !own(names.exchange_api);
    bool use_exchange_api = !own_export;
    if (f) {
        info.framework_id = (uint8_t) f->id;
        info.immutable = f->immutable;
        if (f->classify) f->classify(tp, info, use_exchange_api);
    }
    if (use_exchange_api) info.api = find_exchange_api(tp);  // a classify hook may only veto it
    const route path = info.api                      ? route::exchange
                       : f && f->read && !own_export ? route::framework_reader
                                                     : route::portable;
    info.path = (uint8_t) path;
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

/// The per-type producer cache (most recent type first), one per interpreter. Each cached type is held
/// by a strong reference, so a cached type can never be freed and its address reused by another type
/// while the entry exists.
struct producer_cache {
    struct entry {
        PyTypeObject *type;
        producer_info info;
    };
    static constexpr unsigned capacity = 32;
    mutable entry entries[capacity] = {};
    mutable unsigned next = 0, last = 0;

    void release() noexcept;
    /// The main interpreter's is a static (found at a fixed address: no load on the hot path); a
    /// sub-interpreter's is its process_state (made by its first argument, released with it).
    DLTENSOR_HOT_INLINE static producer_cache &get() noexcept {
        if (detail::sub_interpreters_in_use().load(atomic_order::relaxed) == 0) return main;
        return of_this_interpreter();
    }

private:
    static producer_cache main;
    DLTENSOR_COLD static producer_cache &of_this_interpreter() noexcept {
        if (!detail::running_sub_interpreter()) return main;
        return const_cast<producer_cache &>(process_state<producer_cache>([] { return producer_cache{}; }));
    }
};
inline producer_cache producer_cache::main{};

#ifdef Py_GIL_DISABLED
/// Free-threaded builds: each thread's last answer, read without the cache's lock. Valid while no cache dropped a
/// type since it was taken (`producer_cache_drops`): its type is still held, so the same address is the same type.
struct producer_of_this_thread {
    const producer_cache *cache = nullptr;
    PyTypeObject *type = nullptr;
    uint64_t drops = 0;
    producer_info info{};
};
inline thread_local producer_of_this_thread producer_seen_last;
/// Types released by any producer cache (evicted, or the cache released), process-wide: counted before the
/// reference is dropped, so a thread that can see a type reusing a freed one's address sees the count moved.
inline atomic_value<uint64_t> producer_cache_drops{0};
#endif

inline void producer_cache::release() noexcept {
#ifdef Py_GIL_DISABLED
    producer_cache_drops.fetch_add(1, atomic_order::acq_rel);  // before any type can be freed
#endif
    for (entry &e : entries) Py_CLEAR(e.type);
}

/// Per-type producer lookup through the cache. False, caching nothing, for a type with neither `__dlpack__` nor the
/// buffer protocol. Always inlined: every argument's hot path (import_tensor()) takes it.
DLTENSOR_HOT_INLINE bool producer_of(PyTypeObject *tp, producer_info &info) noexcept {
    producer_cache &c = producer_cache::get();
#ifdef Py_GIL_DISABLED
    producer_of_this_thread &mine = producer_seen_last;
    const uint64_t drops = producer_cache_drops.load(atomic_order::acquire);
    if (mine.type == tp && mine.cache == &c && mine.drops == drops) {
        info = mine.info;
        return true;
    }
#endif
    bool found = false;
    {
        producer_cache_lock lock;
        if (c.entries[c.last].type == tp) {
            info = c.entries[c.last].info;
            found = true;
        } else
            for (unsigned i = 0; i < producer_cache::capacity; ++i)
                if (c.entries[i].type == tp) {
                    c.last = i;
                    info = c.entries[i].info;
                    found = true;
                    break;
                }
    }
    if (!found) {
        if (!_PyType_Lookup(tp, py_names::get().dlpack_method) && !has_buffer_protocol(tp)) return false;
        info = classify_type(tp);  // outside the lock: runs Python
        PyObject *evicted;
        {
            producer_cache_lock lock;
            c.last = c.next++ % producer_cache::capacity;
            producer_cache::entry &slot = c.entries[c.last];
            evicted = (PyObject *) slot.type;
            Py_INCREF((PyObject *) tp);
            slot = producer_cache::entry{tp, info};
#ifdef Py_GIL_DISABLED
            if (evicted) producer_cache_drops.fetch_add(1, atomic_order::acq_rel);
#endif
        }
        Py_XDECREF(evicted);  // last, and unlocked: freeing a type may run arbitrary code
    }
#ifdef Py_GIL_DISABLED
    // The count read before the lookup: a type dropped meanwhile leaves this entry stale, never wrong.
    mine = producer_of_this_thread{&c, tp, drops, info};
#endif
    return true;
}

}  // namespace detail
}  // namespace dlt
