// Task: read a C-contiguous float32 matrix. nanobind with nb::ndarray.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cmath>

namespace nb = nanobind;

NB_MODULE(read_matrix_ndarray, m) {
    // snippet: frobenius
    m.def("frobenius", [](nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu> a) {
        auto v = a.view();  // dtype and ndim known at compile time: v(i, j)
        double s = 0;
        for (size_t i = 0; i < v.shape(0); ++i)
            for (size_t j = 0; j < v.shape(1); ++j) s += double(v(i, j)) * v(i, j);
        return std::sqrt(s);
    });
    // end snippet
}
