// dltensor/frameworks/pytorch_key_set.h: a PyTorch tensor's negative and conjugate bits read from its dispatch key
// set in memory instead of `is_neg()` / `is_conj()`: the layout is calibrated at first use against PyTorch's answers,
// every read is guarded, and whatever is not certain falls back to the queries.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#  include <malloc.h>  // malloc_usable_size
#elif defined(__APPLE__)
#  include <malloc/malloc.h>  // malloc_size
#endif

#include "../tensor/config.h"
#include "../python/atomic_value.h"
#include "../tensor/dlpack.h"
#include "../python/process_state.h"

namespace dlt {

/// torch_key_set_enabled() (declared in pytorch.h): on unless the environment variable
/// `DLTENSOR_TORCH_KEY_SET` is `0` when first asked; tests switch it at run time.
DLTENSOR_CORE atomic_value<bool> &torch_key_set_enabled() noexcept;

/// Where PyTorch keeps a tensor's dispatch key set, relative to the Python object and its exchange-API view (whose
/// `shape` points into the `c10::TensorImpl`, at the sizes' inline storage, for up to 5 dimensions).
struct torch_key_set {
    std::ptrdiff_t impl_in_object = 0;           ///< Offset of the `c10::TensorImpl *` in the Python tensor object.
    std::ptrdiff_t shape_in_impl = 0;            ///< Offset of the sizes' inline storage (the view's `shape`) in it.
    std::ptrdiff_t keys_in_impl = 0;             ///< Offset of the 64-bit dispatch key set in the `TensorImpl`.
    uint64_t negative = 0;                       ///< The key set's bit for `DispatchKey.Negative`.
    uint64_t conjugate = 0;                      ///< The key set's bit for `DispatchKey.Conjugate`.
    int probes = 0;                              ///< How many probe tensors agreed (0 when not calibrated).
    const char *failure = "not calibrated yet";  ///< Why the layout is unknown; NULL once calibrated.

    bool calibrated() const noexcept { return failure == nullptr; }

    /// The layout for this process, calibrated at the first call (needs the GIL; raises nothing) through
    /// the exchange API that `api()` returns, asked only then. While another thread calibrates, returns an
    /// uncalibrated layout. After the first call: one atomic load.
    static const torch_key_set &get(const dlpack::ExchangeAPI *(*api)()) noexcept;

    /// The negative and conjugate bits of `src` (a PyTorch tensor) whose exchange-API view is `view`. Returns false,
    /// `neg`/`conj` untouched, unless calibrated and guarded: `view.shape` must lie at the calibrated offset in the
    /// `TensorImpl` that `src` points to (fails for > 5 dimensions, wrappers viewing another tensor, new layouts).
    bool read(PyObject *src, const dlpack::Tensor &view, bool &neg, bool &conj) const noexcept {
        if (failure || Py_TYPE(src)->tp_basicsize < impl_in_object + (Py_ssize_t) sizeof(void *)) return false;
        const char *impl;
        std::memcpy(&impl, reinterpret_cast<const char *>(src) + impl_in_object, sizeof impl);
        if (!impl || reinterpret_cast<const char *>(view.shape) != impl + shape_in_impl) return false;
        uint64_t keys;
        std::memcpy(&keys, impl + keys_in_impl, sizeof keys);
        neg = (keys & negative) != 0;
        conj = (keys & conjugate) != 0;
        return true;
    }

private:
    /// From the probe tensors (detail::torch_probe_source): the `TensorImpl` pointer's, the shape's and the key set's
    /// offsets, each one and the same for every probe, with bits that agree with `is_neg()`/`is_conj()`; else unknown.
    static torch_key_set calibrate(const dlpack::ExchangeAPI *api) noexcept;
};

namespace detail {

/// Makes the probe tensors: `probes()` returns a list of `(tensor, raw key set, is_neg, is_conj)`.
inline constexpr const char *torch_probe_source = R"(
import torch

def probes():
    class Sub(torch.Tensor):
        pass

    class Dispatching(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    neg = torch._neg_view
    real = torch.arange(6.0).reshape(2, 3)
    cplx = torch.arange(4.0).to(torch.complex64)
    with torch.inference_mode():
        inference = torch.ones(3)
    flipped_neg = real.clone(); torch._C._set_neg(flipped_neg, True)
    flipped_back = neg(real.clone()).clone(); torch._C._set_neg(flipped_back, False)
    flipped_conj = cplx.clone(); torch._C._set_conj(flipped_conj, True)
    assigned = real.clone(); assigned.data = neg(real)
    swapped, other = real.clone(), neg(real.clone()); torch.utils.swap_tensors(swapped, other)
    tensors = [real, neg(real), cplx, cplx.conj(), neg(cplx.conj()), neg(real).detach(),
               real.clone().requires_grad_(), neg(real.clone().requires_grad_()), inference,
               flipped_neg, flipped_back, flipped_conj, assigned, swapped, other,
               real.as_subclass(Sub), neg(real).as_subclass(Sub), real.as_subclass(Dispatching),
               torch.tensor(1.5), neg(torch.tensor(1.5)), torch.ones(1, 2, 1, 2, 3), neg(torch.ones(1, 2, 1, 2, 3)),
               torch.ones(3, dtype=torch.float64).t(), neg(cplx)[1:]]
    keys = torch._C._dispatch_keys
    return [(t, keys(t).raw_repr(), bool(t.is_neg()), bool(t.is_conj())) for t in tensors]

def bits():
    one = lambda k: torch._C.DispatchKeySet(k).raw_repr()
    return one(torch._C.DispatchKey.Negative), one(torch._C.DispatchKey.Conjugate)
)";

/// Bytes usable from `p`, the start of a heap block made by `new`; 0 where the platform cannot tell.
inline size_t heap_block_size(const void *p) noexcept {
#if defined(__linux__)
    return malloc_usable_size(const_cast<void *>(p));
#elif defined(__APPLE__)
    return malloc_size(p);
#else
    (void) p;
    return 0;
#endif
}

}  // namespace detail

DLTENSOR_COLD inline torch_key_set torch_key_set::calibrate(const dlpack::ExchangeAPI *api) noexcept {
    torch_key_set k;
    if (!api || !api->dltensor_from_py_object_no_sync) {
        k.failure = "no exchange API view";
        return k;
    }
    PyObject *globals = PyDict_New();
    PyObject *ran = globals ? PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) == 0
                                  ? PyRun_String(detail::torch_probe_source, Py_file_input, globals, globals)
                                  : nullptr
                            : nullptr;
    auto call = [&](const char *name) -> PyObject * {
        PyObject *f = ran ? PyDict_GetItemString(globals, name) : nullptr;  // borrowed
        return f ? PyObject_CallNoArgs(f) : nullptr;
    };
    PyObject *list = call("probes"), *bits = call("bits");
    unsigned long long neg_bit = 0, conj_bit = 0;
    const char *failure = nullptr;
    if (!list || !PyList_Check(list) || !bits || !PyArg_ParseTuple(bits, "KK", &neg_bit, &conj_bit))
        failure = "probe tensors could not be made";
    else if (!neg_bit || !conj_bit || (neg_bit & (neg_bit - 1)) || (conj_bit & (conj_bit - 1)) || neg_bit == conj_bit)
        failure = "DispatchKey.Negative / Conjugate are not single distinct bits";

    // Offsets that hold for every probe so far: the object's slots whose pointer has the view's shape
    // shortly behind it (with that distance), then the TensorImpl's 8-byte slots holding the raw key set.
    struct candidates {
        std::ptrdiff_t at[16], distance[16];
        int count = -1;  // -1: no probe seen yet
        void keep(const std::ptrdiff_t *a, const std::ptrdiff_t *d, int n) noexcept {
            if (count < 0) {
                count = 0;
                for (int i = 0; i < n && count < 16; ++i) {
                    at[count] = a[i];
                    distance[count++] = d[i];
                }
                return;
            }
            int kept = 0;
            for (int j = 0; j < count; ++j)
                for (int i = 0; i < n; ++i)
                    if (a[i] == at[j] && d[i] == distance[j]) {
                        at[kept] = at[j];
                        distance[kept++] = distance[j];
                        break;
                    }
            count = kept;
        }
    } impl_slot, key_slot;
    const Py_ssize_t n = failure ? 0 : PyList_GET_SIZE(list);
    // Probe i: the tensor, PyTorch's raw key set and bits, and the exchange API's view of it.
    auto probe = [&](Py_ssize_t i, PyObject *&t, unsigned long long &raw, int &neg, int &conj, dlpack::Tensor &view) {
        return PyArg_ParseTuple(PyList_GET_ITEM(list, i), "OKpp", &t, &raw, &neg, &conj) &&
               api->dltensor_from_py_object_no_sync(t, &view) == 0 && view.shape;
    };
    bool seen[2][2] = {};                               // [negative, conjugate][value]
    for (int pass = 0; pass < 2 && !failure; ++pass) {  // 0: the TensorImpl pointer; 1: the key set
        for (Py_ssize_t i = 0; i < n && !failure; ++i) {
            PyObject *t = nullptr;
            unsigned long long raw = 0;
            int neg = 0, conj = 0;
            dlpack::Tensor view{};
            if (!probe(i, t, raw, neg, conj, view)) {
                failure = "a probe tensor has no exchange API view";
                break;
            }
            const char *obj = reinterpret_cast<const char *>(t), *shape = reinterpret_cast<const char *>(view.shape);
            std::ptrdiff_t at[16], distance[16];
            int found = 0;
            if (pass == 0) {
                for (std::ptrdiff_t o = sizeof(PyObject);
                     found < 16 && o + (std::ptrdiff_t) sizeof(void *) <= Py_TYPE(t)->tp_basicsize;
                     o += sizeof(void *)) {
                    const char *p;
                    std::memcpy(&p, obj + o, sizeof p);
                    if (p && p <= shape && shape - p < 1024) {
                        at[found] = o;
                        distance[found++] = shape - p;
                    }
                }
                impl_slot.keep(at, distance, found);
                continue;
            }
            const char *impl;
            std::memcpy(&impl, obj + impl_slot.at[0], sizeof impl);
            const size_t size = detail::heap_block_size(impl);
            if (size < (size_t) impl_slot.distance[0] + (size_t) view.ndim * sizeof(int64_t)) {
                failure = "the TensorImpl's heap block is unknown";
                break;
            }
            for (size_t o = 0; found < 16 && o + sizeof(uint64_t) <= size; o += sizeof(uint64_t)) {
                uint64_t word;
                std::memcpy(&word, impl + o, sizeof word);
                if (word == raw) {
                    at[found] = (std::ptrdiff_t) o;
                    distance[found++] = 0;
                }
            }
            key_slot.keep(at, distance, found);
            seen[0][neg] = seen[1][conj] = true;
            if (((raw & neg_bit) != 0) != (neg != 0) || ((raw & conj_bit) != 0) != (conj != 0))
                failure = "the key set's bits disagree with is_neg() / is_conj()";
        }
        if (!failure && pass == 0 && impl_slot.count != 1)
            failure = "the TensorImpl pointer is not at one offset for every probe";
        if (!failure && pass == 1 && key_slot.count != 1) failure = "the key set is not at one offset for every probe";
    }
    if (!failure && !(seen[0][0] && seen[0][1] && seen[1][0] && seen[1][1]))
        failure = "the probes did not cover both values of both bits";
    if (!failure) {
        k.impl_in_object = impl_slot.at[0];
        k.shape_in_impl = impl_slot.distance[0];
        k.keys_in_impl = key_slot.at[0];
        k.negative = neg_bit;
        k.conjugate = conj_bit;
        k.failure = nullptr;
        // End to end: the guarded read itself answers as PyTorch does for every probe.
        for (Py_ssize_t i = 0; i < n && !failure; ++i) {
            PyObject *t = nullptr;
            unsigned long long raw = 0;
            int neg = 0, conj = 0;
            dlpack::Tensor view{};
            bool got_neg = false, got_conj = false;
            if (!probe(i, t, raw, neg, conj, view) || !k.read(t, view, got_neg, got_conj) || got_neg != (neg != 0) ||
                got_conj != (conj != 0))
                failure = "the guarded read disagrees with is_neg() / is_conj()";
        }
        k.probes = (int) n;
    }
    Py_XDECREF(list);
    Py_XDECREF(bits);
    Py_XDECREF(ran);
    Py_XDECREF(globals);
    PyErr_Clear();
    if (failure) {
        torch_key_set unknown;
        unknown.failure = failure;
        return unknown;
    }
    return k;
}

}  // namespace dlt
