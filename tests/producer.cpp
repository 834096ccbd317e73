// tests/producer.cpp: a DLPack producer that can set every field, including malformed ones, and counts
// its deleter calls (common.deleter_calls). Python builds specs in tests/producer.py; the capsules feed
// every import test. Registered on the submodule `common` (tests/test_common.cpp).
#include "backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// The producer's bookkeeping for one exported tensor.
struct export_ctx {
    Py_buffer view{};              // storage the tensor points into (view.obj NULL when there is none)
    std::vector<int64_t> shape, strides;
    const char *name = nullptr;    // the capsule name the producer's destructor checks
    bool versioned = true;
};

union managed {
    dlt::dlpack::ManagedTensor unversioned;
    dlt::dlpack::ManagedTensorVersioned versioned;
};

void free_ctx(export_ctx *ctx) {
    tb::counters &c = tb::count();
    ++c.deleter_calls;
    bool has_gil = PyGILState_Check();
    if (!has_gil) ++c.deleter_calls_without_gil;
    PyGILState_STATE st = PyGILState_Ensure();
    if (ctx->view.obj) PyBuffer_Release(&ctx->view);
    PyGILState_Release(st);
    delete ctx;
}

void deleter_unversioned(dlt::dlpack::ManagedTensor *mt) {
    free_ctx(static_cast<export_ctx *>(mt->manager_ctx));
    delete reinterpret_cast<managed *>(mt);
}
void deleter_versioned(dlt::dlpack::ManagedTensorVersioned *mt) {
    free_ctx(static_cast<export_ctx *>(mt->manager_ctx));
    delete reinterpret_cast<managed *>(mt);
}

/// What a producer's capsule destructor does: free the tensor unless a consumer renamed the capsule.
void capsule_destructor(PyObject *cap) {
    const char *name = PyCapsule_GetName(cap);
    if (!name) { PyErr_Clear(); return; }
    bool versioned = std::strcmp(name, dlt::dlpack::capsule_name_versioned) == 0;
    bool fresh = versioned || std::strcmp(name, dlt::dlpack::capsule_name) == 0;
    void *ctx_ptr = PyCapsule_GetContext(cap);
    if (!fresh && !ctx_ptr) return;  // consumed: the consumer owns it now
    void *p = PyCapsule_GetPointer(cap, name);
    if (!p) { PyErr_Clear(); return; }
    // A capsule created under a foreign name keeps its layout flag in the context pointer.
    if (!fresh) versioned = ctx_ptr == (void *) 2;
    if (versioned) {
        auto *mt = static_cast<dlt::dlpack::ManagedTensorVersioned *>(p);
        if (mt->deleter) mt->deleter(mt);
        else { free_ctx(static_cast<export_ctx *>(mt->manager_ctx)); delete reinterpret_cast<managed *>(mt); }
    } else {
        auto *mt = static_cast<dlt::dlpack::ManagedTensor *>(p);
        if (mt->deleter) mt->deleter(mt);
        else { free_ctx(static_cast<export_ctx *>(mt->manager_ctx)); delete reinterpret_cast<managed *>(mt); }
    }
}

PyObject *get(PyObject *spec, const char *key) { return spec ? PyDict_GetItemString(spec, key) : nullptr; }
long long get_int(PyObject *spec, const char *key, long long dflt) {
    PyObject *v = get(spec, key);
    return v && v != Py_None ? PyLong_AsLongLong(v) : dflt;
}
std::vector<int64_t> get_ints(PyObject *seq) {
    std::vector<int64_t> out;
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
    if (!fast) throw tb::python_error();
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i)
        out.push_back(PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i)));
    Py_DECREF(fast);
    return out;
}

/// Names that outlive every capsule carrying them (PyCapsule keeps the pointer).
const char *intern_name(const std::string &s) {
    static std::vector<char *> names;
    for (char *n : names) if (s == n) return n;
    names.push_back(strdup(s.c_str()));
    return names.back();
}

/// Builds a capsule from a spec dict; every key is optional:
/// shape, strides (None: NULL), dtype (code, bits, lanes), byte_offset, device (type, id),
/// versioned, version (major, minor), flags, name, ndim (overrides len(shape); the shape array is
/// padded with 1s), null_data, null_shape, null_deleter. `storage`: a buffer the data points into, or None.
py::object make_capsule(py::object storage, py::object spec_obj) {
    PyObject *spec = spec_obj.ptr() == Py_None ? nullptr : spec_obj.ptr();
    auto *ctx = new export_ctx();
    if (storage.ptr() != Py_None && PyObject_GetBuffer(storage.ptr(), &ctx->view, PyBUF_SIMPLE | PyBUF_WRITABLE) != 0) {
        PyErr_Clear();
        if (PyObject_GetBuffer(storage.ptr(), &ctx->view, PyBUF_SIMPLE) != 0) { delete ctx; throw tb::python_error(); }
    }
    if (PyObject *s = get(spec, "shape")) ctx->shape = get_ints(s);
    long long ndim = get_int(spec, "ndim", (long long) ctx->shape.size());
    PyObject *st = get(spec, "strides");
    bool null_strides = st && st == Py_None;
    if (st && st != Py_None) ctx->strides = get_ints(st);
    size_t room = (size_t) std::max<long long>(std::max<long long>(ndim, (long long) ctx->shape.size()), 1);
    ctx->shape.resize(room, 1);
    if (!null_strides) {
        if (!st) {  // default: C-contiguous strides for the given shape
            ctx->strides.assign(room, 1);
            for (long long i = (long long) ctx->shape.size() - 2; i >= 0; --i)
                ctx->strides[(size_t) i] = ctx->strides[(size_t) i + 1] * ctx->shape[(size_t) i + 1];
        }
        ctx->strides.resize(room, 1);
    }
    ctx->versioned = get(spec, "versioned") ? PyObject_IsTrue(get(spec, "versioned")) == 1 : true;

    dlt::dlpack::Tensor t{};
    t.data = get_int(spec, "null_data", 0) ? nullptr : ctx->view.buf;
    if (PyObject *d = get(spec, "device")) { auto v = get_ints(d); t.device = {(int32_t) v[0], (int32_t) v[1]}; }
    else t.device = {dlt::dlpack::cpu, 0};
    t.ndim = (int32_t) ndim;
    if (PyObject *d = get(spec, "dtype")) { auto v = get_ints(d); t.dtype = {(uint8_t) v[0], (uint8_t) v[1], (uint16_t) v[2]}; }
    else t.dtype = {dlt::dlpack::float_, 32, 1};
    t.shape = get_int(spec, "null_shape", 0) ? nullptr : ctx->shape.data();
    t.strides = null_strides ? nullptr : ctx->strides.data();
    t.byte_offset = (uint64_t) get_int(spec, "byte_offset", 0);
    if (PyErr_Occurred()) { if (ctx->view.obj) PyBuffer_Release(&ctx->view); delete ctx; throw tb::python_error(); }

    bool null_deleter = get_int(spec, "null_deleter", 0) != 0;
    auto *mt = new managed();
    const char *name;
    if (ctx->versioned) {
        mt->versioned.version = {dlt::dlpack::major_version, 1};
        if (PyObject *v = get(spec, "version")) { auto vv = get_ints(v); mt->versioned.version = {(uint32_t) vv[0], (uint32_t) vv[1]}; }
        mt->versioned.manager_ctx = ctx;
        mt->versioned.deleter = null_deleter ? nullptr : deleter_versioned;
        mt->versioned.flags = (uint64_t) get_int(spec, "flags", 0);
        mt->versioned.dl_tensor = t;
        name = dlt::dlpack::capsule_name_versioned;
    } else {
        mt->unversioned.dl_tensor = t;
        mt->unversioned.manager_ctx = ctx;
        mt->unversioned.deleter = null_deleter ? nullptr : deleter_unversioned;
        name = dlt::dlpack::capsule_name;
    }
    bool foreign = false;
    if (PyObject *n = get(spec, "name")) {
        const char *s = PyUnicode_AsUTF8(n);
        if (!s) throw tb::python_error();
        name = intern_name(s);
        foreign = true;
    }
    ctx->name = name;
    PyObject *cap = PyCapsule_New(mt, name, capsule_destructor);
    if (!cap) throw tb::python_error();
    if (foreign) PyCapsule_SetContext(cap, reinterpret_cast<void *>(uintptr_t(ctx->versioned ? 2 : 1)));
    return tb::steal(cap);
}

} // namespace

void init_producer(py::module_ &common) {
    common.def("producer_capsule", &make_capsule, py::arg("storage").none(), py::arg("spec").none(),
               "A DLPack capsule built from a spec dict (see tests/producer.py).");
}
