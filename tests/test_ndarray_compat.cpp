// tests/test_ndarray_compat.cpp: py::dltensor is a drop-in for nb::ndarray on the nanobind backend:
// view(), operator(), cast(), ReadOnly, ndarray_check and the converting constructor keep working; and
// nanobind's own ways of asking for an imported tensor's object: the `none` policy (pybind11 has none) and
// nb::find in a class's tp_traverse (pybind11 has no such hook). Registered as the submodule
// `ndarray_compat` (nanobind's module only).
#include "elements.h"

namespace {

/// A class holding an imported tensor as a read/write attribute, reporting it to the garbage collector
/// through nb::find (`Model` in Python; its own C++ name, as nanobind tells bound types apart by name).
struct TracedModel {
    py::dltensor<py::ro> weights;
};

int model_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    if (!py::inst_ready(self)) return 0;
    TracedModel *m = py::inst_ptr<TracedModel>(self);
    py::handle w = py::find(m->weights);
    Py_VISIT(w.ptr());
    return 0;
}
int model_clear(PyObject *self) {
    py::inst_ptr<TracedModel>(self)->weights = {};
    return 0;
}
PyType_Slot model_slots[] = {{Py_tp_traverse, (void *) model_traverse}, {Py_tp_clear, (void *) model_clear},
                             {0, nullptr}};

} // namespace

void init_ndarray_compat(py::module_ &parent) {
    py::module_ m = parent.def_submodule("ndarray_compat", "py::dltensor as nb::ndarray (tests/test_ndarray_compat.py).");
    m.def("sum_view", [](py::dltensor<const float, py::ndim<2>> x) {
        auto v = x.view();  // strided 2-D view with compile-time ndim
        double s = 0;
        for (size_t i = 0; i < v.shape(0); ++i)
            for (size_t j = 0; j < v.shape(1); ++j) s += v(i, j);
        return s;
    });
    m.def("view_as_double", [](py::dltensor<py::ro, py::ndim<1>> x) {
        // view<...>() adds a dtype the parameter left open, as with nb::ndarray
        auto v = x.view<const double>();
        return v.shape(0) ? v(0) : 0.0;
    });
    m.def("scale_in_place", [](py::dltensor<float, py::shape<-1, 2>> x, float s) {
        for (size_t i = 0; i < x.shape(0); ++i) { x(i, 0) *= s; x(i, 1) *= s; }
    });
    m.def("cast_to_object", [](py::dltensor<py::numpy, const float, py::ndim<1>> x) {
        py::object o = x.cast();  // the annotated framework: a NumPy array
        return o;
    });
    m.def("is_array_like", [](py::handle h) { return py::ndarray_check(h); });
    m.def("roundtrip_through_ndarray", [](py::dltensor<py::ro> x) {
        py::ndarray<py::ro> plain(x);               // a dltensor is an nb::ndarray
        py::dltensor<py::numpy, py::ro> back(plain); // and converts back, sharing the handle
        return back;
    });
    m.def("ownerless_ndarray_converted", [] {
        // A plain nb::ndarray over a local buffer, no owner: converted, it is copied on return, as nanobind
        // copies the ndarray itself.
        float tmp[3] = {7, 8, 9};
        py::ndarray<py::numpy, float, py::ndim<1>> plain(tmp, {3});
        auto result = py::dltensor<py::numpy, float, py::ndim<1>>(plain).cast();
        volatile float *clobber = tmp;
        for (int i = 0; i < 3; ++i) clobber[i] = -1;  // a view instead of a copy would now read -1
        return result;
    });
    // A plain nb::ndarray with an owner, adopted: only nanobind knows that owner, so a view of it (the
    // reference policy) keeps the nanobind handle alive instead: in a NumPy array's base, in a PyTorch
    // tensor's export.
    m.def("adopted_ndarray_viewed", [] {
        auto *data = new float[3]{4, 5, 6};
        py::ndarray<py::numpy, float, py::ndim<1>> plain(data, {3}, tb::counting_owner(data));
        return py::dltensor<py::numpy, float, py::ndim<1>>(plain);
    }, tb::rvp::reference);
    m.def("adopted_ndarray_viewed_pytorch", [] {
        auto *data = new float[3]{4, 5, 6};
        py::ndarray<py::pytorch, float, py::ndim<1>> plain(data, {3}, tb::counting_owner(data));
        return py::dltensor<py::pytorch, float, py::ndim<1>>(plain);
    }, tb::rvp::reference);

    // nanobind's own ways of asking for an imported tensor's object.
    m.def("passthrough_none_policy", [](py::dltensor<py::ro> a) { return a; }, tb::rvp::none);
    m.def("made_none_policy", [] {
        auto *data = new float[2]{1, 2};
        return py::dltensor<py::numpy, float, py::ndim<1>>(data, {2}, py::capsule(data, [](void *p) noexcept {
            delete[] static_cast<float *>(p);
        }));
    }, tb::rvp::none);
    py::class_<TracedModel>(m, "Model", py::type_slots(model_slots))
        .def(py::init<>())
        .def_rw("weights", &TracedModel::weights);
}
