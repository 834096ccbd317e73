// tests/test_return_matrix.cpp: the return matrix: a constructed 2x3 result of each framework x dtype
// (float8_e4m3fn, bfloat16, float16, float32, complex64) x layout (C, F, strided) x byte offset (0,
// misaligned, aligned) x returned once or twice, over memory a counting owner frees. Registered as the
// submodule `return_matrix` (tests/test_return_matrix.py; PaddlePaddle's rows: tests/paddle_cases.py).
#include "backend.h"

#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace {

/// Element k of the matrix: k, with -k as the imaginary part of complex types (exact in every dtype here).
template <typename T> T element(size_t k) {
    if constexpr (std::is_same_v<T, std::complex<float>>) return T((float) k, -(float) k);
    else if constexpr (std::is_same_v<T, float>) return (float) k;
    else return T((float) k);
}

/// The matrix [[0, 1, 2], [3, 4, 5]] of T laid out as `layout` says ('C': element strides (3, 1); 'F':
/// (1, 2); 's': every other element of a C layout, (6, 2)) over a 64-byte aligned buffer, with DLPack's
/// `data` at that aligned address and the first element `offset_bytes` past it (`byte_offset`). The
/// buffer's owner is a counting owner.
template <typename T, typename... Tags> py::dltensor<Tags..., T, py::ndim<2>> matrix(char layout, size_t offset_bytes) {
    if (offset_bytes % sizeof(T) != 0) throw std::invalid_argument("offset is not a whole number of elements");
    int64_t strides[2];
    switch (layout) {
        case 'C': strides[0] = 3; strides[1] = 1; break;
        case 'F': strides[0] = 1; strides[1] = 2; break;
        case 's': strides[0] = 6; strides[1] = 2; break;
        default: throw std::invalid_argument("layout is one of 'C', 'F', 's'");
    }
    const size_t span = 12 * sizeof(T) + offset_bytes + 64;  // the strided layout reaches element 10
    auto *base = new float[span / sizeof(float) + 1];
    char *data = (char *) base + (64 - (uintptr_t) base % 64) % 64;  // 64-byte aligned
    T *first = (T *) (data + offset_bytes);
    for (size_t i = 0; i < 2; ++i)
        for (size_t j = 0; j < 3; ++j) first[(int64_t) i * strides[0] + (int64_t) j * strides[1]] = element<T>(3 * i + j);
    const size_t shape[2] = {2, 3};
    return py::dltensor<Tags..., T, py::ndim<2>>(data, 2, shape, tb::counting_owner(base), strides,
                                                 tb::dtype_of<T>(), py::device::cpu::value, 0, 'A',
                                                 offset_bytes);
}

template <typename T, typename... Tags> auto matrix_twice(char layout, size_t offset_bytes) {
    auto t = matrix<T, Tags...>(layout, offset_bytes);
    return std::make_pair(t, t);
}

template <typename T, typename... Tags> void def_dtype(py::module_ &m, const std::string &name) {
    m.def(("once_" + name).c_str(), &matrix<T, Tags...>, py::arg("layout"), py::arg("offset_bytes"));
    m.def(("twice_" + name).c_str(), &matrix_twice<T, Tags...>, py::arg("layout"), py::arg("offset_bytes"));
}

/// The dtype axis: a 1-D tensor of `n` elements of any DLPack dtype (code, bits, lanes) over a heap buffer
/// of exactly the bytes DLPack says it holds (ceil(n * bits * lanes / 8): the sanitized run catches any
/// read past it), bytes 1, 2, 3, ..., owned by a counting owner; annotated `Tags...` (no dtype).
template <typename... Tags> py::dltensor<Tags..., py::ndim<1>> any_dtype(int code, int bits, int lanes, size_t n) {
    const size_t bytes = (n * (size_t) bits * (size_t) lanes + 7) / 8;
    auto *owned = new float[bytes / sizeof(float) + 1];  // counting_owner frees a float array
    char *data = reinterpret_cast<char *>(owned) + (sizeof(float) - bytes % sizeof(float)) % sizeof(float);
    for (size_t i = 0; i < bytes; ++i) data[i] = (char) (i + 1);  // the last byte ends the allocation
    const size_t shape[1] = {n};
    auto dtype = tb::dtype_of<float>();
    dtype.code = (uint8_t) code, dtype.bits = (uint8_t) bits, dtype.lanes = (uint16_t) lanes;
    return py::dltensor<Tags..., py::ndim<1>>(data, 1, shape, tb::counting_owner(owned), nullptr, dtype);
}

/// `once_<framework>_<dtype>(layout, offset_bytes)` and `twice_...` for one framework (none: no tag), and
/// `any_dtype_<framework>(code, bits, lanes, n)`.
template <typename... Tags> void def_matrix_framework(py::module_ &m, const std::string &fw) {
    m.def(("any_dtype_" + fw).c_str(), &any_dtype<Tags...>, py::arg("code"), py::arg("bits"), py::arg("lanes"),
          py::arg("n"));
    def_dtype<dlt::float8_e4m3fn, Tags...>(m, fw + "_float8_e4m3fn");
    def_dtype<dlt::bfloat16, Tags...>(m, fw + "_bfloat16");
    def_dtype<dlt::float16, Tags...>(m, fw + "_float16");
    def_dtype<float, Tags...>(m, fw + "_float32");
    def_dtype<std::complex<float>, Tags...>(m, fw + "_complex64");
}

} // namespace

void init_return_matrix(py::module_ &parent) {
    py::module_ m = parent.def_submodule("return_matrix", "The return matrix (tests/test_return_matrix.py).");
    def_matrix_framework<py::numpy>(m, "numpy");
    def_matrix_framework<py::pytorch>(m, "pytorch");
    def_matrix_framework<py::jax>(m, "jax");
    def_matrix_framework<py::tensorflow>(m, "tensorflow");
    def_matrix_framework<py::paddle>(m, "paddle");  // called by tests/paddle_cases.py
    def_matrix_framework<py::memview>(m, "memview");
    def_matrix_framework<>(m, "none");
}
