// dltensor/frameworks/cupy.h: CuPy as a framework: `__dlpack__` in; conversions with `astype`; returns
// through `cupy.from_dlpack` (read-only tensors as copies: CuPy has no read-only arrays).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "framework.h"

DLTENSOR_FRAMEWORK_TAG(cupy, 5, "cupy.ndarray")

namespace dlt {

inline constexpr int fw_cupy = framework_tags::cupy::value;

}  // namespace dlt
