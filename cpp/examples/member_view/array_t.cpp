// Task: return a view into a C++ object's member. pybind11 with py::array_t.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "member_view/histogram.h"

namespace py = pybind11;

PYBIND11_MODULE(member_view_array_t, m) {
    // snippet: counts
    py::class_<Histogram>(m, "Histogram")
        .def(py::init<size_t, double, double>())
        .def("add", &Histogram::add)
        .def("total", &Histogram::total)
        // Return policies do not apply to py::array: pass the Python object as the array's base instead,
        // which both stops the copy and keeps the Histogram alive while the array lives.
        .def("counts", [](py::object self) {
            Histogram &h = self.cast<Histogram &>();
            return py::array_t<float>({h.counts.size()}, {sizeof(float)}, h.counts.data(), self);
        });
    // end snippet
}
