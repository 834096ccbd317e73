// Task: read a C-contiguous float32 matrix. pybind11 with py::array_t.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <stdexcept>

namespace py = pybind11;

PYBIND11_MODULE(read_matrix_array_t, m) {
    // snippet: frobenius
    // forcecast: float64/int inputs are converted (a copy), which is harmless for a read-only input.
    m.def("frobenius", [](py::array_t<float, py::array::c_style | py::array::forcecast> a) {
        if (a.ndim() != 2)  // the type cannot say "matrix": check at run time
            throw std::invalid_argument("frobenius(): expected a 2-D array");
        auto r = a.unchecked<2>();  // strides in bytes, bounds unchecked
        double s = 0;
        for (py::ssize_t i = 0; i < r.shape(0); ++i)
            for (py::ssize_t j = 0; j < r.shape(1); ++j) s += double(r(i, j)) * r(i, j);
        return std::sqrt(s);
    });
    // end snippet
}
