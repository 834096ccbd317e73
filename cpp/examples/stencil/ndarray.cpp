// The stencil example bound with nb::ndarray (for the guide's comparison and the benchmark row).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "stencil/box_blur.h"

namespace nb = nanobind;

using Images = nb::ndarray<const float, nb::ndim<3>, nb::device::cpu>;
using Output = nb::ndarray<float, nb::ndim<3>, nb::device::cpu>;

NB_MODULE(stencil_ndarray, m) {
    // snippet: bind
    m.def("box_blur_into", [](Images src, Output dst) {
        auto in = stack_of<const float>(src);
        auto out = stack_of<float>(dst);
        check_blur_operands(in, out);
        nb::gil_scoped_release unlocked;
        box_blur_3x3(in, out);
    }, nb::arg("src"), nb::arg("dst").noconvert());  // .noconvert(): or a converted dst loses the result
    // end snippet
}
