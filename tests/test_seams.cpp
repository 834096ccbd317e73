// tests/test_seams.cpp: where dltensor meets the binding libraries and the interpreter: the framework-less
// `dltensor.Tensor` type (never instantiable from Python, strict `__dlpack__` arguments), capsules that an
// overload pass consumed but whose call did not go ahead, read-only sources returned to PyTorch, lazy
// PyTorch parameters, exceptions raised in producer code, and conversions of producers that cannot convert
// themselves. Registered as the submodule `seams` (tests/test_seams.py).
#include "backend.h"

#include <array>
#include <complex>
#include <deque>
#include <list>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#if !defined(DLTENSOR_TEST_PYBIND11)  // pybind11's come with pybind11/stl.h (backend.h)
#  include <nanobind/stl/array.h>
#  include <nanobind/stl/list.h>
#  include <nanobind/stl/map.h>
#  include <nanobind/stl/unordered_map.h>
#  include <nanobind/stl/vector.h>
#endif

namespace {

/// `n` float64 values 0, 1, ..., n - 1 with an owner, returned without a framework (a `dltensor.Tensor`).
py::dltensor<double, py::ndim<1>> ret_none(size_t n) {
    auto *data = new double[n];
    for (size_t i = 0; i < n; ++i) data[i] = (double) i;
    return py::dltensor<double, py::ndim<1>>(
        data, {n}, py::capsule(data, [](void *p) noexcept { delete[] static_cast<double *>(p); }));
}

template <typename T> double sum_of(const py::dltensor<const T, py::ndim<1>> &x) {
    double s = 0;
    for (size_t i = 0; i < x.shape(0); ++i) s += (double) x(i);
    return s;
}

} // namespace

void init_seams(py::module_ &parent) {
    py::module_ m = parent.def_submodule("seams", "Seams with the binding libraries and the interpreter "
                                                  "(tests/test_seams.py).");
    m.def("ret_none", &ret_none, py::arg("n"), "A float64 vector 0..n-1 as a dltensor.Tensor.");
    m.def("ret_none_read_only", [](size_t n) {
        auto t = ret_none(n);
        return py::dltensor<const double, py::ndim<1>>(t);
    }, py::arg("n"));
    // A 3x4 float64 matrix 0..11 in F order, without a framework (strided buffer requests only).
    m.def("ret_none_f", [] {
        auto *data = new double[12];
        for (int i = 0; i < 12; ++i) data[i] = (double) ((i % 3) * 4 + i / 3);
        return py::dltensor<double, py::ndim<2>>(data, {3, 4},
                                                 py::capsule(data, [](void *p) noexcept { delete[] (double *) p; }),
                                                 {1, 3});
    });
    m.def("ret_none_c", [] {  // the same matrix in C order
        auto *data = new double[12];
        for (int i = 0; i < 12; ++i) data[i] = (double) i;
        return py::dltensor<double, py::ndim<2>>(data, {3, 4},
                                                 py::capsule(data, [](void *p) noexcept { delete[] (double *) p; }));
    });
    m.def("ret_memview", [](size_t n) {
        auto t = ret_none(n);
        return py::dltensor<py::memview, double, py::ndim<1>>(t);
    }, py::arg("n"));
    // Memory that C++ says outlives the tensor (no owner): the automatic policy copies, which no
    // framework-less, memview or array_api return can own.
    static double outliving[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    m.def("ret_ownerless_none", [] { return py::dltensor<double, py::shape<2, 4>>(outliving, {2, 4}, py::handle()); });
    m.def("ret_ownerless_memview",
          [] { return py::dltensor<py::memview, double, py::shape<2, 4>>(outliving, {2, 4}, py::handle()); });
    m.def("ret_ownerless_array_api",
          [] { return py::dltensor<py::array_api, double, py::shape<2, 4>>(outliving, {2, 4}, py::handle()); });
    // PyObject_GetBuffer with a named request (a consumer's view of the buffer protocol): the number of
    // dimensions and whether shape and strides came back; BufferError when refused.
    m.def("get_buffer", [](py::handle obj, const std::string &request) {
        const int flags = request == "simple" ? PyBUF_SIMPLE : request == "nd" ? PyBUF_ND
                        : request == "strided" ? PyBUF_STRIDES : request == "c" ? PyBUF_C_CONTIGUOUS
                        : request == "f" ? PyBUF_F_CONTIGUOUS : request == "any" ? PyBUF_ANY_CONTIGUOUS
                        : request == "writable" ? PyBUF_WRITABLE : -1;
        if (flags < 0) throw std::invalid_argument("unknown request");
        Py_buffer view;
        if (PyObject_GetBuffer(obj.ptr(), &view, flags) != 0) throw tb::python_error();
        py::dict d;
        d["ndim"] = view.ndim;
        d["shape"] = view.shape != nullptr;
        d["strides"] = view.strides != nullptr;
        d["len"] = (long) view.len;
        PyBuffer_Release(&view);
        return d;
    }, py::arg("obj"), py::arg("request"));
    // view<...>() giving contiguous memory another fixed shape of as many elements (nanobind's own idiom).
    m.def("negate_2x2_as_4", [](py::dltensor<std::complex<float>, py::shape<2, 2>, py::c_contig, py::device::cpu> x) {
        auto v = x.view<py::shape<4>>();
        for (size_t i = 0; i < v.shape(0); ++i) v(i) = -v(i);
    }, py::arg("x"));
    m.def("view_as_matrix", [](py::dltensor<const double> x) { return x.view<py::ndim<2>>().shape(0); },
          py::arg("x"));
    // The thread-pool rule (docs/reference.md §14): import in the calling thread, hand the workers the
    // tensors (C++ copies, no Python objects), and release the GIL around the pool. Each worker sums its
    // share of the rows; the calling thread's tensor is moved into the workers, so the last reference is
    // dropped on a worker, which takes the GIL for the release (the calling thread has released it).
    m.def("pool_sum", [](py::dltensor<const float, py::ndim<2>> x, size_t workers) {
        std::vector<double> partial(workers, 0.0);
        {
            std::vector<py::dltensor<const float, py::ndim<2>>> copies(workers, x);
            x = py::dltensor<const float, py::ndim<2>>();  // the workers hold the only references
            py::gil_scoped_release released;
            std::vector<std::thread> pool;
            for (size_t w = 0; w < workers; ++w)
                pool.emplace_back([&, w] {
                    auto mine = std::move(copies[w]);
                    for (size_t i = w; i < mine.shape(0); i += workers)
                        for (size_t j = 0; j < mine.shape(1); ++j) partial[w] += mine(i, j);
                });  // `mine` dropped here: the last one takes the GIL to release the owner
            for (auto &t : pool) t.join();
        }
        double s = 0;
        for (double p : partial) s += p;
        return s;
    }, py::arg("x"), py::arg("workers"));
    m.def("ro_f32", &sum_of<float>, py::arg("x"));
    m.def("ro_f64", &sum_of<double>, py::arg("x"));
    m.def("ro_f32_noconvert", &sum_of<float>, py::arg("x").noconvert());
    m.def("wr_f32", [](py::dltensor<float, py::ndim<1>> x) { return x.shape(0); }, py::arg("x"));
    // By const reference: the binding library passes the caster's own value (not moved out of it).
    m.def("wr_f32_ref", [](const py::dltensor<float, py::ndim<1>> &x) { return x.shape(0); }, py::arg("x"));

    // Two overloads whose first takes a writable tensor and a read-only one: a raw capsule bound to `dst`
    // in the exact pass must still be there for the converting pass when `src` needs a conversion.
    m.def("copy_into", [](py::dltensor<float, py::ndim<1>> dst, py::dltensor<const float, py::ndim<1>> src) {
        for (size_t i = 0; i < dst.shape(0) && i < src.shape(0); ++i) dst(i) = src(i);
        return dst.shape(0);
    }, py::arg("dst"), py::arg("src"));
    m.def("copy_into", [](int, int) { return (size_t) 0; }, py::arg("a"), py::arg("b"));
    // The same with one overload (the binding library makes one pass, converting).
    m.def("copy_into_one", [](py::dltensor<float, py::ndim<1>> dst, py::dltensor<const float, py::ndim<1>> src) {
        for (size_t i = 0; i < dst.shape(0) && i < src.shape(0); ++i) dst(i) = src(i);
        return dst.shape(0);
    }, py::arg("dst"), py::arg("src"));
    // A capsule for a tensor parameter, then an argument that fails to load in every pass: the call never
    // goes ahead, and the capsule must be left usable.
    m.def("tensor_then_int", [](py::dltensor<float, py::ndim<1>> dst, int) { return dst.shape(0); },
          py::arg("dst"), py::arg("k"));

    // Read-only sources returned as PyTorch tensors (PyTorch has no read-only tensors: a copy).
    m.def("ident_torch", [](py::dltensor<py::pytorch, const float> x) { return x; }, py::arg("x"));
    m.def("ident_torch_writable", [](py::dltensor<py::pytorch, float> x) { return x; }, py::arg("x"));

    // A catch-all overload after a tensor one: an exception raised in the producer's code must not let
    // it run.
    m.def("tensor_or_object", [](py::dltensor<const float>) { return std::string("tensor"); }, py::arg("x"));
    m.def("tensor_or_object", [](py::object) { return std::string("object"); }, py::arg("x"));
    m.def("tensor_only", [](py::dltensor<const float> x) { return x.ndim(); }, py::arg("x"));

    // A function body that raises TypeError after an earlier overload refused its argument.
    m.def("refuse_then_raise", [](py::dltensor<float> x) { return x.ndim(); }, py::arg("x"));
    m.def("refuse_then_raise", [](py::dltensor<const double>) -> size_t {
        throw py::type_error("raised by the function body");
    }, py::arg("x"));
#if !defined(DLTENSOR_TEST_PYBIND11)
    // nanobind's `.none()`: None binds as an empty tensor, and an empty tensor returns as None.
    m.def("passthrough_none", [](py::dltensor<> a) { return a; }, py::arg("a").none());
    m.def("passthrough_none_policy_none", [](py::dltensor<> a) { return a; }, py::arg("a").none(),
          py::rv_policy::none);
    // A `.none()` list's None entries bind as empty tensors: nothing of the entry before them is left.
    m.def("ndims_of_entries", [](std::vector<py::dltensor<>> v) {
        std::vector<size_t> n;
        for (auto &t : v) n.push_back(t.ndim());
        return n;
    }, py::arg("v").none());
#else  // pybind11 spells an optional tensor std::optional
    m.def("passthrough_none", [](std::optional<py::dltensor<>> a) { return a; }, py::arg("a"));
#endif
    m.def("optional_f32", [](std::optional<py::dltensor<float>> x) { return x.has_value(); }, py::arg("x"));

    // Containers of tensors, then an argument that fails to load in every pass: a raw capsule that an
    // element consumed must be left usable (`<container>_then_int`); the total of the tensors' lengths.
    using f32 = py::dltensor<float, py::ndim<1>>;
    m.def("vector_then_int", [](std::vector<f32> v, int) { return v.size(); }, py::arg("v"), py::arg("k"));
    m.def("list_then_int", [](std::list<f32> v, int) { return v.size(); }, py::arg("v"), py::arg("k"));
    m.def("array_then_int", [](std::array<f32, 1> v, int) { return v.size(); }, py::arg("v"), py::arg("k"));
    m.def("optional_then_int", [](std::optional<f32> v, int) { return v ? (size_t) 1 : (size_t) 0; },
          py::arg("v"), py::arg("k"));
    m.def("map_then_int", [](std::map<std::string, f32> v, int) { return v.size(); }, py::arg("v"), py::arg("k"));
    m.def("unordered_map_then_int", [](std::unordered_map<std::string, f32> v, int) { return v.size(); },
          py::arg("v"), py::arg("k"));
#if defined(DLTENSOR_TEST_PYBIND11)  // nanobind has no std::deque caster
    m.def("deque_then_int", [](std::deque<f32> v, int) { return v.size(); }, py::arg("v"), py::arg("k"));
#endif
    // The same container by const reference (the binding library passes its caster's value).
    m.def("vector_ref_then_int", [](const std::vector<f32> &v, int) { return v.size(); }, py::arg("v"), py::arg("k"));
    // Two overloads that differ after the container (issue: the first consumed the capsule, the second
    // refused it): the second binds, and its call writes through the capsule's tensor.
    m.def("fill_vector", [](std::vector<f32> v, int k) {
        for (f32 &x : v) for (size_t i = 0; i < x.shape(0); ++i) x(i) = (float) k;
        return std::string("int");
    }, py::arg("v"), py::arg("k"));
    m.def("fill_vector", [](std::vector<f32> v, const std::string &s) {
        for (f32 &x : v) for (size_t i = 0; i < x.shape(0); ++i) x(i) = (float) s.size();
        return std::string("str");
    }, py::arg("v"), py::arg("s"));
}
