// Every container of tensors dltensor specializes, loaded and called from a module compiled as CUDA.
#if defined(CUDA_CONTAINERS_PYBIND11)
#  include <dltensor/pybind11.h>
#  include <pybind11/stl.h>
namespace py = pybind11;
#  define CUDA_CONTAINERS_MODULE(m) PYBIND11_MODULE(cuda_containers_pybind11, m)
#else
// nanobind's container casters before dltensor's header (tests/test_seams.cpp includes them after it).
#  include <nanobind/stl/array.h>
#  include <nanobind/stl/list.h>
#  include <nanobind/stl/map.h>
#  include <nanobind/stl/optional.h>
#  include <nanobind/stl/string.h>
#  include <nanobind/stl/unordered_map.h>
#  include <nanobind/stl/vector.h>
#  include <dltensor/nanobind.h>
namespace py = nanobind;
#  define CUDA_CONTAINERS_MODULE(m) NB_MODULE(cuda_containers_nanobind, m)
#endif

#include <array>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

using f32 = py::dltensor<float, py::ndim<1>>;

/// Adds `k` to every element; the number of tensors.
static size_t add(f32 &x, int k) {
    for (size_t i = 0; i < x.shape(0); ++i) x(i) += (float) k;
    return 1;
}

CUDA_CONTAINERS_MODULE(m) {
    m.def("vector", [](std::vector<f32> v, int k) { size_t n = 0; for (f32 &x : v) n += add(x, k); return n; });
    m.def("list", [](std::list<f32> v, int k) { size_t n = 0; for (f32 &x : v) n += add(x, k); return n; });
    m.def("array", [](std::array<f32, 1> v, int k) { return add(v[0], k); });
    m.def("optional", [](std::optional<f32> v, int k) { return v ? add(*v, k) : (size_t) 0; });
    m.def("map", [](std::map<std::string, f32> v, int k) { size_t n = 0; for (auto &e : v) n += add(e.second, k); return n; });
    m.def("unordered_map", [](std::unordered_map<std::string, f32> v, int k) {
        size_t n = 0;
        for (auto &e : v) n += add(e.second, k);
        return n;
    });
    m.def("vector_ref", [](const std::vector<f32> &v, int) { return v.size(); });
}
