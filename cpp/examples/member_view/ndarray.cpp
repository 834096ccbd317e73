// Task: return a view into a C++ object's member. nanobind with nb::ndarray.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "member_view/histogram.h"

namespace nb = nanobind;

NB_MODULE(member_view_ndarray, m) {
    // snippet: counts
    nb::class_<Histogram>(m, "Histogram")
        .def(nb::init<size_t, double, double>())
        .def("add", &Histogram::add)
        .def("total", &Histogram::total)
        // No owner: reference_internal makes the array a view that keeps the Histogram alive.
        .def("counts", [](Histogram &h) {
            return nb::ndarray<nb::numpy, float, nb::ndim<1>>(h.counts.data(), {h.counts.size()});
        }, nb::rv_policy::reference_internal);
    // end snippet
}
