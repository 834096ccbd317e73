// tests/test_allocation.cpp: `Out::empty()` and `Out::copy_of()` for every framework, both orders and every
// element size (1, 2, 4, 8 and 16 bytes), with shapes given as braced lists, containers of integers and
// (ndim, pointer). Registered as the submodule `allocation` (tests/test_allocation.py; PaddlePaddle's
// rows run in tests/paddle_cases.py).
#include "backend.h"

#if !defined(DLTENSOR_TEST_PYBIND11)
#  include <nanobind/stl/vector.h>
#endif

#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace {

/// Element k of a result: k, and -k as the imaginary part of complex types (exact in every dtype here for
/// the sizes the tests use).
template <typename T> T nth(size_t k) {
    if constexpr (std::is_same_v<T, std::complex<double>>) return T((double) k, -(double) k);
    else if constexpr (std::is_same_v<T, dlt::float16>) return T((float) k);
    else return (T) k;
}

size_t count_of(const std::vector<size_t> &shape) {
    size_t n = 1;
    for (size_t e : shape) n *= e;
    return n;
}

/// `copy_of` of elements 0, 1, ... laid out densely in the annotated order, shape from a container.
template <typename Out> Out copy_of_arange(const std::vector<size_t> &shape) {
    using T = std::remove_cv_t<typename Out::Scalar>;
    std::vector<T> data(count_of(shape));
    for (size_t k = 0; k < data.size(); ++k) data[k] = nth<T>(k);
    return Out::copy_of(data.data(), shape);
}

/// `empty()` filled through `data()` as reference §4 allows: element k of the annotated order at data()[k].
template <typename Out> Out empty_arange(const std::vector<size_t> &shape) {
    using T = std::remove_cv_t<typename Out::Scalar>;
    Out t = Out::empty(shape);
    T *p = const_cast<T *>(t.data());
    for (size_t k = 0, n = count_of(shape); k < n; ++k) p[k] = nth<T>(k);
    return t;
}

template <typename Order, typename T, typename... Fw> void def_pair(py::module_ &m, const std::string &name) {
    using Out = py::dltensor<Fw..., T, Order>;
    m.def(("copy_of_" + name).c_str(), &copy_of_arange<Out>);
    m.def(("empty_" + name).c_str(), &empty_arange<Out>);
}

template <typename Order, typename... Fw> void def_types(py::module_ &m, const std::string &prefix) {
    def_pair<Order, int8_t, Fw...>(m, prefix + "_i1");
    def_pair<Order, dlt::float16, Fw...>(m, prefix + "_f2");
    def_pair<Order, float, Fw...>(m, prefix + "_f4");
    def_pair<Order, double, Fw...>(m, prefix + "_f8");
    def_pair<Order, std::complex<double>, Fw...>(m, prefix + "_c16");
}

/// `empty_<framework>_<C|F>_<i1|f2|f4|f8|c16>` and `copy_of_...` for one framework (none: no tag).
template <typename... Fw> void def_allocation_framework(py::module_ &m, const std::string &name) {
    def_types<py::c_contig, Fw...>(m, name + "_C");
    def_types<py::f_contig, Fw...>(m, name + "_F");
}

using Out2 = py::dltensor<py::numpy, float, py::ndim<2>>;

} // namespace

void init_allocation(py::module_ &parent) {
    py::module_ m = parent.def_submodule("allocation", "empty() and copy_of() (tests/test_allocation.py).");
    def_allocation_framework<py::numpy>(m, "numpy");
    def_allocation_framework<py::pytorch>(m, "pytorch");
    def_allocation_framework<py::jax>(m, "jax");
    def_allocation_framework<py::tensorflow>(m, "tensorflow");
    def_allocation_framework<py::paddle>(m, "paddle");
    def_allocation_framework<py::memview>(m, "memview");
    def_allocation_framework<>(m, "none");

    // Every spelling of a shape: each result's shape, in the order of `forms`.
    m.def("empty_shape_forms", [] {
        const std::vector<size_t> unsigned_vector{2, 3};
        const std::vector<py::ssize_t> signed_vector{2, 3};
        const std::array<size_t, 2> array{2, 3};
        const int64_t c_array[2] = {2, 3};
        const size_t pointer[2] = {2, 3};
        return std::vector<Out2>{Out2::empty({2, 3}), Out2::empty(unsigned_vector), Out2::empty(signed_vector),
                                 Out2::empty(array), Out2::empty(c_array), Out2::empty(2, pointer)};
    });
    m.def("copy_of_shape_forms", [] {
        const float data[6] = {0, 1, 2, 3, 4, 5};
        const std::vector<size_t> unsigned_vector{2, 3};
        const std::vector<py::ssize_t> signed_vector{2, 3};
        const std::array<uint32_t, 2> array{2, 3};
        const size_t pointer[2] = {2, 3};
        return std::vector<Out2>{Out2::copy_of(data, {2, 3}), Out2::copy_of(data, unsigned_vector),
                                 Out2::copy_of(data, signed_vector), Out2::copy_of(data, array),
                                 Out2::copy_of(data, 2, pointer)};
    });
    // A run-time rank (array_t's `array_t<T>(std::vector<ssize_t>)`), possibly with negative extents.
    m.def("empty_signed", [](const std::vector<int64_t> &shape) {
        // snippet: run_time_rank
        const std::vector<py::ssize_t> dims(shape.begin(), shape.end());  // a rank known only at run time
        auto out = py::dltensor<py::numpy, float>::empty(dims);  // array_t<float>(dims); negative: ValueError
        // end snippet
        return out;
    });
    m.def("copy_of_signed", [](const std::vector<int64_t> &shape) {
        const float data[256] = {};  // enough for the shapes the tests give
        return py::dltensor<py::numpy, float>::copy_of(data, shape);
    });
    // copy_of()'s copy into a layout other than the source's (strides.h): dense `src` in `order` into `dst`.
    m.def("copy_dense_into", [](const std::vector<double> &src, const std::string &order, const std::vector<int64_t> &shape,
                                const std::vector<int64_t> &strides, size_t capacity) {
        std::vector<double> dst(capacity, -1.0);
        dlt::copy_dense_into(src.data(), order.at(0), dst.data(), shape.data(), strides.data(), shape.size(),
                             sizeof(double));
        return dst;
    });
    // array_t's resize() to fewer rows: allocate for the most, fill `produced` rows, return those.
    m.def("shrunk_numpy", [](size_t most, size_t produced) {
        using Frames = py::dltensor<py::numpy, float, py::ndim<2>, py::c_contig>;
        // snippet: shrink
        auto out = Frames::empty({most, 2});  // room for the most frames the call may produce
        for (size_t i = 0; i < produced; ++i)
            for (size_t j = 0; j < 2; ++j) out(i, j) = (float) (10 * i + j);
        return out.leading(produced);  // array_t's out.resize({produced, 2}): a view of the first rows
        // end snippet
    });
    m.def("shrunk_pytorch", [](size_t most, size_t produced) {
        auto out = py::dltensor<py::pytorch, float, py::ndim<2>>::empty({most, 2});
        for (size_t i = 0; i < produced; ++i)
            for (size_t j = 0; j < 2; ++j) out(i, j) = (float) (10 * i + j);
        return out.leading(produced);
    });
    m.def("shrunk_owned", [](size_t most, size_t produced) {
        auto *data = new float[most];
        for (size_t i = 0; i < most; ++i) data[i] = (float) i;
        py::dltensor<py::numpy, float, py::ndim<1>> full(data, {most}, tb::counting_owner(data));
        return full.leading(produced);
    });
    m.def("shrunk_none", [](size_t most, size_t produced) {
        return py::dltensor<float, py::ndim<1>>::copy_of(std::vector<float>(most, 1.0f)).leading(produced);
    });
    m.def("shrunk_scalar", [] {
        const float v = 1;
        return py::dltensor<py::numpy, float>::copy_of(&v, {}).leading(0);
    });
    m.def("empty_rank_mismatch", [](const std::vector<size_t> &shape) { return Out2::empty(shape); });
}
