// tests/test_dtypes.cpp: every supported dtype maps to its C++ type, incl. the float16/bfloat16 storage
// types, in both directions; registered as the submodule `dtypes`.
#include "elements.h"

#include <complex>
#include <string>

namespace {
/// dtype_<name>: {dtype: (code, bits, lanes), values} of a read-only tensor of T, converted if needed.
template <typename T> void def_dtype(py::module_ &m, const char *name) {
    m.def((std::string("dtype_") + name).c_str(), [](py::dltensor<const T> x) {
        auto dt = x.dtype();
        py::dict d;
        d["dtype"] = py::make_tuple((int) dt.code, (int) dt.bits, (int) dt.lanes);
        d["values"] = tb::values(x);
        return d;
    });
}
} // namespace

void init_dtypes(py::module_ &parent) {
    py::module_ m = parent.def_submodule("dtypes", "Every dtype and its C++ type (tests/test_dtypes.py).");
    def_dtype<bool>(m, "bool");
    def_dtype<int8_t>(m, "int8");
    def_dtype<int16_t>(m, "int16");
    def_dtype<int32_t>(m, "int32");
    def_dtype<int64_t>(m, "int64");
    def_dtype<uint8_t>(m, "uint8");
    def_dtype<uint16_t>(m, "uint16");
    def_dtype<uint32_t>(m, "uint32");
    def_dtype<uint64_t>(m, "uint64");
    def_dtype<py::float16>(m, "float16");
    def_dtype<py::bfloat16>(m, "bfloat16");
    def_dtype<float>(m, "float32");
    def_dtype<double>(m, "float64");
    def_dtype<std::complex<float>>(m, "complex64");
    def_dtype<std::complex<double>>(m, "complex128");

    m.def("half_sum", [](py::dltensor<const py::float16, py::ndim<1>> x) {
        float s = 0;
        for (size_t i = 0; i < x.shape(0); ++i) s += (float) x(i);
        return s;
    });
    m.def("double_bfloat16", [](py::dltensor<py::bfloat16, py::ndim<1>> x) {
        for (size_t i = 0; i < x.shape(0); ++i) x(i) = py::bfloat16(2.0f * (float) x(i));
    });
    m.def("float16_roundtrip", [](float f) { return (float) py::float16(f); });
    m.def("bfloat16_roundtrip", [](float f) { return (float) py::bfloat16(f); });
}
