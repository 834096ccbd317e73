// Task: update a tensor in place. pybind11 with py::array_t.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <stdexcept>

namespace py = pybind11;

PYBIND11_MODULE(update_in_place_array_t, m) {
    // snippet: scale
    // .noconvert(): without it a float64 or non-float32 array is converted to a temporary copy, the
    // function writes into the copy, and the caller's array never changes (see scale_lossy).
    m.def("scale", [](py::array_t<float> a, float factor) {
        if (a.ndim() != 2) throw std::invalid_argument("scale(): expected a 2-D array");
        auto w = a.mutable_unchecked<2>();  // throws if the array is read-only; any strides
        for (py::ssize_t i = 0; i < w.shape(0); ++i)
            for (py::ssize_t j = 0; j < w.shape(1); ++j) w(i, j) *= factor;
    }, py::arg("a").noconvert(), py::arg("factor"));
    // end snippet

    // snippet: scale_lossy
    m.def("scale_lossy", [](py::array_t<float> a, float factor) {  // no .noconvert(): the trap
        auto w = a.mutable_unchecked<2>();
        for (py::ssize_t i = 0; i < w.shape(0); ++i)
            for (py::ssize_t j = 0; j < w.shape(1); ++j) w(i, j) *= factor;
    });
    // end snippet
}
