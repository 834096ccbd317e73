// dltensor/handle.h: a reference-counted tensor for backends without an ndarray type of their own
// (pybind11): the view (data, device, dtype, shape, strides, byte_offset), the Python object that keeps
// its memory alive, and the stream it came with. Copies share it; the last release drops the owner with
// the GIL held, from any thread. Written against the CPython C API only.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <atomic>
#include <cstring>
#include <new>

#include "dlpack.h"
#include "interpreter.h"

namespace dlt {

class tensor_handle {
public:
    /// A handle over `t` (shape and strides are copied; NULL strides become C order). `owner` is borrowed
    /// and a new reference is taken. Returns NULL (Python MemoryError set) when allocation fails.
    static tensor_handle *create(const dlpack::Tensor &t, PyObject *owner, bool read_only, void *stream,
                                 char order = 'C') noexcept {
        const size_t nd = (size_t) t.ndim;
        void *mem = PyMem_RawMalloc(sizeof(tensor_handle) + 2 * nd * sizeof(int64_t));
        if (!mem) { PyErr_NoMemory(); return nullptr; }
        auto *h = new (mem) tensor_handle();
        h->tensor_ = t;
        int64_t *shape = reinterpret_cast<int64_t *>(h + 1), *strides = shape + nd;
        for (size_t i = 0; i < nd; ++i) shape[i] = t.shape[i];
        if (t.strides) {
            for (size_t i = 0; i < nd; ++i) strides[i] = t.strides[i];
        } else if (order == 'F') {
            int64_t step = 1;
            for (size_t i = 0; i < nd; ++i) { strides[i] = step; step *= shape[i]; }
        } else {
            int64_t step = 1;
            for (size_t i = nd; i-- > 0;) { strides[i] = step; step *= shape[i]; }
        }
        h->tensor_.shape = nd ? shape : nullptr;
        h->tensor_.strides = nd ? strides : nullptr;
        Py_XINCREF(owner);
        h->owner_ = owner;
        h->read_only_ = read_only;
        h->stream_ = stream;
        return h;
    }

    void inc_ref() noexcept { refcount_.fetch_add(1, std::memory_order_relaxed); }

    /// Drops one reference; the last one releases the owner with the GIL (taken if needed).
    void dec_ref() noexcept {
        if (refcount_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        release_reference(owner_);  // leaked, not released, once the interpreter is gone
        this->~tensor_handle();
        PyMem_RawFree(this);
    }

    const dlpack::Tensor &tensor() const noexcept { return tensor_; }
    PyObject *owner() const noexcept { return owner_; }
    bool read_only() const noexcept { return read_only_; }
    void *stream() const noexcept { return stream_; }
    void set_stream(void *s) noexcept { stream_ = s; }
    /// The Python object the tensor was imported from (borrowed: the owner keeps it alive), which a
    /// binding returns for the tensor (`f(x) is x`); NULL when C++ made the tensor.
    PyObject *source() const noexcept { return source_; }
    int source_framework() const noexcept { return source_framework_; }  ///< frameworks.h numbers
    /// Records the source (see source()); `owner` must keep it alive.
    void set_source(PyObject *source, int framework) noexcept { source_ = source; source_framework_ = framework; }

private:
    tensor_handle() = default;
    std::atomic<size_t> refcount_{1};
    dlpack::Tensor tensor_{};
    PyObject *owner_ = nullptr;
    PyObject *source_ = nullptr;
    int source_framework_ = 0;
    void *stream_ = nullptr;
    bool read_only_ = false;
};

} // namespace dlt
