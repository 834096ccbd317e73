// tests/test_module.cpp: the C++ test module, built once per backend from the same sources.
//
// One submodule per topic, shared helpers in `common`:
// - tests/test_X.cpp defines init_X(m), which registers the submodule `X` on the root module and defines
//   that topic's functions on it (`imports` for test_import.cpp: `import` is a Python keyword);
// - tests/test_common.cpp registers `common` (with tests/producer.cpp's producer): what several test files
//   call (the producer, owner and deleter counters, values/describe/fill, take_f32, squared_norms, keep,
//   the fast-path switch);
// - tests/test_X.py calls only `m.X.<fn>` and `m.common.<fn>` (`m`: the root module, conftest.py's fixture),
//   so every function it calls is found in test_X.cpp or test_common.cpp; files without a .cpp of their
//   own (test_leaks.py, test_threads.py, test_bad_input.py, ...) call each topic's submodule by its name.
// Results with several fields are dicts (or classes) with named fields, never tuples read by position.
#include "backend.h"

#ifndef DLTENSOR_TEST_MODULE_NAME
#  error "the build defines DLTENSOR_TEST_MODULE_NAME (dltensor_test_nanobind, dltensor_test_pybind11)"
#endif

DLTENSOR_TEST_MODULE(DLTENSOR_TEST_MODULE_NAME, m) {
    init_common(m);
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
    init_seams(m);
    init_float8(m);
    init_paddle(m);
    init_allocation(m);
    init_return_matrix(m);
    init_types(m);
}
