// dltensor/frameworks/tensorflow.h: TensorFlow as a framework: `__dlpack__` except for the dtypes whose
// export aborts the process (string, variant, resource: refused before the call); immutable tensors;
// conversions with `tf.cast` (F order on the CPU: NumPy); returns through
// `tensorflow.experimental.dlpack.from_dlpack` (with the byte_offset folded into `data`:
// framework::ignores_byte_offset), and as copies (through NumPy) where TensorFlow cannot adopt the memory
// and for float8.
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
