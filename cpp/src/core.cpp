// core.cpp (cpp/src/, installed as dltensor/src/core.cpp): the CPython-only core compiled once (config.h:
// DLTENSOR_CORE). The CMake target dltensor::dltensor builds this file into the static library
// `dltensor_core` of each build tree and links it into every module that uses dltensor, whose sources then
// compile only the declarations. A build without CMake needs nothing of this file (the headers are complete
// on their own); to get the same saving there, compile this file once with the module's flags and define
// DLTENSOR_CORE_LIBRARY in the module's other sources.
#define DLTENSOR_CORE_LIBRARY_BUILD 1

#include <dltensor/python/process_wide-inl.h>
#include <dltensor/core/core-inl.h>
