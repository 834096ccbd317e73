// Task: read a C-contiguous float32 matrix. py::dltensor: the nb::ndarray code, renamed.
#include "example_backend.h"

#include <cmath>

DLTENSOR_EXAMPLE_MODULE(read_matrix, m) {
    // snippet: frobenius
    m.def("frobenius", [](py::dltensor<const float, py::ndim<2>, py::c_contig, py::device::cpu> a) {
        auto v = a.view();  // dtype and ndim known at compile time: v(i, j)
        double s = 0;
        for (size_t i = 0; i < v.shape(0); ++i)
            for (size_t j = 0; j < v.shape(1); ++j) s += double(v(i, j)) * v(i, j);
        return std::sqrt(s);
    });
    // end snippet
}
