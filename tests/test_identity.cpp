// tests/test_identity.cpp: what a binding returns for a tensor, per return-value policy: the caller's own
// object for an imported tensor (`f(x) is x`), copies into the annotated or the source's framework, views
// that keep a parent alive (reference_internal) also when the tensor has an owner, class members exposed
// as attributes, and view<...>() restating annotations. Written in nanobind's test style for both backends;
// registered as the submodule `identity` (nanobind's own `none` policy and nb::find: test_ndarray_compat.cpp).
#include "elements.h"

#include <type_traits>

namespace {

/// A class holding an imported tensor, exposed as a read/write attribute (the "object holds its arrays"
/// pattern).
struct Model {
    py::dltensor<py::ro> weights;
    /// A getter that returns the member by value: a second reference to the tensor the model keeps.
    py::dltensor<py::ro> weights_copy() const { return weights; }
    py::dltensor<py::numpy, float, py::ndim<1>> buffer() {
        auto *data = new float[3]{1, 2, 3};
        return py::dltensor<py::numpy, float, py::ndim<1>>(
            data, {3}, py::capsule(data, [](void *p) noexcept { delete[] static_cast<float *>(p); }));
    }
};

template <typename T> void view_restates() {
    // Restating the annotations a tensor has compiles, and a read-only tensor's view stays read-only.
    using V = decltype(std::declval<const T &>().template view<double, py::ndim<1>>());
    using Element = std::remove_reference_t<decltype(std::declval<const V &>()(0))>;
    static_assert(std::is_const_v<Element> == T::read_only(), "view<...>() keeps read-only tensors read-only");
}

alignas(64) float copy_source[3] = {1, 2, 3};

} // namespace

void init_identity(py::module_ &parent) {
    py::module_ m = parent.def_submodule("identity", "What a binding returns for a tensor (tests/test_identity.py).");
    m.def("passthrough", [](py::dltensor<> a) { return a; });
    m.def("passthrough_ro", [](py::dltensor<py::ro> a) { return a; });
    m.def("passthrough_assigned", [](py::dltensor<py::ro> a) {  // a tensor assigned keeps its source
        py::dltensor<py::ro> b;
        b = a;
        return b;
    });
    m.def("passthrough_c", [](py::dltensor<py::c_contig, py::ro> a) { return a; });
    m.def("passthrough_f32", [](py::dltensor<const float> a) { return a; }, "Converts other dtypes (a copy).");
    m.def("passthrough_numpy", [](py::dltensor<py::numpy, py::ro> a) { return a; });
    m.def("passthrough_pytorch", [](py::dltensor<py::pytorch, py::ro> a) { return a; });
    m.def("passthrough_reference", [](py::dltensor<py::ro> a) { return a; }, tb::rvp::reference);
    m.def("passthrough_automatic_reference", [](py::dltensor<py::ro> a) { return a; }, tb::rvp::automatic_reference);
    m.def("passthrough_copy", [](py::dltensor<py::ro> a) { return a; }, tb::rvp::copy);
    m.def("passthrough_move", [](py::dltensor<py::ro> a) { return a; }, tb::rvp::move);
    m.def("passthrough_copy_numpy", [](py::dltensor<py::numpy, py::ro> a) { return a; }, tb::rvp::copy);
    m.def("ownerless_copy", [] {
        static float data[3] = {1, 2, 3};
        return py::dltensor<float, py::ndim<1>>(data, {3}, py::handle());
    }, tb::rvp::copy);
    // Copies of C++ memory into each framework: the copy policy must not hand out a view of `copy_source`.
    m.def("copy_source_address", [] { return (uintptr_t) copy_source; });
    m.def("copy_pytorch", [] { return py::dltensor<py::pytorch, float, py::ndim<1>>(copy_source, {3}, py::handle()); }, tb::rvp::copy);
    m.def("copy_jax", [] { return py::dltensor<py::jax, float, py::ndim<1>>(copy_source, {3}, py::handle()); }, tb::rvp::copy);
    m.def("copy_numpy", [] { return py::dltensor<py::numpy, float, py::ndim<1>>(copy_source, {3}, py::handle()); }, tb::rvp::copy);
    m.def("copy_tensorflow", [] { return py::dltensor<py::tensorflow, float, py::ndim<1>>(copy_source, {3}, py::handle()); },
          tb::rvp::copy);
    m.def("first_restated", [](py::dltensor<double, py::ndim<1>> a) { return a.view<double, py::ndim<1>>()(0); });
    m.def("first_restated_const", [](py::dltensor<const double, py::ndim<1>> a) {
        return a.view<double, py::ndim<1>>()(0);
    });
    m.def("first_added", [](py::dltensor<py::ro> a) { return a.view<const double, py::ndim<1>>()(0); });
    view_restates<py::dltensor<double, py::ndim<1>>>();
    view_restates<py::dltensor<const double, py::ndim<1>>>();

    py::class_<Model>(m, "Model", tb::weak_referenceable())
        .def(py::init<>())
#if defined(DLTENSOR_TEST_PYBIND11)
        .def_readwrite("weights", &Model::weights)
#else
        .def_rw("weights", &Model::weights)
#endif
        .def("buffer", &Model::buffer, tb::rvp::reference_internal)
        .def("weights_copy", &Model::weights_copy);
}
