// tests/test_import.cpp: accepting tensors: __dlpack__ producers, raw capsules, buffer-protocol objects,
// and reading them back element by element (strides, byte_offset, 0-d, zero-size).
#include "elements.h"

void init_import(py::module_ &m) {
    m.def("values", [](py::dltensor<py::ro> x) { return tb::values(x); },
          "Every element, in C logical order, of any read-only tensor.");
    m.def("describe", [](py::dltensor<py::ro> x) { return tb::describe(x); });
    m.def("describe_rw", [](py::dltensor<> x) { return tb::describe(x); });
    m.def("describe_cpu", [](py::dltensor<py::ro, py::device::cpu> x) { return tb::describe(x); });
    m.def("fill", [](py::dltensor<> x, double v) {
        auto dt = x.dtype();
        tb::for_each_element(x, [&](const char *p) { tb::element_from_double((void *) p, dt.code, dt.bits, v); });
    }, py::arg("x"), py::arg("value"), "Writes `value` into every element of a writable tensor.");
    m.def("count_none", [](std::optional<py::dltensor<py::ro>> x) { return x && x->is_valid() ? 1 : 0; },
          py::arg("x").none(), "1 for a tensor, 0 for None (an optional tensor).");
}
