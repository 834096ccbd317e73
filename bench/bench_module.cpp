// bench/bench_module.cpp: the same trivial functions bound three ways (a bare object parameter, the
// floor; nanobind's nb::ndarray; py::dltensor), so that per-call costs compare side by side.
#include <dltensor/nanobind.h>

#include "caller_framework.h"
#include "copy_stages.h"

#include <complex>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;
namespace py = nanobind;

namespace {
float first(const float *p, size_t n) { return n ? p[0] : 0.f; }

float *owned_buffer(size_t n) {
    auto *p = new float[n];
    for (size_t i = 0; i < n; ++i) p[i] = (float) i;
    return p;
}
nb::capsule owner(float *p) { return nb::capsule(p, [](void *q) noexcept { delete[] (float *) q; }); }

template <typename Array> void def_args(nb::module_ &m, const char *prefix) {
    std::string p(prefix);
    m.def((p + "_1").c_str(), [](Array a) { return first(a.data(), a.size()); });
    m.def((p + "_3").c_str(), [](Array a, Array b, Array c) {
        return first(a.data(), a.size()) + first(b.data(), b.size()) + first(c.data(), c.size());
    });
}

/// Two overloads, float64 then float32: a float32 argument is refused by the first (the refusal is
/// recorded for dltensor.explain()) and bound by the second.
template <typename F64, typename F32> void def_overloaded(nb::module_ &m, const char *name) {
    m.def(name, [](F64 a) { return (float) a.size(); });
    m.def(name, [](F32 a) { return first(a.data(), a.size()); });
}

/// Device-agnostic variants (metadata only) for CUDA rows.
template <typename Array> void def_any(nb::module_ &m, const char *prefix) {
    std::string p(prefix);
    m.def((p + "_1").c_str(), [](Array a) { return (float) a.size(); });
    m.def((p + "_3").c_str(), [](Array a, Array b, Array c) { return (float) (a.size() + b.size() + c.size()); });
}

/// PyTorch's own cost of a return: the same 16 floats (the same allocations: the buffer and one managed
/// tensor) handed straight to PyTorch's exchange API, with a deleter that needs no Python (no owner
/// object, so no GIL to re-take when PyTorch frees the tensor with the GIL released). What any binding's
/// PyTorch return costs at least, on top of its call.
nb::object pytorch_return_floor(size_t n) {
    struct exported {
        dlt::dlpack::ManagedTensorVersioned mt;
        int64_t extent;
        float *data;
    };
    const dlt::dlpack::ExchangeAPI *api = dlt::torch_exchange_api();
    if (!api) throw std::runtime_error("PyTorch's exchange API is not available");
    auto *e = new exported{};
    e->data = owned_buffer(n);
    e->extent = (int64_t) n;
    e->mt.version = {dlt::dlpack::major_version, dlt::dlpack::minor_version};
    e->mt.dl_tensor.data = e->data;
    e->mt.dl_tensor.device = {dlt::dlpack::cpu, 0};
    e->mt.dl_tensor.ndim = 1;
    e->mt.dl_tensor.dtype = {dlt::dlpack::float_, 32, 1};
    e->mt.dl_tensor.shape = &e->extent;
    e->mt.manager_ctx = e;
    e->mt.deleter = [](dlt::dlpack::ManagedTensorVersioned *self) {
        auto *x = static_cast<exported *>(self->manager_ctx);
        delete[] x->data;
        delete x;
    };
    void *out = nullptr;
    if (api->managed_tensor_to_py_object_no_sync(&e->mt, &out) != 0 || !out) throw nb::python_error();
    return nb::steal((PyObject *) out);
}

template <template <typename...> class Array, typename Framework> void def_return(nb::module_ &m, const char *name) {
    m.def(name, [](size_t n) {
        float *p = owned_buffer(n);
        return Array<Framework, float, nb::ndim<1>>(p, {n}, owner(p));
    });
}
} // namespace

NB_MODULE(dltensor_bench, m) {
    m.def("floor_0", [] { return 0.f; });
    m.def("floor_1", [](nb::handle) { return 0.f; });
    m.def("floor_2", [](nb::handle, nb::handle) { return 0.f; });
    m.def("floor_3", [](nb::handle, nb::handle, nb::handle) { return 0.f; });
    def_args<nb::ndarray<const float, nb::ndim<1>, nb::c_contig>>(m, "nanobind");
    def_args<py::dltensor<const float, py::ndim<1>, py::c_contig>>(m, "dltensor");
    def_overloaded<nb::ndarray<const double, nb::ndim<1>, nb::c_contig>,
                   nb::ndarray<const float, nb::ndim<1>, nb::c_contig>>(m, "nanobind_overloaded");
    def_overloaded<py::dltensor<const double, py::ndim<1>, py::c_contig>,
                   py::dltensor<const float, py::ndim<1>, py::c_contig>>(m, "dltensor_overloaded");
    def_any<nb::ndarray<const float, nb::ndim<1>>>(m, "nanobind_any");
    def_any<py::dltensor<const float, py::ndim<1>>>(m, "dltensor_any");
    def_return<nb::ndarray, nb::numpy>(m, "nanobind_ret_numpy");
    def_return<nb::ndarray, nb::pytorch>(m, "nanobind_ret_pytorch");
    def_return<nb::ndarray, nb::jax>(m, "nanobind_ret_jax");
    def_return<py::dltensor, py::numpy>(m, "dltensor_ret_numpy");
    def_return<py::dltensor, py::pytorch>(m, "dltensor_ret_pytorch");
    def_return<py::dltensor, py::jax>(m, "dltensor_ret_jax");
    // PaddlePaddle: nanobind has no Paddle tag; its anchor is a capsule handed to paddle.utils.dlpack.
    def_return<nb::ndarray, nb::no_framework>(m, "nanobind_ret_capsule");
    def_return<py::dltensor, py::paddle>(m, "dltensor_ret_paddle");
    // float8 (no nb::ndarray anchor: nanobind names no float8 dtype).
    m.def("dltensor_f8_1", [](py::dltensor<const py::float8_e4m3fn, py::ndim<1>, py::c_contig> a) {
        return a.size() ? (float) a.data()[0] : 0.f;
    });
    m.def("pytorch_return_floor", &pytorch_return_floor);
    // PyTorch's negative/conjugate bits from the key set (torch_key_set.h) or from is_neg()/is_conj().
    m.def("set_torch_key_set", [](bool on) { dlt::torch_key_set_enabled() = on; });
    // Returns as ports write them (a small result vector of n floats): a copy of C++ data, a container
    // handed over, an allocation filled in place; and a converted argument (float64 into const float32).
    using Out = py::dltensor<py::numpy, float, py::ndim<1>>;
    m.def("nanobind_copy_of", [](size_t n) {
        std::vector<float> v(n, 1.f);
        return nb::cast(nb::ndarray<nb::numpy, float, nb::ndim<1>>(v.data(), {n}, nb::handle()), nb::rv_policy::copy);
    });
    m.def("dltensor_copy_of", [](size_t n) {
        std::vector<float> v(n, 1.f);
        return Out::copy_of(v.data(), {n});
    });
    m.def("nanobind_adopt", [](size_t n) {
        auto *v = new std::vector<float>(n, 1.f);
        nb::capsule keep(v, [](void *p) noexcept { delete static_cast<std::vector<float> *>(p); });
        return nb::ndarray<nb::numpy, float, nb::ndim<1>>(v->data(), {n}, keep);
    });
    m.def("dltensor_adopt", [](size_t n) { return Out::adopt(std::vector<float>(n, 1.f)); });
    // copy_of's stages (bench/callgrind.py --copy-of): py::dltensor's (copy_stages.h); nb::ndarray
    // allocates and copies inside its cast, so its only stage before the return is the view it casts.
    def_copy_stages<Out>(m);
    def_caller_framework<py::dltensor<float, py::ndim<1>>, py::dltensor<const float, py::ndim<1>>>(m);
    m.def("nanobind_copy_stage_view", [](size_t n) {
        std::vector<float> v(n, 1.f);
        nb::ndarray<nb::numpy, float, nb::ndim<1>> view(v.data(), {n}, nb::handle());
        return v[0] + (float) view.size();
    });
    m.def("dltensor_empty_fill", [](size_t n) {
        Out out = Out::empty({n});
        for (size_t i = 0; i < n; ++i) out(i) = 1.f;
        return out;
    });
    m.def("nanobind_converted", [](nb::ndarray<const float, nb::ndim<1>, nb::c_contig> a) { return first(a.data(), a.size()); });
    m.def("dltensor_converted", [](py::dltensor<const float, py::ndim<1>, py::c_contig> a) { return first(a.data(), a.size()); });
    // The imaginary part of a complex64 vector's first element, as its logical value.
    m.def("dltensor_imag0", [](py::dltensor<const std::complex<float>, py::ndim<1>> a) {
        return a.size() ? a.data()[0].imag() : 0.f;
    });
}
