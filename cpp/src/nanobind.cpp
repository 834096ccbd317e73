// nanobind.cpp (cpp/src/, installed as dltensor/src/nanobind.cpp): the nanobind backend's functions that are
// no template (config.h: DLTENSOR_NANOBIND_PART) compiled once. The CMake package builds this file into one
// static library per nanobind library of the build tree, with that library's settings, and links it into
// each module that links both (the module's sources then compile only the declarations). A build without
// CMake needs nothing of this file.
#define DLTENSOR_NANOBIND_LIBRARY_BUILD 1

#include <dltensor/nanobind.h>
