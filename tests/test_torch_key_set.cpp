// tests/test_torch_key_set.cpp: the calibrated read of PyTorch's negative and conjugate bits from the
// tensor's dispatch key set (torch_key_set.h), in its own submodule `torch_key_set`.
// This file reads the core's internals (the key-set calibration), which a module's sources built against the
// library dltensor_core do not see (config.h: DLTENSOR_CORE): it compiles the core header-only.
#undef DLTENSOR_CORE_LIBRARY
#include "backend.h"

#include <string>

namespace {
/// The queries of `torch._C.TensorBase` for `t`'s type, as an import finds them.
dlt::torch_checks checks_for(py::handle t) {
    py::object base = tb::steal(PyImport_ImportModule("torch")).attr("_C").attr("TensorBase");
    return dlt::torch_checks::of((PyTypeObject *) base.ptr(), Py_TYPE(t.ptr()));
}
} // namespace

void init_torch_key_set(py::module_ &m) {
    py::module_ s = m.def_submodule("torch_key_set", "The calibrated read of PyTorch's negative/conjugate bits.");
    s.def("set_enabled", [](bool on) { dlt::torch_key_set_enabled() = on; },
          "Read the bits from the key set (True) or always ask is_neg() / is_conj() (False).");
    s.def("enabled", [] { return dlt::torch_key_set_enabled().load(); });
    s.def("layout", [] {
        const dlt::torch_key_set &k = dlt::torch_key_set::get(dlt::torch_exchange_api);
        py::dict d;
        d["calibrated"] = k.calibrated();
        d["failure"] = std::string(k.failure ? k.failure : "");
        d["impl_in_object"] = (long long) k.impl_in_object;
        d["shape_in_impl"] = (long long) k.shape_in_impl;
        d["keys_in_impl"] = (long long) k.keys_in_impl;
        d["negative"] = (unsigned long long) k.negative;
        d["conjugate"] = (unsigned long long) k.conjugate;
        d["probes"] = k.probes;
        return d;
    }, "The layout found at first use: offsets, bits, probe count, or why it is unknown.");
    // The same call an import makes: the bits of `t`, given the exchange API's view of `of` (`t` itself
    // as in an import; another tensor to try the guard).
    auto bits = [](py::handle t, py::handle of) {
        const dlt::dlpack::ExchangeAPI *api = dlt::torch_exchange_api();
        dlt::dlpack::Tensor view{};
        if (!api || !api->dltensor_from_py_object_no_sync || api->dltensor_from_py_object_no_sync(of.ptr(), &view) != 0)
            throw tb::python_error();
        bool neg = false, conj = false;
        const bool keys = dlt::torch_lazy_bits(t.ptr(), checks_for(t), &view, true, neg, conj);
        py::dict d;
        d["negative"] = neg;
        d["conjugate"] = conj;
        d["route"] = std::string(keys ? "key_set" : "query");
        return d;
    };
    s.def("bits", [bits](py::handle t) { return bits(t, t); },
          "The negative and conjugate bits of a PyTorch tensor and how they were found ('key_set' or 'query').");
    s.def("bits_with_view_of", bits, "bits() of the first tensor, handed the exchange API's view of the second.");
    s.def("sum", [](py::dltensor<const float, py::ndim<1>> x) {
        double total = 0;
        for (size_t i = 0; i < x.shape(0); ++i) total += x(i);
        return total;
    }, "Sum of a float32 vector, read as its logical values.");
}
