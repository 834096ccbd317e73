// tests/test_conversion.cpp: implicit conversion happens only for read-only parameters and never with
// .noconvert(); a writable parameter either writes into the caller's tensor or does not bind. Registered
// as the submodule `conversion`; the ro_* functions return tb::contents(): {values, strides, data}.
#include "elements.h"

void init_conversion(py::module_ &parent) {
    py::module_ m = parent.def_submodule("conversion", "Implicit conversion (tests/test_conversion.py).");
    m.def("ro_f64", [](py::dltensor<const double> x) { return tb::contents(x); }, py::arg("x"),
          "{values, strides, data} of a float64 view, converted if needed.");
    m.def("ro_f64_noconvert", [](py::dltensor<const double> x) { return tb::values(x); },
          py::arg("x").noconvert());
    m.def("ro_c_f32", [](py::dltensor<const float, py::c_contig> x) { return tb::contents(x); });
    m.def("ro_f_f32", [](py::dltensor<const float, py::f_contig> x) { return tb::contents(x); });
    m.def("ro_c_any", [](py::dltensor<py::ro, py::c_contig> x) { return tb::shape_tuple(x, true); });
    m.def("add_one_f64", [](py::dltensor<double> x) {
        tb::for_each_element(x, [](const char *p) { *const_cast<double *>(reinterpret_cast<const double *>(p)) += 1.0; });
    }, py::arg("x"), "Adds 1 to every element of a writable float64 tensor, in place.");
    m.def("add_one_c_f32", [](py::dltensor<float, py::c_contig> x) {
        for (size_t i = 0; i < x.size(); ++i) x.data()[i] += 1.0f;
    });
}
