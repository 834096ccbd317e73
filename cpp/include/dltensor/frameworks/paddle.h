// dltensor/frameworks/paddle.h: PaddlePaddle as a framework (tested with paddlepaddle 3.3): imports through
// `paddle.Tensor`'s DLPack C exchange API, else `__dlpack__` (of a detached view where the tensor does not
// stop gradient: Paddle's `__dlpack__` refuses those); Paddle's in-place rule for writable parameters (a
// leaf that does not stop gradient is written only under `paddle.no_grad()`) and its in-place version
// counter; conversions with `astype`; returns and `empty()` through the exchange API (its allocator),
// else `paddle.from_dlpack` (with the byte_offset folded into `data` and the release deferred out of
// Paddle's deleter: framework::ignores_byte_offset, deleter_not_reentrant; one tensor per live view:
// paddle_views.h).
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
