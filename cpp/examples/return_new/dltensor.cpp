// Task: return a new tensor that C++ allocated. py::dltensor.
#include "example_backend.h"

// snippet: squares
/// The framework tag picks the Python type returned: py::numpy, py::pytorch, py::jax, ...
template <typename Framework> py::dltensor<Framework, float, py::ndim<1>> squares(size_t n) {
    float *data = new float[n];
    for (size_t i = 0; i < n; ++i) data[i] = float(i * i);
    // The owner frees `data` exactly once, when the last Python user (array, tensor, view) lets go.
    py::capsule owner(data, [](void *p) noexcept { delete[] static_cast<float *>(p); });
    return py::dltensor<Framework, float, py::ndim<1>>(data, {n}, owner);
}
// end snippet

DLTENSOR_EXAMPLE_MODULE(return_new, m) {
    // snippet: squares_def
    m.def("squares_numpy", &squares<py::numpy>);
    m.def("squares_torch", &squares<py::pytorch>);
    m.def("squares_jax", &squares<py::jax>);
    m.def("squares_any", [](size_t n) {  // no framework tag: an object with __dlpack__, for any consumer
        return py::dltensor<float, py::ndim<1>>(squares<py::numpy>(n));
    });
    // end snippet
}
