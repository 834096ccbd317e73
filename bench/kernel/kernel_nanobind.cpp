// bench/kernel/kernel_nanobind.cpp: the kernel bound through nb::ndarray and py::dltensor (nanobind).
#include <dltensor/nanobind.h>

namespace py = nanobind;

#include "kernel.h"

NB_MODULE(kernel_nanobind, m) {
    m.def("ndarray", [](py::ndarray<const int64_t, py::ndim<1>, py::c_contig, py::device::cpu> indptr,
                        py::ndarray<const int32_t, py::ndim<1>, py::c_contig, py::device::cpu> indices,
                        py::ndarray<const double, py::ndim<1>, py::c_contig, py::device::cpu> data,
                        py::ndarray<const double, py::ndim<2>, py::c_contig, py::device::cpu> b,
                        py::ndarray<double, py::ndim<2>, py::c_contig, py::device::cpu> c) {
        bench_kernel::csr_times_dense<0>(indptr.data(), indices.data(), data.data(), c.shape(0), b.data(),
                                         c.data(), c.shape(1));
    }, py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("b"), py::arg("c").noconvert());
    bench_kernel::def_dltensor(m);
}
