// dltensor/python/process_state.h: all state kept beyond a call: fast_paths_enabled() and py_names (here), frameworks'
// entry points (frameworks/), the `dltensor.Tensor` type (export.h), the producer cache (producer.h), the refusal
// reader (refusal_log.h); all but the switch made once per interpreter by process_state<T>(). Per thread: refusal.h.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>

#include "../tensor/dlpack.h"
#include "atomic_value.h"
#include "interpreter.h"
#include "../tensor/config.h"
#include "py_ref.h"

namespace dlt {

/// The fast paths: the DLPack C exchange API (PyTorch), NumPy's C structures and C API, and jaxlib's
/// entry points, for imports and exports alike. On by default; off, every tensor takes the public
/// `__dlpack__` / `from_dlpack` routes (the tests run each case both ways and compare).
DLTENSOR_PROCESS_WIDE atomic_value<bool> &fast_paths_enabled() noexcept;

/// The states of one sub-interpreter, one slot per kind of state (`T` of process_state<T>), owned by a
/// capsule in that interpreter's dict (`PyInterpreterState_GetDict`), so that they die with it: each is
/// released (its Python references dropped, in that interpreter) when the interpreter clears its dict.
struct interpreter_states {
    static constexpr unsigned capacity = 32;
    struct slot {
        atomic_value<void *> value{nullptr};  ///< published once (compare-exchange: free-threaded builds)
        using destroyer = void (*)(void *) noexcept;
        atomic_value<destroyer> destroy{nullptr};  ///< set before `value` is published
    };
    int64_t id = 0;
    slot slots[capacity];
};

namespace detail {
inline constexpr const char *interpreter_states_name = "dltensor.interpreter_states";

/// The slot of the kind of state `key` (state_key<T>()), numbered at its first request, one per kind across a shared
/// core's modules; `interpreter_states::capacity` when all are taken (the kind then gets the empty state).
DLTENSOR_PROCESS_WIDE unsigned new_state_index(uint64_t key) noexcept;
/// The kind of state `T` as a number (a hash of its name, computed by the compiler: no text in the
/// module), the same in every module built by the same compiler; never 0 (a free slot).
template <typename T> constexpr uint64_t state_key() noexcept {
#if defined(_MSC_VER)
    const char *name = __FUNCSIG__;
#else
    const char *name = __PRETTY_FUNCTION__;
#endif
    uint64_t h = 14695981039346656037ull;  // FNV-1a
    for (; *name; ++name) h = (h ^ static_cast<unsigned char>(*name)) * 1099511628211ull;
    return h ? h : 1;
}
/// Each kind of state's slot in interpreter_states, numbered when the module loads.
template <typename T> struct state_index {
    static inline const unsigned value = new_state_index(std::integral_constant<uint64_t, state_key<T>()>::value);
};

/// The last sub-interpreter this thread asked for, by ID (IDs are never reused; a thread that tears an
/// interpreter down forgets it first).
struct cached_states {
    int64_t id = -1;
    interpreter_states *states = nullptr;
};
inline cached_states &states_cache() noexcept {
    static thread_local cached_states c;
    return c;
}

inline void free_interpreter_states(PyObject *capsule) noexcept {
    auto *s = static_cast<interpreter_states *>(PyCapsule_GetPointer(capsule, interpreter_states_name));
    if (!s) {
        PyErr_Clear();
        return;
    }
    cached_states &c = states_cache();
    if (c.states == s) c = cached_states{};
    for (unsigned i = interpreter_states::capacity; i-- > 0;)
        if (void *v = s->slots[i].value.load(atomic_order::acquire)) s->slots[i].destroy.load()(v);
    delete s;
    sub_interpreters_in_use().fetch_sub(1, atomic_order::acq_rel);
}

/// The calling sub-interpreter's states, made at its first call (the interpreter then counts in
/// sub_interpreters_in_use until it clears its dict); NULL when they cannot be made (out of memory).
/// Needs the interpreter's GIL; raises nothing.
DLTENSOR_CORE_COLD
DLTENSOR_CORE interpreter_states *sub_interpreter_states(PyInterpreterState *interp) noexcept;

}  // namespace detail

/// Called first by every entry from Python (argument, return, allocation): in a sub-interpreter it makes that
/// interpreter's states once, so that its process_state() calls read its own (docs/reference.md §14). False only
/// when they cannot be made (out of memory): the entry fails then.
DLTENSOR_HOT_INLINE bool enter_interpreter() noexcept {
    PyInterpreterState *sub = detail::running_sub_interpreter();
    return !sub || detail::sub_interpreter_states(sub) != nullptr;
}

/// What an entry says when enter_interpreter() fails.
inline constexpr const char *sub_interpreter_message =
    "dltensor: this sub-interpreter's state could not be made (out of memory)";

/// enter_interpreter() that sets the RuntimeError of sub_interpreter_message when it fails.
DLTENSOR_HOT_INLINE bool enter_interpreter_or_raise() noexcept {
    if (enter_interpreter()) return true;
    PyErr_SetString(PyExc_RuntimeError, sub_interpreter_message);
    return false;
}

/// enter_interpreter_or_raise() behind a call, for entries where its inlined code costs more than the call.
DLTENSOR_NOINLINE inline bool enter_interpreter_or_raise_out_of_line() noexcept { return enter_interpreter_or_raise(); }

namespace detail {
template <typename T> struct process_slot {
    static atomic_value<const T *> value;
};
// Defined outside the class: nvcc's front end rejects an inline static atomic member of a class template.
template <typename T> atomic_value<const T *> process_slot<T>::value{nullptr};

/// Calls `t.release()` where `T` has one: drops the Python references a state holds.
template <typename T> auto release_state(T &t, int) noexcept -> decltype(t.release(), void()) { t.release(); }
template <typename T> void release_state(T &, long) noexcept { }

/// A sub-interpreter's `T`, made by `make()` at its first use there (as in make_process_state).
template <typename T, typename Make>
DLTENSOR_COLD const T &make_interpreter_state(PyInterpreterState *interp, Make &make) noexcept {
    static const T none{};
    interpreter_states *s = sub_interpreter_states(interp);
    const unsigned i = state_index<T>::value;
    if (!s || i >= interpreter_states::capacity) return none;
    interpreter_states::slot &slot = s->slots[i];
    if (void *v = slot.value.load(atomic_order::acquire)) return *static_cast<const T *>(v);
    T *fresh = new (std::nothrow) T(make());
    if (!fresh) return none;
    slot.destroy.store([](void *p) noexcept {  // one function per T: a racing thread stores the same
        T *t = static_cast<T *>(p);
        release_state(*t, 0);
        delete t;
    });
    void *expected = nullptr;
    if (slot.value.compare_exchange_strong(expected, fresh, atomic_order::acq_rel, atomic_order::acquire))
        return *fresh;
    release_state(*fresh, 0);  // made meanwhile by another thread, or by a re-entrant make()
    delete fresh;
    return *static_cast<const T *>(expected);
}

/// process_state()'s first call, and every call while a sub-interpreter uses dltensor: out of line, so
/// that every caller inlines only the loads.
template <typename T, typename Make>
DLTENSOR_COLD const T &make_process_state(Make &make) noexcept {
    if (PyInterpreterState *sub = running_sub_interpreter()) return make_interpreter_state<T>(sub, make);
    if (const T *v = process_slot<T>::value.load(atomic_order::acquire)) return *v;
    T *fresh = new (std::nothrow) T(make());
    if (!fresh) {
        static const T none{};
        return none;
    }
    const T *expected = nullptr;
    if (process_slot<T>::value.compare_exchange_strong(expected, fresh, atomic_order::acq_rel, atomic_order::acquire))
        return *fresh;
    release_state(*fresh, 0);
    delete fresh;
    return *expected;
}
}  // namespace detail

/// The interpreter's one `T`, made by `make()` (which may run Python) at its first call there, with no lock held:
/// racing threads may each make one, the first published is kept. Out of memory: a default `T`, retried next call.
/// `T::release()`, if any, drops its references. In a sub-interpreter, only after enter_interpreter(); freed with it.
template <typename T, typename Make> DLTENSOR_HOT_INLINE const T &process_state(Make &&make) noexcept {
    if (detail::sub_interpreters_in_use().load(atomic_order::relaxed) == 0)
        if (const T *v = detail::process_slot<T>::value.load(atomic_order::acquire)) return *v;
    return detail::make_process_state<T>(make);
}

/// Interned names and constant arguments of the import paths.
struct py_names {
    PyObject *dlpack_method = nullptr;        ///< "__dlpack__"
    PyObject *max_version_kwnames = nullptr;  ///< ("max_version",), interned: parsers match by identity first
    PyObject *max_version = nullptr;          ///< (major, minor) of the DLPack dltensor speaks
    PyObject *array_namespace = nullptr;      ///< "__array_namespace__"
    PyObject *order_kwnames = nullptr;        ///< ("order",)
    PyObject *exchange_api = nullptr;         ///< "__dlpack_c_exchange_api__"

    bool ok() const noexcept {
        return dlpack_method && max_version_kwnames && max_version && array_namespace && order_kwnames && exchange_api;
    }
    void release() noexcept {
        for (PyObject **o :
             {&dlpack_method, &max_version_kwnames, &max_version, &array_namespace, &order_kwnames, &exchange_api})
            Py_CLEAR(*o);
    }
    /// Made once (process_state); raises nothing: a name that could not be made stays NULL.
    static const py_names &get() noexcept {
        return process_state<py_names>([] {
            py_names n;
            n.dlpack_method = PyUnicode_InternFromString("__dlpack__");
            n.max_version_kwnames = Py_BuildValue("(N)", PyUnicode_InternFromString("max_version"));
            n.max_version = Py_BuildValue("(II)", dlpack::major_version, dlpack::minor_version);
            n.array_namespace = PyUnicode_InternFromString("__array_namespace__");
            n.order_kwnames = Py_BuildValue("(N)", PyUnicode_InternFromString("order"));
            n.exchange_api = PyUnicode_InternFromString("__dlpack_c_exchange_api__");
            PyErr_Clear();
            return n;
        });
    }
};

}  // namespace dlt
