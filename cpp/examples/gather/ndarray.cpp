// Task: gather rows by an index array. nanobind with nb::ndarray, as real code often writes it: the indices
// are declared writable `uint32_t` although the function only reads them, and callers pass NumPy's default
// int64 indices, which nanobind silently converts (a copy) to uint32.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>

namespace nb = nanobind;

NB_MODULE(gather_ndarray, m) {
    // snippet: gather
    m.def("gather_sum", [](nb::ndarray<const float, nb::ndim<1>, nb::device::cpu> values,
                           nb::ndarray<uint32_t, nb::ndim<1>, nb::device::cpu> index) {
        double s = 0;
        for (size_t k = 0; k < index.shape(0); ++k) s += values(index(k));
        return s;
    });
    // end snippet
}
