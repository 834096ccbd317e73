// dltensor/frameworks/cupy-inl.h: the bodies of cupy.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "cupy.h"

#include "../core/export-inl.h"
#include "../python/handle.h"

namespace dlt {

namespace frameworks {
namespace cupy {

inline constexpr const char *packages[] = {"cupy", "cupy_backends", nullptr};

DLTENSOR_CORE py_ref convert(PyObject *src, const conversion_request &c) noexcept {
    return c.name ? astype_copy(src, c) : py_ref();
}

DLTENSOR_CORE PyObject *to_python(tensor_handle *h, bool copy) noexcept {
    const py_ref obj(make_exported(h));
    py_ref out = obj ? call_function("cupy", "from_dlpack", obj.get()) : py_ref();
    return out && copy ? call_method(out.get(), "copy").release() : out.release();
}

}  // namespace cupy
}  // namespace frameworks

inline constexpr framework cupy_framework = {
    fw_cupy,
    "CuPy",
    frameworks::cupy::packages,
    nullptr,
    false,
    /*immutable*/ false,
    /*copies_read_only*/ true,
    /*reason*/ nullptr,
    /*ignores_byte_offset*/ false,
    /*deleter_not_reentrant*/ false,
    /*classify*/ nullptr,
    /*read*/ nullptr,
    /*check_view*/ nullptr,
    /*export_capsule*/ nullptr,
    /*written*/ nullptr,
    frameworks::cupy::convert,
    frameworks::cupy::to_python,
    /*empty*/ nullptr,
};

}  // namespace dlt
