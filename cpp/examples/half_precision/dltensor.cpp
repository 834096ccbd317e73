// Task: float16 and bfloat16. py::dltensor: py::float16 and py::bfloat16 are 2-byte storage types that
// convert to and from float; no dtype_traits to write, and the same code on both backends.
#include "example_backend.h"

// snippet: mean
template <typename Half> float mean(py::dltensor<const Half, py::ndim<1>, py::device::cpu> x) {
    auto v = x.view();
    float s = 0;
    for (size_t i = 0; i < v.shape(0); ++i) s += (float) v(i);
    return v.shape(0) ? s / (float) v.shape(0) : 0.f;
}
// end snippet

DLTENSOR_EXAMPLE_MODULE(half_precision, m) {
    // snippet: mean_def
    m.def("mean", &mean<py::float16>);
    m.def("mean", &mean<py::bfloat16>);
    // end snippet

    // snippet: to_float16
    m.def("to_float16", [](py::dltensor<const float, py::ndim<1>, py::device::cpu> x) {
        size_t n = x.shape(0);
        py::float16 *out = new py::float16[n];
        for (size_t i = 0; i < n; ++i) out[i] = py::float16(x(i));  // rounds to nearest even
        py::capsule owner(out, [](void *p) noexcept { delete[] static_cast<py::float16 *>(p); });
        return py::dltensor<py::numpy, py::float16, py::ndim<1>>(out, {n}, owner);
    });
    // end snippet
}
