// The stencil example bound with py::array_t (NumPy arrays; for the guide's comparison and the benchmark).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <stdexcept>

#include "stencil/box_blur.h"

namespace py = pybind11;

/// pybind11 strides are in bytes; the kernel takes elements.
template <typename T, typename Array> image_stack<T> stack_of(Array &a, T *data) {
    if (a.ndim() != 3) throw std::invalid_argument("box_blur_into(): expected (batch, height, width) arrays");
    image_stack<T> s{data, {}, {}};
    for (int k = 0; k < 3; ++k) {
        s.shape[k] = (int64_t) a.shape(k);
        s.stride[k] = (int64_t) a.strides(k) / (int64_t) sizeof(float);
    }
    return s;
}

PYBIND11_MODULE(stencil_array_t, m) {
    // snippet: bind
    m.def("box_blur_into", [](py::array_t<float, py::array::forcecast> src, py::array_t<float> dst) {
        auto in = stack_of<const float>(src, src.data());
        auto out = stack_of<float>(dst, dst.mutable_data());  // throws if dst is read-only
        check_blur_operands(in, out);
        py::gil_scoped_release unlocked;
        box_blur_3x3(in, out);
    }, py::arg("src"), py::arg("dst").noconvert());
    // end snippet
}
