// tests/test_common.cpp: the submodule `common`, what several test files call (the rest of the module
// has one submodule per topic, see tests/backend.h): the DLPack producer (tests/producer.cpp), the
// counters of owners and deleters, generic readers and writers of any tensor, a float32 parameter that
// refuses every other kind of argument, the README's `squared_norms`, tensors kept beyond the call, and
// the switch between the fast paths and the public protocols (conftest.py's import paths).
#include "elements.h"

void init_common(py::module_ &parent) {
    py::module_ m = parent.def_submodule("common", "Helpers that several test files share.");
    init_producer(m);

    // ---- counters ---------------------------------------------------------------------------------------
    m.def("deleter_calls", [] { return tb::count().deleter_calls; }, "Test-producer DLPack deleters run.");
    m.def("deleter_calls_without_gil", [] { return tb::count().deleter_calls_without_gil; });
    m.def("owner_frees", [] { return tb::count().owner_frees; }, "Owners of returned tensors released.");
    m.def("owner_frees_without_gil", [] { return tb::count().owner_frees_without_gil; });

    // ---- any tensor, read and written element by element ------------------------------------------------
    m.def("values", [](py::dltensor<py::ro> x) { return tb::values(x); },
          "Every element, in C logical order, of any read-only tensor.");
    m.def("describe", [](py::dltensor<py::ro> x) { return tb::describe(x); },
          "A dict of everything the accessors report (tests/elements.h).");
    m.def("fill", [](py::dltensor<> x, double v) {
        auto dt = x.dtype();
        tb::for_each_element(x, [&](const char *p) { tb::element_from_double(const_cast<char *>(p), dt.code, dt.bits, v); });
    }, py::arg("x"), py::arg("value"), "Writes `value` into every element of a writable tensor.");

    // ---- typed parameters ---------------------------------------------------------------------------------
    m.def("take_f32", [](py::dltensor<float> x) { return x.ndim(); },
          "The ndim of a writable float32 tensor: every other argument is refused.");
    m.def("squared_norms", [](py::dltensor<py::shape<-1, 3>, const float, py::device::cpu, py::c_contig> pts) {
        py::object out = tb::steal(PyList_New(0));
        for (size_t i = 0; i < pts.shape(0); ++i) {
            double s = 0;
            for (size_t j = 0; j < 3; ++j) s += (double) pts(i, j) * pts(i, j);
            py::object v = tb::steal(PyFloat_FromDouble(s));
            PyList_Append(out.ptr(), v.ptr());
        }
        return out;
    }, py::arg("pts"), "Squared row norms of an (n, 3) float32 C-contiguous CPU matrix.");

    // ---- tensors kept by C++ beyond the call (tb::kept(); released without the GIL by `ownership`) --------
    m.def("keep", [](py::dltensor<py::ro> x) { tb::kept().push_back(x); return tb::kept().size(); },
          "Keeps a tensor in C++; returns how many are kept.");
    m.def("kept_values", [](size_t i) { return tb::values(tb::kept().at(i)); });
    m.def("release_kept", [] { tb::kept().clear(); });

    // ---- import paths (conftest.py's route()) -------------------------------------------------------------
    m.def("set_fast_paths", [](bool on) { dlt::fast_paths_enabled() = on; },
          "Take the fast paths (PyTorch's DLPack C exchange API, the framework shortcuts: True) or the "
          "public __dlpack__ / from_dlpack routes (False), for every import and export.");
    m.def("fast_paths_enabled", [] { return dlt::fast_paths_enabled().load(); });
}
