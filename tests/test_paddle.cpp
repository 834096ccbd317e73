// tests/test_paddle.cpp: PaddlePaddle as a framework (py::paddle): returns from C++ memory and from a
// caller's tensor, `empty()`, the float8 formats Paddle has, and a returned input being the caller's
// object; registered as the submodule `paddle` (tests/test_paddle.py). The producer matrix's parameters
// (`producers.read_f32`, ...) and the dtype x layout returns (`producers.ret_paddle`) are shared.
#include "elements.h"

#include <array>
#include <cstdint>

namespace {

/// A returned float8 vector of `F` holding the bit patterns 0..n-1 (annotated py::paddle).
template <typename F> auto float8_patterns(size_t n) {
    auto *data = new F[n];
    for (size_t i = 0; i < n; ++i) data[i] = F::from_bits((uint8_t) i);
    py::capsule owner(data, [](void *p) noexcept { delete[] static_cast<F *>(p); });
    return py::dltensor<py::paddle, F, py::ndim<1>>(data, {n}, owner);
}

template <typename F> void def_float8(py::module_ &m, const std::string &name) {
    m.def(("bits_" + name).c_str(), [](py::dltensor<const F, py::ndim<1>> x) {
        py::list out;
        for (size_t i = 0; i < x.shape(0); ++i) out.append((int) x(i).bits);
        return out;
    });
    m.def(("scale_" + name).c_str(), [](py::dltensor<F, py::ndim<1>> x, float k) {
        for (size_t i = 0; i < x.shape(0); ++i) x(i) = F(k * (float) x(i));
    });
    m.def(("return_" + name).c_str(), [](size_t n) { return float8_patterns<F>(n); });
    m.def(("empty_" + name).c_str(), [](size_t n) {
        auto out = py::dltensor<py::paddle, F, py::ndim<1>>::empty({n});
        for (size_t i = 0; i < n; ++i) out(i) = F::from_bits((uint8_t) i);
        return out;
    });
}

} // namespace

void init_paddle(py::module_ &parent) {
    py::module_ m = parent.def_submodule("paddle", "PaddlePaddle as a framework (tests/test_paddle.py).");
    m.def("arange", &tb::arange<py::paddle>, "float32 0..n-1 from C++ memory, as a paddle.Tensor.");
    m.def("identity", [](py::dltensor<float, py::paddle> x) { return x; });
    m.def("identity_ro", [](py::dltensor<py::ro, py::paddle> x) { return x; });
    // The caller's memory returned as a paddle.Tensor: a view when writable, a copy when read-only
    // (Paddle has no read-only tensors and ignores DLPack's read-only flag).
    m.def("view_of", [](py::dltensor<float> x) { return py::dltensor<py::paddle, float>(x); });
    m.def("const_view_of", [](py::dltensor<const float> x) { return py::dltensor<py::paddle, const float>(x); });
    // New py::paddle views of a caller's tensor, kept alive by the caller's object (`x.cast()`): of all of it
    // (exactly its view), and of all but its first element. Dropping one must not hang (Paddle's DLPack
    // deleter is not re-entrant; tests/paddle_cases.py, in a subprocess).
    m.def("same_view_of", [](py::dltensor<float, py::ndim<1>> x) {
        return py::dltensor<py::paddle, float, py::ndim<1>>(x.data(), 1, std::array<size_t, 1>{x.shape(0)}.data(),
                                                            x.cast(), std::array<int64_t, 1>{x.stride(0)}.data());
    });
    m.def("tail_view_of", [](py::dltensor<float, py::ndim<1>> x) {
        return py::dltensor<py::paddle, float, py::ndim<1>>(x.data() + x.stride(0), 1,
                                                            std::array<size_t, 1>{x.shape(0) - 1}.data(), x.cast(),
                                                            std::array<int64_t, 1>{x.stride(0)}.data());
    });
    m.def("empty_f32", [](size_t rows, size_t cols) {
        auto out = py::dltensor<py::paddle, float, py::ndim<2>>::empty({rows, cols});
        for (size_t i = 0; i < rows; ++i)
            for (size_t j = 0; j < cols; ++j) out(i, j) = (float) (i * cols + j);
        return out;
    });
    m.def("empty_const_f64", [](size_t n) {
        auto out = py::dltensor<py::paddle, const double, py::ndim<1>>::empty({n});
        for (size_t i = 0; i < n; ++i) const_cast<double *>(out.data())[i] = 0.5 * (double) i;
        return out;
    });
    m.def("empty_uint16", [](size_t n) { return py::dltensor<py::paddle, uint16_t, py::ndim<1>>::empty({n}); });
    def_float8<py::float8_e4m3fn>(m, "float8_e4m3fn");
    def_float8<py::float8_e5m2>(m, "float8_e5m2");
}
