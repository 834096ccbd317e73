// bench/bench_pybind11.cpp: the pybind11 side of the table: pybind11's own NumPy route (py::array_t),
// the cheapest pybind11 route through __dlpack__ (call it, read the capsule, free it), and py::dltensor
// on the pybind11 backend, each next to a bare call.
#include <dltensor/pybind11.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "caller_framework.h"
#include "copy_stages.h"

#include <cstring>
#include <string>
#include <vector>

namespace py = pybind11;

// bench/layouts.py builds this module several times, each with an unused function of another size here
// (DLTENSOR_BENCH_PAD bytes): the same code at other addresses, to see how much of a ratio is code layout.
#if defined(DLTENSOR_BENCH_PAD) && defined(__GNUC__)
#define DLTENSOR_BENCH_STR2(x) #x
#define DLTENSOR_BENCH_STR(x) DLTENSOR_BENCH_STR2(x)
extern "C" __attribute__((used, noinline)) void dltensor_bench_layout_pad() {
    __asm__ volatile(".skip " DLTENSOR_BENCH_STR(DLTENSOR_BENCH_PAD));
}
#endif

using Array = py::array_t<float, py::array::c_style | py::array::forcecast>;
using Tensor = py::dltensor<const float, py::ndim<1>, py::c_contig>;

namespace {
/// `x.__dlpack__()` by hand: the capsule's first float, then the tensor freed (what any consumer must do).
float via_dlpack(py::handle x) {
    py::object cap = x.attr("__dlpack__")();
    const char *name = PyCapsule_GetName(cap.ptr());
    float v = 0.f;
    if (name && std::strcmp(name, "dltensor") == 0) {
        auto *mt = static_cast<dlt::dlpack::ManagedTensor *>(PyCapsule_GetPointer(cap.ptr(), name));
        const auto &t = mt->dl_tensor;
        if (t.ndim && t.shape[0]) v = *(const float *) ((const char *) t.data + t.byte_offset);
        PyCapsule_SetName(cap.ptr(), "used_dltensor");
        if (mt->deleter) mt->deleter(mt);
    }
    return v;
}

float *owned_buffer(size_t n) {
    auto *p = new float[n];
    for (size_t i = 0; i < n; ++i) p[i] = (float) i;
    return p;
}

template <typename Framework> void def_return(py::module_ &m, const char *name) {
    m.def(name, [](size_t n) {
        float *p = owned_buffer(n);
        py::capsule owner(p, [](void *q) { delete[] static_cast<float *>(q); });
        return py::dltensor<Framework, float, py::ndim<1>>(p, {n}, owner);
    });
}
} // namespace

PYBIND11_MODULE(dltensor_bench_pybind11, m) {
    m.def("floor_0", [] { return 0.f; });
    m.def("floor_1", [](py::handle) { return 0.f; });
    m.def("floor_2", [](py::handle, py::handle) { return 0.f; });
    m.def("floor_3", [](py::handle, py::handle, py::handle) { return 0.f; });
    m.def("array_t_1", [](Array a) { return a.size() ? a.data()[0] : 0.f; });
    m.def("array_t_3", [](Array a, Array b, Array c) {
        return (a.size() ? a.data()[0] : 0.f) + (b.size() ? b.data()[0] : 0.f) + (c.size() ? c.data()[0] : 0.f);
    });
    m.def("dlpack_1", [](py::handle a) { return via_dlpack(a); });
    m.def("dlpack_3", [](py::handle a, py::handle b, py::handle c) { return via_dlpack(a) + via_dlpack(b) + via_dlpack(c); });
    // Two overloads, float64 then float32: a float32 argument is refused by the first, bound by the second.
    m.def("array_t_overloaded", [](py::array_t<double, py::array::c_style> a) { return (float) a.size(); });
    m.def("array_t_overloaded", [](Array a) { return a.size() ? a.data()[0] : 0.f; });
    m.def("dltensor_overloaded", [](py::dltensor<const double, py::ndim<1>, py::c_contig> a) { return (float) a.size(); });
    m.def("dltensor_overloaded", [](Tensor a) { return a.size() ? a.data()[0] : 0.f; });
    m.def("dltensor_f8_1", [](py::dltensor<const py::float8_e4m3fn, py::ndim<1>, py::c_contig> a) {
        return a.size() ? (float) a.data()[0] : 0.f;
    });
    m.def("dltensor_1", [](Tensor a) { return a.size() ? a.data()[0] : 0.f; });
    m.def("dltensor_3", [](Tensor a, Tensor b, Tensor c) {
        return (a.size() ? a.data()[0] : 0.f) + (b.size() ? b.data()[0] : 0.f) + (c.size() ? c.data()[0] : 0.f);
    });
    m.def("array_t_ret_numpy", [](size_t n) {
        float *p = owned_buffer(n);
        py::capsule owner(p, [](void *q) { delete[] static_cast<float *>(q); });
        return Array({n}, {sizeof(float)}, p, owner);
    });
    def_return<py::numpy>(m, "dltensor_ret_numpy");
    def_return<py::pytorch>(m, "dltensor_ret_pytorch");
    def_return<py::jax>(m, "dltensor_ret_jax");
    def_return<py::paddle>(m, "dltensor_ret_paddle");
    m.def("set_torch_key_set", [](bool on) { dlt::torch_key_set_enabled() = on; });

    // Returns as ports write them (see bench_module.cpp): array_t's own idioms beside py::dltensor's.
    using Out = py::dltensor<py::numpy, float, py::ndim<1>>;
    m.def("array_t_copy_of", [](size_t n) {
        std::vector<float> v(n, 1.f);
        return py::array_t<float>((py::ssize_t) n, v.data());
    });
    m.def("dltensor_copy_of", [](size_t n) {
        std::vector<float> v(n, 1.f);
        return Out::copy_of(v.data(), {n});
    });
    m.def("dltensor_adopt", [](size_t n) { return Out::adopt(std::vector<float>(n, 1.f)); });
    m.def("array_t_empty_fill", [](size_t n) {
        py::array_t<float> out((py::ssize_t) n);
        float *p = out.mutable_data();
        for (size_t i = 0; i < n; ++i) p[i] = 1.f;
        return out;
    });
    m.def("dltensor_empty_fill", [](size_t n) {
        Out out = Out::empty({n});
        for (size_t i = 0; i < n; ++i) out(i) = 1.f;
        return out;
    });
    // copy_of's stages (bench/callgrind.py --copy-of): py::dltensor's (copy_stages.h), then array_t's own.
    def_copy_stages<Out>(m);
    def_caller_framework<py::dltensor<float, py::ndim<1>>, py::dltensor<const float, py::ndim<1>>>(m);
    m.def("array_t_copy_stage_alloc", [](size_t n) {
        std::vector<float> v(n, 1.f);
        py::array_t<float> out((py::ssize_t) n);
        return v[0] + (float) out.size();
    });
    m.def("array_t_copy_stage_copy", [](size_t n) {
        std::vector<float> v(n, 1.f);
        py::array_t<float> out((py::ssize_t) n, v.data());
        return v[0] + (float) out.size();
    });
    m.def("array_t_converted", [](Array a) { return a.size() ? a.data()[0] : 0.f; });
    m.def("dltensor_converted", [](Tensor a) { return a.size() ? a.data()[0] : 0.f; });
}
