// tests/test_explain.cpp: parameters of every kind, for tests/test_explain.py to pin the explanation of
// each refusal (registered as the submodule `explain`): dtype, ndim, extent, device, order, read-only
// sources, PyTorch state, misalignment, non-tensors; and an overloaded function whose second overload
// matches what the first refuses.
#include "backend.h"

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
}
