// dltensor/frameworks/paddle_views.h: Paddle keeps one DLPack import per data address (a second import loses a
// deleter), so one table per process remembers, weakly, the `paddle.Tensor` returned for each view: returned again
// while it lives, a view gets that tensor back, and a copy is its `clone()`. Main interpreter, GIL builds only.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdint>
#include <new>

#include "../tensor/dlpack.h"
#include "../python/interpreter.h"

namespace dlt {
namespace frameworks {
namespace paddle {

/// The returned tensors of views, by view. Not covered (docs/reference.md §13): views differing only in shape or
/// strides at one address, more than `max_ndim` dimensions, more than `capacity` live views.
class live_views {
public:
    static constexpr int capacity = 8;
    static constexpr int max_ndim = 8;

    /// The key (in the main interpreter's dict) and capsule name of the process's table, shared by every module
    /// returning through dltensor; a new layout of `live_views` takes a new name.
    static constexpr const char *table_name = "dltensor.paddle_live_views.v1";

    /// The process's table (made at its first use, freed with the main interpreter's dict), or NULL where
    /// none is used (a sub-interpreter, a free-threaded build, out of memory); no error left set.
    static live_views *get() noexcept {
        if (!usable()) return nullptr;
        static PyObject *key = PyUnicode_InternFromString(table_name);          // main interpreter only: kept
        PyObject *dict = PyInterpreterState_GetDict(PyInterpreterState_Get());  // borrowed
        if (!key || !dict) {
            PyErr_Clear();
            return nullptr;
        }
        PyObject *capsule = PyDict_GetItemWithError(dict, key);  // borrowed
        if (!capsule && !PyErr_Occurred()) {
            live_views *fresh = new (std::nothrow) live_views();
            PyObject *made =
                fresh ? PyCapsule_New(fresh, table_name,
                                      [](PyObject *c) noexcept {
                                          delete static_cast<live_views *>(PyCapsule_GetPointer(c, table_name));
                                      })
                      : nullptr;
            if (!made) delete fresh;
            capsule = made && PyDict_SetItem(dict, key, made) == 0 ? made : nullptr;
            Py_XDECREF(made);  // the dict's now (the GIL makes this the only table made)
        }
        live_views *table = capsule ? static_cast<live_views *>(PyCapsule_GetPointer(capsule, table_name)) : nullptr;
        PyErr_Clear();
        return table;
    }

    live_views() = default;
    live_views(const live_views &) = delete;
    live_views &operator=(const live_views &) = delete;
    ~live_views() {
        for (entry &e : entries_) Py_CLEAR(e.ref);
    }

    /// The live `paddle.Tensor` returned for exactly `t` (a new reference), or NULL (no error set).
    PyObject *find(const dlpack::Tensor &t) noexcept {
        for (entry &e : entries_) {
            if (!e.ref) continue;
            PyObject *o = alive(e);
            if (o && same(e, t)) return o;
            Py_XDECREF(o);
        }
        return nullptr;
    }

    /// Remembers `tensor` as what `t` returned (no error left set).
    void remember(const dlpack::Tensor &t, PyObject *tensor) noexcept {
        if (t.ndim > max_ndim) return;
        entry *slot = nullptr;
        for (entry &e : entries_) {
            PyObject *o = e.ref ? alive(e) : nullptr;
            Py_XDECREF(o);
            if (!o) {
                slot = &e;
                break;
            }
        }
        if (!slot) slot = &entries_[next_++ % capacity];  // all live: the oldest slot is reused
        Py_CLEAR(slot->ref);
        slot->ref = PyWeakref_NewRef(tensor, nullptr);
        if (!slot->ref) {
            PyErr_Clear();
            return;
        }
        slot->data = t.data;
        slot->byte_offset = t.byte_offset;
        slot->dtype = t.dtype;
        slot->device = t.device;
        slot->ndim = t.ndim;
        for (int32_t i = 0; i < t.ndim; ++i) {
            slot->dims[i] = t.shape[i];
            slot->dims[max_ndim + i] = t.strides[i];
        }
    }

private:
    struct entry {
        PyObject *ref = nullptr;  ///< a weak reference to the tensor; NULL: a free slot
        void *data = nullptr;
        uint64_t byte_offset = 0;
        dlpack::DataType dtype{};
        dlpack::Device device{};
        int32_t ndim = 0;
        int64_t dims[2 * max_ndim] = {};  ///< shape, then strides
    };
    entry entries_[capacity];
    unsigned next_ = 0;

    static bool usable() noexcept {
#ifdef Py_GIL_DISABLED
        return false;
#else
        return current_interpreter_id() == 0;
#endif
    }
    /// The entry's tensor (a new reference), or NULL, clearing the entry, when it is gone.
    static PyObject *alive(entry &e) noexcept {
#if PY_VERSION_HEX >= 0x030D0000
        PyObject *o = nullptr;
        if (PyWeakref_GetRef(e.ref, &o) < 0) PyErr_Clear();
#else
        PyObject *o = PyWeakref_GetObject(e.ref);
        o = o == Py_None ? nullptr : o;
        Py_XINCREF(o);
#endif
        if (!o) Py_CLEAR(e.ref);
        return o;
    }
    /// Is `t` exactly the entry's view? (Handles always carry strides.)
    static bool same(const entry &e, const dlpack::Tensor &t) noexcept {
        if (e.data != t.data || e.byte_offset != t.byte_offset || e.dtype != t.dtype || e.ndim != t.ndim ||
            e.device.device_type != t.device.device_type || e.device.device_id != t.device.device_id ||
            (t.ndim && !t.strides))
            return false;
        for (int32_t i = 0; i < t.ndim; ++i)
            if (e.dims[i] != t.shape[i] || e.dims[max_ndim + i] != t.strides[i]) return false;
        return true;
    }
};

}  // namespace paddle
}  // namespace frameworks
}  // namespace dlt
