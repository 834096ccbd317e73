// dltensor/python/deferred_release.h: an owner that releases a tensor handle at the main thread's next pending call
// (`Py_AddPendingCall`), after the deleter that freed it returned: for frameworks whose DLPack deleter must not run
// inside another of theirs (framework::deleter_not_reentrant: Paddle). In a sub-interpreter it releases at once.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "atomic_value.h"
#include "handle.h"
#include "interpreter.h"
#include "keep_alive.h"

namespace dlt {
namespace detail {

/// One queued release: a reference to `handle`, on a stack that any thread may push to (lock-free: also
/// without a GIL on free-threaded builds) and the pending call empties at once.
struct deferred_release {
    deferred_release *next;
    tensor_handle *handle;
};

struct deferred_releases {
    atomic_value<deferred_release *> head{nullptr};
    atomic_value<bool> scheduled{false};  ///< a pending call is asked for and has not started yet
    static deferred_releases &get() noexcept {
        static deferred_releases q;  // per extension module, as every piece of dltensor's state
        return q;
    }
};

inline void release_now(deferred_release *d) noexcept {
    tensor_handle *h = d->handle;
    PyMem_RawFree(d);
    h->dec_ref();
}

/// The pending call (the main thread, with the GIL, in the main interpreter): releases every queued
/// handle, also those that these releases queue (they ask for another call).
inline int release_deferred(void *) noexcept {
    deferred_releases &q = deferred_releases::get();
    q.scheduled.store(false);
    for (deferred_release *d = q.head.exchange(nullptr); d;) {
        deferred_release *next = d->next;
        release_now(d);
        d = next;
    }
    return 0;
}

/// Asks for a pending call unless one is asked for already. Where the interpreter takes none now (its
/// queue is full), the next queued release asks again.
inline void schedule_deferred_releases() noexcept {
    deferred_releases &q = deferred_releases::get();
    if (!q.scheduled.exchange(true) && Py_AddPendingCall(release_deferred, nullptr) != 0) q.scheduled.store(false);
}

/// The owner's end (with the GIL): queues the release, or in a sub-interpreter releases at once.
inline void queue_release(deferred_release *d) noexcept {
    if (current_interpreter_id() != 0) return release_now(d);
    deferred_releases &q = deferred_releases::get();
    d->next = q.head.load(atomic_order::relaxed);
    while (!q.head.compare_exchange_weak(d->next, d, atomic_order::release, atomic_order::relaxed)) { }
    schedule_deferred_releases();
}

inline constexpr char deferred_release_capsule_name[] = "dltensor.deferred_release";

/// An owner holding a new reference to `h` that, when freed, releases it at the next pending call (see
/// the top of this file). New reference, or NULL with a Python error set.
inline PyObject *deferred_release_owner(tensor_handle *h) noexcept {
    auto *d = static_cast<deferred_release *>(PyMem_RawMalloc(sizeof(deferred_release)));
    if (!d) {
        PyErr_NoMemory();
        return nullptr;
    }
    d->next = nullptr;
    d->handle = h->share();
    if (!d->handle) {
        PyMem_RawFree(d);
        return nullptr;
    }
    PyObject *owner = owner_capsule<deferred_release, queue_release, deferred_release_capsule_name>(d);
    if (!owner) release_now(d);
    return owner;
}

}  // namespace detail
}  // namespace dlt
