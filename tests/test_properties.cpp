// tests/test_properties.cpp: helpers for the property tests: write every element's C-order index into
// a writable tensor of any dtype and layout, and build returned tensors of any shape and strides.
// Registered as the submodule `properties`.
#include "elements.h"

#include <vector>

namespace {
/// Reads a tuple of non-negative ints.
std::vector<size_t> sizes_of(py::handle seq) {
    std::vector<size_t> out;
    PyObject *fast = PySequence_Fast(seq.ptr(), "expected a sequence");
    if (!fast) throw tb::python_error();
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i)
        out.push_back((size_t) PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(fast, i)));
    Py_DECREF(fast);
    if (PyErr_Occurred()) throw tb::python_error();
    return out;
}

/// A C-contiguous float64 tensor of the given shape holding 0, 1, 2, ... in C order, returned as the
/// framework chosen by `Tag`; element (i0, i1, ...) sits at a reversed (F-order) position in memory when
/// `fortran`, so the returned strides are not C's.
template <typename... Tag> auto pattern(py::handle shape_obj, bool fortran) {
    std::vector<size_t> shape = sizes_of(shape_obj);
    size_t n = 1;
    for (size_t e : shape) n *= e;
    auto *data = new double[n ? n : 1];
    std::vector<int64_t> strides(shape.size());
    int64_t step = 1;
    if (fortran) {
        for (size_t i = 0; i < shape.size(); ++i) { strides[i] = step; step *= (int64_t) shape[i]; }
    } else {
        for (size_t i = shape.size(); i-- > 0;) { strides[i] = step; step *= (int64_t) shape[i]; }
    }
    // element with C-order flat index k lives at sum(idx[i] * strides[i])
    std::vector<size_t> idx(shape.size(), 0);
    for (size_t k = 0; k < n; ++k) {
        int64_t off = 0;
        for (size_t i = 0; i < shape.size(); ++i) off += (int64_t) idx[i] * strides[i];
        data[off] = (double) k;
        for (size_t i = shape.size(); i-- > 0;) {
            if (++idx[i] < shape[i]) break;
            idx[i] = 0;
        }
    }
    py::capsule owner(data, [](void *p) noexcept { delete[] static_cast<double *>(p); });
    return py::dltensor<Tag..., double>(data, shape.size(), shape.data(), owner, strides.data());
}
} // namespace

void init_properties(py::module_ &parent) {
    py::module_ m = parent.def_submodule("properties", "Property-test helpers (tests/test_properties.py).");
    m.def("write_index", [](py::dltensor<> x) {
        auto dt = x.dtype();
        size_t k = 0;
        tb::for_each_element(x, [&](const char *p) {
            tb::element_from_double(const_cast<char *>(p), dt.code, dt.bits, (double) (k++ % 100));
        });
    }, py::arg("x"), "Writes (C-order index mod 100) into every element of a writable tensor.");
    m.def("pattern_numpy", &pattern<py::numpy>);
    m.def("pattern_pytorch", &pattern<py::pytorch>);
    m.def("pattern_jax", &pattern<py::jax>);
    m.def("pattern_none", &pattern<>);
}
