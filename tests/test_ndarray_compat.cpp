// tests/test_ndarray_compat.cpp: py::dltensor is a drop-in for nb::ndarray on the nanobind backend:
// view(), operator(), cast(), ReadOnly, ndarray_check and the converting constructor keep working.
#include "elements.h"

void init_ndarray_compat(py::module_ &m) {
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
}
