// dltensor/core/export-inl.h: the bodies of export.h's core entry points (config.h: DLTENSOR_CORE).
#pragma once

#include "export.h"
#include "../python/process_state-inl.h"
#include "../tensor/strides-inl.h"

namespace dlt {

DLTENSOR_CORE PyObject *make_exported(tensor_handle *h, bool immutable_consumer) noexcept {
    PyTypeObject *tp = detail::exported_type();
    if (!tp) return nullptr;
    tensor_handle *kept = h->share();
    if (!kept) return nullptr;
    PyObject *self = tp->tp_alloc(tp, 0);
    if (!self) {
        kept->dec_ref();
        return nullptr;
    }
    reinterpret_cast<detail::exported_object *>(self)->handle = kept;
    reinterpret_cast<detail::exported_object *>(self)->immutable_consumer = immutable_consumer;
    return self;
}

namespace detail {

DLTENSOR_CORE PyObject *handle_capsule(tensor_handle *h) noexcept {
    tensor_handle *kept = h->share();
    if (!kept) return nullptr;
    PyObject *capsule = owner_capsule<tensor_handle, drop_handle, handle_capsule_name>(kept);
    if (!capsule) kept->dec_ref();
    return capsule;
}

DLTENSOR_CORE PyObject *export_view_of(tensor_handle *h, const dlpack::Tensor &view, int framework,
                                       bool copy) noexcept {
    PyObject *keep = make_exported(h);
    if (!keep) return nullptr;
    tensor_handle *v = tensor_handle::create(view, keep, h->read_only(), h->stream());
    Py_DECREF(keep);
    if (!v) return nullptr;
    PyObject *out = export_tensor(v, framework, copy);
    v->dec_ref();
    return out;
}

DLTENSOR_CORE PyObject *export_adapted(tensor_handle *h, const framework &f, bool copy) noexcept {
    dlpack::Tensor view;
    dlpack::copy_view(view, h->tensor());
    if (f.ignores_byte_offset) {
        view.data = static_cast<char *>(view.data) + view.byte_offset;
        view.byte_offset = 0;
    }
    const py_ref owner(f.deleter_not_reentrant ? deferred_release_owner(h) : h->new_owner_reference());
    if (f.deleter_not_reentrant && !owner) return nullptr;
    tensor_handle *v = tensor_handle::create(view, owner.get(), h->read_only(), h->stream());
    if (!v) return nullptr;
    PyObject *out = f.to_python(v, copy);
    v->dec_ref();
    return out;
}

}  // namespace detail

}  // namespace dlt
