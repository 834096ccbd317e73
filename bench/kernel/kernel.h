// bench/kernel/kernel.h: a compute-bound kernel that every binding calls once, so that the compiler (and
// LTO) inlines it into the binding function beside the caster's code: sparse (CSR) times dense, the shape
// of sparse_dot_topn's product. What it measures: whether the code a binding library inlines around the
// kernel makes the kernel itself slower (register pressure, spills). Included after `namespace py = ...`:
// the py::dltensor binding is written once for both backends.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bench_kernel {

/// c[i, :] += sum over j in row i of data[j] * b[indices[j], :]; c is rows x cols, b is (any) x cols.
/// `Site` gives each binding its own copy, called once, which GCC and Clang inline into the caller.
template <int Site>
static void csr_times_dense(const int64_t *indptr, const int32_t *indices, const double *data, size_t rows,
                            const double *b, double *c, size_t cols) {
    for (size_t i = 0; i < rows; ++i) {
        double *out = c + i * cols;
        for (int64_t j = indptr[i]; j < indptr[i + 1]; ++j) {
            const double a = data[j];
            const double *in = b + (size_t) indices[j] * cols;
            for (size_t k = 0; k < cols; ++k) out[k] += a * in[k];
        }
    }
}

/// The py::dltensor binding, the same source on both backends.
template <typename Module> void def_dltensor(Module &m) {
    m.def("dltensor", [](py::dltensor<const int64_t, py::ndim<1>, py::c_contig, py::device::cpu> indptr,
                         py::dltensor<const int32_t, py::ndim<1>, py::c_contig, py::device::cpu> indices,
                         py::dltensor<const double, py::ndim<1>, py::c_contig, py::device::cpu> data,
                         py::dltensor<const double, py::ndim<2>, py::c_contig, py::device::cpu> b,
                         py::dltensor<double, py::ndim<2>, py::c_contig, py::device::cpu> c) {
        csr_times_dense<1>(indptr.data(), indices.data(), data.data(), c.shape(0), b.data(), c.data(), c.shape(1));
    }, py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("b"), py::arg("c"));
}

} // namespace bench_kernel
