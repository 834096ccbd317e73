// dltensor/frameworks/mlx.h: MLX as a framework: `__dlpack__` in; conversions through the array API;
// returns through `mlx.core.array` (which copies).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "framework.h"

DLTENSOR_FRAMEWORK_TAG(mlx, 8, "mlx.core.array")

namespace dlt {

inline constexpr int fw_mlx = framework_tags::mlx::value;

} // namespace dlt

// The rest only the core compiles (config.h: DLTENSOR_CORE); a module's own sources see the tag.
#if DLTENSOR_CORE_DEFINITIONS
#include "../core/export.h"
#include "../python/handle.h"
#include "../python/py_ref.h"

namespace dlt {

namespace frameworks {
namespace mlx {

inline constexpr const char *packages[] = {"mlx", nullptr};

DLTENSOR_CORE PyObject *to_python(tensor_handle *h, bool) noexcept
#if DLTENSOR_CORE_DEFINITIONS
{
    const py_ref obj(make_exported(h));
    return obj ? call_function("mlx.core", "array", obj.get()).release() : nullptr;
}
#else
;
#endif

} // namespace mlx
} // namespace frameworks

inline constexpr framework mlx_framework = {
    fw_mlx, "MLX", frameworks::mlx::packages, nullptr, false,
    /*immutable*/ false, /*copies_read_only*/ false, /*reason*/ nullptr,
    /*ignores_byte_offset*/ false, /*deleter_not_reentrant*/ false,
    /*classify*/ nullptr, /*read*/ nullptr, /*check_view*/ nullptr, /*export_capsule*/ nullptr,
    /*written*/ nullptr, /*convert*/ nullptr, frameworks::mlx::to_python, /*empty*/ nullptr,
};

} // namespace dlt
#endif // DLTENSOR_CORE_DEFINITIONS
