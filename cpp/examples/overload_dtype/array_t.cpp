// Task: overload by dtype. pybind11 with py::array_t.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>

namespace py = pybind11;

// snippet: total_template
template <typename T, typename Acc> Acc total(py::array_t<T, py::array::c_style | py::array::forcecast> a) {
    Acc s = 0;
    const T *p = a.data();
    for (py::ssize_t i = 0; i < a.size(); ++i) s += p[i];
    return s;
}
// end snippet

PYBIND11_MODULE(overload_dtype_array_t, m) {
    // snippet: total
    // pybind11 tries every overload without conversions first, then again with them, in this order: an
    // int32 array matches none exactly and is converted to the first overload that takes it (float32).
    m.def("total", &total<float, double>);
    m.def("total", &total<double, double>);
    m.def("total", &total<int64_t, int64_t>);
    // end snippet
}
