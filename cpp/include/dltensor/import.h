// dltensor/import.h: Python object -> validated DLPack tensor plus an owner that keeps it alive.
//
// Written against the CPython C API only, so that every backend (nanobind, pybind11) shares it. The
// importer accepts raw DLPack capsules, objects with `__dlpack__` and buffer-protocol objects, validates
// every field before anything reads through it, checks a parameter's `requirements`, and (for read-only
// parameters, when the binding allows conversions) asks the producer for a converted copy.
//
// Ownership rules, each pinned by a test:
// - A capsule is consumed (renamed "used_dltensor[_versioned]", destructor cleared) only when the tensor
//   is accepted; a rejected capsule is left untouched, so its producer still frees it.
// - An accepted tensor's deleter runs exactly once, when the owner object returned here is freed; that
//   is a Python object, so it is freed with the GIL held. The owner is a new capsule that calls the
//   deleter, or, for a `__dlpack__` result that nobody else holds, that capsule itself (its producer's
//   destructor calls the deleter; nothing else can reach it to consume it a second time).
// Hot path: no C++ exceptions, no allocation beyond the owner object. Every function is noexcept and
// leaves no Python error set.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdint>
#include <cstring>

#include "dlpack.h"
#include "dtypes.h"
#include "exchange.h"
#include "frameworks.h"
#include "refusal.h"
#include "requirements.h"
#include "torch.h"

namespace dlt {

/// The library that produced a Python object, by the top-level package of its type's `__module__`.
enum class producer : uint8_t { other, numpy, torch, jax, tensorflow, cupy, mlx };

/// What the importer remembers about a Python type.
struct producer_info {
    producer kind = producer::other;
    bool immutable = false;                   ///< Immutable arrays, although they export no read-only flag.
    const dlpack::ExchangeAPI *api = nullptr; ///< The type's DLPack C exchange API, if it publishes one.
    torch_checks torch;                       ///< PyTorch types: the checks the C API skips.
};

/// The framework a producer's tensors are (frameworks.h numbers); `fw_none` for other producers.
constexpr int framework_of(producer p) noexcept {
    switch (p) {
        case producer::numpy: return fw_numpy;
        case producer::torch: return fw_pytorch;
        case producer::jax: return fw_jax;
        case producer::tensorflow: return fw_tensorflow;
        case producer::cupy: return fw_cupy;
        case producer::mlx: return fw_mlx;
        default: return fw_none;
    }
}

/// The result of a successful import.
struct imported {
    dlpack::Tensor tensor{};    ///< The validated view; strides may be NULL (C order).
    PyObject *owner = nullptr;  ///< New reference to the object that keeps `tensor` alive.
    /// The caller's object the tensor came from (after a conversion: the converted copy), borrowed: `owner`
    /// keeps it alive. What a binding returns for the tensor (`f(x) is x`). NULL for raw capsules.
    PyObject *source = nullptr;
    int source_framework = fw_none;  ///< The framework `source` belongs to (frameworks.h numbers).
    void *stream = nullptr;     ///< The producer's current work stream (exchange API, non-CPU), else NULL.
    int64_t shape[dlpack::max_ndim];    ///< Storage for `tensor.shape` when the importer derives it.
    int64_t strides[dlpack::max_ndim];  ///< Storage for `tensor.strides` when the importer derives them.
};

namespace detail {

/// Interned names and constant arguments, created once per extension module (the GIL serializes this).
struct py_constants {
    PyObject *dlpack_method = PyUnicode_InternFromString("__dlpack__");
    // Keyword names are interned: producers' argument parsers match them by identity first.
    PyObject *max_version_kwnames = Py_BuildValue("(N)", PyUnicode_InternFromString("max_version"));
    PyObject *max_version = Py_BuildValue("(II)", dlpack::major_version, dlpack::minor_version);
    PyObject *array_namespace = PyUnicode_InternFromString("__array_namespace__");
    PyObject *order_kwnames = Py_BuildValue("(N)", PyUnicode_InternFromString("order"));

    bool ok() const noexcept {
        return dlpack_method && max_version_kwnames && max_version && array_namespace && order_kwnames;
    }
    static const py_constants &get() noexcept {
        static const py_constants c;  // intentionally never freed: lives as long as the module
        return c;
    }
};

inline producer classify_module(const char *module) noexcept {
    std::size_t n = std::strcspn(module, ".");
    auto is = [&](const char *pkg) { return std::strlen(pkg) == n && std::strncmp(module, pkg, n) == 0; };
    if (is("numpy")) return producer::numpy;
    if (is("torch")) return producer::torch;
    if (is("jax") || is("jaxlib")) return producer::jax;
    if (is("tensorflow")) return producer::tensorflow;
    if (is("cupy") || is("cupy_backends")) return producer::cupy;
    if (is("mlx")) return producer::mlx;
    return producer::other;
}

inline bool has_buffer_protocol(PyTypeObject *tp) noexcept {
    return tp->tp_as_buffer && tp->tp_as_buffer->bf_getbuffer;
}

/// Per-type producer lookup with a small cache (most recent type first). Each cached type is held by a
/// strong reference, so a cached type can never be freed and its address reused by another type while
/// the entry exists. Returns false, caching nothing, for a type with neither `__dlpack__` nor the
/// buffer protocol (not a tensor type at all).
inline bool producer_of(PyTypeObject *tp, producer_info &info) noexcept {
    struct entry { PyTypeObject *type; producer_info info; };
    constexpr unsigned capacity = 32;
    static entry cache[capacity] = {};
    static unsigned next = 0, last = 0;
    if (cache[last].type == tp) { info = cache[last].info; return true; }
    for (unsigned i = 0; i < capacity; ++i)
        if (cache[i].type == tp) { last = i; info = cache[i].info; return true; }

    if (!_PyType_Lookup(tp, py_constants::get().dlpack_method) && !has_buffer_protocol(tp)) return false;
    info = producer_info();
    // A subclass is its base library's tensor (a user's `class T(torch.Tensor)`, torchvision's
    // tv_tensors, `np.matrix`): classify by the first type in the MRO that a library defines. PyTorch's
    // queries come from the last PyTorch type (`torch._C.TensorBase`), which no subclass overrides.
    PyTypeObject *torch_base = nullptr;
    PyObject *mro = tp->tp_mro;
    const Py_ssize_t n = mro && PyTuple_Check(mro) ? PyTuple_GET_SIZE(mro) : 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *base = PyTuple_GET_ITEM(mro, i);
        PyObject *mod = PyObject_GetAttrString(base, "__module__");
        const char *s = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : nullptr;
        producer kind = s ? classify_module(s) : producer::other;
        Py_XDECREF(mod);
        PyErr_Clear();
        if (info.kind == producer::other) info.kind = kind;
        if (kind == producer::torch && info.kind == producer::torch) torch_base = (PyTypeObject *) base;
    }
    info.immutable = info.kind == producer::jax || info.kind == producer::tensorflow;
    if (info.kind == producer::torch && torch_base) info.torch = torch_checks::of(torch_base, tp);
    // The fast path is only taken where every check it needs is available.
    if (info.kind != producer::torch || info.torch.ok()) info.api = find_exchange_api(tp);

    last = next++ % capacity;
    entry &slot = cache[last];
    PyObject *evicted = (PyObject *) slot.type;
    Py_INCREF((PyObject *) tp);
    slot = entry{tp, info};
    Py_XDECREF(evicted);  // last: freeing a type may run arbitrary code
    return true;
}

/// `check()`, recording what it refuses (refusal.h) for the explanation of a failed call.
inline mismatch check_noting(const requirements &r, const dlpack::Tensor &t, bool source_read_only) noexcept {
    mismatch m = check(r, t, source_read_only);
    if (m != mismatch::none) note_refused_tensor(t, m, source_read_only);
    return m;
}

// Owner capsules: the accepted managed tensor, freed through its deleter when the capsule dies.
inline constexpr const char *owner_name = "dltensor.owner";
inline constexpr const char *owner_name_versioned = "dltensor.owner_versioned";

inline void release_owner(PyObject *capsule) noexcept {
    auto *mt = static_cast<dlpack::ManagedTensor *>(PyCapsule_GetPointer(capsule, owner_name));
    if (mt && mt->deleter) mt->deleter(mt);
    else if (!mt) PyErr_Clear();
}

inline void release_owner_versioned(PyObject *capsule) noexcept {
    auto *mt = static_cast<dlpack::ManagedTensorVersioned *>(
        PyCapsule_GetPointer(capsule, owner_name_versioned));
    if (mt && mt->deleter) mt->deleter(mt);
    else if (!mt) PyErr_Clear();
}

/// Reads a DLPack capsule ("dltensor" or "dltensor_versioned") and, when its tensor is valid and
/// satisfies `r`, takes ownership: `out` receives the view and an owner, and the capsule is marked used.
/// Anything else leaves the capsule untouched. `immutable`: the source forbids writes regardless of flags.
/// `adopt`: the capsule is a `__dlpack__` result held only by the caller, which may keep it as the owner.
inline mismatch import_capsule(PyObject *capsule, const requirements &r, bool immutable, bool adopt,
                               imported &out, dlpack::DataType &seen) noexcept {
    const char *name = PyCapsule_GetName(capsule);
    if (!name) { PyErr_Clear(); return mismatch::invalid; }
    bool versioned;
    if (std::strcmp(name, dlpack::capsule_name_versioned) == 0) versioned = true;
    else if (std::strcmp(name, dlpack::capsule_name) == 0) versioned = false;
    else return mismatch::invalid;  // foreign, or already consumed ("used_dltensor...")

    void *ptr = PyCapsule_GetPointer(capsule, name);
    if (!ptr) { PyErr_Clear(); return mismatch::invalid; }

    const dlpack::Tensor *t;
    bool read_only = immutable;
    if (versioned) {
        auto *mt = static_cast<dlpack::ManagedTensorVersioned *>(ptr);
        if (mt->version.major != dlpack::major_version) return mismatch::invalid;
        read_only |= (mt->flags & dlpack::flag_read_only) != 0;
        t = &mt->dl_tensor;
    } else {
        t = &static_cast<dlpack::ManagedTensor *>(ptr)->dl_tensor;
    }
    if (validate(*t)) return mismatch::invalid;
    seen = t->dtype;
    mismatch m = check_noting(r, *t, read_only);
    if (m != mismatch::none) return m;

    if (adopt && Py_REFCNT(capsule) == 1 && PyCapsule_GetDestructor(capsule)) {
        // A fresh capsule from __dlpack__ that nobody else can reach: it is its own owner. Its producer's
        // destructor calls the deleter exactly once when the last tensor using it lets go.
        Py_INCREF(capsule);
        out.tensor = *t;
        out.owner = capsule;
        return mismatch::none;
    }
    PyObject *owner = PyCapsule_New(ptr, versioned ? owner_name_versioned : owner_name,
                                    versioned ? release_owner_versioned : release_owner);
    if (!owner) { PyErr_Clear(); return mismatch::invalid; }
    // Consume: from here on the owner alone calls the deleter.
    if (PyCapsule_SetDestructor(capsule, nullptr) != 0 ||
        PyCapsule_SetName(capsule, versioned ? dlpack::used_capsule_name_versioned
                                             : dlpack::used_capsule_name) != 0) {
        // Cannot happen for a valid capsule; refuse rather than risk a double free.
        PyErr_Clear();
        PyCapsule_SetDestructor(owner, nullptr);
        Py_DECREF(owner);
        return mismatch::invalid;
    }
    out.tensor = *t;
    out.owner = owner;
    return mismatch::none;
}

/// Calls `src.__dlpack__(max_version=(1, minor))`, falling back to `src.__dlpack__()` for producers that
/// predate `max_version` (they raise TypeError). `method` is `__dlpack__` as found on the type: a plain
/// function or method descriptor is called directly with `src` as its first argument, skipping the
/// attribute lookup. Returns a new reference or NULL with no error set.
inline PyObject *call_dlpack(PyObject *src, PyObject *method) noexcept {
    const py_constants &c = py_constants::get();
    if (!c.ok()) { PyErr_Clear(); return nullptr; }
    PyObject *args[] = {src, c.max_version};
    const bool direct = PyFunction_Check(method) || Py_IS_TYPE(method, &PyMethodDescr_Type);
    Py_INCREF(method);  // the call may change the type's dict
    auto call = [&](PyObject *kwnames) {
        return direct ? PyObject_Vectorcall(method, args, 1, kwnames)
                      : PyObject_VectorcallMethod(c.dlpack_method, args, 1, kwnames);
    };
    PyObject *res = call(c.max_version_kwnames);
    if (!res && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        res = call(nullptr);
    }
    Py_DECREF(method);
    if (!res) PyErr_Clear();
    return res;
}

/// A buffer-protocol export turned into a DLPack view: the Py_buffer plus strides in elements.
struct buffer_owner {
    Py_buffer view;
    int64_t shape[dlpack::max_ndim];
    int64_t strides[dlpack::max_ndim];
};

inline constexpr const char *buffer_owner_name = "dltensor.buffer_owner";

inline void release_buffer_owner(PyObject *capsule) noexcept {
    auto *b = static_cast<buffer_owner *>(PyCapsule_GetPointer(capsule, buffer_owner_name));
    if (!b) { PyErr_Clear(); return; }
    PyBuffer_Release(&b->view);
    PyMem_Free(b);
}

/// Maps a struct-module format string ("f", "<i", "Zd", ...) of the given item size to a DLPack dtype.
/// Returns `bits == 0` for a format with no DLPack dtype. `native` tells whether the byte order is the
/// machine's; DLPack has no byte order, so a swapped buffer is only usable through a conversion.
inline dlpack::DataType dtype_from_format(const char *fmt, Py_ssize_t itemsize, bool &native) noexcept {
    dlpack::DataType none{0, 0, 0};
    native = true;
    if (!fmt) fmt = "B";  // PEP 3118: a NULL format means unsigned bytes
    if (*fmt == '@' || *fmt == '=') ++fmt;
    else if (*fmt == '<' || *fmt == '>' || *fmt == '!') {
        const uint16_t probe = 1;
        bool little = *reinterpret_cast<const uint8_t *>(&probe) == 1;
        native = (*fmt == '<') == little || itemsize == 1;
        ++fmt;
    }
    uint8_t code;
    bool complex = false;
    if (*fmt == 'Z') { complex = true; ++fmt; }
    switch (*fmt) {
        case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': code = dlpack::int_; break;
        case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': code = dlpack::uint_; break;
        case 'e': case 'f': case 'd': code = complex ? (uint8_t) dlpack::complex_ : (uint8_t) dlpack::float_; break;
        case '?': code = dlpack::bool_; break;
        default: return none;
    }
    if (fmt[1] != '\0' || (complex && code != dlpack::complex_)) return none;
    if (itemsize <= 0 || itemsize > 16) return none;
    dlpack::DataType t{code, (uint8_t) (itemsize * 8), 1};
    return is_supported_dtype(t) ? t : none;
}

/// Imports a buffer-protocol object (CPU memory) when it satisfies `r`.
inline mismatch import_buffer(PyObject *src, const requirements &r, imported &out,
                              dlpack::DataType &seen) noexcept {
    auto *b = static_cast<buffer_owner *>(PyMem_Malloc(sizeof(buffer_owner)));
    if (!b) { PyErr_Clear(); return mismatch::invalid; }
    if (PyObject_GetBuffer(src, &b->view, PyBUF_RECORDS_RO) != 0) {
        PyErr_Clear();
        PyMem_Free(b);
        return mismatch::invalid;
    }
    Py_buffer &v = b->view;
    auto fail = [&](mismatch m) { PyBuffer_Release(&v); PyMem_Free(b); return m; };

    bool native;
    dlpack::DataType dt = dtype_from_format(v.format, v.itemsize, native);
    if (dt.bits == 0 || v.ndim < 0 || v.ndim > dlpack::max_ndim) return fail(mismatch::invalid);
    if (!native) {  // readable only through a byte-swapping conversion
        seen = dt;
        last_refusal().tensor_known = false;
        return fail(mismatch::dtype);
    }
    int64_t step = 1;
    for (int i = v.ndim - 1; i >= 0; --i) {
        b->shape[i] = v.shape ? (int64_t) v.shape[i] : (int64_t) (v.len / v.itemsize);
        if (v.strides) {
            if (v.strides[i] % v.itemsize != 0) return fail(mismatch::invalid);  // unaligned view
            b->strides[i] = (int64_t) (v.strides[i] / v.itemsize);
        } else {
            b->strides[i] = step;
        }
        step *= b->shape[i];
    }
    dlpack::Tensor t{};
    t.data = v.buf;
    t.device = {dlpack::cpu, 0};
    t.ndim = v.ndim;
    t.dtype = dt;
    t.shape = b->shape;
    t.strides = b->strides;
    if (validate(t)) return fail(mismatch::invalid);
    seen = dt;
    mismatch m = check_noting(r, t, v.readonly != 0);
    if (m != mismatch::none) return fail(m);

    PyObject *owner = PyCapsule_New(b, buffer_owner_name, release_buffer_owner);
    if (!owner) { PyErr_Clear(); return fail(mismatch::invalid); }
    out.tensor = t;
    out.owner = owner;
    return mismatch::none;
}

/// Returns `getattr(obj, name)(*args)` with optional keyword names, or NULL with no error set.
inline PyObject *call_method(PyObject *obj, const char *name, PyObject *const *args, size_t nargs,
                             PyObject *kwnames = nullptr) noexcept {
    PyObject *fn = PyObject_GetAttrString(obj, name);
    if (!fn) { PyErr_Clear(); return nullptr; }
    PyObject *res = PyObject_Vectorcall(fn, args, nargs, kwnames);
    Py_DECREF(fn);
    if (!res) PyErr_Clear();
    return res;
}

/// Imports a module by name (normally a lookup in sys.modules). NULL with no error set on failure.
inline PyObject *import_module(const char *name) noexcept {
    PyObject *m = PyImport_ImportModule(name);
    if (!m) PyErr_Clear();
    return m;
}

/// `numpy.asarray(src)`: a NumPy array of anything NumPy reads (lists, tuples, scalars, buffers, objects
/// with `__array__`). A new reference, or NULL (no error set) when NumPy is missing or cannot read it.
inline PyObject *numpy_asarray(PyObject *src) noexcept {
    PyObject *np = import_module("numpy");
    PyObject *args[] = {src};
    PyObject *arr = np ? call_method(np, "asarray", args, 1) : nullptr;
    Py_XDECREF(np);
    return arr;
}

/// `numpy.asarray(src).astype(dtype, order=order)`; NULL (no error set) on failure.
inline PyObject *convert_through_numpy(PyObject *src, PyObject *dtype, PyObject *order) noexcept {
    PyObject *arr = numpy_asarray(src);
    if (!arr) return nullptr;
    PyObject *args[] = {dtype, order};
    PyObject *res = call_method(arr, "astype", args, 1, py_constants::get().order_kwnames);
    Py_DECREF(arr);
    return res;
}

/// Is JAX's 64-bit mode on (`jax.config.jax_enable_x64`)? Without it JAX has no 64-bit dtypes.
inline bool jax_x64_enabled() noexcept {
    PyObject *jax = import_module("jax");
    PyObject *config = jax ? PyObject_GetAttrString(jax, "config") : nullptr;
    PyObject *flag = config ? PyObject_GetAttrString(config, "jax_enable_x64") : nullptr;
    const bool on = flag && PyObject_IsTrue(flag) == 1;
    Py_XDECREF(flag);
    Py_XDECREF(config);
    Py_XDECREF(jax);
    PyErr_Clear();
    return on;
}

/// `numpy.asarray(src, dtype=<r's dtype>)` for an object that is no tensor (a list, a number): NumPy checks
/// the values against the dtype (an out-of-range Python int raises, as array_t's `forcecast` does). NULL
/// on failure, with NumPy's reason kept in `last_refusal().detail`.
inline PyObject *numpy_array_of(PyObject *src, const requirements &r) noexcept {
    char name[16];
    PyObject *np = import_module("numpy");
    PyObject *fn = np ? PyObject_GetAttrString(np, "asarray") : nullptr;
    Py_XDECREF(np);
    PyObject *dtype = r.dtype.bits && dtype_name(r.dtype, name) ? PyUnicode_FromString(name) : nullptr;
    PyObject *args[] = {src, dtype};
    PyObject *arr = fn ? PyObject_Vectorcall(fn, args, dtype ? 2 : 1, nullptr) : nullptr;
    Py_XDECREF(fn);
    Py_XDECREF(dtype);
    last_refusal().detail[0] = '\0';
    if (!arr && PyErr_Occurred()) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *text = value ? PyObject_Str(value) : nullptr;
        const char *utf8 = text ? PyUnicode_AsUTF8(text) : nullptr;
        if (utf8) {
            std::strncpy(last_refusal().detail, utf8, sizeof last_refusal().detail - 1);
            last_refusal().detail[sizeof last_refusal().detail - 1] = '\0';
        }
        Py_XDECREF(text);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    PyErr_Clear();
    return arr;
}

/// Can `numpy.asarray` make a tensor of `src`, an object that is no tensor itself: a list, tuple, Python
/// number, or an object with `__array__` / `__array_interface__` / `__array_struct__`?
inline bool is_array_like(PyObject *src) noexcept {
    if (PyList_Check(src) || PyTuple_Check(src) || PyLong_Check(src) || PyFloat_Check(src) ||
        PyComplex_Check(src))
        return true;
    PyObject *tp = (PyObject *) Py_TYPE(src);
    const bool has = PyObject_HasAttrString(tp, "__array__") || PyObject_HasAttrString(tp, "__array_interface__") ||
                     PyObject_HasAttrString(tp, "__array_struct__");
    PyErr_Clear();
    return has;
}

/// Asks the producer for a copy of `src` with the dtype and order that `r` needs, on the same device:
/// NumPy/CuPy `astype(dtype, order=...)`, PyTorch `.to(dtype)` + `.contiguous()`, JAX `astype`,
/// TensorFlow `tf.cast`, other array-API objects `xp.astype`; plain buffers go through NumPy.
/// Returns a new reference or NULL (no error set) when the producer cannot convert.
inline PyObject *convert_with_producer(PyObject *src, producer kind, bool is_buffer, const requirements &r,
                                       dlpack::DataType seen, mismatch why, bool on_cpu = false) noexcept {
    const py_constants &c = py_constants::get();
    char name[16];
    // The target dtype: the parameter's, else the source's. Unknown only for a PyTorch lazy view that
    // __dlpack__ refused to export; resolving it needs no dtype.
    const bool have_dtype = dtype_name(r.dtype.bits ? r.dtype : seen, name);
    if (!have_dtype && kind != producer::torch) return nullptr;
    const char order = r.order == 'F' ? 'F' : r.order ? 'C' : 'K';
    const char order_str[2] = {order, '\0'};

    PyObject *dtype = PyUnicode_FromString(name), *order_obj = PyUnicode_FromString(order_str);
    PyObject *res = nullptr;
    if (!dtype || !order_obj) goto done;

    switch (kind) {
        case producer::numpy:
        case producer::cupy: {
            PyObject *args[] = {dtype, order_obj};
            res = call_method(src, "astype", args, 1, c.order_kwnames);
            break;
        }
        case producer::torch: {
            // Materialize conjugate/negative views first (no-ops otherwise), then dtype, then order.
            PyObject *t0 = call_method(src, "resolve_conj", nullptr, 0);
            PyObject *cast = t0 ? call_method(t0, "resolve_neg", nullptr, 0) : nullptr;
            Py_XDECREF(t0);
            if (cast && have_dtype) {
                PyObject *torch = import_module("torch");
                PyObject *tdtype = torch ? PyObject_GetAttr(torch, dtype) : nullptr;
                Py_XDECREF(torch);
                PyErr_Clear();
                PyObject *args[] = {tdtype};
                PyObject *to = tdtype ? call_method(cast, "to", args, 1) : nullptr;
                Py_XDECREF(tdtype);
                Py_DECREF(cast);
                cast = to;
            }
            if (cast && why == mismatch::misaligned) {  // same dtype and order: only a fresh copy is aligned
                PyObject *copy = call_method(cast, "clone", nullptr, 0);
                Py_DECREF(cast);
                cast = copy;
            }
            if (!cast || order == 'K') { res = cast; break; }
            if (order == 'C') {
                res = call_method(cast, "contiguous", nullptr, 0);
            } else {  // F order: reverse the axes, make that C-contiguous, reverse back
                PyObject *perm = nullptr, *rev = nullptr;
                PyObject *dim = call_method(cast, "dim", nullptr, 0);
                long nd = dim ? PyLong_AsLong(dim) : -1;
                Py_XDECREF(dim);
                if (nd >= 0 && (perm = PyTuple_New(nd))) {
                    for (long i = 0; i < nd; ++i) PyTuple_SET_ITEM(perm, i, PyLong_FromLong(nd - 1 - i));
                    PyObject *pargs[] = {perm};
                    PyObject *t1 = call_method(cast, "permute", pargs, 1);
                    PyObject *t2 = t1 ? call_method(t1, "contiguous", nullptr, 0) : nullptr;
                    rev = t2 ? call_method(t2, "permute", pargs, 1) : nullptr;
                    Py_XDECREF(t1);
                    Py_XDECREF(t2);
                    Py_DECREF(perm);
                }
                PyErr_Clear();
                res = rev;
            }
            Py_DECREF(cast);
            break;
        }
        case producer::jax: {
            // On the CPU NumPy converts a JAX array (viewed without a copy) far faster than JAX's own
            // dispatch; and without 64-bit mode JAX truncates a 64-bit astype back to 32 bits.
            const dlpack::DataType target = r.dtype.bits ? r.dtype : seen;
            if (on_cpu || (target.bits >= 64 && !jax_x64_enabled())) {
                res = convert_through_numpy(src, dtype, order_obj);
                break;
            }
            PyObject *args[] = {dtype};
            res = call_method(src, "astype", args, 1);
            break;
        }
        case producer::tensorflow: {
            PyObject *tf = import_module("tensorflow");
            PyObject *args[] = {src, dtype};
            if (tf) res = call_method(tf, "cast", args, 2);
            Py_XDECREF(tf);
            break;
        }
        default: {
            if (is_buffer) {  // bytes, array.array, memoryview: NumPy is the conversion of record
                res = convert_through_numpy(src, dtype, order_obj);
                break;
            }
            // Any array-API object: xp = x.__array_namespace__(); xp.astype(x, xp.<dtype>)
            PyObject *self[] = {src};
            PyObject *xp = PyObject_VectorcallMethod(c.array_namespace, self, 1, nullptr);
            if (!xp) { PyErr_Clear(); break; }
            PyObject *xdtype = PyObject_GetAttr(xp, dtype);
            if (xdtype) {
                PyObject *args[] = {src, xdtype};
                res = call_method(xp, "astype", args, 2);
                Py_DECREF(xdtype);
            }
            PyErr_Clear();
            Py_DECREF(xp);
        }
    }
done:
    Py_XDECREF(dtype);
    Py_XDECREF(order_obj);
    PyErr_Clear();
    return res;
}

/// The fast path: a non-owning view through the type's exchange API; the owner is the tensor object
/// itself. This pins the tensor as firmly as an owning export would (both hold the tensor, not a
/// separate copy of its storage), without allocating.
inline mismatch import_exchange(PyObject *src, const producer_info &info, const requirements &r,
                                imported &out, dlpack::DataType &seen) noexcept {
    const dlpack::ExchangeAPI *api = info.api;
    dlpack::Tensor t{};
    dlpack::ManagedTensorVersioned *owned = nullptr;
    if (api->dltensor_from_py_object_no_sync) {
        if (api->dltensor_from_py_object_no_sync(src, &t) != 0) { PyErr_Clear(); return mismatch::invalid; }
    } else {  // the view entry is optional: take an owning export and hand its ownership to a capsule
        if (api->managed_tensor_from_py_object_no_sync(src, &owned) != 0 || !owned) {
            PyErr_Clear();
            return mismatch::invalid;
        }
        t = owned->dl_tensor;
    }
    auto reject = [&](mismatch m) {
        if (owned && owned->deleter) owned->deleter(owned);
        return m;
    };
    if (validate(t)) return reject(mismatch::invalid);
    seen = t.dtype;
    if (info.kind == producer::torch) {
        mismatch m = torch_precheck(src, info.torch, r, t.dtype.code == dlpack::complex_, nullptr, &t);
        if (m != mismatch::none) return reject(m);
    }
    bool read_only = info.immutable || (owned && (owned->flags & dlpack::flag_read_only));
    mismatch m = check_noting(r, t, read_only);
    if (m != mismatch::none) return reject(m);

    void *stream = nullptr;
    if (t.device.device_type != dlpack::cpu &&
        api->current_work_stream(t.device.device_type, t.device.device_id, &stream) != 0) {
        PyErr_Clear();
        return reject(mismatch::invalid);
    }
    if (owned) {
        out.owner = PyCapsule_New(owned, owner_name_versioned, release_owner_versioned);
        if (!out.owner) { PyErr_Clear(); return reject(mismatch::invalid); }
    } else {
        Py_INCREF(src);
        out.owner = src;
    }
    out.tensor = t;
    out.stream = stream;
    return mismatch::none;
}

/// The NumPy shortcut (frameworks.h): the array object itself is the owner, so the view stays valid as
/// long as the tensor does (NumPy refuses to resize an array that others reference).
inline mismatch import_numpy(PyObject *src, const requirements &r, imported &out, dlpack::DataType &seen,
                             int64_t *shape, int64_t *strides, bool exact = true) noexcept {
    dlpack::Tensor t{};
    bool read_only;
    if (!numpy_arrays::get().view(src, t, shape, strides, read_only, exact)) return mismatch::invalid;
    if (validate(t)) return mismatch::invalid;
    seen = t.dtype;
    mismatch m = check_noting(r, t, read_only);
    if (m != mismatch::none) return m;
    Py_INCREF(src);
    out.tensor = t;
    out.owner = src;
    return mismatch::none;
}

/// The portable path: `__dlpack__`, else the buffer protocol.
inline mismatch import_dlpack_or_buffer(PyObject *src, PyObject *dlpack_attr, bool buffer,
                                        const producer_info &info, const requirements &r, imported &out,
                                        dlpack::DataType &seen) noexcept {
    mismatch m = mismatch::invalid;
    PyObject *exporter = src;  // PyTorch refuses __dlpack__ for tensors that require grad: export a detached view
    if (dlpack_attr && info.kind == producer::torch && info.torch.ok()) {
        bool grad = false;
        m = torch_precheck(src, info.torch, r, true, &grad);
        if (m != mismatch::none) return m;
        if (grad) {
            exporter = call_method(src, "detach", nullptr, 0);
            if (!exporter) return mismatch::invalid;
            dlpack_attr = _PyType_Lookup(Py_TYPE(exporter), py_constants::get().dlpack_method);
        }
        m = mismatch::invalid;
    }
    if (dlpack_attr && info.kind == producer::tensorflow && !tensorflow_exportable(src)) dlpack_attr = nullptr;
    if (dlpack_attr) {
        PyObject *capsule = nullptr;
        if (info.kind == producer::jax && exchange_api_enabled()) capsule = jax_capsule_from_array(src);
        if (!capsule) capsule = call_dlpack(exporter, dlpack_attr);
        if (capsule) {
            if (PyCapsule_CheckExact(capsule))
                m = import_capsule(capsule, r, info.immutable, true, out, seen);
            Py_DECREF(capsule);  // accepted: the owner holds it or took its tensor; rejected: the producer frees it
        }
    }
    if (exporter != src) Py_DECREF(exporter);
    if (m == mismatch::invalid && buffer)  // no DLPack export (e.g. a byte-swapped NumPy array)
        m = import_buffer(src, r, out, seen);
    return m;
}

} // namespace detail

/// Allocates an uninitialized tensor for `dltensor<...>::empty()` on every backend, by the framework that
/// will own it: PyTorch's allocator (the exchange API's `managed_tensor_allocator`; on CUDA its caching
/// allocator) for `py::pytorch` and every non-CPU device; `numpy.empty` for CPU tensors of every other
/// framework or none (JAX and TensorFlow adopt or copy it on return; a `py::numpy` tensor returns as
/// that very array). `order`: 'F' for column-major, else row-major (NumPy only; PyTorch allocates
/// row-major). On success fills `out` (view, owner as a new reference, the device's current stream) and
/// returns 0. Returns 1 (nothing set) when `ndim` differs from `expected_ndim` (-1: any) or exceeds
/// max_ndim, and -1 with a Python error set when allocation fails. `read_only` (a `const` or `py::ro`
/// tensor): a `py::numpy` array, returned as itself, is made read-only for Python (C++ still fills it).
inline int allocate_framework_tensor(int framework, dlpack::DataType dtype, const size_t *shape, size_t ndim,
                                     int32_t expected_ndim, dlpack::Device device, char order,
                                     imported &out, bool read_only = false) noexcept {
    if ((expected_ndim >= 0 && ndim != (size_t) expected_ndim) || ndim > (size_t) dlpack::max_ndim) return 1;
    for (size_t i = 0; i < ndim; ++i) {
        if (shape[i] > (size_t) INT64_MAX) return 1;
        out.shape[i] = (int64_t) shape[i];
    }
    if (framework != fw_pytorch && device.device_type == dlpack::cpu) {
        char name[16];
        PyObject *np = dtype_name(dtype, name) ? PyImport_ImportModule("numpy") : nullptr;
        if (dtype.code == dlpack::bfloat_ && np) {
            PyObject *ml = PyImport_ImportModule("ml_dtypes");  // registers the name "bfloat16" with NumPy
            if (!ml) {
                PyErr_Clear();
                PyErr_SetString(PyExc_TypeError, "dltensor::empty(): NumPy has no bfloat16 dtype without the "
                                                 "ml_dtypes package (pip install ml_dtypes)");
                Py_DECREF(np);
                return -1;
            }
            Py_DECREF(ml);
        }
        PyObject *dims = np ? PyTuple_New((Py_ssize_t) ndim) : nullptr;
        for (size_t i = 0; dims && i < ndim; ++i)
            PyTuple_SET_ITEM(dims, (Py_ssize_t) i, PyLong_FromLongLong(out.shape[i]));
        PyObject *array = dims ? PyObject_CallMethod(np, "empty", "Oss", dims, name, order == 'F' ? "F" : "C")
                               : nullptr;
        Py_XDECREF(dims);
        Py_XDECREF(np);
        if (!array) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "dltensor::empty(): allocation failed");
            return -1;
        }
        requirements any;
        dlpack::DataType seen{0, 0, 0};
        if (detail::import_numpy(array, any, out, seen, out.shape, out.strides, true) != mismatch::none &&
            detail::import_numpy(array, any, out, seen, out.shape, out.strides, false) != mismatch::none) {
            Py_DECREF(array);
            PyErr_SetString(PyExc_RuntimeError, "dltensor::empty(): NumPy allocated an unreadable array");
            return -1;
        }
        if (framework == fw_numpy && read_only) {  // array.setflags(write=False)
            PyObject *r = PyObject_CallMethod(array, "setflags", "O", Py_False);
            if (!r) {
                Py_DECREF(array);
                Py_CLEAR(out.owner);
                return -1;
            }
            Py_DECREF(r);
        }
        Py_DECREF(array);  // out.owner holds it
        if (framework == fw_numpy) {
            out.source = out.owner;
            out.source_framework = fw_numpy;
        }
        return 0;
    }
    const dlpack::ExchangeAPI *api = torch_exchange_api();
    dlpack::ManagedTensorVersioned *mt = allocate(api, dtype, (int32_t) ndim, out.shape, device);
    if (!mt) return -1;
    out.owner = PyCapsule_New(mt, detail::owner_name_versioned, detail::release_owner_versioned);
    if (!out.owner) {
        if (mt->deleter) mt->deleter(mt);
        return -1;
    }
    out.tensor = mt->dl_tensor;
    out.stream = nullptr;
    if (out.tensor.device.device_type != dlpack::cpu &&
        api->current_work_stream(out.tensor.device.device_type, out.tensor.device.device_id, &out.stream) != 0) {
        Py_CLEAR(out.owner);
        return -1;
    }
    return 0;
}

namespace detail {

/// Completes the calling thread's refusal record (refusal.h) for `src`; returns false for the caller.
inline bool refuse(PyObject *src, const requirements &r, bool convert, mismatch why, bool not_a_tensor,
                   bool converted) noexcept {
    refusal &rec = last_refusal();
    if (why != mismatch::shape && why != mismatch::dtype && why != mismatch::device && why != mismatch::order &&
        why != mismatch::read_only && why != mismatch::misaligned)
        rec.tensor_known = false;  // only the checks of requirements.h record a tensor
    rec.why = why;
    rec.not_a_tensor = not_a_tensor;
    rec.converted = converted;
    rec.convert = convert;
    rec.required = r;
    std::strncpy(rec.type_name, Py_TYPE(src)->tp_name, sizeof rec.type_name - 1);
    rec.type_name[sizeof rec.type_name - 1] = '\0';
    return false;
}

} // namespace detail

/// Imports `src` for a parameter with requirements `r`. On success fills `out` (the caller owns
/// `out.owner`) and returns true; otherwise returns false with no Python error set and nothing consumed,
/// and the calling thread's `last_refusal()` says why. `convert`: the binding allows implicit conversion
/// for this argument (not `.noconvert()`); a copy is still only made for read-only parameters. Objects
/// that are no tensor (lists, tuples, Python numbers, `__array__` objects) are read through
/// `numpy.asarray` under the same condition.
inline bool import_tensor(PyObject *src, const requirements &r, bool convert, imported &out) noexcept {
    dlpack::DataType seen{0, 0, 0};
    if (PyCapsule_CheckExact(src)) {  // a raw capsule: no producer to convert with
        mismatch m = detail::import_capsule(src, r, false, false, out, seen);
        return m == mismatch::none || detail::refuse(src, r, convert, m, false, false);
    }

    PyTypeObject *tp = Py_TYPE(src);
    producer_info info;
    if (!detail::producer_of(tp, info)) {  // neither __dlpack__ nor a buffer
        if (!convert || !r.read_only || !detail::is_array_like(src)) {
            last_refusal().detail[0] = '\0';
            return detail::refuse(src, r, convert, mismatch::invalid, true, false);
        }
        PyObject *array = detail::numpy_array_of(src, r);
        if (!array) return detail::refuse(src, r, convert, mismatch::invalid, true, false);
        bool ok = import_tensor(array, r, true, out);  // the owner keeps the array alive
        Py_DECREF(array);
        return ok || detail::refuse(src, r, convert, last_refusal().why, false, true);
    }

    mismatch m = mismatch::invalid;
    const bool fast = exchange_api_enabled();
    PyObject *dlpack_attr = nullptr;
    bool buffer = false;
    if (info.api && fast) {
        m = detail::import_exchange(src, info, r, out, seen);
    } else {
        if (info.kind == producer::numpy && fast)
            m = detail::import_numpy(src, r, out, seen, out.shape, out.strides);
        if (m == mismatch::invalid) {  // not a plain, exact ndarray: the public route decides
            dlpack_attr = _PyType_Lookup(tp, detail::py_constants::get().dlpack_method);
            buffer = detail::has_buffer_protocol(tp);
            m = detail::import_dlpack_or_buffer(src, dlpack_attr, buffer, info, r, out, seen);
        }
        if (m == mismatch::invalid && info.kind == producer::numpy)  // bfloat16 (ml_dtypes): no public route
            m = detail::import_numpy(src, r, out, seen, out.shape, out.strides, false);
    }
    if (m == mismatch::none) {
        // C++ may write: tell autograd, as an in-place op would (see torch.h).
        if (info.kind == producer::torch && !r.read_only) torch_process::get().mark_written(src);
        // The owner must keep the source alive: the object itself (fast paths), a buffer export (holds it),
        // or else (a producer's capsule) a pair (capsule, source).
        if (out.owner != src && !PyCapsule_IsValid(out.owner, detail::buffer_owner_name)) {
            PyObject *pair = PyTuple_Pack(2, out.owner, src);
            if (!pair) {
                PyErr_Clear();
                Py_CLEAR(out.owner);
                return detail::refuse(src, r, convert, mismatch::invalid, false, false);
            }
            // Invisible to the garbage collector, like the tensor that holds it: a class that reports its
            // tensor members (nb::find) accounts for the source's reference itself.
            PyObject_GC_UnTrack(pair);
            Py_SETREF(out.owner, pair);
        }
        out.source = src;
        out.source_framework = framework_of(info.kind);
        return true;
    }

    if (!convert || !conversion_may_fix(r, seen, m)) return detail::refuse(src, r, convert, m, false, false);
    if (!dlpack_attr) {  // what the conversion needs to know of the type
        dlpack_attr = _PyType_Lookup(tp, detail::py_constants::get().dlpack_method);
        buffer = detail::has_buffer_protocol(tp);
    }
    // Where the refused tensor lives (its facts were recorded by the check that refused it).
    const bool on_cpu = last_refusal().tensor_known && last_refusal().device_type == dlpack::cpu;
    PyObject *converted = detail::convert_with_producer(src, info.kind, buffer && !dlpack_attr, r, seen, m, on_cpu);
    if (!converted) return detail::refuse(src, r, convert, m, false, false);
    bool ok = import_tensor(converted, r, false, out);  // the owner keeps the copy's memory alive
    Py_DECREF(converted);
    return ok || detail::refuse(src, r, convert, last_refusal().why, false, true);
}

} // namespace dlt
