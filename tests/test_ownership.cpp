// tests/test_ownership.cpp: tensors kept by C++ beyond the call, and released from a thread that does
// not hold the GIL: the producer's deleter still runs exactly once, with the GIL.
#include "elements.h"

#include <vector>

namespace {
std::vector<py::dltensor<py::ro>> &kept() {
    static std::vector<py::dltensor<py::ro>> v;
    return v;
}
} // namespace

void init_ownership(py::module_ &m) {
    m.def("keep", [](py::dltensor<py::ro> x) { kept().push_back(x); return kept().size(); });
    m.def("kept_values", [](size_t i) { return tb::values(kept().at(i)); });
    m.def("release_kept", [] { kept().clear(); });
    m.def("release_kept_without_gil", [] {
        std::vector<py::dltensor<py::ro>> v;
        v.swap(kept());
        py::gil_scoped_release no_gil;
        v.clear();  // each dltensor takes the GIL to release its owner
    });
    // Reads the elements, and copies and drops the tensor, with the GIL released: nothing a dltensor does
    // there may need the GIL. Returns the sum and whether the GIL was held in there (it must not be).
    m.def("sum_without_gil", [](py::dltensor<const double> x) {
        double s = 0;
        bool held = true;
        {
            py::gil_scoped_release no_gil;
            held = PyGILState_Check() != 0;
            py::dltensor<const double> copy = x;
            tb::for_each_element(copy, [&](const char *p) { s += *(const double *) p; });
        }
        return py::make_tuple(s, held);
    });
}
