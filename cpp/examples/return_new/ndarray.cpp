// Task: return a new tensor that C++ allocated. nanobind with nb::ndarray.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nb = nanobind;

// snippet: squares
/// The framework tag picks the Python type returned: nb::numpy, nb::pytorch, nb::jax, ...
template <typename Framework> nb::ndarray<Framework, float, nb::ndim<1>> squares(size_t n) {
    float *data = new float[n];
    for (size_t i = 0; i < n; ++i) data[i] = float(i * i);
    // The owner frees `data` when the last Python user (array, tensor, view) lets go.
    nb::capsule owner(data, [](void *p) noexcept { delete[] static_cast<float *>(p); });
    return nb::ndarray<Framework, float, nb::ndim<1>>(data, {n}, owner);
}
// end snippet

NB_MODULE(return_new_ndarray, m) {
    m.def("squares_numpy", &squares<nb::numpy>);
    m.def("squares_torch", &squares<nb::pytorch>);
    m.def("squares_jax", &squares<nb::jax>);
}
