// tests/test_ownership.cpp: tensors kept by C++ beyond the call (common.keep, into tb::kept()), and
// released from a thread that does not hold the GIL: the producer's deleter still runs exactly once, with
// the GIL. Registered as the submodule `ownership`.
#include "elements.h"

#include <vector>

void init_ownership(py::module_ &parent) {
    py::module_ m = parent.def_submodule("ownership", "Tensors kept by C++, released without the GIL "
                                                      "(tests/test_ownership.py).");
    m.def("release_kept_without_gil", [] {
        std::vector<py::dltensor<py::ro>> v;
        v.swap(tb::kept());
        py::gil_scoped_release no_gil;
        v.clear();  // each dltensor takes the GIL to release its owner
    }, "Drops the tensors common.keep() kept, with the GIL released.");
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
        py::dict d;
        d["sum"] = s;
        d["gil_held"] = held;
        return d;
    }, "{sum, gil_held}: the sum, read with the GIL released, and whether the GIL was held there.");
}
