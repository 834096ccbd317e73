// dltensor/core/export.h: C++ -> Python for both backends: a `tensor_handle` as a DLPack capsule, a `dltensor.Tensor`
// (a return without a framework) or a memoryview, and the mechanisms frameworks' exports use (export_tensor():
// frameworks/registry.h; what a return exports: return_policy.h).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstring>

#include "../tensor/config.h"
#include "../python/deferred_release.h"
#include "../tensor/dlpack.h"
#include "../frameworks/framework.h"
#include "../python/handle.h"
#include "../python/keep_alive.h"
#include "../python/process_state.h"
#include "../python/py_ref.h"
#include "../tensor/strides.h"

namespace dlt {

namespace detail {

/// A managed tensor that holds one reference to a handle and borrows its shape and strides.
template <typename Managed> struct exported_tensor {
    Managed mt;  // first: the deleter casts back
    tensor_handle *handle;
    bool in_handle;  ///< lives in the handle's own allocation (a borrowed handle's copy): freed with it

    static Managed *create(tensor_handle *borrowed) noexcept {
        void *storage = nullptr;  // a borrowed handle's heap copy carries this export: one allocation
        tensor_handle *h = borrowed->share(sizeof(exported_tensor), &storage);
        if (!h) return nullptr;
        // Not value-initialized (that clears it with `rep stos` under -Os): every field is set below.
        auto *e = storage ? new (storage) exported_tensor : new (std::nothrow) exported_tensor;
        if (!e) {
            h->dec_ref();
            PyErr_NoMemory();
            return nullptr;
        }
        e->handle = h;
        e->in_handle = storage != nullptr;
        dlpack::copy_view(e->mt.dl_tensor, h->tensor());
        e->mt.manager_ctx = e;
        e->mt.deleter = [](Managed *self) {
            auto *x = static_cast<exported_tensor *>(self->manager_ctx);
            tensor_handle *handle = x->handle;
            if (x->in_handle) x->~exported_tensor();  // its memory goes with the handle's, below
            else delete x;
            handle->dec_ref();  // takes the GIL if the consumer frees from another thread
        };
        if constexpr (std::is_same_v<Managed, dlpack::ManagedTensorVersioned>) {
            e->mt.version = {dlpack::major_version, dlpack::minor_version};
            e->mt.flags = h->read_only() ? dlpack::flag_read_only : 0;
        }
        return &e->mt;
    }
};

/// The destructor of capsules we produce: frees the tensor unless a consumer took it (renamed it).
/// Runs while a consumer may be raising (e.g. NumPy refusing the capsule): the error indicator is saved
/// and restored, so that the consumer's error is what the caller sees.
inline void exported_capsule_destructor(PyObject *capsule) noexcept {
    saved_error saved;
    const char *name = PyCapsule_GetName(capsule);
    if (name && std::strcmp(name, dlpack::capsule_name_versioned) == 0) {
        auto *mt = static_cast<dlpack::ManagedTensorVersioned *>(PyCapsule_GetPointer(capsule, name));
        if (mt && mt->deleter) mt->deleter(mt);
    } else if (name && std::strcmp(name, dlpack::capsule_name) == 0) {
        auto *mt = static_cast<dlpack::ManagedTensor *>(PyCapsule_GetPointer(capsule, name));
        if (mt && mt->deleter) mt->deleter(mt);
    }
}  // `saved` clears ours (a capsule without a pointer) and restores the consumer's

}  // namespace detail

namespace detail {
template <typename Managed> PyObject *capsule_of(tensor_handle *h, const char *name) noexcept {
    Managed *mt = exported_tensor<Managed>::create(h);
    if (!mt) return nullptr;
    PyObject *c = PyCapsule_New(mt, name, exported_capsule_destructor);
    if (!c) mt->deleter(mt);
    return c;
}
}  // namespace detail

/// A DLPack capsule of the handle ("dltensor_versioned" or "dltensor"). New reference, or NULL with an
/// error set.
inline PyObject *make_capsule(tensor_handle *h, bool versioned) noexcept {
    return versioned ? detail::capsule_of<dlpack::ManagedTensorVersioned>(h, dlpack::capsule_name_versioned)
                     : detail::capsule_of<dlpack::ManagedTensor>(h, dlpack::capsule_name);
}

namespace detail {

/// `dltensor.Tensor`: the Python object of a return without a framework annotation.
struct exported_object {
    PyObject_HEAD tensor_handle *handle;
    /// The consumer is an immutable framework (JAX, TensorFlow), which may ask for unversioned DLPack:
    /// a read-only tensor may then go without the read-only flag, which that format cannot carry.
    bool immutable_consumer;
};

/// Python frees the object, so this thread holds the GIL, also while the interpreter finalizes: the tensor is released
/// as a return's is (dec_ref_in_entered_interpreter()), so an object kept at exit still releases its owner.
inline void exported_dealloc(PyObject *self) noexcept {
    auto *o = reinterpret_cast<exported_object *>(self);
    PyTypeObject *tp = Py_TYPE(self);
    if (o->handle) o->handle->dec_ref_in_entered_interpreter();
    tp->tp_free(self);
    Py_DECREF(tp);
}

/// The tensor of a `dltensor.Tensor`; NULL, with a TypeError set, for an object without one (the type
/// cannot be instantiated from Python, so only a corrupted object could get here).
inline tensor_handle *exported_handle(PyObject *self) noexcept {
    tensor_handle *h = reinterpret_cast<exported_object *>(self)->handle;
    if (!h) PyErr_SetString(PyExc_TypeError, "dltensor.Tensor: this object holds no tensor");
    return h;
}

/// Reads `value` as a pair of integers (`max_version`, `dl_device`; any `__index__` type, such as NumPy's):
/// None gives 0 with no error; anything but a tuple of two integers raises TypeError naming `what`, an
/// integer past a C long ValueError. -1 then.
inline int exported_int_pair(PyObject *value, const char *what, long &a, long &b) noexcept {
    if (value == Py_None) return 0;
    if (!PyTuple_Check(value) || PyTuple_GET_SIZE(value) != 2 || !PyIndex_Check(PyTuple_GET_ITEM(value, 0)) ||
        !PyIndex_Check(PyTuple_GET_ITEM(value, 1))) {
        PyErr_Format(PyExc_TypeError, "__dlpack__(): %s must be None or a tuple of two integers, not %R", what, value);
        return -1;
    }
    long out[2];
    for (Py_ssize_t i = 0; i < 2; ++i) {
        const py_ref index(PyNumber_Index(PyTuple_GET_ITEM(value, i)));
        out[i] = index ? PyLong_AsLong(index.get()) : -1;
        if (out[i] == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "__dlpack__(): %s %R is out of range", what, value);
            return -1;
        }
    }
    a = out[0], b = out[1];
    return 1;
}

/// `__dlpack__(copy=True)`: a C-ordered copy of a CPU tensor in memory of its own, exported with DLPack's
/// IS_COPIED flag (versioned) and writable. NULL with BufferError where none can be made here (another
/// device, elements of less than a byte).
inline PyObject *exported_copy(tensor_handle *h, bool versioned) noexcept {
    const dlpack::Tensor &t = h->tensor();
    const size_t bits = (size_t) t.dtype.bits * t.dtype.lanes;
    if (t.device.device_type != dlpack::cpu || bits == 0 || bits % 8 != 0) {
        PyErr_SetString(PyExc_BufferError, "__dlpack__(copy=True): only CPU tensors of whole-byte elements are "
                                           "copied here");
        return nullptr;
    }
    const size_t item = bits / 8, count = (size_t) element_count(t);
    void *memory = PyMem_RawMalloc(count > 0 ? count * item : 1);
    if (!memory) return PyErr_NoMemory();
    const py_ref owner(PyCapsule_New(memory, "dltensor.copy", [](PyObject *c) noexcept {
        PyMem_RawFree(PyCapsule_GetPointer(c, "dltensor.copy"));
    }));
    if (!owner) {
        PyMem_RawFree(memory);
        return nullptr;
    }
    int64_t index[dlpack::max_ndim] = {};
    const char *from = static_cast<const char *>(t.data) + t.byte_offset;
    char *to = static_cast<char *>(memory);
    for (size_t k = 0; k < count; ++k, to += item) {  // C order: the last index moves fastest
        int64_t offset = 0;
        for (int32_t d = 0; d < t.ndim; ++d) offset += index[d] * (t.strides ? t.strides[d] : 0);
        std::memcpy(to, from + offset * (int64_t) item, item);
        for (int32_t d = t.ndim - 1; d >= 0 && ++index[d] == t.shape[d]; --d) index[d] = 0;
    }
    dlpack::Tensor copy = t;
    copy.data = memory;
    copy.byte_offset = 0;
    copy.strides = nullptr;  // C order
    tensor_handle *c = tensor_handle::create(copy, owner.get(), false, nullptr);
    if (!c) return nullptr;
    PyObject *capsule = make_capsule(c, versioned);
    c->dec_ref();
    if (capsule && versioned)
        static_cast<dlpack::ManagedTensorVersioned *>(PyCapsule_GetPointer(capsule, dlpack::capsule_name_versioned))
            ->flags |= dlpack::flag_is_copied;
    return capsule;
}

/// `__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)` (array API): keyword-only
/// arguments, each type checked (TypeError), then what this tensor cannot give (BufferError).
inline PyObject *exported_dlpack(PyObject *self, PyObject *args, PyObject *kwargs) noexcept {
    if (PyTuple_GET_SIZE(args) != 0) {
        PyErr_SetString(PyExc_TypeError, "__dlpack__() does not accept positional arguments (use keywords: "
                                         "stream, max_version, dl_device, copy)");
        return nullptr;
    }
    static const char *kwlist[] = {"stream", "max_version", "dl_device", "copy", nullptr};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", const_cast<char **>(kwlist), &stream,
                                     &max_version, &dl_device, &copy))
        return nullptr;
    tensor_handle *h = exported_handle(self);
    if (!h) return nullptr;
    (void) stream;  // accepted and ignored, as nanobind does: the export is made on the caller's stream
    if (copy != Py_None && !PyBool_Check(copy)) {
        PyErr_Format(PyExc_TypeError, "__dlpack__(): copy must be None or a bool, not %.100s", Py_TYPE(copy)->tp_name);
        return nullptr;
    }
    long major = 0, minor = 0, type = -1, id = -1;
    const int has_version = exported_int_pair(max_version, "max_version", major, minor);
    if (has_version < 0) return nullptr;
    const int has_device = exported_int_pair(dl_device, "dl_device", type, id);
    if (has_device < 0) return nullptr;
    if (has_device && (type != h->tensor().device.device_type || id != h->tensor().device.device_id)) {
        PyErr_SetString(PyExc_BufferError, "__dlpack__: the tensor lives on another device (a copy to another "
                                           "device is not made here)");
        return nullptr;
    }
    const bool versioned = major >= 1;
    if (copy == Py_True) return exported_copy(h, versioned);
    if (!versioned && h->read_only() && !reinterpret_cast<exported_object *>(self)->immutable_consumer) {
        PyErr_SetString(PyExc_BufferError, "cannot export a read-only tensor as unversioned DLPack (no flag)");
        return nullptr;
    }
    return make_capsule(h, versioned);
}

inline PyObject *exported_dlpack_device(PyObject *self, PyObject *) noexcept {
    tensor_handle *h = exported_handle(self);
    if (!h) return nullptr;
    const auto &d = h->tensor().device;
    return Py_BuildValue("(ii)", d.device_type, d.device_id);
}

/// The struct-module format of `t`'s elements for the buffer protocol, or NULL where it has none: only one
/// lane of exactly the width a format names (no bfloat16, float8, sub-byte or 128-bit types) on the CPU.
inline const char *buffer_format(const dlpack::Tensor &t) noexcept {
    if (t.device.device_type != dlpack::cpu || t.dtype.lanes != 1) return nullptr;
    const uint8_t b = t.dtype.bits;
    // 64-bit: "l" where long has 64 bits, so that NumPy reads numpy.int64, not numpy.longlong.
    const char *const ints[4] = {"b", "h", "i", sizeof(long) == 8 ? "l" : "q"};
    const char *const uints[4] = {"B", "H", "I", sizeof(long) == 8 ? "L" : "Q"};
    const int width = b == 8 ? 0 : b == 16 ? 1 : b == 32 ? 2 : b == 64 ? 3 : -1;
    switch (t.dtype.code) {
        case dlpack::bool_: return b == 8 ? "?" : nullptr;
        case dlpack::int_: return width >= 0 ? ints[width] : nullptr;
        case dlpack::uint_: return width >= 0 ? uints[width] : nullptr;
        case dlpack::float_: return b == 16 ? "e" : b == 32 ? "f" : b == 64 ? "d" : nullptr;
        case dlpack::complex_: return b == 64 ? "Zf" : b == 128 ? "Zd" : nullptr;
        default: return nullptr;
    }
}

/// Buffer protocol (CPU tensors with a struct-module format): NumPy imports through it faster than
/// through `numpy.from_dlpack`. Shape and strides (in bytes) live in `view->internal`.
inline int exported_getbuffer(PyObject *self, Py_buffer *view, int flags) noexcept {
    tensor_handle *h = exported_handle(self);
    if (!h) {
        PyErr_SetString(PyExc_BufferError, "dltensor.Tensor: this object holds no tensor");
        return -1;
    }
    const dlpack::Tensor &t = h->tensor();
    const char *format = buffer_format(t);
    if (!format) {
        PyErr_SetString(PyExc_BufferError, "dltensor.Tensor: no buffer for this dtype or device; use __dlpack__");
        return -1;
    }
    if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && h->read_only()) {
        PyErr_SetString(PyExc_BufferError, "dltensor.Tensor: the tensor is read-only");
        return -1;
    }
    // What the consumer can take: without PyBUF_STRIDES it reads the memory as C-ordered, so only a
    // C-contiguous tensor can be exported; an explicit contiguity request is checked as asked.
    const bool c_contig = has_order(t, 'C'), f_contig = has_order(t, 'F');  // strides.h
    const bool strided = (flags & PyBUF_STRIDES) == PyBUF_STRIDES;
    if ((!strided && !c_contig) || ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c_contig) ||
        ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f_contig) ||
        ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c_contig && !f_contig)) {
        PyErr_SetString(PyExc_BufferError, "dltensor.Tensor: the tensor is not contiguous in the order the "
                                           "buffer request needs (ask with PyBUF_STRIDES, or pass a copy)");
        return -1;
    }
    const Py_ssize_t item = (Py_ssize_t) ((t.dtype.bits + 7) / 8), nd = t.ndim;
    auto *dims = static_cast<Py_ssize_t *>(PyMem_Malloc(sizeof(Py_ssize_t) * (size_t) (2 * nd + 1)));
    if (!dims) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t len = item;
    for (Py_ssize_t i = 0; i < nd; ++i) {
        dims[i] = (Py_ssize_t) t.shape[i];
        dims[nd + i] = (Py_ssize_t) t.strides[i] * item;
        len *= dims[i];
    }
    view->buf = (char *) t.data + t.byte_offset;
    Py_INCREF(self);
    view->obj = self;
    view->len = len;
    view->itemsize = item;
    view->readonly = h->read_only();
    view->ndim = (int) nd;
    view->format = (flags & PyBUF_FORMAT) ? const_cast<char *>(format) : nullptr;
    view->shape = (flags & PyBUF_ND) == PyBUF_ND ? dims : nullptr;
    view->strides = strided ? dims + nd : nullptr;
    view->suboffsets = nullptr;
    view->internal = dims;
    return 0;
}

inline void exported_releasebuffer(PyObject *, Py_buffer *view) noexcept { PyMem_Free(view->internal); }

/// The type, created once per extension module and interpreter (process_state.h); NULL, with the error set, when
/// it could not be created (out of memory at the first export).
struct exported_type_state {
    PyTypeObject *type = nullptr;
    void release() noexcept { Py_CLEAR(type); }
    static exported_type_state make() noexcept;
};

inline PyTypeObject *exported_type() noexcept {
    const exported_type_state &s = process_state<exported_type_state>(exported_type_state::make);
    if (!s.type && !PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "dltensor: the dltensor.Tensor type could not be created");
    return s.type;
}

inline exported_type_state exported_type_state::make() noexcept {
    static PyMethodDef methods[] = {
        {"__dlpack__", (PyCFunction) (void (*)()) exported_dlpack, METH_VARARGS | METH_KEYWORDS,
         "DLPack export (array API): a capsule of this tensor."},
        {"__dlpack_device__", (PyCFunction) exported_dlpack_device, METH_NOARGS, "(DLPack device type, device id)."},
        {nullptr, nullptr, 0, nullptr}};
    static PyType_Slot slots[] = {{Py_tp_dealloc, (void *) exported_dealloc},
                                  {Py_bf_getbuffer, (void *) exported_getbuffer},
                                  {Py_bf_releasebuffer, (void *) exported_releasebuffer},
                                  {Py_tp_methods, methods},
                                  {Py_tp_doc, const_cast<char *>("A tensor returned by a dltensor binding: pass it to "
                                                                 "any DLPack consumer (numpy.from_dlpack, ...).")},
                                  {0, nullptr}};
    // Never instantiable from Python (`type(t)()` raises TypeError, as nanobind's own types do): every
    // object of the type holds a tensor from its creation (make_exported) on.
#ifdef Py_TPFLAGS_DISALLOW_INSTANTIATION
    static PyType_Spec spec = {"dltensor.Tensor", sizeof(exported_object), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
    auto *tp = (PyTypeObject *) PyType_FromSpec(&spec);
#else  // Python 3.9: what the flag does, by hand
    static PyType_Spec spec = {"dltensor.Tensor", sizeof(exported_object), 0, Py_TPFLAGS_DEFAULT, slots};
    auto *tp = (PyTypeObject *) PyType_FromSpec(&spec);
    if (tp) tp->tp_new = nullptr;
#endif
    return {tp};  // kept for the interpreter
}

}  // namespace detail

/// A new `dltensor.Tensor` holding a reference to `h`, or NULL with an error set. `immutable_consumer`:
/// only for handing to JAX or TensorFlow (see `exported_object`).
DLTENSOR_CORE PyObject *make_exported(tensor_handle *h, bool immutable_consumer = false) noexcept;

namespace detail {
inline constexpr char handle_capsule_name[] = "dltensor.handle";

inline void drop_handle(tensor_handle *h) noexcept { h->dec_ref(); }

/// A capsule holding a reference to `h` (shared: see tensor_handle::share()), released when the capsule
/// is freed: the base of a NumPy array over a tensor without a Python owner. NULL with an error set.
DLTENSOR_CORE PyObject *handle_capsule(tensor_handle *h) noexcept;

}  // namespace detail

/// The Python object a binding returns for `h`: that framework's tensor (a view, or a copy when `copy`).
/// New reference, or NULL with an error set. Defined with the frameworks' list (frameworks/registry.h).
DLTENSOR_CORE PyObject *export_tensor(tensor_handle *h, int framework, bool copy) noexcept;

namespace detail {
/// Exports `view`, another view of the memory of `h`, kept alive by `h` (through a `dltensor.Tensor`).
DLTENSOR_CORE PyObject *export_view_of(tensor_handle *h, const dlpack::Tensor &view, int framework, bool copy) noexcept;
}  // namespace detail

/// Does framework `f` mishandle `h` as it is (see export_adapted())? One predictable branch where `f`
/// takes every tensor as it is.
inline bool needs_adapted_export(const framework &f, const tensor_handle *h) noexcept {
    return f.deleter_not_reentrant || (f.ignores_byte_offset && h->tensor().byte_offset != 0);
}

namespace detail {
/// Exports `h` to `f` (`to_python`) over a view adapted to what `f` mishandles: `byte_offset` folded into `data`
/// where `f` ignores it; kept by a deferred-release owner where `f`'s deleter is not re-entrant (deferred_release.h),
/// else by the owner of `h`. New reference, or NULL with an error set.
DLTENSOR_CORE PyObject *export_adapted(tensor_handle *h, const framework &f, bool copy) noexcept;
}  // namespace detail

/// Hands `h` to a framework through its DLPack exchange API (`managed_tensor_to_py_object_no_sync`): its
/// tensor over the memory of `h`, a new reference, or NULL with an error set.
DLTENSOR_HOT_INLINE PyObject *export_through_exchange_api(const dlpack::ExchangeAPI *api, tensor_handle *h) noexcept {
    auto *mt = detail::exported_tensor<dlpack::ManagedTensorVersioned>::create(h);
    if (!mt) return nullptr;
    void *o = nullptr;
    if (api->managed_tensor_to_py_object_no_sync(mt, &o) != 0 || !o) {
        // A failing producer may have taken the tensor: leaked rather than risk a double free.
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "dltensor: export through the DLPack exchange API failed");
        return nullptr;
    }
    return static_cast<PyObject *>(o);
}

/// A framework with a DLPack exchange API and `<module>.from_dlpack` (PyTorch, Paddle) takes `h`: through
/// `api` (the framework's table; NULL with the fast paths off or without one), else `from_dlpack` of a
/// `dltensor.Tensor`; a copy is the result's `clone()`. A new reference, or NULL with an error set.
DLTENSOR_HOT_INLINE PyObject *export_to_exchange_framework(const dlpack::ExchangeAPI *api, const char *module,
                                                           tensor_handle *h, bool copy) noexcept {
    py_ref out;
    if (api) {
        out = py_ref(export_through_exchange_api(api, h));
    } else {
        const py_ref obj(make_exported(h));
        if (!obj) return nullptr;
        out = call_function(module, "from_dlpack", obj.get());
    }
    return out && copy ? call_method(out.get(), "clone").release() : out.release();
}

/// What a copying return policy raises for a tensor that has no framework to be copied into: no
/// framework annotation (or `array_api` / `memview`, which cannot own a copy), and not imported from a
/// framework's tensor.
inline constexpr const char *no_framework_to_copy_into =
    "dltensor: this return policy copies, which is not supported for this framework (a tensor without a "
    "framework annotation, py::array_api or py::memview cannot own a copy, and it was not imported from a "
    "framework's tensor, nor follows one by return_like()): annotate one (py::numpy, ...), or return a "
    "view (give the memory an owner, or use the reference policy)";

/// A framework's return of a dtype dltensor does not carry (sub-byte, 128-bit, several lanes, opaque, a
/// float8 code of another width): a TypeError naming it, never its bytes read as another type. NULL.
DLTENSOR_COLD inline PyObject *refuse_unsupported_return(const tensor_handle *h, const char *framework) noexcept {
    char name[dtype_description_capacity];
    dtype_description(h->tensor().dtype, name);
    PyErr_Format(PyExc_TypeError,
                 "dltensor: cannot return a tensor of dtype %s to %s: dltensor carries one lane of bool, "
                 "(u)int8-64, float16-64, bfloat16, complex64/128 and the float8 types; return it without a "
                 "framework annotation (a dltensor.Tensor, read through __dlpack__) or convert it in C++",
                 name, framework);
    return nullptr;
}

/// What no framework returns (`fw_none`, `fw_array_api`: a `dltensor.Tensor`; `fw_memview`: a memoryview
/// over its buffer protocol, CPU). Neither can own a copy. A new reference, or NULL with an error set.
inline PyObject *export_without_framework(tensor_handle *h, int framework, bool copy) noexcept {
    if (copy) {  // as nanobind
        PyErr_SetString(PyExc_RuntimeError, no_framework_to_copy_into);
        return nullptr;
    }
    if (framework != fw_memview) return make_exported(h);
    if (!detail::buffer_format(h->tensor())) {  // refused at the return, naming why, not at the caller's first read
        char name[dtype_description_capacity];
        dtype_description(h->tensor().dtype, name);
        if (h->tensor().device.device_type != dlpack::cpu)
            PyErr_SetString(PyExc_TypeError, "py::memview returns CPU tensors only (a memoryview is host memory): "
                                             "annotate a framework (py::pytorch, ...) or none for a device tensor");
        else
            PyErr_Format(PyExc_TypeError,
                         "py::memview cannot return %s: the buffer protocol has no format for "
                         "it; annotate a framework (py::numpy, py::pytorch, ...) or none (a dltensor.Tensor, read "
                         "through __dlpack__)",
                         name);
        return nullptr;
    }
    const py_ref obj(make_exported(h));
    return obj ? PyMemoryView_FromObject(obj.get()) : nullptr;
}

}  // namespace dlt
