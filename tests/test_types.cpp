// tests/test_types.cpp: what a tensor's types mean: a framework annotation on a parameter (overloads by
// framework; without conversion only that framework's tensors bind), results in the caller's framework
// (`empty_like(x, shape)`, `return_like(x)`), and the signature text that stubs are made of. Registered as
// the submodule `types` (tests/test_types.py; the stubs are type-checked in tests/test_stubgen.py).
#include "backend.h"

#include <cstddef>
#include <string>

namespace {

/// `out[i] = 2 * x[i]` for a 1-D tensor of any strides.
template <typename Out, typename In> void double_into(Out &out, const In &x) {
    for (size_t i = 0; i < x.shape(0); ++i) out.data()[(int64_t) i * out.stride(0)] = 2 * x.data()[(int64_t) i * x.stride(0)];
}

} // namespace

void init_types(py::module_ &root) {
    py::module_ m = root.def_submodule("types");

    // The overload pair a user writes: NumPy in -> "numpy", PyTorch in -> "pytorch" (exact pass), and any
    // other producer the first that converts.
    m.def("which", [](py::dltensor<py::numpy, const float>) { return std::string("numpy"); });
    m.def("which", [](py::dltensor<py::pytorch, const float>) { return std::string("pytorch"); });
    // The same pair for writable parameters (no conversion pass binds another framework's writable tensor
    // differently: the second pass takes any producer zero-copy).
    m.def("which_writable", [](py::dltensor<py::numpy, float>) { return std::string("numpy"); });
    m.def("which_writable", [](py::dltensor<py::pytorch, float>) { return std::string("pytorch"); });
    // Three overloads: JAX, NumPy, then any producer.
    m.def("which_of_three", [](py::dltensor<py::jax, const float>) { return std::string("jax"); });
    m.def("which_of_three", [](py::dltensor<py::numpy, const float>) { return std::string("numpy"); });
    m.def("which_of_three", [](py::dltensor<const float>) { return std::string("any"); });
    // Overloads by framework and then by dtype: a NumPy float64 array is not the NumPy overload's (float32),
    // and converts in the second pass to the first overload that takes it.
    m.def("which_dtype", [](py::dltensor<py::numpy, const double>) { return std::string("numpy float64"); });
    m.def("which_dtype", [](py::dltensor<py::pytorch, const float>) { return std::string("pytorch float32"); });
    // One framework-annotated function: every producer still binds (the converting pass).
    m.def("numpy_size", [](py::dltensor<py::numpy, const float> x) { return x.size(); });
    // ... but not with .noconvert(): only that framework's tensors.
    m.def("numpy_size_noconvert", [](py::dltensor<py::numpy, const float> x) { return x.size(); },
          py::arg("x").noconvert());
    m.def("pytorch_size_noconvert", [](py::dltensor<py::pytorch, const float> x) { return x.size(); },
          py::arg("x").noconvert());
    // py::array_api on a parameter: any producer (the tag says what a return becomes), also without conversion.
    m.def("array_api_size_noconvert", [](py::dltensor<py::array_api, const float> x) { return x.size(); },
          py::arg("x").noconvert());

    // Results in the caller's framework: a new tensor on the argument's device, in its framework.
    m.def("doubled", [](py::dltensor<const float, py::ndim<1>> x) {
        auto out = py::dltensor<float, py::ndim<1>>::empty_like(x, {x.shape(0)});
        double_into(out, x);
        return out;
    });
    // A writable argument's result, F order, with the shape from a container.
    m.def("transposed_like", [](py::dltensor<float, py::ndim<2>> x) {
        const std::vector<size_t> shape{x.shape(1), x.shape(0)};
        auto out = py::dltensor<float, py::ndim<2>, py::f_contig>::empty_like(x, shape);
        for (size_t i = 0; i < x.shape(0); ++i)
            for (size_t j = 0; j < x.shape(1); ++j)
                out.data()[(int64_t) j * out.stride(0) + (int64_t) i * out.stride(1)] =
                    x.data()[(int64_t) i * x.stride(0) + (int64_t) j * x.stride(1)];
        return out;
    });
    // Memory C++ made, returned in the argument's framework (a copy: no owner).
    m.def("copy_like", [](py::dltensor<const float, py::ndim<1>> x) {
        static const float values[3] = {1.0f, 2.0f, 3.0f};
        auto out = py::dltensor<const float, py::ndim<1>>(values, {3}, py::handle());
        return out.return_like(x);
    });
    // A view of the argument, returned in its framework: the argument itself (`f(x) is x`) when nothing
    // else is asked, its own framework again with return_like().
    m.def("view_like", [](py::dltensor<const float, py::ndim<1>> x) {
        return py::dltensor<const float, py::ndim<1>>(x).return_like(x);
    });
    // The framework to follow, from a second argument.
    m.def("doubled_like", [](py::dltensor<const float, py::ndim<1>> x, py::dltensor<const float> like) {
        auto out = py::dltensor<float, py::ndim<1>>::empty_like(like, {x.shape(0)});
        double_into(out, x);
        return out;
    });
    // The followed framework survives copies and assignments of the tensor.
    m.def("doubled_assigned", [](py::dltensor<const float, py::ndim<1>> x) {
        auto out = py::dltensor<float, py::ndim<1>>::empty_like(x, {x.shape(0)});
        double_into(out, x);
        py::dltensor<float, py::ndim<1>> assigned;
        assigned = out;
        py::dltensor<float, py::ndim<1>> copied(assigned);
        return py::dltensor<const float, py::ndim<1>>(copied);
    });
    // Only the allocation (nothing read or written: also for device tensors).
    m.def("empty_like_of", [](py::dltensor<py::ro> like, size_t n) {
        return py::dltensor<float, py::ndim<1>>::empty_like(like, {n});
    });
    // Without empty_like: a plain empty() result is a dltensor.Tensor whatever came in.
    m.def("doubled_plain", [](py::dltensor<const float, py::ndim<1>> x) {
        auto out = py::dltensor<float, py::ndim<1>>::empty({x.shape(0)});
        double_into(out, x);
        return out;
    });
}
