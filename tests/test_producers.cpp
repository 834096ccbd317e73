// tests/test_producers.cpp: the parameter kinds and returns that the producer matrix (test_producers.py)
// runs every producer through: typed read-only, typed read-only without conversion, typed writable, and
// bfloat16; and a tensor of every dtype, in every layout, returned to every framework. Registered as the
// submodule `producers`.
#include "elements.h"

#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace {

template <typename Tensor> void fill_with(const Tensor &x, double v) {
    auto dt = x.dtype();
    tb::for_each_element(x, [&](const char *p) { tb::element_from_double(const_cast<char *>(p), dt.code, dt.bits, v); });
}

/// The value a returned tensor holds at logical position k (0..5) of a 2x3 matrix, in type T.
template <typename T> T value_of(int k) {
    if constexpr (std::is_same_v<T, bool>) return k % 2 == 1;
    else if constexpr (std::is_same_v<T, dlt::float16> || std::is_same_v<T, dlt::bfloat16>) return T((float) k);
    else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
        return T((typename T::value_type) k, (typename T::value_type) -k);
    else return (T) k;
}

/// A 2x3 tensor of T (annotated `Tags...`) whose element (i, j) is value_of(3 * i + j), laid out as
/// `layout` says: "C", "F", "neg" (rows reversed in memory: a negative stride and a byte_offset) or
/// "zero" (one row broadcast with stride 0: every row is row 0). A capsule owns the buffer.
template <typename T, typename... Tags> py::object make_2x3(const std::string &layout) {
    T *buf = new T[6];
    py::capsule owner(buf, [](void *p) noexcept { delete[] static_cast<T *>(p); });
    size_t shape[2] = {2, 3};
    int64_t strides[2] = {3, 1};
    uint64_t byte_offset = 0;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) {
            if (layout == "F") {
                buf[j * 2 + i] = value_of<T>(3 * i + j);
                strides[0] = 1; strides[1] = 2;
            } else if (layout == "neg") {
                buf[(1 - i) * 3 + j] = value_of<T>(3 * i + j);
                strides[0] = -3; byte_offset = 3 * sizeof(T);
            } else if (layout == "zero") {
                buf[j] = value_of<T>(j);
                strides[0] = 0;
            } else if (layout == "C") {
                buf[i * 3 + j] = value_of<T>(3 * i + j);
            } else {
                throw std::invalid_argument("layout is C, F, neg or zero");
            }
        }
    py::dltensor<Tags..., T> out(buf, 2, shape, owner, strides, tb::dtype_of<T>(), py::device::cpu::value, 0,
                                 'A', byte_offset);
    return py::object(out.cast());
}

/// make_2x3 for the dtype named `dtype` (array-API names).
template <typename... Tags> py::object make_named(const std::string &dtype, const std::string &layout) {
    if (dtype == "bool") return make_2x3<bool, Tags...>(layout);
    if (dtype == "int8") return make_2x3<int8_t, Tags...>(layout);
    if (dtype == "int16") return make_2x3<int16_t, Tags...>(layout);
    if (dtype == "int32") return make_2x3<int32_t, Tags...>(layout);
    if (dtype == "int64") return make_2x3<int64_t, Tags...>(layout);
    if (dtype == "uint8") return make_2x3<uint8_t, Tags...>(layout);
    if (dtype == "uint16") return make_2x3<uint16_t, Tags...>(layout);
    if (dtype == "uint32") return make_2x3<uint32_t, Tags...>(layout);
    if (dtype == "uint64") return make_2x3<uint64_t, Tags...>(layout);
    if (dtype == "float16") return make_2x3<py::float16, Tags...>(layout);
    if (dtype == "bfloat16") return make_2x3<py::bfloat16, Tags...>(layout);
    if (dtype == "float32") return make_2x3<float, Tags...>(layout);
    if (dtype == "float64") return make_2x3<double, Tags...>(layout);
    if (dtype == "complex64") return make_2x3<std::complex<float>, Tags...>(layout);
    if (dtype == "complex128") return make_2x3<std::complex<double>, Tags...>(layout);
    throw std::invalid_argument("unknown dtype " + dtype);
}

/// `Out::empty({2, 3})` filled with 0..5 in logical order, returned: allocation by shape, as
/// `py::array_t<T>({rows, cols})`.
template <typename Out> Out filled_empty() {
    Out out = Out::empty({2, 3});
    auto v = out.template view<py::ndim<2>>();
    for (size_t i = 0; i < 2; ++i)
        for (size_t j = 0; j < 3; ++j) v(i, j) = value_of<typename std::remove_cv_t<typename Out::Scalar>>((int) (3 * i + j));
    return out;
}

} // namespace

void init_producers(py::module_ &parent) {
    py::module_ m = parent.def_submodule("producers", "The producer matrix (tests/test_producers.py).");
    // Parameter kinds: every producer of the matrix goes through each.
    m.def("read_f32", [](py::dltensor<const float> x) { return tb::values(x); });
    m.def("read_f32_noconvert", [](py::dltensor<const float> x) { return tb::values(x); }, py::arg("x").noconvert());
    m.def("write_f32", [](py::dltensor<float> x, double v) { fill_with(x, v); });
    m.def("read_bf16", [](py::dltensor<const py::bfloat16> x) { return tb::values(x); });
    m.def("write_bf16", [](py::dltensor<py::bfloat16> x, double v) { fill_with(x, v); });
    m.def("f32_address", [](py::dltensor<const float> x) { return (uintptr_t) x.data(); });
    m.def("as_numpy_f32", [](py::dltensor<const float> x) { return py::dltensor<py::numpy, const float>(x); });
    m.def("f64_address", [](py::dltensor<const double> x) { return (uintptr_t) x.data(); });
    m.def("write_f64_address", [](py::dltensor<double> x) { return (uintptr_t) x.data(); });
    // dltensor's own framework-less return, as a producer: a copy of `x` in a dltensor.Tensor.
    m.def("framework_less_copy", [](py::dltensor<const float, py::ndim<1>, py::c_contig> x) {
        return py::dltensor<float, py::ndim<1>>::copy_of(x.data(), {x.shape(0)});
    });

    // Returns: a 2x3 tensor of any dtype, in any layout, to each framework (or none).
    m.def("ret_numpy", &make_named<py::numpy>);
    m.def("ret_pytorch", &make_named<py::pytorch>);
    m.def("ret_jax", &make_named<py::jax>);
    m.def("ret_tensorflow", &make_named<py::tensorflow>);
    m.def("ret_paddle", &make_named<py::paddle>);
    m.def("ret_none", &make_named<>);
    m.def("empty_numpy", &filled_empty<py::dltensor<py::numpy, float, py::ndim<2>>>);
    m.def("empty_numpy_f", &filled_empty<py::dltensor<py::numpy, float, py::ndim<2>, py::f_contig>>);
    m.def("empty_numpy_bf16", &filled_empty<py::dltensor<py::numpy, py::bfloat16, py::ndim<2>>>);
    m.def("empty_pytorch", &filled_empty<py::dltensor<py::pytorch, double, py::ndim<2>>>);
    m.def("empty_jax", &filled_empty<py::dltensor<py::jax, int32_t, py::ndim<2>>>);
    m.def("empty_tensorflow", &filled_empty<py::dltensor<py::tensorflow, float, py::ndim<2>>>);
    m.def("empty_paddle", &filled_empty<py::dltensor<py::paddle, float, py::ndim<2>>>);
    m.def("empty_none", &filled_empty<py::dltensor<float, py::ndim<2>>>);
    m.def("empty_bad_rank", [] { return py::dltensor<py::numpy, float, py::ndim<2>>::empty({3}); });
    m.def("ret_jax_const_f64", [](size_t n) {
        auto *buf = new double[n];
        for (size_t i = 0; i < n; ++i) buf[i] = (double) i + 0.5;
        py::capsule owner(buf, [](void *p) noexcept { delete[] static_cast<double *>(p); });
        return py::dltensor<py::jax, const double, py::ndim<1>>(buf, {n}, owner);
    });
}
