// tests/test_torch.cpp: the DLPack C exchange API path for PyTorch: the switch between it and
// __dlpack__, the producer's stream, framework-allocated outputs.
#include "elements.h"

void init_torch(py::module_ &m) {
    m.def("set_exchange_api", [](bool on) { dlt::exchange_api_enabled() = on; },
          "Route PyTorch tensors through the DLPack C exchange API (True) or __dlpack__ (False).");
    m.def("exchange_api_enabled", [] { return dlt::exchange_api_enabled(); });
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
        return py::make_tuple(out, (uintptr_t) out.stream());
    });
    m.def("add_into", [](py::dltensor<float, py::ndim<1>> a, py::dltensor<float, py::ndim<1>> b) {
        // a[i] += b[i] in index order; a and b may alias (dltensor does not forbid it, as DLPack cannot
        // describe it): the outcome is then that of this sequential loop.
        for (size_t i = 0; i < a.shape(0) && i < b.shape(0); ++i) a(i) += b(i);
    });
    m.def("add_one_f32", [](py::dltensor<float> x) {
        tb::for_each_element(x, [](const char *p) { *(float *) p += 1.0f; });
    });
}
