// dltensor/core.cpp: the CPython-only core compiled once (config.h: DLTENSOR_CORE). The CMake target
// dltensor::dltensor builds this file into the static library `dltensor_core` of each build tree and
// links it into every module that uses dltensor, whose sources then compile only the declarations. A
// build without CMake needs nothing of this file (the headers are complete on their own); to get the
// same saving there, compile this file once with the module's flags and define DLTENSOR_CORE_LIBRARY in
// the module's other sources.
#define DLTENSOR_CORE_LIBRARY_BUILD 1

#include "allocation.h"
#include "buffer_import.h"
#include "capsule_import.h"
#include "conversion.h"
#include "converted_arguments.h"
#include "exchange.h"
#include "export.h"
#include "frameworks/registry.h"
#include "import.h"
#include "process_state.h"
#include "producer.h"
#include "producer_error.h"
#include "refusal.h"
#include "refusal_errors.h"
#include "refusal_log.h"
#include "return_policy.h"
#include "strides.h"
