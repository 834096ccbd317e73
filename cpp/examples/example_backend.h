// cpp/examples/example_backend.h: lets each example's dltensor.cpp build against both backends, as the
// tests check. Your extension needs none of this: write the two lines of the backend you use,
//
//   #include <dltensor/nanobind.h>          // or <dltensor/pybind11.h>
//   namespace py = nanobind;                // or pybind11
//
// and the module macro of that library (NB_MODULE / PYBIND11_MODULE).
#pragma once

// The tests build the dltensor modules again with Clang and as CUDA (nvcc), each with a suffix of its
// own (`_clang`, `_nvcc`), so that one process loads every build.
#ifndef DLTENSOR_EXAMPLE_SUFFIX
#  define DLTENSOR_EXAMPLE_SUFFIX
#endif
#define DLTENSOR_EXAMPLE_JOIN(a, b) DLTENSOR_EXAMPLE_JOIN_(a, b)
#define DLTENSOR_EXAMPLE_JOIN_(a, b) a##b

#if defined(DLTENSOR_EXAMPLE_PYBIND11)
#  include <dltensor/pybind11.h>
namespace py = pybind11;
/// The module `<task>_dltensor_pybind11` (plus the suffix).
#  define DLTENSOR_EXAMPLE_MODULE(task, m) PYBIND11_MODULE(DLTENSOR_EXAMPLE_JOIN(task##_dltensor_pybind11, DLTENSOR_EXAMPLE_SUFFIX), m)
#else
#  include <dltensor/nanobind.h>
namespace py = nanobind;
/// The module `<task>_dltensor_nanobind` (plus the suffix).
#  define DLTENSOR_EXAMPLE_MODULE(task, m) NB_MODULE(DLTENSOR_EXAMPLE_JOIN(task##_dltensor_nanobind, DLTENSOR_EXAMPLE_SUFFIX), m)
#endif
