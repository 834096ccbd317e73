// Task: answer in the caller's framework, and overload by framework. py::dltensor: `empty_like(x, shape)`
// allocates on x's device and returns in x's framework; a framework annotation on a parameter binds, in
// the first pass of overload resolution, only that framework's tensors.
#include "example_backend.h"

DLTENSOR_EXAMPLE_MODULE(caller_framework, m) {
    // snippet: doubled
    // NumPy in, NumPy out; PyTorch in, PyTorch out (on its device); JAX in, a new JAX array out. The result
    // is allocated by the argument's framework where it allocates (NumPy, PyTorch, Paddle).
    m.def("doubled", [](py::dltensor<const float, py::ndim<1>> x) {
        auto out = py::dltensor<float, py::ndim<1>>::empty_like(x, {x.shape(0)});
        for (size_t i = 0; i < x.shape(0); ++i) out(i) = 2 * x(i);
        return out;
    });
    // end snippet

    // snippet: which
    // The first pass binds only each overload's own framework; the second pass (conversions) takes any
    // producer, so a JAX array or a list goes to the first overload.
    m.def("which", [](py::dltensor<py::numpy, const float>) { return "numpy"; });
    m.def("which", [](py::dltensor<py::pytorch, const float>) { return "pytorch"; });
    // end snippet
}
