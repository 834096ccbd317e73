// dltensor/core/import-inl.h: the bodies of import.h's core entry points (config.h: DLTENSOR_CORE).
#pragma once

#include "import.h"

#include "buffer_import.h"
#include "../frameworks/registry-inl.h"
#include "conversion.h"
#include "../python/keep_alive.h"
#include "producer.h"

namespace dlt {

namespace detail {

/// Route `exchange`: a non-owning view through the type's exchange API, kept alive by the tensor object itself
/// (without the table's view entry: an owning export).
DLTENSOR_HOT_INLINE mismatch import_exchange(PyObject *src, const producer_info &info, const requirements &r,
                                             imported &out) noexcept {
    const dlpack::ExchangeAPI *api = info.api;
    dlpack::Tensor &t = out.tensor;  // filled in place: no copy of the view on the hot path
    t.strides = nullptr;             // the optional fields, should a producer leave them unset
    t.byte_offset = 0;
    managed_tensor_ref owned;  // the view entry is optional: else an owning export, handed to a capsule
    if (api->dltensor_from_py_object_no_sync) {
        if (api->dltensor_from_py_object_no_sync(src, &t) != 0) {
            absorb_producer_error(src);  // PyTorch's reason (sparse, nested, storage-less, ...)
            return mismatch::invalid;
        }
    } else {
        if (api->managed_tensor_from_py_object_no_sync(src, owned.out()) != 0 || !owned.get()) {
            absorb_producer_error(src);
            return mismatch::invalid;
        }
        t = owned.get()->dl_tensor;
    }
    if (validate(t)) return mismatch::invalid;
    out.seen = t.dtype;
    const framework *f = framework_by_id(info.framework_id);
    if (f && f->check_view) {  // PyTorch's rules, Paddle's
        mismatch m = f->check_view(src, info, r, t);
        if (m != mismatch::none) return m;
    }
    const bool read_only = info.immutable || (owned.get() && (owned.get()->flags & dlpack::flag_read_only));
    if (owned.get() && (owned.get()->flags & dlpack::flag_is_copied) && !r.read_only) return mismatch::copied;
    mismatch m = check_and_record(r, t, read_only);
    if (m != mismatch::none) return m;

    void *stream = nullptr;
    if (t.device.device_type != dlpack::cpu &&
        api->current_work_stream(t.device.device_type, t.device.device_id, &stream) != 0) {
        PyErr_Clear();
        return mismatch::invalid;
    }
    out.owner = owned.get() ? owned.into_owner() : py_ref::borrow(src);
    if (!out.owner) {
        PyErr_Clear();
        return mismatch::invalid;
    }
    out.stream = stream;
    return mismatch::none;
}

/// Route `framework_reader` (NumPy's, frameworks/numpy_arrays.h): owned by the object itself. `exact`: only the main
/// type (`numpy.ndarray`); else also what only this reader reads (ml_dtypes' arrays). `read`: the `read` hook, or
/// (registry.h: inlined_reader) that function itself, so that it inlines.
template <typename Read>
inline mismatch import_own(PyObject *src, Read &&read, const requirements &r, imported &out,
                           bool exact = true) noexcept {
    dlpack::Tensor &t = out.tensor;  // filled in place (every field): no copy of the view on the hot path
    bool read_only;
    if (!read(src, t, out.shape, out.strides, read_only, exact)) return mismatch::invalid;
    // No validate(): the reader's view satisfies it by construction.
    out.seen = t.dtype;
    mismatch m = check_and_record(r, t, read_only);
    if (m != mismatch::none) return m;
    out.owner = py_ref::borrow(src);
    return mismatch::none;
}

/// Route `portable`: `__dlpack__` (or the framework's export hook: jaxlib's export, PyTorch's and Paddle's
/// checks and detached views, TensorFlow's guard), else the buffer protocol.
inline mismatch import_portable(PyObject *src, const producer_info &info, const requirements &r,
                                imported &out) noexcept {
    PyTypeObject *tp = Py_TYPE(src);
    PyObject *dlpack_attr = _PyType_Lookup(tp, py_names::get().dlpack_method);
    mismatch m = mismatch::invalid;
    if (dlpack_attr) {
        py_ref capsule;
        const framework *f = framework_by_id(info.framework_id);
        if (f && f->export_capsule) {
            const mismatch pre = f->export_capsule(src, info, r, dlpack_attr, capsule, out.seen);
            if (pre != mismatch::none) return pre;
        } else {
            capsule = call_dlpack(src, dlpack_attr);
        }
        // Released at the end of the block: accepted, the owner holds it or took its tensor; rejected, its
        // producer frees the tensor.
        if (capsule && PyCapsule_CheckExact(capsule.get()))
            m = import_capsule(capsule.get(), r, info.immutable, true, out);
    }
    if (m == mismatch::invalid && has_buffer_protocol(tp))  // no DLPack export (e.g. a byte-swapped NumPy array)
        m = import_buffer(src, r, out);
    return m;
}

/// The routes after the first try: the portable one, and a framework's own reader for what only it can read
/// (NumPy's: ml_dtypes' arrays, also subclasses). Out of line: the hot path is import_by_route()'s first try.
inline mismatch import_by_other_routes(PyObject *src, const producer_info &info, const requirements &r, imported &out,
                                       route path) noexcept {
    const framework *f = framework_by_id(info.framework_id);
    mismatch m = mismatch::invalid;
    if (path == route::framework_reader && info.framework_id != inlined_reader::framework)
        m = import_own(src, f->read, r, out);
    if (m == mismatch::invalid) m = import_portable(src, info, r, out);  // not a plain, exact ndarray
    if (m == mismatch::invalid && f && f->read) m = import_own(src, f->read, r, out, false);  // ml_dtypes
    return m;
}

/// Imports `src` through its type's route (the portable one with the fast paths off). One framework's
/// reader is called directly, inlined (registry.h: inlined_reader), any other's by pointer.
DLTENSOR_HOT_INLINE mismatch import_by_route(PyObject *src, const producer_info &info, const requirements &r,
                                             imported &out) noexcept {
    const route path = fast_paths_enabled() ? (route) info.path : route::portable;
    if (path == route::exchange) return import_exchange(src, info, r, out);
    if (path == route::framework_reader && info.framework_id == inlined_reader::framework) {
        const mismatch m = import_own(src, inlined_reader::read, r, out);
        if (m != mismatch::invalid) return m;
    }
    return import_by_other_routes(src, info, r, out, path);
}

/// Completes the calling thread's refusal record (refusal.h) for `src`, whose framework is `f` (NULL: none
/// or not known); returns false for the caller.
inline bool refuse(PyObject *src, const requirements &r, bool convert, mismatch why, bool not_a_tensor, bool converted,
                   const framework *f = nullptr) noexcept {
    refusal &rec = last_refusal();
    if (why != mismatch::shape && why != mismatch::dtype && why != mismatch::device && why != mismatch::order &&
        why != mismatch::read_only && why != mismatch::misaligned && why != mismatch::overlapping)
        rec.tensor_known = false;  // only the checks of requirements.h record a tensor
    rec.why = why;
    rec.sub_interpreter = false;
    rec.asarray_failed = false;
    rec.not_a_tensor = not_a_tensor;
    rec.converted = converted;
    rec.convert = convert;
    rec.required = r;
    // A dtype that validate() or the NumPy reader refused during this import (requirements.h): named.
    rec.unsupported = why == mismatch::invalid ? unsupported_dtype_seen() : dlpack::DataType{0, 0, 0};
    unsupported_dtype_seen() = {0, 0, 0};
    rec.malformed = why == mismatch::invalid ? malformed_reason_seen() : nullptr;
    malformed_reason_seen() = nullptr;
    public_type_name(Py_TYPE(src), f, rec.type_name, sizeof rec.type_name);
    rec.immutable_framework = f && f->immutable ? f->name : nullptr;
    rec.framework_reason = f && f->reason ? f->reason(why, r.read_only) : nullptr;
    if (why == mismatch::invalid && !not_a_tensor && !converted) {  // the producer's own reason, if it gave one
        const char *reason = producer_reason(src);
        rec.set_detail(reason);
    }
    forget_producer_reason();
    return false;
}

/// Any argument in a sub-interpreter whose state could not be made (process_state.h: enter_interpreter()),
/// refused without reading it.
DLTENSOR_REFUSAL_PATH bool refuse_in_sub_interpreter(PyObject *src, const requirements &r, bool convert) noexcept {
    refuse(src, r, convert, mismatch::invalid, false, false);
    last_refusal().sub_interpreter = true;
    return false;
}

/// A lazy PyTorch module's placeholder parameter or buffer (producer_info::uninitialized), refused with
/// PyTorch's own reason.
DLTENSOR_REFUSAL_PATH bool refuse_uninitialized(PyObject *src, const requirements &r, bool convert,
                                                const framework *f) noexcept {
    PyErr_SetString(PyExc_ValueError, "Attempted to use an uninitialized parameter (a lazy module's "
                                      "placeholder: run the module once first)");
    absorb_producer_error(src);
    return refuse(src, r, convert, mismatch::invalid, false, false, f);
}

/// A tensor a route accepted: PyTorch learns of C++ writes, the owner keeps the source alive, and the
/// source is remembered (`f(x) is x`). False (refused) only when out of memory.
DLTENSOR_HOT_INLINE bool accept(PyObject *src, const producer_info &info, const requirements &r, bool convert,
                                imported &out) noexcept {
    // C++ may write: tell the framework, as an in-place op would (PyTorch's autograd, Paddle's version).
    if (!r.read_only) {
        const framework *f = framework_by_id(info.framework_id);
        if (f && f->written) f->written(src);
    }
    // The owner must keep the source alive: the object itself (fast paths), a buffer export (holds it),
    // or else (a producer's capsule) a pair (capsule, source).
    if (out.owner.get() != src && !PyCapsule_IsValid(out.owner.get(), buffer_owner_name)) {
        py_ref pair(owner_pair(out.owner.get(), src));
        if (!pair) {
            PyErr_Clear();
            out.owner = py_ref();
            return refuse(src, r, convert, mismatch::invalid, false, false, framework_by_id(info.framework_id));
        }
        out.owner = std::move(pair);
    }
    out.source = src;
    out.source_framework = info.framework_id;
    return true;
}

/// A tensor a route refused for `why`: imported from the producer's converted copy where conversion is
/// allowed and may help (conversion.h), else refused.
DLTENSOR_REFUSAL_PATH bool import_converted(PyObject *src, const producer_info &info, const requirements &r,
                                            bool convert, mismatch why, imported &out) noexcept {
    const framework *f = framework_by_id(info.framework_id);
    if (!convert || !conversion_may_fix(r, out.seen, why)) return refuse(src, r, convert, why, false, false, f);
    PyTypeObject *tp = Py_TYPE(src);
    const bool plain_buffer = has_buffer_protocol(tp) && !_PyType_Lookup(tp, py_names::get().dlpack_method);
    // Where the refused tensor lives (its facts were recorded by the check that refused it).
    const bool on_cpu = last_refusal().tensor_known && last_refusal().device_type == dlpack::cpu;
    const py_ref converted = convert_with_producer(src, f, plain_buffer, r, out.seen, why, on_cpu);
    if (!converted) return refuse(src, r, convert, why, false, false, f);
    const bool ok = import_tensor(converted.get(), r, false, out);  // the owner keeps the copy's memory alive
    return ok || refuse(src, r, convert, last_refusal().why, false, true, f);
}

/// An object that is no tensor (a list, tuple, number, `__array__` object): `numpy.asarray` with the
/// parameter's dtype, for read-only parameters that allow conversion; else refused.
DLTENSOR_REFUSAL_PATH bool import_array_like(PyObject *src, const requirements &r, bool convert,
                                             imported &out) noexcept {
    if (!convert || !r.read_only || !is_array_like(src)) {
        last_refusal().detail[0] = '\0';
        return refuse(src, r, convert, mismatch::invalid, true, false);
    }
    const py_ref array = numpy_array_of(src, r);
    if (!array) {
        refuse(src, r, convert, mismatch::invalid, true, false);
        last_refusal().asarray_failed = true;
        return false;
    }
    const bool ok = import_tensor(array.get(), r, true, out);  // the owner keeps the array alive
    return ok || refuse(src, r, convert, last_refusal().why, false, true);
}

}  // namespace detail

DLTENSOR_CORE bool import_tensor(PyObject *src, const requirements &r, bool convert, imported &out) noexcept {
    if (!enter_interpreter()) return detail::refuse_in_sub_interpreter(src, r, convert);
    if (PyCapsule_CheckExact(src)) {  // a raw capsule: no producer to convert with
        mismatch m = detail::import_capsule(src, r, false, false, out);
        if (m != mismatch::none) return detail::refuse(src, r, convert, m, false, false);
        out.consumed = src;  // restore_consumed_capsule() hands it back if the call does not go ahead
        return true;
    }
    producer_info info;
    if (!detail::producer_of(Py_TYPE(src), info))  // neither __dlpack__ nor a buffer
        return detail::import_array_like(src, r, convert, out);
    if (info.uninitialized) return detail::refuse_uninitialized(src, r, convert, framework_by_id(info.framework_id));
    const mismatch m = detail::import_by_route(src, info, r, out);
    if (m == mismatch::none) return detail::accept(src, info, r, convert, out);
    return detail::import_converted(src, info, r, convert, m, out);
}

DLTENSOR_CORE bool of_annotated_framework(PyObject *src, const requirements &r) noexcept {
    if (!enter_interpreter()) return detail::refuse_in_sub_interpreter(src, r, false);
    producer_info info;
    const bool producer = !PyCapsule_CheckExact(src) && detail::producer_of(Py_TYPE(src), info);
    if (producer && info.framework_id == r.framework) return true;
    detail::refuse(src, r, false, mismatch::framework, !producer && !PyCapsule_CheckExact(src), false,
                   producer ? framework_by_id(info.framework_id) : nullptr);
    const framework *annotated = framework_by_id(r.framework);
    last_refusal().set_detail(annotated ? annotated->name : nullptr);  // the explanation names it
    return false;
}

}  // namespace dlt
