#include <dltensor/nanobind.h>
#include <cmath>
namespace py = nanobind;

NB_MODULE(quickstart, m) {
    m.def("norms", [](py::dltensor<py::shape<-1, 3>, const float, py::device::cpu, py::c_contig> pts) {
        using Out = py::dltensor<py::numpy, float, py::ndim<1>>;
        float *out = new float[pts.shape(0)];
        for (size_t i = 0; i < pts.shape(0); ++i)  // the Euclidean length of each row
            out[i] = std::sqrt(pts(i, 0) * pts(i, 0) + pts(i, 1) * pts(i, 1) + pts(i, 2) * pts(i, 2));
        return Out(out, {pts.shape(0)}, py::capsule(out, [](void *p) noexcept { delete[] (float *) p; }));
    });
}
