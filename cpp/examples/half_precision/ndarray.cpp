// Task: float16 and bfloat16. nanobind with nb::ndarray: nanobind maps C++ types to dtypes through
// nb::detail::dtype_traits, which the extension specializes for the types it brings.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <cstring>

namespace nb = nanobind;

// snippet: dtype_traits
/// bfloat16 as its 16 bits (the compiler's __bf16 cannot do arithmetic everywhere).
struct bf16 {
    uint16_t bits;
    explicit operator float() const {
        uint32_t x = (uint32_t) bits << 16;
        float f;
        std::memcpy(&f, &x, 4);
        return f;
    }
};

namespace nanobind::detail {
template <> struct dtype_traits<_Float16> {
    static constexpr dlpack::dtype value{(uint8_t) dlpack::dtype_code::Float, 16, 1};
    static constexpr auto name = const_name("float16");
};
template <> struct dtype_traits<bf16> {
    static constexpr dlpack::dtype value{(uint8_t) dlpack::dtype_code::Bfloat, 16, 1};
    static constexpr auto name = const_name("bfloat16");
};
} // namespace nanobind::detail
// end snippet

// snippet: mean
template <typename Half> float mean(nb::ndarray<const Half, nb::ndim<1>, nb::device::cpu> x) {
    auto v = x.view();
    float s = 0;
    for (size_t i = 0; i < v.shape(0); ++i) s += (float) v(i);
    return v.shape(0) ? s / (float) v.shape(0) : 0.f;
}
// end snippet

NB_MODULE(half_precision_ndarray, m) {
    // snippet: mean_def
    m.def("mean", &mean<_Float16>);
    m.def("mean", &mean<bf16>);
    // end snippet

    // snippet: to_float16
    m.def("to_float16", [](nb::ndarray<const float, nb::ndim<1>, nb::device::cpu> x) {
        size_t n = x.shape(0);
        _Float16 *out = new _Float16[n];
        for (size_t i = 0; i < n; ++i) out[i] = (_Float16) x(i);
        nb::capsule owner(out, [](void *p) noexcept { delete[] static_cast<_Float16 *>(p); });
        return nb::ndarray<nb::numpy, _Float16, nb::ndim<1>>(out, {n}, owner);
    });
    // end snippet
}
