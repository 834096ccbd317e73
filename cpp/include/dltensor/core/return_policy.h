// dltensor/core/return_policy.h: what returning a tensor does (docs/reference.md §13), decided once for both
// backends: a backend maps its policy to `return_policy`, asks `plan_return()`, and exports with `export_planned()`.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdint>
#include <type_traits>

#include "../tensor/dlpack.h"
#include "export.h"
#include "../frameworks/registry.h"
#include "../python/handle.h"
#include "../python/keep_alive.h"

namespace dlt {

/// A backend's return-value policy, reduced to what a tensor's export distinguishes.
enum class return_policy : uint8_t {
    automatic,      ///< copy a tensor without an owner, view an owned one (`automatic`, `automatic_reference`)
    copy,           ///< always a copy (`copy`, `move`)
    view,           ///< a view of the memory (`reference`, `take_ownership`)
    view_internal,  ///< a view that also keeps the parent alive (`reference_internal`)
    none,           ///< nanobind's `rv_policy::none`: never create an object
};

namespace detail {
template <typename Policy, typename = void> struct has_none_policy : std::false_type { };
template <typename Policy> struct has_none_policy<Policy, std::void_t<decltype(Policy::none)>> : std::true_type { };
}  // namespace detail

/// A binding library's return-value policy (`nb::rv_policy`, `py::return_value_policy`: the same names)
/// as a `return_policy`.
template <typename Policy> constexpr return_policy return_policy_of(Policy policy) noexcept {
    if constexpr (detail::has_none_policy<Policy>::value)  // nanobind only
        if (policy == Policy::none) return return_policy::none;
    switch (policy) {
        case Policy::copy:
        case Policy::move: return return_policy::copy;
        case Policy::reference:
        case Policy::take_ownership: return return_policy::view;
        case Policy::reference_internal: return return_policy::view_internal;
        default: return return_policy::automatic;
    }
}

/// What a return does.
struct return_plan {
    enum action_t : uint8_t {
        source,       ///< hand back the object the tensor was imported from (a new reference)
        export_,      ///< export the tensor into `framework` (a view, or a copy when `copy`)
        python_none,  ///< the tensor is empty (not valid): return `None`
        nothing,      ///< create no object (`return_policy::none`): the binding library reports it
    } action;
    int framework;     ///< frameworks/ number to export into; 0: a `dltensor.Tensor`
    bool copy;         ///< export a copy, not a view
    bool keep_parent;  ///< the exported view's owner also keeps the parent alive
};

/// Decides a return: the source object (`f(x) is x`) unless copying or another framework is annotated; else an
/// export into `annotated` (0: none) or the source's framework, or `None` when not `valid`. `owned`: an owner keeps
/// the memory alive (else `automatic` copies). Without `has_parent` (`self`), `view_internal` is `automatic`.
constexpr return_plan plan_return(return_policy policy, bool valid, bool owned, int annotated, bool has_source,
                                  int source_framework, bool has_parent) noexcept {
    if (policy == return_policy::view_internal && !has_parent) policy = return_policy::automatic;
    const bool copy = policy == return_policy::copy || (policy == return_policy::automatic && !owned);
    if (valid && has_source && !copy && (annotated == 0 || annotated == source_framework))
        return {return_plan::source, source_framework, false, false};
    if (!valid) return {return_plan::python_none, 0, false, false};  // under every policy, `none` too (as nanobind)
    if (policy == return_policy::none) return {return_plan::nothing, 0, false, false};
    const int framework = annotated == 0 && has_source ? source_framework : annotated;
    return {return_plan::export_, framework, copy, policy == return_policy::view_internal};
}

/// export_planned() under `keep_parent`: the view's owner is a pair that keeps both `h` (and so its own
/// owner) and `parent` alive, and `also_keep` too where not NULL (the owner of a converted argument's copy,
/// when the parent is that argument: converted_arguments.h). New reference, or NULL with a Python error set.
DLTENSOR_CORE PyObject *export_keeping_parent(tensor_handle *h, const return_plan &plan, PyObject *parent,
                                              PyObject *also_keep) noexcept;

/// Exports `h` as `plan` says (its action is `export_`): into the plan's framework, or (`keep_parent`)
/// export_keeping_parent(), which also keeps `also_keep` where not NULL. New reference, or NULL with a
/// Python error set.
DLTENSOR_HOT_INLINE PyObject *export_planned(tensor_handle *h, const return_plan &plan, PyObject *parent,
                                             PyObject *also_keep = nullptr) noexcept {
    if (!plan.keep_parent) return export_tensor(h, plan.framework, plan.copy);
    return export_keeping_parent(h, plan, parent, also_keep);
}

}  // namespace dlt
