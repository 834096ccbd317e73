// dltensor/frameworks/mlx.h: MLX as a framework: `__dlpack__` in; conversions through the array API;
// returns through `mlx.core.array` (which copies).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "framework.h"

DLTENSOR_FRAMEWORK_TAG(mlx, 8, "mlx.core.array")

namespace dlt {

inline constexpr int fw_mlx = framework_tags::mlx::value;

}  // namespace dlt
