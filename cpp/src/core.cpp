// core.cpp (installed as dltensor/src/core.cpp): the core compiled once (config.h: DLTENSOR_CORE), into the
// static library `dltensor_core` that dltensor::dltensor links into every module. Without CMake: optional;
// compile it once with the module's flags and define DLTENSOR_CORE_LIBRARY in the other sources.
#define DLTENSOR_CORE_LIBRARY_BUILD 1

#include <dltensor/python/process_wide-inl.h>
#include <dltensor/core/core-inl.h>
