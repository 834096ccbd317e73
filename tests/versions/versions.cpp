// tests/versions/versions.cpp: import, export and ownership with stdlib-only producers (array.array,
// memoryview, bytearray, bytes, and DLPack capsules made by the C++ producer below), small enough to build
// per interpreter and per binding library version (tests/test_python_versions.py). The same source builds
// on either backend; only the include, the alias and the module macro switch.
#if defined(VERSIONS_PYBIND11)
#  include <dltensor/pybind11.h>
namespace py = pybind11;
#  if defined(VERSIONS_PER_INTERPRETER_GIL)  // a module that declares sub-interpreters with their own GIL
#    define VERSIONS_MODULE_DEF(name, m) PYBIND11_MODULE(name, m, py::multiple_interpreters::per_interpreter_gil())
#  else
#    define VERSIONS_MODULE_DEF(name, m) PYBIND11_MODULE(name, m)
#  endif
#  define VERSIONS_BACKEND "pybind11"
inline py::object steal(PyObject *o) {
    if (!o) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(o);
}
#else
#  include <dltensor/nanobind.h>
namespace py = nanobind;
#  define VERSIONS_MODULE_DEF(name, m) NB_MODULE(name, m)
#  define VERSIONS_BACKEND "nanobind"
inline py::object steal(PyObject *o) {
    if (!o) throw py::python_error();
    return py::steal(o);
}
#endif

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using dlt::dlpack::ManagedTensor;
using dlt::dlpack::ManagedTensorVersioned;

/// Frees counted by the module: C++-produced capsules' deleters, and owners of returned tensors.
long producer_frees = 0;
long owner_frees = 0;

/// The C++ producer: `n` doubles 0, 1, ..., n-1 in a DLPack capsule (versioned or not).
struct produced {
    std::vector<double> data;
    int64_t shape[1];
    union {
        ManagedTensor unversioned;
        ManagedTensorVersioned versioned;
    };
};

template <typename Managed> void fill(Managed &mt, produced *p) {
    std::memset(&mt.dl_tensor, 0, sizeof(mt.dl_tensor));
    mt.dl_tensor.data = p->data.data();
    mt.dl_tensor.device = {dlt::dlpack::cpu, 0};
    mt.dl_tensor.ndim = 1;
    mt.dl_tensor.dtype = {dlt::dlpack::float_, 64, 1};
    mt.dl_tensor.shape = p->shape;
    mt.dl_tensor.strides = nullptr;
    mt.manager_ctx = p;
    mt.deleter = [](Managed *self) {
        ++producer_frees;
        delete static_cast<produced *>(self->manager_ctx);
    };
}

/// A producer's capsule destructor: frees the tensor unless a consumer took it (renamed the capsule).
void capsule_destructor(PyObject *cap) {
    const char *name = PyCapsule_GetName(cap);
    if (!name) { PyErr_Clear(); return; }
    if (std::strcmp(name, dlt::dlpack::capsule_name_versioned) == 0) {
        auto *mt = static_cast<ManagedTensorVersioned *>(PyCapsule_GetPointer(cap, name));
        if (mt) mt->deleter(mt);
    } else if (std::strcmp(name, dlt::dlpack::capsule_name) == 0) {
        auto *mt = static_cast<ManagedTensor *>(PyCapsule_GetPointer(cap, name));
        if (mt) mt->deleter(mt);
    }
}

py::object produce(size_t n, bool versioned) {
    auto *p = new produced();
    p->data.resize(n);
    for (size_t i = 0; i < n; ++i) p->data[i] = (double) i;
    p->shape[0] = (int64_t) n;
    PyObject *cap;
    if (versioned) {
        fill(p->versioned, p);
        p->versioned.version = {dlt::dlpack::major_version, 0};
        p->versioned.flags = 0;
        cap = PyCapsule_New(&p->versioned, dlt::dlpack::capsule_name_versioned, capsule_destructor);
    } else {
        fill(p->unversioned, p);
        cap = PyCapsule_New(&p->unversioned, dlt::dlpack::capsule_name, capsule_destructor);
    }
    if (!cap) delete p;
    return steal(cap);
}

using ro_vector = py::dltensor<const double, py::ndim<1>>;
using rw_vector = py::dltensor<double, py::ndim<1>>;
using ro_bytes = py::dltensor<const uint8_t, py::ndim<1>>;
using rw_bytes = py::dltensor<uint8_t, py::ndim<1>>;

double sum(const ro_vector &x) {
    double s = 0;
    for (size_t i = 0; i < x.shape(0); ++i) s += x(i);
    return s;
}

std::vector<ro_vector> &kept() { static std::vector<ro_vector> v; return v; }
/// Never cleared: its tensors are destroyed with the C++ statics, after the interpreter has finalized.
std::vector<py::dltensor<py::ro>> &kept_until_exit() { static std::vector<py::dltensor<py::ro>> v; return v; }

} // namespace

VERSIONS_MODULE_DEF(VERSIONS_MODULE, m) {
    m.attr("backend") = VERSIONS_BACKEND;
    m.attr("python_version_hex") = (long) PY_VERSION_HEX;

    // Import: read-only and writable parameters.
    m.def("sum", &sum);
    m.def("scale", [](rw_vector x, double s) {
        for (size_t i = 0; i < x.shape(0); ++i) x(i) *= s;
    });
    m.def("byte_sum", [](ro_bytes x) {
        long s = 0;
        for (size_t i = 0; i < x.shape(0); ++i) s += x(i);
        return s;
    });
    m.def("fill_bytes", [](rw_bytes x, int v) {
        for (size_t i = 0; i < x.shape(0); ++i) x(i) = (uint8_t) v;
    });
    m.def("produce", &produce, py::arg("n"), py::arg("versioned") = true);

    // Export: a return without a framework annotation, owned by a counted capsule.
    m.def("arange", [](size_t n) {
        double *data = new double[n ? n : 1];
        for (size_t i = 0; i < n; ++i) data[i] = (double) i;
        py::capsule owner(data, [](void *p) noexcept {
            ++owner_frees;
            delete[] static_cast<double *>(p);
        });
        return rw_vector(data, {n}, owner);
    });

    // Export: a container handed over (adopt: no framework needed to allocate).
    m.def("adopt_range", [](size_t n) {
        std::vector<double> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = (double) i;
        return rw_vector::adopt(std::move(v), {n});
    });

    // Ownership: tensors kept by C++ beyond the call.
    m.def("keep", [](ro_vector x) { kept().push_back(x); return kept().size(); });
    m.def("kept_sum", [] {
        double s = 0;
        for (auto &x : kept()) s += sum(x);
        return s;
    });
    m.def("release", [] { kept().clear(); });
    m.def("keep_until_exit", [](py::dltensor<py::ro> x) {
        kept_until_exit().push_back(x);
        return kept_until_exit().size();
    });
    m.def("frees", [] { return py::make_tuple(producer_frees, owner_frees); });
    // How many sub-interpreters hold this module's dltensor state now (process_state.h).
    m.def("sub_interpreters_in_use", [] { return dlt::detail::sub_interpreters_in_use().load(); });
}
