// Task: answer in the caller's framework, and overload by framework. nanobind with nb::ndarray.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nb = nanobind;

NB_MODULE(caller_framework_ndarray, m) {
    // snippet: doubled
    // The tag picks one framework for every caller: NumPy here, also for a PyTorch or JAX argument (or
    // nb::array_api, and every caller converts with its own from_dlpack).
    m.def("doubled", [](nb::ndarray<const float, nb::ndim<1>, nb::device::cpu> x) {
        float *data = new float[x.shape(0)];
        for (size_t i = 0; i < x.shape(0); ++i) data[i] = 2 * x(i);
        nb::capsule owner(data, [](void *p) noexcept { delete[] static_cast<float *>(p); });
        return nb::ndarray<nb::numpy, float, nb::ndim<1>>(data, {x.shape(0)}, owner);
    });
    // end snippet

    // snippet: which
    // nanobind ignores a framework tag on a parameter: the first overload binds every float32 tensor,
    // PyTorch's too.
    m.def("which", [](nb::ndarray<nb::numpy, const float>) { return "numpy"; });
    m.def("which", [](nb::ndarray<nb::pytorch, const float>) { return "pytorch"; });
    // end snippet
}
