// dltensor/frameworks/mlx-inl.h: the bodies of mlx.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "mlx.h"

#include "../core/export-inl.h"
#include "../python/handle.h"

namespace dlt {

namespace frameworks {
namespace mlx {

inline constexpr const char *packages[] = {"mlx", nullptr};

DLTENSOR_CORE PyObject *to_python(tensor_handle *h, bool) noexcept {
    const py_ref obj(make_exported(h));
    return obj ? call_function("mlx.core", "array", obj.get()).release() : nullptr;
}

}  // namespace mlx
}  // namespace frameworks

inline constexpr framework mlx_framework = {
    fw_mlx,
    "MLX",
    frameworks::mlx::packages,
    nullptr,
    false,
    /*immutable*/ false,
    /*copies_read_only*/ false,
    /*reason*/ nullptr,
    /*ignores_byte_offset*/ false,
    /*deleter_not_reentrant*/ false,
    /*classify*/ nullptr,
    /*read*/ nullptr,
    /*check_view*/ nullptr,
    /*export_capsule*/ nullptr,
    /*written*/ nullptr,
    /*convert*/ nullptr,
    frameworks::mlx::to_python,
    /*empty*/ nullptr,
};

}  // namespace dlt
