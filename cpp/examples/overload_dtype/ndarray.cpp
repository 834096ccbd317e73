// Task: overload by dtype. nanobind with nb::ndarray.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>

namespace nb = nanobind;

// snippet: total_template
template <typename T, typename Acc> Acc total(nb::ndarray<const T, nb::c_contig, nb::device::cpu> a) {
    Acc s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a.data()[i];
    return s;
}
// end snippet

NB_MODULE(overload_dtype_ndarray, m) {
    // snippet: total
    // nanobind tries every overload without conversions first, then again with them, in this order: an
    // int32 array matches none exactly and is converted to the first overload that takes it (float32).
    m.def("total", &total<float, double>);
    m.def("total", &total<double, double>);
    m.def("total", &total<int64_t, int64_t>);
    // end snippet
}
