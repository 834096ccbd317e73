// Task: float16 (bfloat16: NumPy has no such dtype, so py::array cannot name it). pybind11 with py::array:
// pybind11 has no 2-byte float type, so the dtype is checked by hand and the bits read as the compiler's
// _Float16 (GCC >= 12 / Clang on x86-64 and AArch64).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

PYBIND11_MODULE(half_precision_array_t, m) {
    // snippet: mean
    m.def("mean", [](py::array a) {
        if (a.dtype().kind() != 'f' || a.dtype().itemsize() != 2 || a.ndim() != 1)
            throw py::type_error("mean(): expected a 1-D float16 array");
        const char *p = static_cast<const char *>(a.data());
        float s = 0;
        for (py::ssize_t i = 0; i < a.shape(0); ++i)
            s += (float) *reinterpret_cast<const _Float16 *>(p + i * a.strides(0));  // strides in bytes
        return a.shape(0) ? s / (float) a.shape(0) : 0.f;
    });
    // end snippet

    // snippet: to_float16
    m.def("to_float16", [](py::array_t<float, py::array::c_style | py::array::forcecast> a) {
        size_t n = (size_t) a.size();
        _Float16 *out = new _Float16[n];
        for (size_t i = 0; i < n; ++i) out[i] = (_Float16) a.data()[i];
        py::capsule owner(out, [](void *p) { delete[] static_cast<_Float16 *>(p); });
        return py::array(py::dtype("float16"), {n}, {sizeof(_Float16)}, out, owner);
    });
    // end snippet
}
