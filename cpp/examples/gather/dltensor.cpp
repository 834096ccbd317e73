// Task: gather rows by an index array. py::dltensor: the nb::ndarray code renamed (gather_sum_renamed:
// refuses int64 indices, because a writable parameter never converts), and with the one-word fix
// (gather_sum: `const uint32_t`, a read-only parameter, converts int64 indices as nanobind did).
#include "example_backend.h"

#include <cstdint>

DLTENSOR_EXAMPLE_MODULE(gather, m) {
    // snippet: renamed
    m.def("gather_sum_renamed", [](py::dltensor<const float, py::ndim<1>, py::device::cpu> values,
                                   py::dltensor<uint32_t, py::ndim<1>, py::device::cpu> index) {
        double s = 0;
        for (size_t k = 0; k < index.shape(0); ++k) s += values(index(k));
        return s;
    });
    // end snippet
    // snippet: gather
    m.def("gather_sum", [](py::dltensor<const float, py::ndim<1>, py::device::cpu> values,
                           py::dltensor<const uint32_t, py::ndim<1>, py::device::cpu> index) {
        double s = 0;
        for (size_t k = 0; k < index.shape(0); ++k) s += values(index(k));
        return s;
    });
    // end snippet
}
