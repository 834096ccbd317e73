// dltensor/frameworks/tensorflow.h: TensorFlow: `__dlpack__` (string, variant and resource tensors, whose export
// aborts, refused before the call); immutable tensors; `tf.cast` (F order on the CPU: NumPy); returns through its
// DLPack `from_dlpack` (byte_offset folded into `data`), as NumPy copies where it cannot adopt memory and for float8.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "framework.h"

DLTENSOR_FRAMEWORK_TAG(tensorflow, 3, "tensorflow.Tensor")

namespace dlt {

inline constexpr int fw_tensorflow = framework_tags::tensorflow::value;

}  // namespace dlt
