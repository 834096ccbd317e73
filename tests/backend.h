// tests/backend.h: the one place where the C++ test module names its binding library. Every test_*.cpp
// is written against `py::` (and the few spellings below), so the same sources build per backend.
//
// The module's layout (tests/test_module.cpp): one submodule per topic, shared helpers in `common`.
// tests/test_X.cpp defines `init_X(m)`, which registers the submodule `X` of the root module `m`
// (`imports` for test_import.cpp: `import` is a Python keyword) and defines every function of that topic
// on it; tests/test_X.py calls only `m.X.<fn>` and `m.common.<fn>`. `common` (tests/test_common.cpp, with
// the DLPack producer of tests/producer.cpp) holds what several test files call: the producer, the
// counters below, generic readers and writers, the fast-path switch. Files without a .cpp of their own
// (test_leaks.py, test_threads.py, test_bad_input.py, ...) call any topic's submodule by its name.
#pragma once

#if defined(DLTENSOR_TEST_PYBIND11)
#  include <dltensor/pybind11.h>
#  include <pybind11/functional.h>
#  include <pybind11/stl.h>
namespace py = pybind11;
#  define DLTENSOR_TEST_MODULE(name, m) PYBIND11_MODULE(name, m)
namespace tb {
using rvp = py::return_value_policy;
using python_error = py::error_already_set;
/// The dtype value that dltensor's constructors take on this backend.
template <typename T> constexpr auto dtype_of() { return dlt::dtype_of<T>(); }
inline py::object steal(PyObject *o) {
    if (!o) throw python_error();
    return py::reinterpret_steal<py::object>(o);
}
/// Class annotation that lets tests take weak references to instances.
inline auto weak_referenceable() { return py::dynamic_attr(); }
} // namespace tb
#else
#  include <dltensor/nanobind.h>
#  include <nanobind/stl/function.h>
#  include <nanobind/stl/optional.h>
#  include <nanobind/stl/pair.h>
#  include <nanobind/stl/string.h>
namespace py = nanobind;
#  define DLTENSOR_TEST_MODULE(name, m) NB_MODULE(name, m)
namespace tb {
using rvp = py::rv_policy;
using python_error = py::python_error;
/// The dtype value that dltensor's constructors take on this backend.
template <typename T> constexpr auto dtype_of() { return py::dtype<T>(); }
/// Takes ownership of a new reference; a NULL (Python error set) becomes a C++ exception.
inline py::object steal(PyObject *o) {
    if (!o) throw python_error();
    return py::steal(o);
}
/// Class annotation that lets tests take weak references to instances.
inline auto weak_referenceable() { return py::is_weak_referenceable(); }
} // namespace tb
#endif

#include <cstdint>
#include <optional>
#include <vector>

namespace tb {
/// Counters that the owners/deleters of the test module bump; read from Python.
struct counters {
    long owner_frees = 0;              ///< owners of returned tensors released
    long owner_frees_without_gil = 0;  ///< ... of which without the GIL (must stay 0)
    long deleter_calls = 0;            ///< test-producer DLPack deleters run
    long deleter_calls_without_gil = 0;
};
inline counters &count() { static counters c; return c; }

/// An owner capsule for `new float[]` data that counts its release, and whether the GIL was held.
inline py::capsule counting_owner(float *data) {
    return py::capsule(data, [](void *p) noexcept {
        counters &c = count();
        ++c.owner_frees;
        if (!PyGILState_Check()) ++c.owner_frees_without_gil;
        delete[] static_cast<float *>(p);
    });
}

/// A returned float32 vector 0, 1, ..., n - 1 (annotated `Tags...`) whose owner is a counting_owner.
template <typename... Tags> auto arange(size_t n) {
    auto *data = new float[n];
    for (size_t i = 0; i < n; ++i) data[i] = (float) i;
    return py::dltensor<Tags..., float, py::ndim<1>>(data, {n}, counting_owner(data));
}

/// The tensors C++ keeps beyond a call: `common.keep` appends, `ownership.release_kept_without_gil`
/// drops them without the GIL.
inline std::vector<py::dltensor<py::ro>> &kept() {
    static std::vector<py::dltensor<py::ro>> v;
    return v;
}
} // namespace tb

// One submodule per topic (see the top of this file); each init_X(m) registers `X` on the root module m.
void init_common(py::module_ &m);    // `common`: shared helpers; calls init_producer
void init_producer(py::module_ &common);  // registers producer_capsule on `common` (tests/producer.py)
void init_import(py::module_ &m);    // `imports`
void init_constraints(py::module_ &m);
void init_conversion(py::module_ &m);
void init_dtypes(py::module_ &m);
void init_export(py::module_ &m);
void init_ownership(py::module_ &m);
#if !defined(DLTENSOR_TEST_PYBIND11)
void init_ndarray_compat(py::module_ &m);  // nanobind only: py::dltensor is an nb::ndarray there
#endif
void init_torch(py::module_ &m);
void init_torch_key_set(py::module_ &m);
void init_properties(py::module_ &m);
void init_producers(py::module_ &m);
void init_identity(py::module_ &m);
void init_porting(py::module_ &m);
void init_explain(py::module_ &m);
void init_seams(py::module_ &m);
void init_float8(py::module_ &m);
void init_paddle(py::module_ &m);
void init_allocation(py::module_ &m);
void init_return_matrix(py::module_ &m);
void init_types(py::module_ &m);
