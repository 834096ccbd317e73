// tests/test_constraints.cpp: dtype, ndim, extents, device, order and writability constraints, overload
// resolution across them, and the signature text of the "incompatible function arguments" error;
// registered as the submodule `constraints` (the README's `squared_norms` and `take_f32` are common's).
#include "elements.h"

#include <string>

// Annotations are order-free: these spell the same parameter type.
static_assert(std::is_same_v<py::dltensor<const float, py::shape<2, 2>, py::c_contig>::Scalar,
                             py::dltensor<py::c_contig, py::shape<2, 2>, const float>::Scalar>);
static_assert(py::dltensor<py::ro, float>::ReadOnly && py::dltensor<float, py::ro>::ReadOnly);
static_assert(!py::dltensor<float>::ReadOnly && py::dltensor<const float>::ReadOnly);

void init_constraints(py::module_ &parent) {
    py::module_ m = parent.def_submodule("constraints", "Constraints and overloads (tests/test_constraints.py).");
    m.def("take_ndim2", [](py::dltensor<py::ndim<2>, py::ro> x) { return x.shape(0) * 10 + x.shape(1); });
    m.def("take_2x3", [](py::dltensor<py::shape<2, 3>, py::ro> x) { return x.size(); });
    m.def("take_0d", [](py::dltensor<py::shape<>, const double> x) { return *x.data(); });
    m.def("take_c", [](py::dltensor<const float, py::c_contig> x) { return tb::values(x); });
    m.def("take_f", [](py::dltensor<const float, py::f_contig> x) { return tb::values(x); });
    m.def("take_f_contents", [](py::dltensor<const float, py::f_contig> x) { return tb::contents(x); },
          "The values, strides and data address that a read-only F-contiguous float32 parameter received.");
    m.def("take_any_contig", [](py::dltensor<const float, py::any_contig> x) { return tb::values(x); });
    m.def("take_c_rw", [](py::dltensor<float, py::c_contig> x) { return tb::values(x); });
    m.def("take_cpu", [](py::dltensor<py::ro, py::device::cpu> x) { return x.device_type(); });
    m.def("take_cuda", [](py::dltensor<py::ro, py::device::cuda> x) { return x.device_type(); });
    m.def("take_writable", [](py::dltensor<float> x) { return x.read_only(); });
    m.def("take_const", [](py::dltensor<const float> x) { return x.read_only(); });
    m.def("take_ro", [](py::dltensor<py::ro> x) { return x.read_only(); });
    m.def("const_view_without_framework", [] {
        // A const tensor returned with no framework annotation: DLPack consumers must see it read-only.
        auto *data = new double[3]{1, 2, 3};
        py::capsule owner(data, [](void *p) noexcept { delete[] static_cast<double *>(p); });
        return py::dltensor<const double, py::ndim<1>>(data, {3}, owner);
    });

    // Overloads by dtype (writable: never converted, so each input finds exactly its own).
    m.def("which", [](py::dltensor<float, py::ndim<1>>) { return std::string("float32 1d"); });
    m.def("which", [](py::dltensor<float, py::ndim<2>>) { return std::string("float32 2d"); });
    m.def("which", [](py::dltensor<double>) { return std::string("float64"); });
    m.def("which", [](py::dltensor<int32_t>) { return std::string("int32"); });
    m.def("which", [](py::dltensor<uint8_t>) { return std::string("uint8"); });
    // Read-only overloads: the exact dtype wins in the no-conversion pass; otherwise the first converts.
    m.def("which_ro", [](py::dltensor<const float>) { return std::string("float32"); });
    m.def("which_ro", [](py::dltensor<const double>) { return std::string("float64"); });
    // A writable overload next to a read-only one: writable sources prefer it, read-only ones fall through.
    m.def("which_rw", [](py::dltensor<float>) { return std::string("writable"); });
    m.def("which_rw", [](py::dltensor<const float>) { return std::string("read-only"); });
}
