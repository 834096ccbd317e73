// dltensor/python/handle.h: a reference-counted tensor (view, the Python owner of its memory, stream), what export.h
// works on and the pybind11 backend's `py::dltensor` holds (nanobind's lends a borrowed one). Copies share it; the
// last release drops the owner with the GIL held, from any thread.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstddef>
#include <cstring>
#include <new>

#include "../tensor/dlpack.h"
#include "atomic_value.h"
#include "interpreter.h"
#include "../tensor/strides.h"

namespace dlt {

class tensor_handle {
public:
    /// A handle over `t` (shape, strides copied; NULL strides: contiguous in `order`) with a new reference to `owner`,
    /// and `trailing` bytes (max-aligned, `*trailing_storage`) after it for an object living as long as its memory
    /// (see share()). NULL, with MemoryError set, when allocation fails.
    static tensor_handle *create(const dlpack::Tensor &t, PyObject *owner, bool read_only, void *stream,
                                 char order = 'C', size_t trailing = 0, void **trailing_storage = nullptr) noexcept {
        return create_inline(t, owner, read_only, stream, order, trailing, trailing_storage);
    }

    /// create(), always inlined: for the pybind11 backend's hot paths (an argument's handle, a returned tensor's
    /// constructor, empty()).
    DLTENSOR_HOT_INLINE static tensor_handle *create_inline(const dlpack::Tensor &t, PyObject *owner, bool read_only,
                                                            void *stream, char order = 'C', size_t trailing = 0,
                                                            void **trailing_storage = nullptr) noexcept {
        const size_t nd = (size_t) t.ndim;
        const size_t end = sizeof(tensor_handle) + 2 * nd * sizeof(int64_t);
        constexpr size_t any = alignof(std::max_align_t);
        const size_t tail = (end + any - 1) & ~(any - 1);
        // With an owner, Python's allocator (the GIL is held here and at the last release); else the raw one, so
        // that it is freed without Python (python_heap()).
        const size_t size = trailing ? tail + trailing : end;
        void *mem = owner ? PyMem_Malloc(size) : PyMem_RawMalloc(size);
        if (!mem) {
            PyErr_NoMemory();
            return nullptr;
        }
        if (trailing_storage) *trailing_storage = trailing ? static_cast<char *>(mem) + tail : nullptr;
        auto *h = new (mem) tensor_handle(t);  // the view copied once, not cleared first
        int64_t *shape = reinterpret_cast<int64_t *>(h + 1), *strides = shape + nd;
        for (size_t i = 0; i < nd; ++i) shape[i] = t.shape[i];
        if (t.strides) {
            for (size_t i = 0; i < nd; ++i) strides[i] = t.strides[i];
        } else {
            contiguous_strides(shape, nd, order, strides);
        }
        h->tensor_.shape = nd ? shape : nullptr;
        h->tensor_.strides = nd ? strides : nullptr;
        Py_XINCREF(owner);
        h->owner_ = owner;
        h->read_only_ = read_only;
        h->stream_ = stream;
        // Whose object the owner is: asked only while a sub-interpreter uses dltensor.
        if (detail::sub_interpreters_in_use().load(atomic_order::relaxed)) h->interpreter_ = current_interpreter_id();
        return h;
    }

    /// A handle on the caller's stack over `t`, for an export that may not keep it (NumPy's C API keeps only the
    /// owner): shape, strides (not NULL) and `owner` stay borrowed for the call; share() copies it to the heap.
    /// Never dec_ref() it.
    static tensor_handle borrowed(const dlpack::Tensor &t, PyObject *owner, bool read_only, void *stream) noexcept {
        return tensor_handle(t, owner, read_only, stream);
    }

    /// A reference to keep beyond the call (release with dec_ref()): this handle, or a borrowed one's heap copy with
    /// `trailing` bytes for the caller at `*trailing_storage` (NULL when shared instead; freed with the handle, so what
    /// lives there ends before its reference drops). NULL, with MemoryError set, when allocation fails.
    tensor_handle *share(size_t trailing = 0, void **trailing_storage = nullptr) noexcept {
        if (!borrowed_) {
            if (trailing_storage) *trailing_storage = nullptr;
            inc_ref();
            return this;
        }
        tensor_handle *h = create(tensor_, owner_, read_only_, stream_, 'C', trailing, trailing_storage);
        if (h) h->set_source(source_, source_framework_);
        return h;
    }

    void inc_ref() noexcept { refcount_.fetch_add(1, atomic_order::relaxed); }

    /// Drops one reference; the last releases the owner and frees the handle with the GIL (taken if needed). Leaked
    /// instead: what needs Python once the interpreter is gone (or finalizing, without the GIL), and the whole handle
    /// when made in another interpreter than the thread's (without the GIL: the main one, PyGILState's).
    void dec_ref() noexcept {
        // The only reference is dropped without an atomic read-modify-write: no other thread holds one.
        if (refcount_.load(atomic_order::acquire) != 1 && refcount_.fetch_sub(1, atomic_order::acq_rel) != 1) return;
        if (!owner_) return free_raw();  // nothing of Python's: no GIL to take
        const bool initialized = Py_IsInitialized();
        // Meaningless once finalized: asked only before.
        PyThreadState *ts = initialized ? thread_state_holding_gil() : nullptr;
        const bool gil = ts != nullptr;
        if (!initialized || (!gil && !interpreter_alive())) {
            if (!python_heap()) free_raw();  // the Python parts are leaked with the ending process
            return;
        }
        if (gil ? !made_in(ts->interp) : interpreter_ != 0)
            return;  // another interpreter's: leaked whole (its allocator, its objects)
        PyGILState_STATE st{};
        if (!gil) st = PyGILState_Ensure();
        PyObject *owner = owner_;
        const bool from_python_heap = python_heap();  // read before the destructor
        this->~tensor_handle();
        if (from_python_heap) PyMem_Free(this);
        else PyMem_RawFree(this);
        Py_XDECREF(owner);  // last: it may run arbitrary code
        if (!gil) PyGILState_Release(st);
    }

    /// dec_ref() for a caller holding the GIL of the interpreter it entered (enter_interpreter()), as a return does:
    /// while no sub-interpreter uses dltensor, a main-interpreter handle's last reference is released without asking
    /// whether the interpreter lives and which thread holds the GIL. Else dec_ref().
    DLTENSOR_HOT_INLINE void dec_ref_in_entered_interpreter() noexcept {
        if (refcount_.load(atomic_order::acquire) != 1 || !owner_ || interpreter_ != 0 ||
            detail::sub_interpreters_in_use().load(atomic_order::relaxed) != 0)
            return dec_ref();
        PyObject *owner = owner_;
        this->~tensor_handle();
        PyMem_Free(this);  // a handle with an owner lives on Python's heap (see python_heap())
        Py_DECREF(owner);  // last: it may run arbitrary code
    }

    /// Is this the only reference to the handle?
    bool unique() const noexcept { return refcount_.load(atomic_order::acquire) == 1; }
    const dlpack::Tensor &tensor() const noexcept { return tensor_; }
    PyObject *owner() const noexcept { return owner_; }

    /// A new reference to the Python object that keeps the memory alive (the owner); NULL (no error set)
    /// when there is none.
    PyObject *new_owner_reference() const noexcept {
        Py_XINCREF(owner_);
        return owner_;
    }
    bool read_only() const noexcept { return read_only_; }
    void *stream() const noexcept { return stream_; }
    void set_stream(void *s) noexcept { stream_ = s; }
    /// The Python object the tensor was imported from (borrowed: the owner keeps it alive), which a
    /// binding returns for the tensor (`f(x) is x`); NULL when C++ made the tensor.
    PyObject *source() const noexcept { return source_; }
    int source_framework() const noexcept { return source_framework_; }  ///< frameworks/ numbers
    /// Records the source (see source()); `owner` must keep it alive.
    void set_source(PyObject *source, int framework) noexcept {
        source_ = source;
        source_framework_ = framework;
    }

private:
    explicit tensor_handle(const dlpack::Tensor &t) noexcept { dlpack::copy_view(tensor_, t); }
    tensor_handle(const dlpack::Tensor &t, PyObject *owner, bool read_only, void *stream) noexcept
        : owner_(owner), stream_(stream), read_only_(read_only), borrowed_(true) {
        dlpack::copy_view(tensor_, t);
    }
    atomic_value<size_t> refcount_{1};
    dlpack::Tensor tensor_;  ///< set by every constructor (copy_view: no clear, no `rep movs` under -Os)
    PyObject *owner_ = nullptr;
    PyObject *source_ = nullptr;
    int source_framework_ = 0;
    int64_t interpreter_ = 0;  ///< the ID of the interpreter that made the handle (see create())
    void *stream_ = nullptr;
    bool read_only_ = false;
    bool borrowed_ = false;  ///< on a caller's stack: see borrowed()
    /// Did interpreter `interp` make this handle?
    bool made_in(PyInterpreterState *interp) const noexcept {
        return interp == detail::main_interpreter() ? interpreter_ == 0
                                                    : interpreter_ == PyInterpreterState_GetID(interp);
    }
    /// Was a heap handle allocated by PyMem_Malloc (it has an owner: see create()), else PyMem_RawMalloc?
    bool python_heap() const noexcept { return owner_ != nullptr; }

    void free_raw() noexcept {
        this->~tensor_handle();
        PyMem_RawFree(this);
    }
};

}  // namespace dlt
