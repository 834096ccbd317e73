// Task: return a view into a C++ object's member. py::dltensor: the backend's return-value policies.
#include "example_backend.h"

#include "member_view/histogram.h"

// The policy's spelling is the backend's own.
#if defined(DLTENSOR_EXAMPLE_PYBIND11)
constexpr auto reference_internal = py::return_value_policy::reference_internal;
#else
constexpr auto reference_internal = py::rv_policy::reference_internal;
#endif

DLTENSOR_EXAMPLE_MODULE(member_view, m) {
    // snippet: counts
    py::class_<Histogram>(m, "Histogram")
        .def(py::init<size_t, double, double>())
        .def("add", &Histogram::add)
        .def("total", &Histogram::total)
        // No owner (py::handle()): reference_internal makes the array a view that keeps the Histogram alive.
        .def("counts", [](Histogram &h) {
            return py::dltensor<py::numpy, float, py::ndim<1>>(h.counts.data(), {h.counts.size()}, py::handle());
        }, reference_internal);
    // end snippet
}
