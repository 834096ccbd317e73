// The extension of a pip-installable package (CMakeLists.txt, pyproject.toml). One source for both
// backends: the pybind11 target defines DOWNSTREAM_PYBIND11, which switches the include, the alias, the
// module macro and the module name (each module's name must be its CMake target's).
#include <cmath>

#if defined(DOWNSTREAM_PYBIND11)
#  include <dltensor/pybind11.h>
namespace py = pybind11;
#  define DOWNSTREAM_MODULE(name, m) PYBIND11_MODULE(name, m)
#  define DOWNSTREAM_NAME downstream_package_pybind11
#else
#  include <dltensor/nanobind.h>
namespace py = nanobind;
#  define DOWNSTREAM_MODULE(name, m) NB_MODULE(name, m)
#  define DOWNSTREAM_NAME downstream_package_nanobind
#endif

DOWNSTREAM_MODULE(DOWNSTREAM_NAME, m) {
    m.def("norms", [](py::dltensor<py::shape<-1, 3>, const float, py::device::cpu, py::c_contig> pts) {
        using Out = py::dltensor<py::numpy, float, py::ndim<1>>;
        size_t n = pts.shape(0);
        float *out = new float[n];
        for (size_t i = 0; i < n; ++i)  // the Euclidean length of each row
            out[i] = std::sqrt(pts(i, 0) * pts(i, 0) + pts(i, 1) * pts(i, 1) + pts(i, 2) * pts(i, 2));
        py::capsule owner(out, [](void *p) noexcept { delete[] static_cast<float *>(p); });
        return Out(out, {n}, owner);
    });
    // In place (a trailing underscore, as PyTorch names them): a writable float32 vector, never a copy.
    m.def("scale_", [](py::dltensor<float, py::ndim<1>> x, float factor) {
        for (size_t i = 0; i < x.shape(0); ++i) x(i) *= factor;
    }, py::arg("x"), py::arg("factor"));
    // Overloads by dtype, the widest first: the exact pass sends float64 arrays to the first and float32
    // arrays to the second; the converting pass (lists, integer arrays) meets the float64 one first.
    m.def("total", [](py::dltensor<const double, py::ndim<1>> x) {
        double s = 0;
        for (size_t i = 0; i < x.shape(0); ++i) s += x(i);
        return s;
    }, py::arg("x"));
    m.def("total", [](py::dltensor<const float, py::ndim<1>> x) {
        double s = 0;
        for (size_t i = 0; i < x.shape(0); ++i) s += x(i);
        return s;
    }, py::arg("x"));
    // Last: a call that no overload takes says in its TypeError why each tensor was refused.
    py::explain_refusals(m);
}
