// tests/free_threaded/free_threaded.cpp: every route that tests/free_threaded/stress.py drives from many
// threads at once on a free-threaded CPython: typed arguments (converting and not, writable), identity
// returns, NumPy and framework-less returns, empty() and copy_of(), tensors kept in C++ and released from
// other threads, reference_internal views of a C++ object's member, and refusals. One source, both
// backends; FT_GIL_NOT_USED (pybind11) and nanobind's FREE_THREADED (CMake) declare the module
// free-threaded, the `_gil` builds do not.
#if defined(FT_PYBIND11)
#  include <dltensor/pybind11.h>
namespace py = pybind11;
#  if defined(FT_GIL_NOT_USED)
#    define FT_MODULE_DEF(name, m) PYBIND11_MODULE(name, m, py::mod_gil_not_used())
#  else
#    define FT_MODULE_DEF(name, m) PYBIND11_MODULE(name, m)
#  endif
using rvp = py::return_value_policy;
#else
#  include <dltensor/nanobind.h>
namespace py = nanobind;
#  define FT_MODULE_DEF(name, m) NB_MODULE(name, m)
using rvp = py::rv_policy;
#endif

#include <atomic>
#include <mutex>
#include <vector>

namespace {

using Vec = py::dltensor<const float, py::ndim<1>>;
using Out = py::dltensor<py::numpy, float, py::ndim<1>>;

/// Tensors C++ keeps between calls (released by whichever thread calls `drop_kept`).
std::mutex kept_lock;
std::vector<Vec> kept;

/// Owners of returned C++ buffers released so far.
std::atomic<long> owner_frees{0};

/// The ThreadSanitizer canary's counter: a plain (not atomic) int that `unsynchronized_bump` races on on
/// purpose; volatile so that each of its increments stays a load and a store (not one add for the loop),
/// and the threads' accesses overlap for long.
volatile long canary_count = 0;

/// A C++ object whose member tensor Python views (`reference_internal`).
struct Holder {
    Out values;
    explicit Holder(size_t n) : values(Out::empty({n})) {
        for (size_t i = 0; i < n; ++i) values(i) = (float) i;
    }
};

} // namespace

#define STR2(x) #x
#define STR(x) STR2(x)

FT_MODULE_DEF(FT_MODULE, m) {
    // Arguments: any layout (strided views bind as they are), C order (others converted), writable.
    m.def("sum", [](Vec x) {
        double s = 0;
        for (size_t i = 0; i < x.shape(0); ++i) s += x(i);
        return s;
    });
    m.def("sum_c", [](py::dltensor<const float, py::ndim<2>, py::c_contig> x) {
        double s = 0;
        const float *p = x.data();
        for (size_t i = 0; i < x.shape(0) * x.shape(1); ++i) s += p[i] * (double) (i + 1);
        return s;
    });
    m.def("fill", [](py::dltensor<float, py::ndim<1>> x, float v) {
        for (size_t i = 0; i < x.shape(0); ++i) x(i) = v;
    });
    m.def("noop", [](py::handle) {});  // bench/free_threaded.py's floor: the binding library's call alone
#if !defined(FT_PYBIND11)
    // bench/free_threaded.py's control on nanobind: the same sum through nanobind's own nb::ndarray
    m.def("sum_ndarray", [](nanobind::ndarray<const float, nanobind::ndim<1>, nanobind::device::cpu> x) {
        double s = 0;
        auto v = x.view();
        for (size_t i = 0; i < v.shape(0); ++i) s += v(i);
        return s;
    });
#endif
    m.def("only_int32", [](py::dltensor<int32_t> x) { return x.ndim(); });
    m.def("same", [](py::dltensor<> x) { return x; });

    // Returns: C++ memory with an owner, empty(), copy_of() to NumPy and to no framework.
    m.def("arange", [](size_t n) {
        auto *data = new float[n];
        for (size_t i = 0; i < n; ++i) data[i] = (float) i;
        py::capsule owner(data, [](void *p) noexcept {
            delete[] static_cast<float *>(p);
            owner_frees.fetch_add(1);
        });
        return Out(data, {n}, owner);
    });
    m.def("owner_frees", [] { return owner_frees.load(); });
    m.def("empty", [](size_t n) {
        auto out = Out::empty({n});
        for (size_t i = 0; i < n; ++i) out(i) = (float) (2 * i);
        return out;
    });
    m.def("copy_of_none", [](size_t n) {
        std::vector<float> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = (float) (3 * i);
        return py::dltensor<float, py::ndim<1>>::copy_of(v);
    });

    // Tensors kept in C++ and dropped from another thread.
    m.def("keep", [](Vec x) {
        std::lock_guard<std::mutex> g(kept_lock);
        kept.push_back(x);
        return kept.size();
    });
    m.def("drop_kept", [] {
        std::vector<Vec> old;
        {
            std::lock_guard<std::mutex> g(kept_lock);
            old.swap(kept);
        }
        return old.size();  // released here, outside the lock
    });

    py::class_<Holder>(m, "Holder")
        .def(py::init<size_t>())
        .def("view", [](Holder &h) { return h.values; }, rvp::reference_internal);

    // The canary of tools/thread_sanitizer.py: a data race planted on purpose (threads calling it at once
    // write one plain int), which ThreadSanitizer must report; no other test calls it.
    m.def("unsynchronized_bump", [](long n) {
        for (long i = 0; i < n; ++i) canary_count = canary_count + 1;
        return canary_count;
    });

    m.attr("backend") = STR(FT_MODULE);
}
