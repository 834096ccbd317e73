// core.cpp (cpp/src/, installed as dltensor/src/core.cpp): the CPython-only core compiled once (config.h:
// DLTENSOR_CORE). The CMake target dltensor::dltensor builds this file into the static library
// `dltensor_core` of each build tree and links it into every module that uses dltensor, whose sources then
// compile only the declarations. A build without CMake needs nothing of this file (the headers are complete
// on their own); to get the same saving there, compile this file once with the module's flags and define
// DLTENSOR_CORE_LIBRARY in the module's other sources.
#define DLTENSOR_CORE_LIBRARY_BUILD 1

#include <dltensor/bindings/allocation.h>
#include <dltensor/core/buffer_import.h>
#include <dltensor/core/capsule_import.h>
#include <dltensor/core/conversion.h>
#include <dltensor/core/converted_arguments.h>
#include <dltensor/core/exchange.h>
#include <dltensor/core/export.h>
#include <dltensor/frameworks/registry.h>
#include <dltensor/core/import.h>
#include <dltensor/python/process_state.h>
#include <dltensor/core/producer.h>
#include <dltensor/python/producer_error.h>
#include <dltensor/tensor/refusal.h>
#include <dltensor/core/refusal_errors.h>
#include <dltensor/core/refusal_log.h>
#include <dltensor/core/return_policy.h>
#include <dltensor/tensor/strides.h>
