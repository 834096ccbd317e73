// bench/bench_pybind11.cpp: pybind11's own NumPy route (py::array_t), for the side-by-side table.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;
using Array = py::array_t<float, py::array::c_style | py::array::forcecast>;

PYBIND11_MODULE(dltensor_bench_pybind11, m) {
    m.def("floor_0", [] { return 0.f; });
    m.def("floor_1", [](py::handle) { return 0.f; });
    m.def("floor_3", [](py::handle, py::handle, py::handle) { return 0.f; });
    m.def("array_t_1", [](Array a) { return a.size() ? a.data()[0] : 0.f; });
    m.def("array_t_3", [](Array a, Array b, Array c) {
        return (a.size() ? a.data()[0] : 0.f) + (b.size() ? b.data()[0] : 0.f) + (c.size() ? c.data()[0] : 0.f);
    });
    m.def("array_t_ret_numpy", [](size_t n) {
        auto *p = new float[n];
        for (size_t i = 0; i < n; ++i) p[i] = (float) i;
        py::capsule owner(p, [](void *q) { delete[] static_cast<float *>(q); });
        return Array({n}, {sizeof(float)}, p, owner);
    });
}
