// tests/test_import.cpp: accepting tensors: __dlpack__ producers, raw capsules, buffer-protocol objects,
// and reading them back element by element (strides, byte_offset, 0-d, zero-size); registered as the
// submodule `imports` (`import` is a Python keyword). The generic readers (values, describe) are common's.
#include "elements.h"

void init_import(py::module_ &parent) {
    py::module_ m = parent.def_submodule("imports", "Accepting tensors (tests/test_import.py).");
    m.def("describe_rw", [](py::dltensor<> x) { return tb::describe(x); }, "common.describe() of a writable tensor.");
    m.def("describe_cpu", [](py::dltensor<py::ro, py::device::cpu> x) { return tb::describe(x); });
    m.def("c_contig_values", [](py::dltensor<const float, py::c_contig> x) { return tb::values(x); },
          "Every element of a read-only C-contiguous float32 tensor.");
    m.def("scalar_0d", [](py::dltensor<py::shape<>, const double> x) { return *x.data(); },
          "The element of a 0-d float64 tensor.");
    m.def("count_none", [](std::optional<py::dltensor<py::ro>> x) { return x && x->is_valid() ? 1 : 0; },
          py::arg("x").none(), "1 for a tensor, 0 for None (an optional tensor).");
}
