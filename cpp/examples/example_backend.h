// cpp/examples/example_backend.h: lets each example's dltensor.cpp build against both backends, as the
// tests check. Your extension needs none of this: write the two lines of the backend you use,
//
//   #include <dltensor/nanobind.h>          // or <dltensor/pybind11.h>
//   namespace py = nanobind;                // or pybind11
//
// and the module macro of that library (NB_MODULE / PYBIND11_MODULE).
#pragma once

#if defined(DLTENSOR_EXAMPLE_PYBIND11)
#  include <dltensor/pybind11.h>
namespace py = pybind11;
/// The module `<task>_dltensor_pybind11`.
#  define DLTENSOR_EXAMPLE_MODULE(task, m) PYBIND11_MODULE(task##_dltensor_pybind11, m)
#else
#  include <dltensor/nanobind.h>
namespace py = nanobind;
/// The module `<task>_dltensor_nanobind`.
#  define DLTENSOR_EXAMPLE_MODULE(task, m) NB_MODULE(task##_dltensor_nanobind, m)
#endif
