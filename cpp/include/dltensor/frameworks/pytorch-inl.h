// dltensor/frameworks/pytorch-inl.h: the bodies of pytorch.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "pytorch.h"

#include <cstring>
#include "../core/export-inl.h"
#include "../python/handle.h"
#include "../core/import_result.h"
#include "pytorch_checks-inl.h"

namespace dlt {

namespace frameworks {
namespace pytorch {

inline constexpr const char *packages[] = {"torch", nullptr};

/// PyTorch's queries come from the last PyTorch type in the MRO (`torch._C.TensorBase`), which no subclass
/// overrides; the exchange route is only taken where every check it needs is available. Lazy modules'
/// placeholders (`UninitializedTensorMixin` in the MRO) are marked uninitialized.
DLTENSOR_CORE void classify(PyTypeObject *tp, producer_info &info, bool &use_exchange_api) noexcept {
    PyTypeObject *torch_base = nullptr;
    PyObject *mro = tp->tp_mro;
    const Py_ssize_t n = mro && PyTuple_Check(mro) ? PyTuple_GET_SIZE(mro) : 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *base = PyTuple_GET_ITEM(mro, i);
        py_ref holder;
        const char *m = module_of(base, holder);
        if (!m || !in_packages(m, packages)) continue;
        torch_base = (PyTypeObject *) base;
        if (std::strcmp(((PyTypeObject *) base)->tp_name, "UninitializedTensorMixin") == 0) info.uninitialized = true;
    }
    const torch_checks *checks = torch_base ? torch_checks::interned(torch_checks::of(torch_base, tp)) : nullptr;
    info.checks = checks && checks->ok() ? checks : nullptr;
    use_exchange_api = use_exchange_api && info.checks != nullptr;  // a veto only
}

inline mismatch check_view(PyObject *src, const producer_info &info, const requirements &r,
                           const dlpack::Tensor &t) noexcept {
    return torch_precheck(src, *static_cast<const torch_checks *>(info.checks), r, t.dtype.code == dlpack::complex_,
                          nullptr, &t);
}

/// `__dlpack__` after PyTorch's checks, of a detached view where the tensor requires grad (PyTorch's
/// `__dlpack__` refuses those).
DLTENSOR_CORE mismatch export_capsule(PyObject *src, const producer_info &info, const requirements &r, PyObject *method,
                                      py_ref &capsule, dlpack::DataType &seen) noexcept {
    PyObject *exporter = src;
    py_ref detached;
    if (info.checks) {
        const mismatch pre =
            torch_dlpack_precheck(src, *static_cast<const torch_checks *>(info.checks), r, detached, seen);
        if (pre != mismatch::none) return pre;
        if (detached) {
            exporter = detached.get();
            method = _PyType_Lookup(Py_TYPE(exporter), py_names::get().dlpack_method);
        }
    }
    if (method) capsule = detail::call_dlpack(exporter, method);
    return mismatch::none;
}

/// C++ may write: tell autograd, as an in-place op would (pytorch_checks.h).
inline void written(PyObject *src) noexcept { torch_process::get().mark_written(src); }

/// Same dtype and order when misaligned: only a fresh copy is aligned.
DLTENSOR_CORE py_ref convert(PyObject *src, const conversion_request &c) noexcept {
    PyObject *dtype = c.dtype();  // NULL (no error) for a lazy view's unknown dtype
    if (!dtype && PyErr_Occurred()) return py_ref();
    return torch_converted(src, dtype, c.order, c.fresh);
}

DLTENSOR_HOT_INLINE PyObject *to_python(tensor_handle *h, bool copy) noexcept {
    const dlpack::Tensor &t = h->tensor();
    if (is_float8_code(t.dtype.code) && !torch_has_dtype(small_float_name(t.dtype.code)))
        return nullptr;            // TypeError set: this PyTorch has no such dtype
    if (has_negative_stride(t)) {  // positive strides, then flip (a copy)
        dlpack::Tensor pos;
        int64_t strides[dlpack::max_ndim], dims[dlpack::max_ndim];
        int32_t n = 0;
        positive_view(t, pos, strides, dims, &n);
        // PyTorch has no flip kernel for float8: their bits are flipped as uint8, then relabeled.
        const bool float8 = is_float8_code(t.dtype.code);
        if (float8) pos.dtype = {dlpack::uint_, 8, 1};
        PyObject *flipped = torch_flip(detail::export_view_of(h, pos, fw_pytorch, false), dims, n);
        return float8 ? torch_view_as(flipped, small_float_name(t.dtype.code)) : flipped;
    }
    return export_to_exchange_framework(fast_paths_enabled() ? torch_exchange_api() : nullptr, "torch", h, copy);
}

/// `empty()` through `torch.Tensor`'s exchange API allocator, on any device, in `order`; also what other
/// frameworks' tensors on non-CPU devices are allocated with (registry.h).
DLTENSOR_CORE int empty(dlpack::DataType dtype, size_t ndim, dlpack::Device device, char order, bool,
                        imported &out) noexcept {
    if (is_float8_code(dtype.code) && !torch_has_dtype(small_float_name(dtype.code))) return -1;  // TypeError set
    return allocate_through_exchange_api(torch_exchange_api(), dtype, ndim, device, order, out);
}

/// PyTorch's rules, explained (pytorch_checks.h: torch_precheck()).
inline const char *reason(mismatch why, bool read_only) noexcept {
    switch (why) {
        case mismatch::lazy_view:
            // (refusal.h's no_conversion_text, which dltensor.explain() narrows for one overload)
            return read_only ? "a PyTorch negative or conjugate view, without conversion (.noconvert(), or the "
                               "exact first pass of overloads); call resolve_neg() / resolve_conj()"
                             : "a PyTorch negative or conjugate view for a writable parameter (its memory "
                               "does not hold the values)";
        case mismatch::requires_grad:
            return "a tensor that requires grad for a writable parameter while grad mode is on (write under "
                   "torch.no_grad(), or declare the dtype const)";
        case mismatch::inference: return "an inference tensor for a writable parameter outside torch.inference_mode()";
        default: return nullptr;
    }
}

}  // namespace pytorch
}  // namespace frameworks

inline constexpr framework pytorch_framework = {
    fw_pytorch,
    "PyTorch",
    frameworks::pytorch::packages,
    "torch.Tensor",
    false,
    /*immutable*/ false,
    /*copies_read_only*/ true,
    frameworks::pytorch::reason,
    /*ignores_byte_offset*/ false,
    /*deleter_not_reentrant*/ false,
    frameworks::pytorch::classify,
    /*read*/ nullptr,
    frameworks::pytorch::check_view,
    frameworks::pytorch::export_capsule,
    frameworks::pytorch::written,
    frameworks::pytorch::convert,
    frameworks::pytorch::to_python,
    frameworks::pytorch::empty,
};

}  // namespace dlt
