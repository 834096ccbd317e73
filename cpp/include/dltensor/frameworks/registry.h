// dltensor/frameworks/registry.h: the list of frameworks (DLTENSOR_FRAMEWORKS), their lookup by number or
// module, and the export to the framework a return names. A new framework: one file here, one name below.
#pragma once

#include <initializer_list>
#include <type_traits>

#include "../tensor/config.h"
#include "../core/export.h"
#include "../python/handle.h"
#include "framework.h"

#include "cupy.h"
#include "jax.h"
#include "mlx.h"
#include "numpy.h"
#include "paddle.h"
#include "pytorch.h"
#include "tensorflow.h"

/// Every framework, by the name of its file, its tag (`framework_tags::<name>`) and its record
/// (`<name>_framework`): `X(name)` for each.
#define DLTENSOR_FRAMEWORKS(X) X(numpy) X(pytorch) X(tensorflow) X(jax) X(cupy) X(mlx) X(paddle)
/// The frameworks whose exports export_tensor() calls directly, inlined: the hot paths of returns
/// (bench/results/callgrind_steps.md); any other's through its record (`framework::to_python`).
#define DLTENSOR_INLINED_EXPORTS(X) X(numpy) X(pytorch)

namespace dlt {

namespace detail {
/// The stub type of `Tag`'s tensors of dtype `d` when `id` is its number, else "" (also for void, the end
/// of a DLTENSOR_FRAMEWORKS list). (No pointer is compared with NULL: not a constant expression under
/// -fsanitize=undefined.)
template <typename Tag> constexpr const char *stub_type_if(int id, dlpack::DataType d) noexcept {
    if constexpr (std::is_void_v<Tag>) return "";
    else return id == Tag::value ? stub_type_of<Tag>::of(d) : "";
}
template <typename... Tags> constexpr const char *stub_type_among(int id, dlpack::DataType d) noexcept {
    const char *name = "";
    ((name = name[0] ? name : stub_type_if<Tags>(id, d)), ...);
    return name;
}
}  // namespace detail

/// The Python type that signatures and stubs name for tensors of dtype `d` (`bits == 0`: none annotated)
/// of framework number `id` (each framework's tag, in its file: stub_type_of), "" for none, `memview`,
/// `array_api` and unknown numbers.
constexpr const char *framework_stub_type(int id, dlpack::DataType d) noexcept {
#define DLTENSOR_FRAMEWORK_TAG_OF(name) framework_tags::name,
    return detail::stub_type_among<DLTENSOR_FRAMEWORKS(DLTENSOR_FRAMEWORK_TAG_OF) void>(id, d);
#undef DLTENSOR_FRAMEWORK_TAG_OF
}

/// `empty()` for a tensor that `framework` will own: its own allocator where it has one for the device;
/// else NumPy's on the CPU (JAX and TensorFlow adopt or copy the array on return) and PyTorch's on other
/// devices. Same contract as `framework::empty`.
DLTENSOR_CORE int allocate_for(int framework, dlpack::DataType dtype, size_t ndim, dlpack::Device device, char order,
                               bool read_only, imported &out) noexcept;

/// The allocator that module sources call directly for CPU tensors: NumPy's, the hot path of empty() and
/// copy_of(); any other framework's is reached through the framework table.
struct inlined_allocator {
    static constexpr int framework = fw_numpy;
    static constexpr auto &empty = frameworks::numpy::empty;
};

/// allocate_for(), as a module's sources call it (allocation.h, with `framework` known at compile time).
DLTENSOR_HOT_INLINE int allocate_by_framework(int framework, dlpack::DataType dtype, size_t ndim, dlpack::Device device,
                                              char order, bool read_only, imported &out) noexcept {
    if (framework == inlined_allocator::framework && device.device_type == dlpack::cpu)
        return inlined_allocator::empty(dtype, ndim, device, order, read_only, out);
    return allocate_for(framework, dtype, ndim, device, order, read_only, out);
}

}  // namespace dlt
