// dltensor/bindings/allocation.h: new tensors for `dltensor<...>::empty()`, allocated by the framework that will
// own them (frameworks/registry.h), on every backend.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "../tensor/dtypes.h"
#include "../frameworks/registry.h"
#include "../core/import_result.h"
#include "../python/process_state.h"

namespace dlt {

/// Allocates an uninitialized tensor for `empty()` by the framework that will own it (registry.h:
/// allocate_for()), in `order` ('F': column-major, else row-major); fills `out` and returns 0; 1 (nothing
/// set) for an ndim other than `expected_ndim` (-1: any) or above max_ndim; -1 with a Python error set.
inline int allocate_framework_tensor(int framework, dlpack::DataType dtype, const size_t *shape, size_t ndim,
                                     int32_t expected_ndim, dlpack::Device device, char order, imported &out,
                                     bool read_only = false) noexcept {
    if ((expected_ndim >= 0 && ndim != (size_t) expected_ndim) || ndim > (size_t) dlpack::max_ndim) return 1;
    if (!enter_interpreter_or_raise()) return -1;
    for (size_t i = 0; i < ndim; ++i) {
        if (shape[i] > (size_t) INT64_MAX) return 1;
        out.shape[i] = (int64_t) shape[i];
    }
    return allocate_by_framework(framework, dtype, ndim, device, order, read_only, out);
}

/// What both backends' `empty()` allocate for annotation set `Config` and element type `Scalar`, on the
/// annotated device type (CPU when none) and `device_id`: allocate_framework_tensor()'s result.
template <typename Config, typename Scalar>
DLTENSOR_HOT_INLINE int allocate_empty(const size_t *shape, size_t ndim, int32_t device_type, int device_id,
                                       bool read_only, imported &out) noexcept {
    static_assert(!std::is_void_v<std::remove_cv_t<Scalar>>, "dltensor::empty() needs a dtype annotation");
    return allocate_framework_tensor(Config::Framework::value, dtype_of<Scalar>(), shape, ndim, Config::N,
                                     {device_type ? device_type : (int32_t) dlpack::cpu, (int32_t) device_id},
                                     (char) Config::Order::value, out, read_only);
}
/// The compile error of `empty_like()` and `return_like()` on a framework-annotated tensor (both backends).
#define DLTENSOR_FOLLOW_ANNOTATED_MESSAGE                                                                              \
    "py::dltensor<...>::empty_like(x, shape) / return_like(x): the result returns in x's framework, which "            \
    "a framework annotation would contradict; drop the annotation (or use empty(shape))"

/// `empty_like(x, shape)` on both backends: as allocate_empty(), but by `framework` (the framework of `x`,
/// frameworks/ numbers; 0: an unknown producer, NumPy's on the CPU) and on `device` (`x`'s).
template <typename Config, typename Scalar>
inline int allocate_like(const size_t *shape, size_t ndim, int framework, dlpack::Device device, bool read_only,
                         imported &out) noexcept {
    static_assert(!std::is_void_v<std::remove_cv_t<Scalar>>, "dltensor::empty_like() needs a dtype annotation");
    static_assert(Config::Framework::value == 0, DLTENSOR_FOLLOW_ANNOTATED_MESSAGE);
    return allocate_framework_tensor(framework, dtype_of<Scalar>(), shape, ndim, Config::N, device,
                                     (char) Config::Order::value, out, read_only);
}

inline constexpr const char *empty_shape_message = "dltensor::empty(): the shape does not match the annotated ndim";

}  // namespace dlt
