// dltensor/frameworks/paddle-inl.h: the bodies of paddle.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "paddle.h"

#include "../core/exchange-inl.h"
#include "../python/handle.h"
#include "../core/import_result.h"
#include "numpy-inl.h"
#include "paddle_views.h"

namespace dlt {

namespace frameworks {
namespace paddle {

inline constexpr const char *packages[] = {"paddle", nullptr};

/// Process-wide Paddle state, found once (process_state.h); NULL members when Paddle is not importable.
struct process {
    PyObject *grad_enabled = nullptr;                                        ///< `paddle.is_grad_enabled`
    const dlpack::ExchangeAPI *api = nullptr;                                ///< `paddle.Tensor`'s exchange API
    PyObject *stop_gradient = nullptr, *is_leaf = nullptr, *bump = nullptr;  ///< interned attribute names

    void release() noexcept {
        for (PyObject **o : {&grad_enabled, &stop_gradient, &is_leaf, &bump}) Py_CLEAR(*o);
    }
    static const process &get() noexcept {
        return process_state<process>([] {
            process r;
            py_ref paddle = import_module("paddle");
            r.grad_enabled = attribute(paddle.get(), "is_grad_enabled").release();  // kept
            py_ref tensor = attribute(paddle.get(), "Tensor");
            if (tensor && PyType_Check(tensor.get())) r.api = find_exchange_api((PyTypeObject *) tensor.get());
            r.stop_gradient = PyUnicode_InternFromString("stop_gradient");
            r.is_leaf = PyUnicode_InternFromString("is_leaf");
            r.bump = PyUnicode_InternFromString("_bump_inplace_version");
            PyErr_Clear();
            return r;
        });
    }
    /// `bool(getattr(t, name))`; `unknown` when it cannot be asked (no error left set).
    static bool flag(PyObject *t, PyObject *name, bool unknown) noexcept {
        const py_ref v(name ? PyObject_GetAttr(t, name) : nullptr);
        const int b = v ? PyObject_IsTrue(v.get()) : -1;
        if (b < 0) PyErr_Clear();
        return b < 0 ? unknown : b == 1;
    }
    /// `paddle.is_grad_enabled()`; true (the strict answer) when unknown.
    bool grad_mode() const noexcept {
        const py_ref v(grad_enabled ? PyObject_CallNoArgs(grad_enabled) : nullptr);
        if (!v) {
            PyErr_Clear();
            return true;
        }
        return v.get() == Py_True;
    }
};

/// Paddle's in-place rule ("Leaf Var ... that doesn't stop gradient can't use inplace strategy"): a writable
/// parameter takes a leaf that does not stop gradient only while grad mode is off. Sets `needs_detach`
/// where the tensor does not stop gradient (its `__dlpack__` refuses it).
DLTENSOR_CORE mismatch precheck(PyObject *src, const requirements &r, bool *needs_detach) noexcept {
    const process &p = process::get();
    const bool tracked = !process::flag(src, p.stop_gradient, false);
    if (needs_detach) *needs_detach = tracked;
    if (r.read_only || !tracked) return mismatch::none;
    return process::flag(src, p.is_leaf, true) && p.grad_mode() ? mismatch::requires_grad : mismatch::none;
}

inline mismatch check_view(PyObject *src, const producer_info &, const requirements &r,
                           const dlpack::Tensor &) noexcept {
    return precheck(src, r, nullptr);
}

DLTENSOR_CORE mismatch export_capsule(PyObject *src, const producer_info &, const requirements &r, PyObject *method,
                                      py_ref &capsule, dlpack::DataType &) noexcept {
    bool detach = false;
    const mismatch m = precheck(src, r, &detach);
    if (m != mismatch::none) return m;
    py_ref detached = detach ? call_method(src, "detach") : py_ref();
    if (detach && !detached) {
        PyErr_Clear();
        return mismatch::invalid;
    }
    PyObject *exporter = detach ? detached.get() : src;
    if (detach) method = _PyType_Lookup(Py_TYPE(exporter), py_names::get().dlpack_method);
    if (method) capsule = detail::call_dlpack(exporter, method);
    return mismatch::none;
}

/// C++ may write: bump the tensor's in-place version (`_bump_inplace_version()`), as an in-place op does.
inline void written(PyObject *src) noexcept {
    PyObject *bump = process::get().bump;
    if (!bump || !py_ref(PyObject_CallMethodNoArgs(src, bump))) PyErr_Clear();
}

/// `astype`, which keeps the layout (and is the tensor itself for its own dtype): a C-order copy is then
/// Paddle's `contiguous()` (on every device; NumPy would read Paddle's bfloat16 as uint16), an F-order
/// copy of a CPU tensor comes from NumPy (Paddle allocates row-major).
DLTENSOR_CORE py_ref convert(PyObject *src, const conversion_request &c) noexcept {
    if (!c.name) return py_ref();
    if (c.order == 'F' && c.on_cpu) return convert_through_numpy(src, c);
    py_ref copy = astype_copy(src, c, false);
    if (copy && c.order == 'C') copy = call_method(copy.get(), "contiguous");
    return copy;
}

/// Paddle has no uint16 (`paddle.uint16` is bfloat16, and its DLPack import turns uint16 into bfloat16):
/// false with a TypeError set for that dtype.
inline bool has_dtype(dlpack::DataType dtype) noexcept {
    if (!(dtype.code == dlpack::uint_ && dtype.bits == 16)) return true;
    PyErr_SetString(PyExc_TypeError, "dltensor: PaddlePaddle has no uint16 dtype (its DLPack import reads uint16 "
                                     "as bfloat16): a uint16 tensor cannot become a paddle.Tensor");
    return false;
}

DLTENSOR_CORE PyObject *to_python(tensor_handle *h, bool copy) noexcept;

/// Paddle cannot import negative strides ("Fail to alloc memory"), and its `flip` has no kernel for most
/// dtypes: a CPU tensor with negative strides reaches it as a C-ordered NumPy copy (bfloat16 and float8
/// through ml_dtypes), read back and handed over as a view that the copy keeps alive.
inline PyObject *from_c_ordered_copy(tensor_handle *h) noexcept {
    if (h->tensor().device.device_type != dlpack::cpu) {
        PyErr_SetString(PyExc_ValueError, "dltensor: PaddlePaddle cannot import negative strides, and dltensor "
                                          "copies them only on the CPU");
        return nullptr;
    }
    const py_ref array(export_tensor(h, fw_numpy, true));
    if (!array) return nullptr;
    dlpack::Tensor c;
    int64_t shape[dlpack::max_ndim], strides[dlpack::max_ndim];
    bool read_only;
    if (!numpy_arrays::get().view_made(array.get(), c, shape, strides, read_only)) {
        PyErr_SetString(PyExc_RuntimeError, "dltensor: NumPy made an unreadable copy");
        return nullptr;
    }
    tensor_handle *v = tensor_handle::create(c, array.get(), false, nullptr);
    if (!v) return nullptr;
    PyObject *out = to_python(v, false);
    v->dec_ref();
    return out;
}

DLTENSOR_CORE PyObject *to_python(tensor_handle *h, bool copy) noexcept {
    const dlpack::Tensor &t = h->tensor();
    if (!has_dtype(t.dtype)) return nullptr;
    if (has_negative_stride(t)) return from_c_ordered_copy(h);
    // One import per address (paddle_views.h): a view returned again while its tensor lives is that tensor.
    live_views *views = live_views::get();
    if (PyObject *same = views ? views->find(t) : nullptr) {
        if (!copy) return same;
        const py_ref kept(same);
        return call_method(same, "clone").release();
    }
    PyObject *out =
        export_to_exchange_framework(fast_paths_enabled() ? process::get().api : nullptr, "paddle", h, copy);
    if (out && !copy && views) views->remember(t, out);
    return out;
}

/// `empty()` through `paddle.Tensor`'s exchange API allocator, in `order`, on any device Paddle has.
DLTENSOR_CORE int empty(dlpack::DataType dtype, size_t ndim, dlpack::Device device, char order, bool,
                        imported &out) noexcept {
    if (!has_dtype(dtype)) return -1;
    return allocate_through_exchange_api(process::get().api, dtype, ndim, device, order, out);
}

/// Paddle's in-place rule, explained.
inline const char *reason(mismatch why, bool) noexcept {
    return why == mismatch::requires_grad
               ? "a leaf paddle.Tensor that does not stop gradient (stop_gradient=False) for a writable "
                 "parameter while grad mode is on (write under paddle.no_grad(), or declare the dtype const)"
               : nullptr;
}

}  // namespace paddle
}  // namespace frameworks

inline constexpr framework paddle_framework = {
    fw_paddle,
    "PaddlePaddle",
    frameworks::paddle::packages,
    "paddle.Tensor",
    false,
    /*immutable*/ false,
    /*copies_read_only*/ true,
    frameworks::paddle::reason,
    /*ignores_byte_offset*/ true,
    /*deleter_not_reentrant*/ true,
    /*classify*/ nullptr,
    /*read*/ nullptr,
    frameworks::paddle::check_view,
    frameworks::paddle::export_capsule,
    frameworks::paddle::written,
    frameworks::paddle::convert,
    frameworks::paddle::to_python,
    frameworks::paddle::empty,
};

}  // namespace dlt
