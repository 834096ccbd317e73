// Task: update a tensor in place. py::dltensor: a writable parameter never receives a copy, so no
// .noconvert() is needed; read-only sources (JAX, TensorFlow, read-only NumPy) are refused.
#include "example_backend.h"

DLTENSOR_EXAMPLE_MODULE(update_in_place, m) {
    // snippet: scale
    m.def("scale", [](py::dltensor<float, py::ndim<2>, py::device::cpu> a, float factor) {
        auto v = a.view();  // any strides: transposed and sliced views are written where they live
        for (size_t i = 0; i < v.shape(0); ++i)
            for (size_t j = 0; j < v.shape(1); ++j) v(i, j) *= factor;
    }, py::arg("a"), py::arg("factor"));
    // end snippet
}
