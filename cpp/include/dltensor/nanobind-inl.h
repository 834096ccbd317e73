// dltensor/nanobind-inl.h: the bodies of the nanobind backend's functions that are no template (config.h:
// DLTENSOR_NANOBIND_PART): in every unit that includes <dltensor/nanobind.h>, or compiled once per build
// tree in the library that the CMake package makes of src/nanobind.cpp.
#pragma once

#include "nanobind.h"

NAMESPACE_BEGIN(NB_NAMESPACE)
NAMESPACE_BEGIN(detail)

DLTENSOR_NANOBIND_PART void handle_keeper::end(ndarray<> *kept) noexcept {
    kept->~ndarray<>();
    PyMem_Free(kept);
}

DLTENSOR_NANOBIND_PART PyObject *handle_keeper::capsule(ndarray_handle *handle) noexcept {
    void *mem = PyMem_Malloc(sizeof(ndarray<>));
    if (!mem) return PyErr_NoMemory();
    auto *keep = new (mem) ndarray<>(handle);
    PyObject *capsule = dlt::owner_capsule<ndarray<>, end, name>(keep);
    if (!capsule) end(keep);
    return capsule;
}

DLTENSOR_NANOBIND_PART void dltensor_refusal(handle src, uint32_t flags, const char *name) noexcept {
    // nb::cast<T>(obj) in a function body: raise a TypeError that says why (nanobind raises a set Python
    // error instead of std::bad_cast). Overload resolution passes no `manual` flag: the refusal is kept for
    // dltensor.explain() instead.
    if (dlt::has_pending_error()) {  // an interrupt in the producer's code: never a refusal
        // nb::cast<T>(obj) raises it at once; overload resolution cannot (nanobind's casters do not raise):
        // the interpreter raises it at its next check (producer_error.h).
        if (flags & (uint32_t) cast_flags::manual) dlt::restore_pending_error();
        else dlt::rearm_pending_error();
        return;
    }
    if (flags & (uint32_t) cast_flags::manual) dlt::set_refusal_type_error(src.ptr(), name);
    else dlt::log_refusal(src.ptr(), name);
}

DLTENSOR_NANOBIND_PART bool type_caster<dltensor_untyped>::load(handle src, uint32_t flags, cleanup_list *cleanup,
                                                                const dlt::requirements &r, const char *name,
                                                                ndarray_handle *&h, dlpack::dltensor &dl,
                                                                dltensor_state &st,
                                                                dlt::consumed_argument &consumed) noexcept {
    const bool none = src.is_none() && (flags & (uint32_t) cast_flags::accepts_none);
    dlt::imported im;
    if (!none && !dlt::import_tensor(src.ptr(), r, (flags & (uint32_t) cast_flags::convert) != 0, im)) {
        dltensor_refusal(src, flags, name);
        return false;
    }
    ndarray<> former;  // the value's former handle, released on return
    former.m_handle = h;
    if (none) {  // None: an empty tensor, nothing left of the value before (a container's caster reuses it)
        h = nullptr;
        dl = dlpack::dltensor();
        st.set(nullptr, nullptr, 0, nullptr);
        return true;
    }
    // NULL strides (DLPack < 1.2) mean C order; nanobind derives them from 'C'.
    if (r.read_only) make<ndarray<ro>>(im, h, dl);
    else make<ndarray<>>(im, h, dl);
    st.set(im.stream, im.source, im.source_framework, im.owner.get());
    consumed.note(im.consumed, st.m_owner);
    // Another object's tensor (a converted copy, a raw capsule's): kept until after the return's cast,
    // which may copy from it after a by-value parameter dropped it.
    if (im.source != src.ptr() && cleanup) cleanup->append(im.owner.release());
    return true;
}

template <typename Nd>
inline void type_caster<dltensor_untyped>::make(const dlt::imported &im, ndarray_handle *&h,
                                                dlpack::dltensor &dl) noexcept {
    const dlt::dlpack::Tensor &t = im.tensor;
    alignas(Nd) unsigned char mem[sizeof(Nd)];
    Nd *made = new (mem) Nd(t.data, (size_t) t.ndim, dltensor_extents_of(t), handle(im.owner.get()), t.strides,
                            nanobind_dtype(t.dtype), t.device.device_type, t.device.device_id, 'C', t.byte_offset);
    dl = made->m_dltensor;  // not destroyed: `h` holds its reference
    h = made->m_handle;
}

DLTENSOR_NANOBIND_PART handle type_caster<dltensor_untyped>::from_cpp(const dltensor_state &st, ndarray_handle *h,
                                                                      const dlpack::dltensor &dl, bool read_only,
                                                                      int framework, rv_policy policy,
                                                                      cleanup_list *cleanup) noexcept {
    PyObject *parent = cleanup ? cleanup->self() : nullptr;
    const dlt::return_plan plan = dlt::plan_return(dlt::return_policy_of(policy), h != nullptr, st.m_owner != nullptr,
                                                   framework ? framework : st.m_return_framework,
                                                   st.m_source != nullptr, st.m_source_framework, parent != nullptr);
    const dlt::return_start start = dlt::start_return(plan, st.m_source);
    if (start.done) return start.object;
    // Borrowed for the call: an export that keeps it copies the handle. The memory's keeper: the tensor's
    // owner, else (none, or one only nanobind knows) a capsule over the nanobind handle.
    PyObject *owner = st.m_owner;
    dlt::py_ref keeper;
    if (!owner) {
        keeper = dlt::py_ref(handle_keeper::capsule(h));
        if (!keeper) return handle();
        owner = keeper.get();
    }
    dlt::dlpack::Tensor view{};  // the nb::ndarray's, shape and strides borrowed
    view.data = dl.data;
    view.device = {dl.device.device_type, dl.device.device_id};
    view.ndim = dl.ndim;
    view.dtype = dltensor_dtype(dl.dtype);
    view.shape = dl.shape;
    view.strides = dl.strides;
    view.byte_offset = dl.byte_offset;
    dlt::tensor_handle th = dlt::tensor_handle::borrowed(view, owner, read_only, st.m_stream);
    return dlt::export_planned(&th, plan, parent);
}

NAMESPACE_END(detail)
NAMESPACE_END(NB_NAMESPACE)
