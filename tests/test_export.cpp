// tests/test_export.cpp: returning tensors: the framework tag picks the Python type, no tag gives an
// object with __dlpack__, owners are released exactly once with the GIL (tb::counting_owner, counted by
// common.owner_frees), also for one tensor returned twice, a byte_offset reaches every framework,
// return-value policies hold. Registered as the submodule `export`.
#include "elements.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace {

/// A C++ object owning a buffer, handing out views of it (the reference_internal case).
struct Holder {
    float buf[6] = {0, 1, 2, 3, 4, 5};
    using View = py::dltensor<py::numpy, float, py::shape<2, 3>>;
    View view() { return View(buf, {2, 3}, py::handle()); }  // no owner: reference_internal keeps *this
    float get(size_t i) const { return buf[i]; }
};

/// A float32 vector of `n` elements whose DLPack `data` is 64-byte aligned memory holding 0, 1, 2, ...
/// and whose `byte_offset` is `offset` elements: element i is offset + i. The first element is 64-byte
/// aligned when `offset` is a multiple of 16. A counting owner frees the buffer.
template <typename... Tags> py::dltensor<Tags..., float, py::ndim<1>> offset_view(size_t offset, size_t n) {
    auto *base = new float[offset + n + 16];
    float *data = base + (16 - ((uintptr_t) base % 64) / sizeof(float)) % 16;  // 64-byte aligned
    for (size_t i = 0; i < offset + n; ++i) data[i] = (float) i;
    const size_t shape[1] = {n};
    return py::dltensor<Tags..., float, py::ndim<1>>(data, 1, shape, tb::counting_owner(base), nullptr,
                                                      tb::dtype_of<float>(), py::device::cpu::value, 0, 'C',
                                                      offset * sizeof(float));
}

/// One tensor (arange(n), counting owner) returned twice in one return value.
template <typename... Tags> auto same_tensor_twice(size_t n) {
    auto t = tb::arange<Tags...>(n);
    return std::make_pair(t, t);
}

template <typename... Tags> void def_framework(py::module_ &m, const std::string &name) {
    m.def(("offset_" + name).c_str(), &offset_view<Tags...>, py::arg("offset"), py::arg("n"));
    m.def(("twice_" + name).c_str(), &same_tensor_twice<Tags...>, py::arg("n"));
}

} // namespace

void init_export(py::module_ &parent) {
    py::module_ m = parent.def_submodule("export", "Returning tensors (tests/test_export.py).");
    m.def("arange_numpy", &tb::arange<py::numpy>);
    m.def("arange_pytorch", &tb::arange<py::pytorch>);
    m.def("arange_jax", &tb::arange<py::jax>);
    m.def("arange_tensorflow", &tb::arange<py::tensorflow>);
    m.def("arange_none", &tb::arange<>);
    def_framework<py::numpy>(m, "numpy");
    def_framework<py::pytorch>(m, "pytorch");
    def_framework<py::jax>(m, "jax");
    def_framework<py::tensorflow>(m, "tensorflow");
    def_framework<py::paddle>(m, "paddle");  // called by tests/paddle_cases.py
    def_framework<py::memview>(m, "memview");
    def_framework<>(m, "none");
    m.def("arange_const_numpy", [](size_t n) {
        auto *data = new float[n];
        for (size_t i = 0; i < n; ++i) data[i] = (float) i;
        return py::dltensor<py::numpy, const float, py::ndim<1>>(data, {n}, tb::counting_owner(data));
    });
    m.def("fortran_2x3", [] {
        // A 2x3 matrix in column-major order: element (i, j) = 10 * i + j.
        auto *data = new float[6];
        for (int j = 0; j < 3; ++j) for (int i = 0; i < 2; ++i) data[j * 2 + i] = (float) (10 * i + j);
        return py::dltensor<py::numpy, float, py::shape<2, 3>, py::f_contig>(data, {2, 3}, tb::counting_owner(data));
    });
    m.def("reversed_view", [] {
        // Negative strides and a byte_offset on export: element i is 4 - i.
        auto *data = new float[5]{0, 1, 2, 3, 4};
        return py::dltensor<py::numpy, float, py::ndim<1>>(data, 1, std::array<size_t, 1>{5}.data(),
                                                           tb::counting_owner(data), std::array<int64_t, 1>{-1}.data(),
                                                           tb::dtype_of<float>(), py::device::cpu::value, 0, 'A',
                                                           4 * sizeof(float));
    });
    m.def("ownerless_numpy", [] {
        // No owner: the automatic policy must copy (the data is a temporary).
        float tmp[3] = {7, 8, 9};
        auto result = py::dltensor<py::numpy, float, py::ndim<1>>(tmp, {3}, py::handle()).cast();
        volatile float *clobber = tmp;  // volatile: the stores stay although tmp dies next
        for (int i = 0; i < 3; ++i) clobber[i] = -1;  // a view instead of a copy would now read -1
        return result;
    });
    m.def("ownerless_reference_internal_without_parent", [] {
        // reference_internal with no parent to keep alive (cast() without one): as automatic, a copy.
        float tmp[3] = {7, 8, 9};
        auto result = py::dltensor<py::numpy, float, py::ndim<1>>(tmp, {3}, py::handle())
                          .cast(tb::rvp::reference_internal);
        volatile float *clobber = tmp;
        for (int i = 0; i < 3; ++i) clobber[i] = -1;  // a view instead of a copy would now read -1
        return result;
    });
    // An owner-less view of the argument's memory, returned with reference_internal: pybind11's parent is
    // the first argument (also of a function), nanobind has none for a function (it copies). After a
    // conversion, or from a raw capsule, that memory is not the argument's, and the call drops it.
    using ArgView = py::dltensor<py::numpy, const float, py::ndim<1>>;
    m.def("ownerless_view_of_argument", [](py::dltensor<const float, py::ndim<1>> x) {
        return ArgView(x.data(), {x.shape(0)}, py::handle());
    }, tb::rvp::reference_internal);
    m.def("ownerless_view_of_argument_ref", [](const py::dltensor<const float, py::ndim<1>> &x) {
        return ArgView(x.data(), {x.shape(0)}, py::handle());
    }, tb::rvp::reference_internal);
    m.def("const_view_with_owner", [](py::dltensor<float, py::ndim<1>> x, py::object owner) {
        // A read-only view of writable memory whose owner is the caller's (writable) array.
        return py::dltensor<py::numpy, const float, py::ndim<1>>(x.data(), {x.shape(0)}, owner);
    });
    m.def("identity", [](py::dltensor<py::ro> x) { return x; });
    m.def("identity_numpy", [](py::dltensor<py::numpy, py::ro> x) { return x; });
    m.def("identity_pytorch", [](py::dltensor<py::pytorch, py::ro> x) { return x; });

    py::class_<Holder>(m, "Holder", tb::weak_referenceable())
        .def(py::init<>())
        .def("view", &Holder::view, tb::rvp::reference_internal)
        .def("view_copy", &Holder::view, tb::rvp::copy)
        .def("get", &Holder::get);
}
