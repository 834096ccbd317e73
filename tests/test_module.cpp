// tests/test_module.cpp: the C++ test module, built once per backend from the same sources.
#include "backend.h"

#ifndef DLTENSOR_TEST_MODULE_NAME
#  error "the build defines DLTENSOR_TEST_MODULE_NAME (dltensor_test_nanobind, dltensor_test_pybind11)"
#endif

DLTENSOR_TEST_MODULE(DLTENSOR_TEST_MODULE_NAME, m) {
    init_producer(m);
    init_import(m);
    init_constraints(m);
    init_conversion(m);
    init_dtypes(m);
    init_export(m);
    init_ownership(m);
#if !defined(DLTENSOR_TEST_PYBIND11)
    init_ndarray_compat(m);
#endif
    init_torch(m);
    init_torch_key_set(m);
    init_properties(m);
    init_producers(m);
    init_identity(m);
    init_porting(m);
    init_explain(m);
}
