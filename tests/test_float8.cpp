// tests/test_float8.cpp: the 8-bit float storage types (py::float8_e4m3fn, py::float8_e5m2, ...): their
// conversions to and from float, parameters of each format (read-only and writable) and returns of each
// format to every framework; registered as the submodule `float8` (tests/test_float8.py).
#include "elements.h"

#include <cstdint>
#include <string>

namespace {

/// The raw bits of every element (C logical order), the dtype and the first element's address.
template <typename Tensor> py::dict bits_of(const Tensor &x) {
    py::object list = tb::steal(PyList_New(0));
    tb::for_each_element(x, [&](const char *p) {
        py::object v = tb::steal(PyLong_FromLong(*(const uint8_t *) p));
        if (PyList_Append(list.ptr(), v.ptr()) != 0) throw tb::python_error();
    });
    auto dt = x.dtype();
    py::dict d;
    d["bits"] = list;
    d["dtype"] = py::make_tuple((int) dt.code, (int) dt.bits, (int) dt.lanes);
    d["data"] = (unsigned long long) (uintptr_t) x.data();
    return d;
}

/// A returned 1-D tensor of `F` annotated `Tags...` holding every bit pattern 0..255, owned by a capsule.
template <typename F, typename... Tags> auto all_patterns() {
    auto *data = new F[256];
    for (int i = 0; i < 256; ++i) data[i] = F::from_bits((uint8_t) i);
    py::capsule owner(data, [](void *p) noexcept { delete[] static_cast<F *>(p); });
    return py::dltensor<Tags..., F, py::ndim<1>>(data, {(size_t) 256}, owner);
}

/// The same patterns in reversed memory, viewed with stride -1: logical element i is pattern i.
template <typename F, typename... Tags> py::object reversed_patterns() {
    auto *data = new F[256];
    for (int i = 0; i < 256; ++i) data[i] = F::from_bits((uint8_t) (255 - i));
    py::capsule owner(data, [](void *p) noexcept { delete[] static_cast<F *>(p); });
    size_t shape[1] = {256};
    int64_t strides[1] = {-1};
    py::dltensor<Tags..., F> out(data, 1, shape, owner, strides, tb::dtype_of<F>(), py::device::cpu::value, 0,
                                 'A', 255 * sizeof(F));
    return py::object(out.cast());
}

/// Every bit pattern, annotated `Tags...`, at a 64-byte aligned address or (`misaligned`) one byte past one.
template <typename F, typename... Tags> auto placed_patterns(bool misaligned) {
    auto *base = new F[256 + 64];
    F *data = base + (64 - (uintptr_t) base % 64) % 64 + (misaligned ? 1 : 0);
    for (int i = 0; i < 256; ++i) data[i] = F::from_bits((uint8_t) i);
    py::capsule owner(base, [](void *p) noexcept { delete[] static_cast<F *>(p); });
    return py::dltensor<Tags..., F, py::ndim<1>>(data, {(size_t) 256}, owner);
}

/// `Out::empty({256})` filled with every bit pattern.
template <typename F, typename... Tags> auto empty_patterns() {
    using Out = py::dltensor<Tags..., F, py::ndim<1>>;
    Out out = Out::empty({256});
    for (size_t i = 0; i < 256; ++i) out(i) = F::from_bits((uint8_t) i);
    return out;
}

template <typename F> void def_format(py::module_ &m, const std::string &name) {
    auto def = [&](const std::string &fn, auto &&f, auto &&...extra) { m.def((fn + "_" + name).c_str(), f, extra...); };
    // Parameters: read-only (converting), read-only without conversion, writable.
    def("read", [](py::dltensor<const F> x) { return bits_of(x); }, py::arg("x"));
    def("read_noconvert", [](py::dltensor<const F> x) { return bits_of(x); }, py::arg("x").noconvert());
    def("scale", [](py::dltensor<F, py::ndim<1>> x, float k) {  // in place: x = F(k * float(x))
        for (size_t i = 0; i < x.shape(0); ++i) x(i) = F(k * (float) x(i));
    }, py::arg("x"), py::arg("k"));
    def("set_patterns", [](py::dltensor<F, py::ndim<1>> x) {  // in place: element i = bits i % 256
        for (size_t i = 0; i < x.shape(0); ++i) x(i) = F::from_bits((uint8_t) (i & 0xff));
    }, py::arg("x"));
    // The storage type's conversions, exposed whole: every pattern widened, and floats rounded.
    def("decode", [] {
        auto *out = new float[256];
        for (int i = 0; i < 256; ++i) out[i] = (float) F::from_bits((uint8_t) i);
        py::capsule owner(out, [](void *p) noexcept { delete[] static_cast<float *>(p); });
        return py::dltensor<py::numpy, float, py::ndim<1>>(out, {(size_t) 256}, owner);
    });
    def("encode", [](py::dltensor<const float, py::ndim<1>, py::c_contig> x) {
        const size_t n = x.shape(0);
        auto *out = new uint8_t[n ? n : 1];
        for (size_t i = 0; i < n; ++i) out[i] = F(x(i)).bits;
        py::capsule owner(out, [](void *p) noexcept { delete[] static_cast<uint8_t *>(p); });
        return py::dltensor<py::numpy, uint8_t, py::ndim<1>>(out, {n}, owner);
    }, py::arg("x"));
    // Returns of every pattern to each framework, from C++ memory and from `empty()`.
    def("return_numpy", [] { return all_patterns<F, py::numpy>(); });
    def("return_pytorch", [] { return all_patterns<F, py::pytorch>(); });
    def("return_jax", [] { return all_patterns<F, py::jax>(); });
    def("return_none", [] { return all_patterns<F>(); });
    def("placed_tensorflow", [](bool misaligned) { return placed_patterns<F, py::tensorflow>(misaligned); },
        py::arg("misaligned"));
    def("reversed_numpy", [] { return reversed_patterns<F, py::numpy>(); });
    def("reversed_pytorch", [] { return reversed_patterns<F, py::pytorch>(); });
    def("reversed_jax", [] { return reversed_patterns<F, py::jax>(); });
    def("empty_numpy", [] { return empty_patterns<F, py::numpy>(); });
    def("empty_pytorch", [] { return empty_patterns<F, py::pytorch>(); });
    def("empty_jax", [] { return empty_patterns<F, py::jax>(); });
    def("empty_none", [] { return empty_patterns<F>(); });
    // A returned input is the caller's object.
    def("identity", [](py::dltensor<F> x) { return x; }, py::arg("x"));
}

} // namespace

void init_float8(py::module_ &parent) {
    py::module_ m = parent.def_submodule("float8", "The 8-bit float storage types (tests/test_float8.py).");
    def_format<py::float8_e3m4>(m, "float8_e3m4");
    def_format<py::float8_e4m3>(m, "float8_e4m3");
    def_format<py::float8_e4m3b11fnuz>(m, "float8_e4m3b11fnuz");
    def_format<py::float8_e4m3fn>(m, "float8_e4m3fn");
    def_format<py::float8_e4m3fnuz>(m, "float8_e4m3fnuz");
    def_format<py::float8_e5m2>(m, "float8_e5m2");
    def_format<py::float8_e5m2fnuz>(m, "float8_e5m2fnuz");
    def_format<py::float8_e8m0fnu>(m, "float8_e8m0fnu");
    // Any dtype (the sub-byte refusals), and the DLPack codes as C++ sees them.
    m.def("any_dtype", [](py::dltensor<py::ro> x) {
        auto dt = x.dtype();
        return py::make_tuple((int) dt.code, (int) dt.bits, (int) dt.lanes);
    }, py::arg("x"));
    m.def("codes", [] {
        py::dict d;
        d["float8_e3m4"] = (int) tb::dtype_of<py::float8_e3m4>().code;
        d["float8_e4m3"] = (int) tb::dtype_of<py::float8_e4m3>().code;
        d["float8_e4m3b11fnuz"] = (int) tb::dtype_of<py::float8_e4m3b11fnuz>().code;
        d["float8_e4m3fn"] = (int) tb::dtype_of<py::float8_e4m3fn>().code;
        d["float8_e4m3fnuz"] = (int) tb::dtype_of<py::float8_e4m3fnuz>().code;
        d["float8_e5m2"] = (int) tb::dtype_of<py::float8_e5m2>().code;
        d["float8_e5m2fnuz"] = (int) tb::dtype_of<py::float8_e5m2fnuz>().code;
        d["float8_e8m0fnu"] = (int) tb::dtype_of<py::float8_e8m0fnu>().code;
        return d;
    });
}
