// dltensor/process_state.h: what dltensor keeps for the whole process, in one place: the two switches,
// the interned names, and the one way each piece of looked-up state is made (once, from any thread, on
// free-threaded Python too). "Process" means per extension module: each module that includes the headers
// has its own copy. Written against the CPython C API only.
//
// Every piece of process state, and where its type lives:
//   fast_paths_enabled()      the fast-path switch                                      (this file)
//   py_names                  interned names and constant arguments                     (this file)
//   each framework's entry points and switches                                          (frameworks/<name>*.h)
//   the `dltensor.Tensor` type                                                          (export.h)
//   the per-type producer cache: a mutable table, locked on free-threaded builds        (producer.h)
// Per thread, not per process: the refusal record and log (refusal.h, refusal_log.h).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "dlpack.h"
#include "py_ref.h"  // DLTENSOR_HOT_INLINE

namespace dlt {

/// The fast paths: the DLPack C exchange API (PyTorch), NumPy's C structures and C API, and jaxlib's
/// entry points, for imports and exports alike. On by default; off, every tensor takes the public
/// `__dlpack__` / `from_dlpack` routes (the tests run each case both ways and compare).
inline std::atomic<bool> &fast_paths_enabled() noexcept {
    static std::atomic<bool> on{true};
    return on;
}

/// The old name of `fast_paths_enabled()` (it always switched more than the exchange API).
[[deprecated("dlt::exchange_api_enabled() is now dlt::fast_paths_enabled()")]]
inline std::atomic<bool> &exchange_api_enabled() noexcept { return fast_paths_enabled(); }

/// Is the calling thread running the main interpreter? dltensor keeps its Python state (interned names,
/// `dltensor.Tensor`, the frameworks' entry points, the per-type cache) once per extension module, for the
/// main interpreter: in a sub-interpreter the backends refuse every tensor argument and return with
/// `sub_interpreter_message` (docs/reference.md §14), so that no sub-interpreter makes that state (it
/// would die with it) or uses the main interpreter's objects under its own GIL. One call and two loads.
DLTENSOR_HOT_INLINE bool in_main_interpreter() noexcept {
    static std::atomic<PyInterpreterState *> main{nullptr};
    PyInterpreterState *m = main.load(std::memory_order_relaxed);
    if (!m) main.store(m = PyInterpreterState_Main(), std::memory_order_relaxed);
    PyThreadState *ts = _PyThreadState_UncheckedGet();
    return ts && ts->interp == m;
}

/// What a backend says for a tensor in a sub-interpreter.
inline constexpr const char *sub_interpreter_message =
    "dltensor supports only the main interpreter: tensors cannot be passed to or returned from a dltensor "
    "binding in a sub-interpreter (see dltensor's reference, Ownership and threads)";

namespace detail {
template <typename T> struct process_slot {
    static inline std::atomic<const T *> value{nullptr};
};

/// process_state()'s first call: out of line, so that every caller inlines only the load.
template <typename T, typename Make>
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
const T &make_process_state(Make &make) noexcept {
    T *fresh = new (std::nothrow) T(make());
    if (!fresh) {
        static const T none{};
        return none;
    }
    const T *expected = nullptr;
    if (process_slot<T>::value.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel,
                                                      std::memory_order_acquire))
        return *fresh;
    delete fresh;
    return *expected;
}
} // namespace detail

/// The process's one `T`, made by `make()` (which returns a `T`) at the first call, then read with one
/// atomic load. No lock is held while `make()` runs, so it may import modules, run Python, release the
/// GIL or re-enter dltensor without deadlocking (a C++ function-local static would hold its guard across
/// all that): two threads that call first may both make a `T`; the first one published is kept and the
/// other destroyed (Python references it took leak, once). When memory runs out, a default `T` (no
/// state: every shortcut off) is returned and the next call tries again.
template <typename T, typename Make> DLTENSOR_HOT_INLINE const T &process_state(Make &&make) noexcept {
    if (const T *v = detail::process_slot<T>::value.load(std::memory_order_acquire)) return *v;
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
        return dlpack_method && max_version_kwnames && max_version && array_namespace && order_kwnames &&
               exchange_api;
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

} // namespace dlt
