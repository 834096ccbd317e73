// An extension as a user writes it from the contract: include, alias, annotate, return.
#include <dltensor/nanobind.h>
namespace py = nanobind;

NB_MODULE(downstream_ext, m) {
    m.def("norms", [](py::dltensor<py::shape<-1, 3>, const float, py::device::cpu, py::c_contig> pts) {
        using Out = py::dltensor<py::numpy, float, py::ndim<1>>;
        size_t n = pts.shape(0);
        float *out = new float[n];
        for (size_t i = 0; i < n; ++i)
            out[i] = pts(i, 0) * pts(i, 0) + pts(i, 1) * pts(i, 1) + pts(i, 2) * pts(i, 2);
        py::capsule owner(out, [](void *p) noexcept { delete[] static_cast<float *>(p); });
        return Out(out, {n}, owner);
    });
    m.def("scale", [](py::dltensor<float> x, float s) {
        auto v = x.data();
        for (size_t i = 0; i < x.size(); ++i) v[i] *= s;  // writes reach the caller (contiguous input)
    });
}
