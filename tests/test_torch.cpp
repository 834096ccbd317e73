// tests/test_torch.cpp: the DLPack C exchange API path for PyTorch (the switch between it and __dlpack__
// is common.set_fast_paths), tables of other versions, the producer's stream, framework-allocated outputs,
// PyTorch's special tensors through typed parameters. Registered as the submodule `torch`.
#include "elements.h"

#include <complex>

namespace {
long foreign_table_calls = 0;
int foreign_view(void *, dlt::dlpack::Tensor *) {
    ++foreign_table_calls;
    PyErr_SetString(PyExc_RuntimeError, "a table of another DLPack major version was used");
    return -1;
}
int foreign_export(void *, dlt::dlpack::ManagedTensorVersioned **) { return foreign_view(nullptr, nullptr); }
int foreign_import(dlt::dlpack::ManagedTensorVersioned *, void **) { return foreign_view(nullptr, nullptr); }
int foreign_allocate(dlt::dlpack::Tensor *, dlt::dlpack::ManagedTensorVersioned **, void *,
                     void (*)(void *, const char *, const char *)) { return foreign_view(nullptr, nullptr); }
int foreign_stream(int32_t, int32_t, void **) { return foreign_view(nullptr, nullptr); }
} // namespace

void init_torch(py::module_ &parent) {
    py::module_ m = parent.def_submodule("torch", "PyTorch beyond DLPack (tests/test_torch.py).");
    m.def("exchange_api_capsule", [](uint32_t major, bool chain_to_torch, bool allocator) {
        // A `__dlpack_c_exchange_api__` table of DLPack major version `major` whose every entry fails and
        // counts (foreign_table_calls), optionally chained through prev_api to torch.Tensor's own table;
        // without `allocator`, the table lacks that mandatory entry.
        auto *t = new dlt::dlpack::ExchangeAPI{};  // lives for the process, as a framework's table does
        t->header.version = {major, 0};
        t->header.prev_api = chain_to_torch ? const_cast<dlt::dlpack::ExchangeAPIHeader *>(
                                                  &dlt::torch_exchange_api()->header) : nullptr;
        t->managed_tensor_allocator = allocator ? foreign_allocate : nullptr;
        t->managed_tensor_from_py_object_no_sync = foreign_export;
        t->managed_tensor_to_py_object_no_sync = foreign_import;
        t->dltensor_from_py_object_no_sync = foreign_view;
        t->current_work_stream = foreign_stream;
        return tb::steal(PyCapsule_New(t, dlt::dlpack::exchange_api_capsule_name, nullptr));
    }, py::arg("major"), py::arg("chain_to_torch"), py::arg("allocator") = true);
    m.def("foreign_table_calls", [] { return foreign_table_calls; });
    m.def("stream_of", [](py::dltensor<py::ro> x) { return (uintptr_t) x.stream(); });
    m.def("torch_empty", [](size_t n) {
        using Out = py::dltensor<py::pytorch, float, py::ndim<1>>;
        Out out = Out::empty({n});
        for (size_t i = 0; i < n; ++i) out(i) = 0.5f * (float) i;
        return out;
    }, py::arg("n"), "A float32 torch tensor allocated by PyTorch, filled by C++.");
    m.def("torch_empty_2d", [](size_t rows, size_t cols) {
        using Out = py::dltensor<py::pytorch, int64_t, py::ndim<2>, py::c_contig>;
        Out out = Out::empty({rows, cols});
        for (size_t i = 0; i < rows; ++i)
            for (size_t j = 0; j < cols; ++j) out(i, j) = (int64_t) (i * 100 + j);
        return out;
    });
    m.def("torch_empty_bad_rank", [] {
        using Out = py::dltensor<py::pytorch, float, py::ndim<2>>;
        return Out::empty({3});  // annotated ndim 2: invalid_argument -> ValueError
    });
    m.def("torch_empty_cuda", [](size_t n) {
        using Out = py::dltensor<py::pytorch, float, py::ndim<1>, py::device::cuda>;
        Out out = Out::empty({n});
        const auto stream = (unsigned long long) (uintptr_t) out.stream();
        py::dict d;
        d["tensor"] = out.cast();
        d["stream"] = stream;
        return d;
    }, py::arg("n"), "{tensor, stream}: a float32 CUDA tensor allocated by PyTorch, and its stream.");
    m.def("add_into", [](py::dltensor<float, py::ndim<1>> a, py::dltensor<float, py::ndim<1>> b) {
        // a[i] += b[i] in index order; a and b may alias (dltensor does not forbid it, as DLPack cannot
        // describe it): the outcome is then that of this sequential loop.
        for (size_t i = 0; i < a.shape(0) && i < b.shape(0); ++i) a(i) += b(i);
    });
    m.def("add_one_f32", [](py::dltensor<float> x) {
        tb::for_each_element(x, [](const char *p) { *const_cast<float *>(reinterpret_cast<const float *>(p)) += 1.0f; });
    });

    // Typed parameters and a returned tensor, for PyTorch's special tensors (negative and conjugate views,
    // tensors that require grad) and owners.
    m.def("values_f64", [](py::dltensor<const double> x) { return tb::values(x); },
          "Every element of a read-only float64 tensor, converted if needed.");
    m.def("values_f64_noconvert", [](py::dltensor<const double> x) { return tb::values(x); },
          py::arg("x").noconvert());
    m.def("values_complex64", [](py::dltensor<const std::complex<float>> x) { return tb::values(x); },
          "Every element of a read-only complex64 tensor.");
    // A real parameter, as the issue's `values`: a complex tensor (also a lazy view of one) never binds.
    m.def("values_f32", [](py::dltensor<const float, py::ndim<1>, py::device::cpu> x) { return tb::values(x); });
    m.def("values_f32_noconvert", [](py::dltensor<const float, py::ndim<1>, py::device::cpu> x) {
        return tb::values(x);
    }, py::arg("x").noconvert());
    m.def("arange", &tb::arange<py::pytorch>, py::arg("n"),
          "A float32 torch tensor 0, 1, ..., n - 1 of C++ memory, its owner counted by common.owner_frees.");
}
