// dltensor/torch.h: what PyTorch needs beyond DLPack: the tensor state that neither the exchange API nor
// (for the negative bit) `__dlpack__` reports, PyTorch's own rules for writing into a tensor in place,
// and its exchange API. Written against the CPython C API only, so every backend shares it.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "dlpack.h"
#include "exchange.h"
#include "requirements.h"
#include "torch_key_set.h"

namespace dlt {

/// Per tensor type: the C entry points of `torch._C.TensorBase`'s queries, read from its method and
/// property descriptors and called directly. Always read from `TensorBase` (the last PyTorch type in a
/// subclass's MRO), so a subclass that overrides them in Python cannot hide a tensor's state.
struct torch_checks {
    PyCFunction is_neg = nullptr;        ///< `Tensor.is_neg()`: memory holds the negated values.
    PyCFunction is_conj = nullptr;       ///< `Tensor.is_conj()`: memory holds the conjugated values.
    PyCFunction is_inference = nullptr;  ///< `Tensor.is_inference()`: made under `torch.inference_mode()`.
    getter requires_grad = nullptr;      ///< `Tensor.requires_grad`.
    void *requires_grad_closure = nullptr;
    /// The type overrides `__torch_function__`, through which even TensorBase's queries dispatch: they are
    /// asked with subclass dispatch disabled (`torch._C.DisableTorchFunctionSubclass`), so that a subclass
    /// cannot answer for its tensor.
    bool overrides_torch_function = false;

    bool ok() const noexcept { return is_neg && is_conj && is_inference && requires_grad; }

    /// The queries of `base` (`torch._C.TensorBase`) for tensors of type `type` (`base` or a subclass).
    static torch_checks of(PyTypeObject *base, PyTypeObject *type) noexcept;

    /// Calls a boolean query; an error counts as "true" (the unsafe answer), with the error cleared.
    static bool query(PyObject *result) noexcept {
        if (!result) { PyErr_Clear(); return true; }
        bool v = result == Py_True;
        Py_DECREF(result);
        return v;
    }
    bool negative(PyObject *t) const noexcept { return query(is_neg(t, nullptr)); }
    bool conjugate(PyObject *t) const noexcept { return query(is_conj(t, nullptr)); }
    bool inference(PyObject *t) const noexcept { return query(is_inference(t, nullptr)); }
    bool needs_grad(PyObject *t) const noexcept { return query(requires_grad(t, requires_grad_closure)); }
};

/// Process-wide PyTorch state, found once from `torch._C` (PyTorch never unloads): the grad and
/// inference modes, the autograd version counter, subclass dispatch, and `torch.Tensor`'s exchange API.
struct torch_process {
    PyObject *grad_enabled = nullptr;       ///< `torch._C.is_grad_enabled`
    PyObject *inference_enabled = nullptr;  ///< `torch._C.is_inference_mode_enabled`
    PyObject *increment_version = nullptr;  ///< `torch._C._increment_version` (takes a tuple of tensors)
    PyObject *disable_subclass = nullptr;   ///< `torch._C.DisableTorchFunctionSubclass` (a context manager)
    PyObject *torch_function = nullptr;     ///< `torch.Tensor.__torch_function__` as found on the type
    const dlpack::ExchangeAPI *api = nullptr;

    /// Looked up at first use; every member stays NULL when PyTorch is absent. Raises nothing.
    static const torch_process &get() noexcept {
        static const torch_process p = [] {
            torch_process r;
            PyObject *torch = PyImport_ImportModule("torch");
            PyObject *c = torch ? PyObject_GetAttrString(torch, "_C") : nullptr;
            PyErr_Clear();
            if (c) {
                r.grad_enabled = PyObject_GetAttrString(c, "is_grad_enabled");                 // kept
                r.inference_enabled = PyObject_GetAttrString(c, "is_inference_mode_enabled");   // kept
                r.increment_version = PyObject_GetAttrString(c, "_increment_version");         // kept
                r.disable_subclass = PyObject_GetAttrString(c, "DisableTorchFunctionSubclass"); // kept
                PyErr_Clear();
            }
            PyObject *tensor = torch ? PyObject_GetAttrString(torch, "Tensor") : nullptr;
            if (tensor && PyType_Check(tensor)) {
                r.api = find_exchange_api((PyTypeObject *) tensor);
                PyObject *key = PyUnicode_InternFromString("__torch_function__");
                r.torch_function = key ? _PyType_Lookup((PyTypeObject *) tensor, key) : nullptr;
                Py_XINCREF(r.torch_function);  // kept
                Py_XDECREF(key);
            }
            Py_XDECREF(tensor);
            Py_XDECREF(c);
            Py_XDECREF(torch);
            PyErr_Clear();
            return r;
        }();
        return p;
    }

    /// A global mode query; an error or a missing function counts as `unknown`.
    static bool mode(PyObject *fn, bool unknown) noexcept {
        if (!fn) return unknown;
        PyObject *r = PyObject_Vectorcall(fn, nullptr, 0, nullptr);
        if (!r) { PyErr_Clear(); return unknown; }
        bool v = r == Py_True;
        Py_DECREF(r);
        return v;
    }
    /// `torch.is_grad_enabled()`; true (the strict answer) when unknown.
    bool grad_mode() const noexcept { return mode(grad_enabled, true); }
    /// `torch.is_inference_mode_enabled()`; false (the strict answer) when unknown.
    bool inference_mode() const noexcept { return mode(inference_enabled, false); }

    /// Tells autograd that C++ may write into `t` (as an in-place op does): bumps the version counter
    /// that `t` shares with its views and base, so that a backward pass over values saved before the
    /// write raises instead of computing wrong gradients. Inference tensors have no counter (no-op).
    void mark_written(PyObject *t) const noexcept {
        if (!increment_version) return;
        PyObject *tuple = PyTuple_Pack(1, t);
        PyObject *r = tuple ? PyObject_Vectorcall(increment_version, &tuple, 1, nullptr) : nullptr;
        Py_XDECREF(tuple);
        if (!r) PyErr_Clear();
        Py_XDECREF(r);
    }
};

inline torch_checks torch_checks::of(PyTypeObject *base, PyTypeObject *type) noexcept {
    torch_checks c;
    auto lookup = [](PyTypeObject *tp, const char *n) -> PyObject * {
        PyObject *key = PyUnicode_InternFromString(n);
        PyObject *d = key ? _PyType_Lookup(tp, key) : nullptr;  // borrowed
        Py_XDECREF(key);
        PyErr_Clear();
        return d;
    };
    auto method = [&](const char *n) -> PyCFunction {
        PyObject *d = lookup(base, n);
        if (!d || !Py_IS_TYPE(d, &PyMethodDescr_Type)) return nullptr;
        PyMethodDef *def = reinterpret_cast<PyMethodDescrObject *>(d)->d_method;
        return (def->ml_flags & METH_NOARGS) ? def->ml_meth : nullptr;
    };
    c.is_neg = method("is_neg");
    c.is_conj = method("is_conj");
    c.is_inference = method("is_inference");
    PyObject *d = lookup(base, "requires_grad");
    if (d && Py_IS_TYPE(d, &PyGetSetDescr_Type)) {
        PyGetSetDef *def = reinterpret_cast<PyGetSetDescrObject *>(d)->d_getset;
        c.requires_grad = def->get;
        c.requires_grad_closure = def->closure;
    }
    PyObject *tf = lookup(type, "__torch_function__");
    c.overrides_torch_function = tf && tf != torch_process::get().torch_function;
    return c;
}

/// While alive, PyTorch's subclass dispatch (`__torch_function__`) is off, when `on`: the queries of a
/// subclass that overrides it then answer for the tensor, not for the subclass.
class torch_function_disabled {
public:
    explicit torch_function_disabled(bool on) noexcept {
        PyObject *type = torch_process::get().disable_subclass;
        if (!on || !type) return;
        ctx_ = PyObject_CallNoArgs(type);
        PyObject *r = ctx_ ? PyObject_CallMethod(ctx_, "__enter__", nullptr) : nullptr;
        if (!r) { PyErr_Clear(); Py_CLEAR(ctx_); }
        Py_XDECREF(r);
    }
    ~torch_function_disabled() {
        if (!ctx_) return;
        PyObject *r = PyObject_CallMethod(ctx_, "__exit__", "OOO", Py_None, Py_None, Py_None);
        if (!r) PyErr_Clear();
        Py_XDECREF(r);
        Py_DECREF(ctx_);
    }
    torch_function_disabled(const torch_function_disabled &) = delete;
    torch_function_disabled &operator=(const torch_function_disabled &) = delete;

private:
    PyObject *ctx_ = nullptr;
};

/// `tensor.flip(dims)`: a copy with those dimensions reversed. Steals `tensor`; a new reference, or NULL
/// with an error set. Returns the positive-stride view of a negative-stride tensor (strides.h) as the
/// tensor it views: PyTorch tensors cannot have negative strides, and `torch.from_dlpack` aborts the
/// process on them.
inline PyObject *torch_flip(PyObject *tensor, const int64_t *dims, int32_t n) noexcept {
    if (!tensor) return nullptr;
    PyObject *list = PyTuple_New(n);
    for (int32_t i = 0; list && i < n; ++i) {
        PyObject *d = PyLong_FromLongLong(dims[i]);
        if (!d) { Py_CLEAR(list); break; }
        PyTuple_SET_ITEM(list, i, d);
    }
    static PyObject *name = PyUnicode_InternFromString("flip");
    PyObject *args[] = {tensor, list};
    PyObject *out = list && name ? PyObject_VectorcallMethod(name, args, 2, nullptr)
                                 : nullptr;
    Py_XDECREF(list);
    Py_DECREF(tensor);
    return out;
}

/// The exchange API of `torch.Tensor`; NULL when PyTorch is not installed or predates the API.
inline const dlpack::ExchangeAPI *torch_exchange_api() noexcept { return torch_process::get().api; }

/// The negative and conjugate bits of `src`: read from its key set (torch_key_set.h) where `view` (its
/// exchange-API view) is given, the read is enabled and its guard holds; else asked of `is_neg()` and, when
/// `check_conj`, `is_conj()`. `conj` is false unless `check_conj`. Returns true when the key set answered.
inline bool torch_lazy_bits(PyObject *src, const torch_checks &c, const dlpack::Tensor *view, bool check_conj,
                            bool &neg, bool &conj) noexcept {
    if (view && torch_key_set_enabled().load(std::memory_order_relaxed) &&
        torch_key_set::get(torch_exchange_api).read(src, *view, neg, conj)) {
        conj = conj && check_conj;
        return true;
    }
    neg = c.negative(src);
    conj = check_conj && c.conjugate(src);
    return false;
}

/// PyTorch's rules before C++ may read or write a tensor, checked on every import path:
/// - a conjugate or negative view (memory does not hold the values) is `lazy`: read-only parameters
///   get it materialized (a conversion), writable ones refuse it;
/// - a writable parameter follows PyTorch's in-place rules: an inference tensor only inside
///   `torch.inference_mode()` (`mismatch::inference`); a tensor that requires grad only while grad mode
///   is off (`mismatch::requires_grad`; the `with torch.no_grad(): update(param)` idiom).
/// `check_conj`: also ask for the conjugate bit (only complex tensors can carry it). `requires_grad`:
/// where given, receives the tensor's `requires_grad` (asked at most once per call). `view`: the exchange
/// API's view of `src`, where the caller has one (the bits may then be read from the key set).
inline mismatch torch_precheck(PyObject *src, const torch_checks &c, const requirements &r, bool check_conj,
                               bool *requires_grad = nullptr, const dlpack::Tensor *view = nullptr) noexcept {
    torch_function_disabled guard(c.overrides_torch_function);
    bool neg, conj;
    torch_lazy_bits(src, c, view, check_conj, neg, conj);
    if (neg || conj) return mismatch::lazy;
    if (r.read_only) {
        if (requires_grad) *requires_grad = c.needs_grad(src);
        return mismatch::none;
    }
    if (c.inference(src)) {
        if (requires_grad) *requires_grad = false;  // inference tensors never require grad
        return torch_process::get().inference_mode() ? mismatch::none : mismatch::inference;
    }
    const bool grad = c.needs_grad(src);
    if (requires_grad) *requires_grad = grad;
    return grad && torch_process::get().grad_mode() ? mismatch::requires_grad : mismatch::none;
}

} // namespace dlt
