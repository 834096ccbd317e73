// dltensor/frameworks/paddle.h: PaddlePaddle (tested with 3.3): imports through its exchange API, else `__dlpack__`;
// its in-place rule and version counter; `astype`; returns and `empty()` through the exchange API, else
// `paddle.from_dlpack` (byte_offset folded into `data`, release deferred out of its deleter; paddle_views.h).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "framework.h"

DLTENSOR_FRAMEWORK_TAG(paddle, 9, "paddle.Tensor")

namespace dlt {

inline constexpr int fw_paddle = framework_tags::paddle::value;

}  // namespace dlt
