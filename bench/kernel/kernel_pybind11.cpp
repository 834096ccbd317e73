// bench/kernel/kernel_pybind11.cpp: the kernel bound through py::array_t and py::dltensor (pybind11).
#include <dltensor/pybind11.h>
#include <pybind11/numpy.h>

namespace py = pybind11;

#include "kernel.h"

PYBIND11_MODULE(kernel_pybind11, m) {
    using in_i64 = py::array_t<int64_t, py::array::c_style>;
    using in_i32 = py::array_t<int32_t, py::array::c_style>;
    using in_f64 = py::array_t<double, py::array::c_style>;
    m.def("array_t", [](const in_i64 &indptr, const in_i32 &indices, const in_f64 &data, const in_f64 &b,
                        py::array_t<double, py::array::c_style> c) {
        bench_kernel::csr_times_dense<0>(indptr.data(), indices.data(), data.data(), (size_t) c.shape(0),
                                         b.data(), c.mutable_data(), (size_t) c.shape(1));
    }, py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("b"), py::arg("c").noconvert());
    bench_kernel::def_dltensor(m);
}
