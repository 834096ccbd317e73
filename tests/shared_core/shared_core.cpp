// tests/shared_core/shared_core.cpp: a small extension, built as four modules (two per backend) that
// tests/test_shared_core.py imports into one process: arguments (converted and not), a NumPy return,
// a refusal, and the addresses of the state that the core and a module's own inline code share
// (config.h: DLTENSOR_PROCESS_WIDE), which one shared core keeps once for all modules.
#if defined(SC_PYBIND11)
#  include <dltensor/pybind11.h>
#  include <pybind11/stl.h>
namespace py = pybind11;
#  define SC_MODULE_DEF(name, m) PYBIND11_MODULE(name, m)
#else
#  include <dltensor/nanobind.h>
#  include <nanobind/stl/vector.h>
namespace py = nanobind;
#  define SC_MODULE_DEF(name, m) NB_MODULE(name, m)
#endif

#include <cstdint>
#include <vector>

SC_MODULE_DEF(SC_MODULE, m) {
    m.def("total", [](py::dltensor<const float, py::ndim<1>> x) {
        double s = 0;
        for (size_t i = 0; i < x.shape(0); ++i) s += x(i);
        return s;
    });
    m.def("fill", [](py::dltensor<float, py::ndim<1>> x, float v) {
        for (size_t i = 0; i < x.shape(0); ++i) x(i) = v;
    });
    m.def("doubled", [](py::dltensor<const float, py::ndim<1>> x) {
        std::vector<float> out(x.shape(0));
        for (size_t i = 0; i < out.size(); ++i) out[i] = 2 * x(i);
        return py::dltensor<py::numpy, float, py::ndim<1>>::copy_of(out.data(), {out.size()});
    });
    m.def("fast_paths", [](int set) {  // -1 reads; 0 or 1 sets, then reads
        if (set >= 0) dlt::fast_paths_enabled().store(set != 0);
        return dlt::fast_paths_enabled().load();
    });
    // Where this module finds the process-wide state (one address per state with a shared core).
    m.def("state_addresses", [] {
        return std::vector<uintptr_t>{(uintptr_t) &dlt::detail::sub_interpreters_in_use(),
                                      (uintptr_t) &dlt::last_refusal(),
                                      (uintptr_t) &dlt::producer_error_state::of_this_thread(),
                                      (uintptr_t) &dlt::fast_paths_enabled()};
    });
    // How many sub-interpreters hold dltensor state now (counted by the core: one count per shared core).
    m.def("sub_interpreters_in_use", [] { return dlt::detail::sub_interpreters_in_use().load(); });
    // The slot of a kind of state the module's own code and the core both use.
    m.def("py_names_slot", [] { return dlt::detail::state_index<dlt::py_names>::value; });
}
