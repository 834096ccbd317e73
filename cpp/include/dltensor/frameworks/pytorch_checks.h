// dltensor/frameworks/pytorch_checks.h: what PyTorch needs beyond DLPack: tensor state that neither the exchange API
// nor (for the negative bit) `__dlpack__` reports, its rules for writing in place, and its exchange API.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <new>

#include "../tensor/config.h"
#include "../python/atomic_value.h"
#include "../tensor/dlpack.h"
#include "../core/exchange.h"
#include "../python/process_state.h"
#include "../python/py_ref.h"
#include "../tensor/refusal.h"
#include "../tensor/requirements.h"
#include "pytorch_key_set.h"

namespace dlt {

/// Per tensor type: the C entry points of `torch._C.TensorBase`'s queries, read from its method and
/// property descriptors and called directly. Always read from `TensorBase` (the last PyTorch type in a
/// subclass's MRO), so a subclass that overrides them in Python cannot hide a tensor's state.
struct torch_checks {
    PyCFunction is_neg = nullptr;        ///< `Tensor.is_neg()`: memory holds the negated values.
    PyCFunction is_conj = nullptr;       ///< `Tensor.is_conj()`: memory holds the conjugated values.
    PyCFunction is_inference = nullptr;  ///< `Tensor.is_inference()`: made under `torch.inference_mode()`.
    /// `Tensor.is_complex()` and `element_size()`: a lazy view's dtype where no view of it was read
    /// (torch_lazy_view()). Not needed by ok(): without them such a view is taken as complex (the strict answer).
    PyCFunction is_complex = nullptr;
    PyCFunction element_size = nullptr;
    getter requires_grad = nullptr;  ///< `Tensor.requires_grad`.
    void *requires_grad_closure = nullptr;
    /// The type overrides `__torch_function__`, through which even TensorBase's queries dispatch: they are
    /// asked with subclass dispatch disabled (`torch._C.DisableTorchFunctionSubclass`), so that a subclass
    /// cannot answer for its tensor.
    bool overrides_torch_function = false;

    bool ok() const noexcept { return is_neg && is_conj && is_inference && requires_grad; }

    /// The queries of `base` (`torch._C.TensorBase`) for tensors of type `type` (`base` or a subclass).
    static torch_checks of(PyTypeObject *base, PyTypeObject *type) noexcept;

    /// The process's one copy of checks equal to `c` (NULL when out of memory), which a type's cached producer entry
    /// points to: one per distinct answer of of(), in practice two (with and without `__torch_function__`).
    static const torch_checks *interned(const torch_checks &c) noexcept;

    bool operator==(const torch_checks &o) const noexcept {
        return is_neg == o.is_neg && is_conj == o.is_conj && is_inference == o.is_inference &&
               is_complex == o.is_complex && element_size == o.element_size && requires_grad == o.requires_grad &&
               requires_grad_closure == o.requires_grad_closure &&
               overrides_torch_function == o.overrides_torch_function;
    }

    /// Calls a boolean query; an error counts as "true" (the unsafe answer), with the error cleared.
    static bool query(PyObject *result) noexcept {
        if (!result) {
            PyErr_Clear();
            return true;
        }
        bool v = result == Py_True;
        Py_DECREF(result);
        return v;
    }
    bool negative(PyObject *t) const noexcept { return query(is_neg(t, nullptr)); }
    bool conjugate(PyObject *t) const noexcept { return query(is_conj(t, nullptr)); }
    bool inference(PyObject *t) const noexcept { return query(is_inference(t, nullptr)); }
    bool needs_grad(PyObject *t) const noexcept { return query(requires_grad(t, requires_grad_closure)); }
    bool complex(PyObject *t) const noexcept { return !is_complex || query(is_complex(t, nullptr)); }
    /// Bytes per element; 0 when unknown (error cleared).
    uint8_t element_bytes(PyObject *t) const noexcept {
        const py_ref n(element_size ? element_size(t, nullptr) : nullptr);
        const long v = n ? PyLong_AsLong(n.get()) : 0;
        PyErr_Clear();
        return v > 0 && v <= 16 ? (uint8_t) v : 0;
    }
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

    /// Looked up once (process_state.h); every member stays NULL when PyTorch is absent. Raises nothing.
    static const torch_process &get() noexcept { return process_state<torch_process>(make); }
    void release() noexcept {
        for (PyObject **o : {&grad_enabled, &inference_enabled, &increment_version, &disable_subclass, &torch_function})
            Py_CLEAR(*o);
    }

    static torch_process make() noexcept {
        torch_process r;
        py_ref torch = import_module("torch");
        py_ref c = attribute(torch.get(), "_C");
        r.grad_enabled = attribute(c.get(), "is_grad_enabled").release();                   // kept
        r.inference_enabled = attribute(c.get(), "is_inference_mode_enabled").release();    // kept
        r.increment_version = attribute(c.get(), "_increment_version").release();           // kept
        r.disable_subclass = attribute(c.get(), "DisableTorchFunctionSubclass").release();  // kept
        PyErr_Clear();
        py_ref tensor = attribute(torch.get(), "Tensor");
        if (tensor && PyType_Check(tensor.get())) {
            r.api = find_exchange_api((PyTypeObject *) tensor.get());
            py_ref key(PyUnicode_InternFromString("__torch_function__"));
            r.torch_function = key ? _PyType_Lookup((PyTypeObject *) tensor.get(), key.get()) : nullptr;
            Py_XINCREF(r.torch_function);  // kept
        }
        PyErr_Clear();
        return r;
    }

    /// A global mode query; an error or a missing function counts as `unknown`.
    static bool mode(PyObject *fn, bool unknown) noexcept {
        if (!fn) return unknown;
        const py_ref r(PyObject_Vectorcall(fn, nullptr, 0, nullptr));
        if (!r) {
            PyErr_Clear();
            return unknown;
        }
        return r.get() == Py_True;
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
        const py_ref tuple(PyTuple_Pack(1, t));
        PyObject *args[] = {tuple.get()};
        if (!tuple || !py_ref(PyObject_Vectorcall(increment_version, args, 1, nullptr))) PyErr_Clear();
    }
};

inline torch_checks torch_checks::of(PyTypeObject *base, PyTypeObject *type) noexcept {
    torch_checks c;
    auto lookup = [](PyTypeObject *tp, const char *n) -> PyObject * {
        const py_ref key(PyUnicode_InternFromString(n));
        PyObject *d = key ? _PyType_Lookup(tp, key.get()) : nullptr;  // borrowed
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
    c.is_complex = method("is_complex");
    c.element_size = method("element_size");
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

inline const torch_checks *torch_checks::interned(const torch_checks &c) noexcept {
    struct node {
        torch_checks checks;
        node *next;
    };
    static atomic_value<node *> head{nullptr};  // pushed to, never popped: every node lives for the process
    node *first = head.load(atomic_order::acquire);
    for (node *n = first; n; n = n->next)
        if (n->checks == c) return &n->checks;
    node *fresh = new (std::nothrow) node{c, first};
    if (!fresh) return nullptr;
    // Another thread may push meanwhile (free-threaded builds): then push on top of its node. An equal
    // node pushed twice is harmless; either copy answers.
    while (!head.compare_exchange_weak(fresh->next, fresh, atomic_order::acq_rel, atomic_order::acquire)) { }
    return &fresh->checks;
}

/// While alive, PyTorch's subclass dispatch (`__torch_function__`) is off, when `on`: the queries of a
/// subclass that overrides it then answer for the tensor, not for the subclass.
class torch_function_disabled {
public:
    explicit torch_function_disabled(bool on) noexcept {
        PyObject *type = torch_process::get().disable_subclass;
        if (!on || !type) return;
        ctx_ = py_ref(PyObject_CallNoArgs(type));
        if (!ctx_ || !call_method(ctx_.get(), "__enter__")) {
            PyErr_Clear();
            ctx_ = py_ref();
        }
    }
    ~torch_function_disabled() {
        if (!ctx_) return;
        PyObject *args[] = {Py_None, Py_None, Py_None};
        if (!call_method(ctx_.get(), "__exit__", args, 3)) PyErr_Clear();
    }
    torch_function_disabled(const torch_function_disabled &) = delete;
    torch_function_disabled &operator=(const torch_function_disabled &) = delete;

private:
    py_ref ctx_;
};

/// `tensor.flip(dims)`: a copy with those dimensions reversed, turning a positive-stride view (strides.h) back into
/// the tensor it views (PyTorch has no negative strides; `torch.from_dlpack` aborts on them). Steals `tensor`;
/// a new reference, or NULL with an error set.
DLTENSOR_CORE PyObject *torch_flip(PyObject *tensor, const int64_t *dims, int32_t n) noexcept;

/// A copy of PyTorch tensor `src` that C++ can read: conjugate/negative views resolved, `.to(torch.<dtype>)` where
/// `dtype` (a name: "float32") is given, `.clone()` when `fresh` (only a fresh copy is aligned), then `order` 'C' or
/// 'F' ('K': as it is; F through reversed axes made C-contiguous). Empty, with the error set, on failure.
inline py_ref torch_converted(PyObject *src, PyObject *dtype, char order, bool fresh) noexcept {
    py_ref t = call_method(src, "resolve_conj");
    if (t) t = call_method(t.get(), "resolve_neg");
    if (t && dtype) {
        py_ref torch = import_module("torch");
        py_ref torch_dtype(torch ? PyObject_GetAttr(torch.get(), dtype) : nullptr);
        PyObject *args[] = {torch_dtype.get()};
        t = torch_dtype ? call_method(t.get(), "to", args, 1) : py_ref();
    }
    if (t && fresh) t = call_method(t.get(), "clone");
    if (!t || order == 'K') return t;
    if (order == 'C') return call_method(t.get(), "contiguous");
    py_ref dim = call_method(t.get(), "dim");
    const long nd = dim ? PyLong_AsLong(dim.get()) : -1;
    py_ref perm(nd >= 0 ? PyTuple_New(nd) : nullptr);
    if (!perm) return perm;
    for (long i = 0; i < nd; ++i) PyTuple_SET_ITEM(perm.get(), i, PyLong_FromLong(nd - 1 - i));
    PyObject *args[] = {perm.get()};
    py_ref reversed = call_method(t.get(), "permute", args, 1);
    py_ref compact = reversed ? call_method(reversed.get(), "contiguous") : py_ref();
    return compact ? call_method(compact.get(), "permute", args, 1) : py_ref();
}

/// torch_exchange_api() (declared in pytorch.h).
DLTENSOR_CORE const dlpack::ExchangeAPI *torch_exchange_api() noexcept;

/// Does PyTorch have the dtype `name` (`torch.float8_e4m3fn`, ...)? PyTorch 2.13 has float8_e4m3fn, e5m2,
/// e4m3fnuz, e5m2fnuz and e8m0fnu, not e3m4, e4m3 or e4m3b11fnuz. False with a TypeError set saying so.
DLTENSOR_CORE bool torch_has_dtype(const char *name) noexcept;

/// `tensor.view(torch.<name>)`: the same bits relabeled (a float8 tensor flipped as uint8, which PyTorch has
/// no float8 flip kernel for). Steals `tensor`; a new reference, or NULL with an error set.
DLTENSOR_CORE PyObject *torch_view_as(PyObject *tensor, const char *name) noexcept;

/// The negative and conjugate bits of `src`: read from its key set (pytorch_key_set.h) where `view` (its
/// exchange-API view) is given, the read is enabled and its guard holds; else asked of `is_neg()` and, when
/// `check_conj`, `is_conj()`. `conj` is false unless `check_conj`. Returns true when the key set answered.
inline bool torch_lazy_bits(PyObject *src, const torch_checks &c, const dlpack::Tensor *view, bool check_conj,
                            bool &neg, bool &conj) noexcept {
    if (view && torch_key_set_enabled().load(atomic_order::relaxed) &&
        torch_key_set::get(torch_exchange_api).read(src, *view, neg, conj)) {
        conj = conj && check_conj;
        return true;
    }
    neg = c.negative(src);
    conj = check_conj && c.conjugate(src);
    return false;
}

/// A conjugate or negative view for `r`: `lazy` (a read-only parameter's conversion resolves it), but a complex one for
/// a real dtype is a `dtype` mismatch (never converted), recorded. Without `view` (`__dlpack__` route) the dtype is
/// asked of `is_complex()`/`element_size()` (subclass dispatch off) and stored in `seen` where non-NULL.
DLTENSOR_REFUSAL_PATH mismatch torch_lazy_view(PyObject *src, const torch_checks &c, const requirements &r,
                                               const dlpack::Tensor *view, dlpack::DataType *seen) noexcept {
    if (r.dtype.bits == 0 || r.dtype.code == dlpack::complex_) return mismatch::lazy_view;  // no complex -> real
    if (view && view->dtype.code != dlpack::complex_) return mismatch::lazy_view;
    if (!view && !c.complex(src)) return mismatch::lazy_view;
    const dlpack::DataType d =
        view ? view->dtype : dlpack::DataType{dlpack::complex_, (uint8_t) (8 * c.element_bytes(src)), 1};
    if (seen) *seen = d;
    if (view) {
        note_refused_tensor(*view, mismatch::dtype, false);
    } else {  // no view: its dtype alone is known, which is all a dtype refusal explains
        refusal &rec = last_refusal();
        rec.tensor_known = true;
        rec.why = mismatch::dtype;
        rec.source_read_only = false;
        rec.dtype = d;
        rec.ndim = 0;
    }
    return mismatch::dtype;
}

/// PyTorch's rules, on every import path: a conjugate/negative view is `lazy` (torch_lazy_view() given `view`, the
/// exchange-API view); a writable parameter refuses inference tensors outside `torch.inference_mode()` and tensors
/// requiring grad in grad mode. `check_conj`: ask the conjugate bit too. `requires_grad`: receives the tensor's.
DLTENSOR_CORE mismatch torch_precheck(PyObject *src, const torch_checks &c, const requirements &r, bool check_conj,
                                      bool *requires_grad = nullptr, const dlpack::Tensor *view = nullptr) noexcept;

/// The `__dlpack__` route's torch_precheck(): for a tensor that requires grad (which PyTorch's `__dlpack__` refuses)
/// `detached` receives `src.detach()`, to export instead; else it stays empty. A lazy view is refused before any
/// export (torch_lazy_view(), its dtype into `seen`).
inline mismatch torch_dlpack_precheck(PyObject *src, const torch_checks &c, const requirements &r, py_ref &detached,
                                      dlpack::DataType &seen) noexcept {
    bool grad = false;
    const mismatch m = torch_precheck(src, c, r, true, &grad);
    if (m != mismatch::none) {
        if (m != mismatch::lazy_view) return m;
        torch_function_disabled guard(c.overrides_torch_function);
        return torch_lazy_view(src, c, r, nullptr, &seen);
    }
    if (!grad) return m;
    detached = call_method(src, "detach");
    if (!detached) {
        PyErr_Clear();
        return mismatch::invalid;
    }
    return mismatch::none;
}

}  // namespace dlt
