// dltensor/frameworks/jax.h: JAX: imports through jaxlib's DLPack export, else `__dlpack__`; immutable arrays;
// conversions through NumPy on the CPU or without x64 mode, else `astype`; returns through jaxlib's
// `dlpack_managed_tensor_to_buffer`, else `jax.dlpack.from_dlpack`, and as NumPy copies where JAX cannot adopt memory.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "framework.h"

DLTENSOR_FRAMEWORK_TAG(jax, 4, "jax.Array")

namespace dlt {

inline constexpr int fw_jax = framework_tags::jax::value;

}  // namespace dlt
