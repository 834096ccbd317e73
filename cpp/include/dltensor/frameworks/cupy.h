// dltensor/frameworks/cupy.h: CuPy as a framework: `__dlpack__` in; conversions with `astype`; returns
// through `cupy.from_dlpack` (read-only tensors as copies: CuPy has no read-only arrays).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "framework.h"

DLTENSOR_FRAMEWORK_TAG(cupy, 5, "cupy.ndarray")

namespace dlt {

inline constexpr int fw_cupy = framework_tags::cupy::value;

} // namespace dlt

// The rest only the core compiles (config.h: DLTENSOR_CORE); a module's own sources see the tag.
#if DLTENSOR_CORE_DEFINITIONS
#include "../core/export.h"
#include "../python/handle.h"
#include "../python/py_ref.h"

namespace dlt {

namespace frameworks {
namespace cupy {

inline constexpr const char *packages[] = {"cupy", "cupy_backends", nullptr};

DLTENSOR_CORE py_ref convert(PyObject *src, const conversion_request &c) noexcept
#if DLTENSOR_CORE_DEFINITIONS
{
    return c.name ? astype_copy(src, c) : py_ref();
}
#else
;
#endif

DLTENSOR_CORE PyObject *to_python(tensor_handle *h, bool copy) noexcept
#if DLTENSOR_CORE_DEFINITIONS
{
    const py_ref obj(make_exported(h));
    py_ref out = obj ? call_function("cupy", "from_dlpack", obj.get()) : py_ref();
    return out && copy ? call_method(out.get(), "copy").release() : out.release();
}
#else
;
#endif

} // namespace cupy
} // namespace frameworks

inline constexpr framework cupy_framework = {
    fw_cupy, "CuPy", frameworks::cupy::packages, nullptr, false,
    /*immutable*/ false, /*copies_read_only*/ true, /*reason*/ nullptr,
    /*ignores_byte_offset*/ false, /*deleter_not_reentrant*/ false,
    /*classify*/ nullptr, /*read*/ nullptr, /*check_view*/ nullptr, /*export_capsule*/ nullptr,
    /*written*/ nullptr, frameworks::cupy::convert, frameworks::cupy::to_python, /*empty*/ nullptr,
};

} // namespace dlt
#endif // DLTENSOR_CORE_DEFINITIONS
