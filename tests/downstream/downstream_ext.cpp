// An extension as a user writes it from the contract alone: include, alias, annotate, return. The same
// source builds on either backend; only the include, the alias and the module macro switch, and the
// module name: each CMake target is its own extension module, named after its target.
#include <cmath>

#if defined(DOWNSTREAM_PYBIND11)  // set for the pybind11 target by CMakeLists.txt
#  include <dltensor/pybind11.h>
namespace py = pybind11;
#  define DOWNSTREAM_MODULE(name, m) PYBIND11_MODULE(name, m)
#  define DOWNSTREAM_NAME downstream_ext_pybind11
#else
#  include <dltensor/nanobind.h>
namespace py = nanobind;
#  define DOWNSTREAM_MODULE(name, m) NB_MODULE(name, m)
#  define DOWNSTREAM_NAME downstream_ext_nanobind
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
    // py::c_contig: the elements are exactly data()[0 .. size()). Without it a strided view (x[::2],
    // x[::-1], x.T) binds too, and this loop would write the wrong elements, or outside the view. A
    // writable parameter never receives a copy, so a strided view is refused (TypeError) instead.
    m.def("scale", [](py::dltensor<float, py::c_contig, py::device::cpu> x, float s) {
        float *v = x.data();
        for (size_t i = 0; i < x.size(); ++i) v[i] *= s;  // writes reach the caller's memory
    });
}
