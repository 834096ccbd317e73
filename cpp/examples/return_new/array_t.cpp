// Task: return a new tensor that C++ allocated. pybind11 with py::array_t (NumPy arrays only).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

PYBIND11_MODULE(return_new_array_t, m) {
    // snippet: squares
    m.def("squares", [](size_t n) {
        float *data = new float[n];
        for (size_t i = 0; i < n; ++i) data[i] = float(i * i);
        // The capsule is the array's base: NumPy frees `data` when the last view of it dies.
        py::capsule owner(data, [](void *p) { delete[] static_cast<float *>(p); });
        return py::array_t<float>({n}, {sizeof(float)}, data, owner);  // strides in bytes
    });
    // end snippet
}
