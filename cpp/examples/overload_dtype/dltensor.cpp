// Task: overload by dtype. py::dltensor: a dtype mismatch fails the overload, so resolution moves on.
#include "example_backend.h"

#include <cstdint>

// snippet: total_template
template <typename T, typename Acc> Acc total(py::dltensor<const T, py::c_contig, py::device::cpu> a) {
    Acc s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a.data()[i];
    return s;
}
// end snippet

DLTENSOR_EXAMPLE_MODULE(overload_dtype, m) {
    // snippet: total
    // Every overload is tried without conversions first, then again with them, in this order: an int32
    // array matches none exactly and is converted to the first overload that takes it (float32).
    m.def("total", &total<float, double>);
    m.def("total", &total<double, double>);
    m.def("total", &total<int64_t, int64_t>);
    // end snippet
}
