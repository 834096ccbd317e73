// dltensor/core/return_policy-inl.h: the bodies of return_policy.h's core entry points (config.h: DLTENSOR_CORE).
#pragma once

#include "return_policy.h"
#include "../frameworks/registry-inl.h"

namespace dlt {

DLTENSOR_CORE PyObject *export_keeping_parent(tensor_handle *h, const return_plan &plan, PyObject *parent,
                                              PyObject *also_keep) noexcept {
    PyObject *keep = make_exported(h);
    if (!keep) return nullptr;
    PyObject *kept_with = also_keep ? owner_pair(parent, also_keep) : parent;
    PyObject *pair = kept_with ? owner_pair(keep, kept_with) : nullptr;
    Py_DECREF(keep);
    if (also_keep) Py_XDECREF(kept_with);
    if (!pair) return nullptr;
    tensor_handle *view = tensor_handle::create(h->tensor(), pair, h->read_only(), h->stream());
    Py_DECREF(pair);
    if (!view) return nullptr;
    PyObject *out = export_tensor(view, plan.framework, plan.copy);
    view->dec_ref();
    return out;
}

}  // namespace dlt
