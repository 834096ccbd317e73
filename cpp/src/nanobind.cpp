// nanobind.cpp (installed as dltensor/src/nanobind.cpp): the nanobind backend's functions that are no template
// (config.h: DLTENSOR_NANOBIND_PART), compiled once per nanobind library of the build tree by the CMake
// package, which links it into each module that links both. Without CMake: not needed.
#define DLTENSOR_NANOBIND_LIBRARY_BUILD 1

#include <dltensor/nanobind.h>
