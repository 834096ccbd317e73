// Task: update a tensor in place. nanobind with nb::ndarray.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nb = nanobind;

NB_MODULE(update_in_place_ndarray, m) {
    // snippet: scale
    // .noconvert(): without it nanobind converts a mismatched input (dtype, device) to a temporary copy and
    // the writes are lost (see scale_lossy).
    m.def("scale", [](nb::ndarray<float, nb::ndim<2>, nb::device::cpu> a, float factor) {
        auto v = a.view();  // any strides: transposed and sliced views are written where they live
        for (size_t i = 0; i < v.shape(0); ++i)
            for (size_t j = 0; j < v.shape(1); ++j) v(i, j) *= factor;
    }, nb::arg("a").noconvert(), nb::arg("factor"));
    // end snippet

    // snippet: scale_lossy
    m.def("scale_lossy", [](nb::ndarray<float, nb::ndim<2>, nb::device::cpu> a, float factor) {
        auto v = a.view();  // no .noconvert(): the trap
        for (size_t i = 0; i < v.shape(0); ++i)
            for (size_t j = 0; j < v.shape(1); ++j) v(i, j) *= factor;
    });
    // end snippet
}
