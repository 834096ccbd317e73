// tests/test_explain.cpp: parameters of every kind, for tests/test_explain.py to pin the explanation of
// each refusal (registered as the submodule `explain`): dtype, ndim, extent, device, order, read-only
// sources, PyTorch state, misalignment, non-tensors; overloaded functions (the second overload matches
// what the first refuses; a refusal of the exact pass alone; a .noconvert() tensor refused by both passes);
// elements of containers of tensors.
#include "backend.h"

#include <map>
#include <string>
#include <vector>

#if !defined(DLTENSOR_TEST_PYBIND11)  // pybind11's come with pybind11/stl.h (backend.h)
#  include <nanobind/stl/map.h>
#  include <nanobind/stl/vector.h>
#endif

void init_explain(py::module_ &parent) {
    py::module_ m = parent.def_submodule("explain", "Explained refusals (tests/test_explain.py).");
    m.def("scale", [](py::dltensor<float, py::ndim<1>, py::device::cpu> x, float factor) {
        for (size_t i = 0; i < x.shape(0); ++i) x.data()[i] *= factor;
    }, py::arg("x"), py::arg("factor"));
    m.def("total", [](py::dltensor<const float, py::ndim<1>> x) { return x.size(); }, py::arg("x"));
    m.def("index_total", [](py::dltensor<const uint32_t, py::ndim<1>> x) { return x.size(); }, py::arg("x"));
    m.def("total_strict", [](py::dltensor<const float, py::ndim<1>, py::c_contig> x) { return x.size(); },
          py::arg("x").noconvert());
    m.def("block", [](py::dltensor<const float, py::shape<2, 3>> x) { return x.size(); }, py::arg("x"));
    m.def("on_cuda", [](py::dltensor<const float, py::device::cuda> x) { return x.size(); }, py::arg("x"));
    m.def("fill_c", [](py::dltensor<float, py::ndim<1>, py::c_contig> x) { return x.size(); }, py::arg("x"));
    m.def("two", [](py::dltensor<const float, py::ndim<1>> a, py::dltensor<double, py::ndim<1>> b) {
        return a.size() + b.size();
    }, py::arg("a"), py::arg("b"));
    // Overloads: float64 first, float32 second; a float32 argument is refused by the first.
    m.def("overloaded", [](py::dltensor<double, py::ndim<1>> x) { return 64 + 0 * x.size(); }, py::arg("x"));
    m.def("overloaded", [](py::dltensor<float, py::ndim<1>> x) { return 32 + 0 * x.size(); }, py::arg("x"));
    // Overloads whose converting pass binds `x` and fails on `n`: x's only refusal is the exact pass's.
    m.def("first_pass", [](py::dltensor<const float, py::ndim<1>> x, int n) { return x.size() + (size_t) n; },
          py::arg("x"), py::arg("n"));
    m.def("first_pass", [](const std::string &s) { return s.size(); }, py::arg("s"));
    // Two overloads with the same `x`: the exact pass refuses it twice, the converting pass binds it.
    m.def("shared_first_pass", [](py::dltensor<const float, py::ndim<1>> x, int n) { return x.size() + (size_t) n; },
          py::arg("x"), py::arg("n"));
    m.def("shared_first_pass", [](py::dltensor<const float, py::ndim<1>> x, const std::string &n) {
        return x.size() + n.size();
    }, py::arg("x"), py::arg("n"));
    // Overloads with a .noconvert() tensor: both passes refuse it (`factor` converts, so both try it).
    m.def("strict_pair", [](py::dltensor<const float, py::ndim<1>> x, double factor) {
        return (double) x.size() * factor;
    }, py::arg("x").noconvert(), py::arg("factor"));
    m.def("strict_pair", [](const std::string &s) { return (double) s.size(); }, py::arg("s"));
    // Containers of tensors: a refused element is named by its index or key.
    m.def("sum_sizes", [](const std::vector<py::dltensor<const float, py::ndim<1>>> &xs) {
        size_t n = 0;
        for (const auto &x : xs) n += x.size();
        return n;
    }, py::arg("xs"));
    m.def("sum_named", [](const std::map<std::string, py::dltensor<const float, py::ndim<1>>> &xs) {
        size_t n = 0;
        for (const auto &kv : xs) n += kv.second.size();
        return n;
    }, py::arg("xs"));

    // The same kinds of function in a module that opts in to reasons in its TypeErrors (refusal_errors.h).
    py::module_ r = parent.def_submodule("reasons", "Refusals named in the TypeError (tests/test_explain.py).");
    r.def("scale", [](py::dltensor<float, py::ndim<1>, py::device::cpu> x, float factor) {
        for (size_t i = 0; i < x.shape(0); ++i) x.data()[i] *= factor;
    }, py::arg("x"), py::arg("factor"));
    r.def("overloaded", [](py::dltensor<double, py::ndim<1>> x) { return 64 + 0 * x.size(); }, py::arg("x"));
    r.def("overloaded", [](py::dltensor<float, py::ndim<1>> x) { return 32 + 0 * x.size(); }, py::arg("x"));
    r.def("no_tensor", [](int n) { return n; }, py::arg("n"));
    // The second overload binds what the first refuses, then raises from its body.
    r.def("raises", [](py::dltensor<double, py::ndim<1>>) { return 0; }, py::arg("x"));
    r.def("raises", [](py::dltensor<float, py::ndim<1>>) -> int { throw py::type_error("raised by the body"); },
          py::arg("x"));
    r.def("sum_sizes", [](const std::vector<py::dltensor<const float, py::ndim<1>>> &xs) {
        size_t n = 0;
        for (const auto &x : xs) n += x.size();
        return n;
    }, py::arg("xs"));
    r.def("sum_named", [](const std::map<std::string, py::dltensor<const float, py::ndim<1>>> &xs) {
        size_t n = 0;
        for (const auto &kv : xs) n += kv.second.size();
        return n;
    }, py::arg("xs"));
    struct Scaler { float factor = 2; };
    py::class_<Scaler>(r, "Scaler")
        .def(py::init<>())
        .def("apply", [](const Scaler &s, py::dltensor<float, py::ndim<1>> x) {
            for (size_t i = 0; i < x.shape(0); ++i) x.data()[i] *= s.factor;
        }, py::arg("x"))
        .def_static("make_one", [](py::dltensor<float, py::ndim<1>> x) { x.data()[0] = 1; }, py::arg("x"));
    py::explain_refusals(r);
    r.def("added_later", [](py::dltensor<float, py::ndim<1>> x) { return x.size(); }, py::arg("x"));
}
