// dltensor/frameworks/pytorch_checks-inl.h: the bodies of pytorch_checks.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "pytorch_checks.h"
#include "../core/exchange-inl.h"
#include "pytorch_key_set-inl.h"

namespace dlt {

DLTENSOR_CORE PyObject *torch_flip(PyObject *tensor, const int64_t *dims, int32_t n) noexcept {
    const py_ref t(tensor);
    if (!t) return nullptr;
    py_ref list(PyTuple_New(n));
    for (int32_t i = 0; list && i < n; ++i) {
        PyObject *d = PyLong_FromLongLong(dims[i]);
        if (!d) {
            list = py_ref();
            break;
        }
        PyTuple_SET_ITEM(list.get(), i, d);
    }
    PyObject *args[] = {list.get()};
    return list ? call_method(t.get(), "flip", args, 1).release() : nullptr;
}

DLTENSOR_CORE const dlpack::ExchangeAPI *torch_exchange_api() noexcept { return torch_process::get().api; }

DLTENSOR_CORE bool torch_has_dtype(const char *name) noexcept {
    py_ref torch = import_module("torch");
    py_ref dtype = attribute(torch.get(), name);
    if (dtype) return true;
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "dltensor: PyTorch has no %s dtype (no torch.%s in this version): a %s tensor "
                 "cannot become a torch.Tensor; return it as py::numpy (ml_dtypes) or py::jax",
                 name, name, name);
    return false;
}

DLTENSOR_CORE PyObject *torch_view_as(PyObject *tensor, const char *name) noexcept {
    const py_ref t(tensor);
    if (!t) return nullptr;
    py_ref torch = import_module("torch");
    py_ref dtype = attribute(torch.get(), name);
    PyObject *args[] = {dtype.get()};
    return dtype ? call_method(t.get(), "view", args, 1).release() : nullptr;
}

DLTENSOR_CORE mismatch torch_precheck(PyObject *src, const torch_checks &c, const requirements &r, bool check_conj,
                                      bool *requires_grad, const dlpack::Tensor *view) noexcept {
    torch_function_disabled guard(c.overrides_torch_function);
    bool neg, conj;
    torch_lazy_bits(src, c, view, check_conj, neg, conj);
    if (neg || conj) return view ? torch_lazy_view(src, c, r, view, nullptr) : mismatch::lazy_view;
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

}  // namespace dlt
