// dltensor/core/capsule_import.h: DLPack capsules in: read, consumed (renamed "used_dltensor[_versioned]") only
// when accepted, their deleter called exactly once by an owner capsule (an unshared `__dlpack__` result is its own
// owner), freed with the GIL; and the `__dlpack__` calls that make them.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstring>
#include <new>
#include <utility>

#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "import_result.h"
#include "../python/keep_alive.h"
#include "../python/producer_error.h"
#include "../python/process_state.h"
#include "../python/py_ref.h"
#include "../tensor/refusal.h"
#include "../tensor/requirements.h"

namespace dlt {
namespace detail {

// Owner capsules: the accepted managed tensor, freed through its deleter when the capsule dies.
inline constexpr char owner_name[] = "dltensor.owner";
inline constexpr char owner_name_versioned[] = "dltensor.owner_versioned";

/// Ends an accepted managed tensor (keep_alive.h: the owner capsule's `End`): its deleter, exactly once.
template <typename Managed> void call_deleter(Managed *mt) noexcept {
    if (mt->deleter) mt->deleter(mt);
}

/// A versioned managed tensor that the core owns (an owning export, an allocation): its deleter runs
/// when this is destroyed, unless `into_owner()` handed it to an owner capsule first.
class managed_tensor_ref {
public:
    managed_tensor_ref() noexcept = default;
    ~managed_tensor_ref() {
        if (mt_ && mt_->deleter) mt_->deleter(mt_);
    }
    managed_tensor_ref(const managed_tensor_ref &) = delete;
    managed_tensor_ref &operator=(const managed_tensor_ref &) = delete;

    dlpack::ManagedTensorVersioned *get() const noexcept { return mt_; }
    /// Where a C API call that hands out a managed tensor writes it (while this holds none).
    dlpack::ManagedTensorVersioned **out() noexcept { return &mt_; }
    /// An owner capsule that calls the deleter from now on (when the capsule is freed). Empty, with the
    /// error set, when the capsule cannot be made; the deleter then still runs here.
    py_ref into_owner() noexcept {
        py_ref capsule(owner_capsule<dlpack::ManagedTensorVersioned, call_deleter, owner_name_versioned>(mt_));
        if (capsule) mt_ = nullptr;
        return capsule;
    }

private:
    dlpack::ManagedTensorVersioned *mt_ = nullptr;
};

/// Refuses a capsule named neither "dltensor" nor "dltensor_versioned", recording whether it was consumed.
DLTENSOR_REFUSAL_PATH mismatch refuse_capsule_named(const char *name) noexcept {
    const bool used = std::strcmp(name, dlpack::used_capsule_name) == 0 ||
                      std::strcmp(name, dlpack::used_capsule_name_versioned) == 0;
    malformed_reason_seen() = used ? "the capsule was consumed already: a capsule is imported once (pass the array "
                                     "itself, or a new __dlpack__())"
                                   : "the capsule's name is not \"dltensor\" or \"dltensor_versioned\"";
    return mismatch::invalid;
}

/// import_capsule() without the free-threaded build's lock on the capsule.
inline mismatch import_capsule_unlocked(PyObject *capsule, const requirements &r, bool immutable, bool adopt,
                                        imported &out) noexcept {
    const char *name = PyCapsule_GetName(capsule);
    if (!name) {
        PyErr_Clear();
        return mismatch::invalid;
    }
    bool versioned;
    if (std::strcmp(name, dlpack::capsule_name_versioned) == 0) versioned = true;
    else if (std::strcmp(name, dlpack::capsule_name) == 0) versioned = false;
    else return refuse_capsule_named(name);

    void *ptr = PyCapsule_GetPointer(capsule, name);
    if (!ptr) {
        PyErr_Clear();
        return mismatch::invalid;
    }

    const dlpack::Tensor *t;
    bool read_only = immutable;
    if (versioned) {
        auto *mt = static_cast<dlpack::ManagedTensorVersioned *>(ptr);
        if (mt->version.major != dlpack::major_version) return mismatch::invalid;
        read_only |= (mt->flags & dlpack::flag_read_only) != 0;
        t = &mt->dl_tensor;
        if ((mt->flags & dlpack::flag_is_copied) && !r.read_only && !validate(*t)) {
            out.seen = t->dtype;
            return mismatch::copied;  // C++ writes would reach only the copy
        }
    } else {
        t = &static_cast<dlpack::ManagedTensor *>(ptr)->dl_tensor;
    }
    if (validate(*t)) return mismatch::invalid;
    out.seen = t->dtype;
    mismatch m = check_and_record(r, *t, read_only);
    if (m != mismatch::none) return m;

    if (adopt && Py_REFCNT(capsule) == 1 && PyCapsule_GetDestructor(capsule)) {
        // A fresh `__dlpack__` capsule nobody else can reach becomes the owner: renamed (consumed), its deleter
        // called by the owner's destructor exactly once.
        using versioned_owner = dlpack::ManagedTensorVersioned;
        int renamed = PyCapsule_SetDestructor(
            capsule, versioned ? detail::owner_capsule_destructor<versioned_owner, call_deleter, owner_name_versioned>
                               : detail::owner_capsule_destructor<dlpack::ManagedTensor, call_deleter, owner_name>);
        renamed |= PyCapsule_SetName(capsule, versioned ? owner_name_versioned : owner_name);
        if (renamed != 0) {
            PyErr_Clear();
            return mismatch::invalid;
        }  // cannot happen for a valid capsule
        dlpack::copy_view(out.tensor, *t);
        out.owner = py_ref::borrow(capsule);
        return mismatch::none;
    }
    py_ref owner(versioned ? owner_capsule<dlpack::ManagedTensorVersioned, call_deleter, owner_name_versioned>(
                                 static_cast<dlpack::ManagedTensorVersioned *>(ptr))
                           : owner_capsule<dlpack::ManagedTensor, call_deleter, owner_name>(
                                 static_cast<dlpack::ManagedTensor *>(ptr)));
    if (!owner) {
        PyErr_Clear();
        return mismatch::invalid;
    }
    // The capsule's own destructor, kept in the owner's context: restore_consumed_capsule() gives it back.
    PyCapsule_Destructor producer_destructor = PyCapsule_GetDestructor(capsule);
    static_assert(sizeof(void *) == sizeof(PyCapsule_Destructor), "a destructor fits a capsule's context");
    void *context;
    std::memcpy(&context, &producer_destructor, sizeof context);
    PyCapsule_SetContext(owner.get(), context);
    // Consume: from here on the owner alone calls the deleter.
    if (PyCapsule_SetDestructor(capsule, nullptr) != 0 ||
        PyCapsule_SetName(capsule, versioned ? dlpack::used_capsule_name_versioned : dlpack::used_capsule_name) != 0) {
        // Cannot happen for a valid capsule; refuse rather than risk a double free.
        PyErr_Clear();
        PyCapsule_SetDestructor(owner.get(), nullptr);
        return mismatch::invalid;
    }
    dlpack::copy_view(out.tensor, *t);
    out.owner = std::move(owner);
    return mismatch::none;
}

/// Takes a DLPack capsule's tensor when valid and satisfying `r` (`out`: view and owner; the capsule marked used),
/// else leaves the capsule untouched. `immutable`: the source forbids writes; `adopt`: an unshared `__dlpack__`
/// result, which may become the owner. Free-threaded: one critical section, so one of racing threads consumes it.
inline mismatch import_capsule(PyObject *capsule, const requirements &r, bool immutable, bool adopt,
                               imported &out) noexcept {
#ifdef Py_GIL_DISABLED
    mismatch m;
    Py_BEGIN_CRITICAL_SECTION(capsule);
    m = import_capsule_unlocked(capsule, r, immutable, adopt, out);
    Py_END_CRITICAL_SECTION();
    return m;
#else
    return import_capsule_unlocked(capsule, r, immutable, adopt, out);
#endif
}

/// Undoes import_capsule()'s consumption of the raw `capsule` whose tensor `owner` holds: `owner` no longer calls
/// the deleter; the capsule gets back its name and destructor. For an argument dropped before its call (overload
/// resolution moved on) while nothing else holds the tensor. Needs the GIL.
DLTENSOR_CORE void restore_consumed_capsule(PyObject *capsule, PyObject *owner) noexcept;

/// The raw capsules consumed while one container argument (`std::vector`, ... of tensors) loaded: restored when its
/// caster is dropped without the value going to the call. Owned by the container's caster, opened for its load
/// (consumed_capsules_scope); element casters note into the open one.
class consumed_capsules {
public:
    consumed_capsules() = default;
    consumed_capsules(consumed_capsules &&o) noexcept : m_first(o.m_first), m_taken(o.m_taken) { o.m_first = nullptr; }
    consumed_capsules(const consumed_capsules &) = delete;
    consumed_capsules &operator=(const consumed_capsules &) = delete;
    consumed_capsules &operator=(consumed_capsules &&) = delete;
    ~consumed_capsules() {
        while (entry *e = m_first) {
            if (!m_taken) restore_consumed_capsule(e->capsule, e->owner);
            m_first = e->next;
            Py_DECREF(e->capsule);
            Py_DECREF(e->owner);
            delete e;
        }
    }
    /// The container's value went to the call: its capsules stay consumed.
    void take() noexcept { m_taken = true; }
    /// The Python frame whose call loads the container (compared by identity only).
    const void *&frame() noexcept { return m_frame; }
    /// Notes that `capsule` was consumed, its tensor now held by `owner` (both kept until the end).
    void note(PyObject *capsule, PyObject *owner) noexcept {
        entry *e = new (std::nothrow) entry{capsule, owner, m_first};
        if (!e) return;  // out of memory: that capsule stays consumed
        Py_INCREF(capsule);
        Py_INCREF(owner);
        m_first = e;
    }

private:
    struct entry {
        PyObject *capsule, *owner;
        entry *next;
    };
    entry *m_first = nullptr;
    bool m_taken = false;
    const void *m_frame = nullptr;
};

/// The calling thread's open list (the container argument loading), else NULL.
DLTENSOR_CORE consumed_capsules *&open_consumed_capsules() noexcept;

/// Opens `list` for one container load (the list open before, a call's further up, again after it).
class consumed_capsules_scope {
public:
    explicit consumed_capsules_scope(consumed_capsules &list) noexcept : m_outer(open_consumed_capsules()) {
        list.frame() = PyEval_GetFrame();
        open_consumed_capsules() = &list;
    }
    ~consumed_capsules_scope() { open_consumed_capsules() = m_outer; }
    consumed_capsules_scope(const consumed_capsules_scope &) = delete;
    consumed_capsules_scope &operator=(const consumed_capsules_scope &) = delete;

private:
    consumed_capsules *m_outer;
};

/// An element's caster consumed the raw `capsule` (its tensor held by `owner`): noted in the open list,
/// unless the caster belongs to a call made from Python code that the load ran (a producer's `__dlpack__`,
/// a sequence's `__getitem__`): that call went ahead, and its capsule stays consumed.
inline void note_consumed_capsule(PyObject *capsule, PyObject *owner) noexcept {
    consumed_capsules *list = open_consumed_capsules();
    if (list && (const void *) PyEval_GetFrame() == list->frame()) list->note(capsule, owner);
}

/// `src.__dlpack__(max_version=(1, minor))`, else `src.__dlpack__()` where that raises TypeError. `method`: the type's
/// `__dlpack__` (a function or method descriptor is called directly). Empty, with no error set, on failure
/// (producer_error.h keeps what it raised).
inline py_ref call_dlpack(PyObject *src, PyObject *method) noexcept {
    const py_names &c = py_names::get();
    if (!c.ok()) return py_ref();
    PyObject *args[] = {src, c.max_version};
    const bool direct = PyFunction_Check(method) || Py_IS_TYPE(method, &PyMethodDescr_Type);
    const py_ref keep = py_ref::borrow(method);  // the call may change the type's dict
    auto call = [&](PyObject *kwnames) {
        return py_ref(direct ? PyObject_Vectorcall(method, args, 1, kwnames)
                             : PyObject_VectorcallMethod(c.dlpack_method, args, 1, kwnames));
    };
    py_ref res = call(c.max_version_kwnames);
    if (!res && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        res = call(nullptr);
    }
    if (!res) absorb_producer_error(src);  // its reason for the refusal; an interrupt for the caller
    return res;
}

}  // namespace detail
}  // namespace dlt
