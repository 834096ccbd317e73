// dltensor/bindings/caster_protocol.h: what both backends' casters do the same way, written once: the
// hold on a raw capsule that a parameter's import consumed, and the first step of every return.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <utility>

#include "../tensor/config.h"
#include "../python/process_state.h"
#include "../core/capsule_import.h"
#include "../core/return_policy.h"

namespace dlt {

/// A parameter caster's hold on the caller's raw capsule that its import consumed: the capsule gets its
/// tensor back when the value never goes to the call (another argument failed; the next overload binds it).
class consumed_argument {
public:
    consumed_argument() = default;
    consumed_argument(const consumed_argument &) = delete;
    consumed_argument &operator=(const consumed_argument &) = delete;
    consumed_argument(consumed_argument &&o) noexcept : m_capsule(o.m_capsule), m_taken(o.m_taken) {
        o.m_capsule = nullptr;  // pybind11's py::cast returns a caster by value
    }

    /// Records what the import consumed (NULL: nothing) and tells an enclosing container's caster.
    DLTENSOR_HOT_INLINE void note(PyObject *consumed, PyObject *owner) noexcept {
        m_capsule = consumed;
        if (consumed) detail::note_consumed_capsule(consumed, owner);
    }
    /// The value went to the call (or to the caller of `cast`): the capsule stays consumed.
    DLTENSOR_HOT_INLINE void take() noexcept { m_taken = true; }
    /// In the caster's destructor: hands the capsule its tensor back unless taken. `owner`: the tensor's
    /// owner while only the caster holds the tensor, else NULL.
    DLTENSOR_HOT_INLINE void restore_untaken(PyObject *owner) noexcept {
        if (m_capsule && !m_taken && owner) detail::restore_consumed_capsule(m_capsule, owner);
    }

private:
    PyObject *m_capsule = nullptr;  ///< the caller's raw capsule (borrowed)
    bool m_taken = false;
};

/// A caster's conversions to its parameter: `Type *`, `Type &` and `Type &&` of `VALUE` (a `Type &`), each
/// marking its `m_consumed` taken first (the call goes ahead). `EXPLICIT`, `RVALUE`: the binding library's.
#define DLTENSOR_TAKING_CONVERSIONS(Type, EXPLICIT, RVALUE, VALUE)                                                     \
    EXPLICIT operator Type *() {                                                                                       \
        m_consumed.take();                                                                                             \
        return &(VALUE);                                                                                               \
    }                                                                                                                  \
    EXPLICIT operator Type &() {                                                                                       \
        m_consumed.take();                                                                                             \
        return VALUE;                                                                                                  \
    }                                                                                                                  \
    EXPLICIT operator Type &&() RVALUE {                                                                               \
        m_consumed.take();                                                                                             \
        return std::move(VALUE);                                                                                       \
    }

/// What a return does before any export, on both backends, for a `plan` (return_policy.h) of a tensor
/// imported from `source` (NULL: made in C++).
struct return_start {
    bool done;         ///< no export follows: the return's object is `object`
    PyObject *object;  ///< a new reference; NULL for `return_plan::nothing`
};

/// Carries out every plan but `export_` (`done` false: export `plan`).
DLTENSOR_HOT_INLINE return_start start_return(const return_plan &plan, PyObject *source) noexcept {
    switch (plan.action) {
        case return_plan::source: Py_INCREF(source); return {true, source};
        case return_plan::python_none: Py_INCREF(Py_None); return {true, Py_None};
        case return_plan::nothing: return {true, nullptr};
        case return_plan::export_: break;
    }
    return {false, nullptr};
}

}  // namespace dlt
