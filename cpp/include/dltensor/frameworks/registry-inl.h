// dltensor/frameworks/registry-inl.h: the bodies of registry.h's core entry points (config.h: DLTENSOR_CORE),
// listed in core/core-inl.h: compiled once in dltensor_core, or header-only in every unit.
#pragma once

#include "registry.h"
#include "cupy-inl.h"
#include "jax-inl.h"
#include "mlx-inl.h"
#include "numpy-inl.h"
#include "paddle-inl.h"
#include "pytorch-inl.h"
#include "tensorflow-inl.h"

namespace dlt {

// The hot paths' frameworks (with registry.h's DLTENSOR_INLINED_EXPORTS and inlined_allocator, the only
// code that names one): their hooks are called directly, inlined; every other through its record.

/// The reader of most arguments, NumPy's (`framework::read` of the others).
struct inlined_reader {
    static constexpr int framework = fw_numpy;
    static constexpr auto &read = frameworks::numpy::read;
};

/// The allocators of a framework without one for the device: NumPy's on the CPU (JAX and TensorFlow adopt
/// or copy the array on return), PyTorch's on other devices.
struct fallback_allocators {
    static constexpr auto &cpu = numpy_empty_cpu;
    static constexpr const framework &other = pytorch_framework;
};

namespace detail {
/// Every framework, by number (NULL: no framework has the number).
struct framework_table {
    const framework *by_id[framework_capacity] = {};
    constexpr framework_table(std::initializer_list<const framework *> list) {
        for (const framework *f : list) by_id[f->id] = f;
    }
};
#define DLTENSOR_FRAMEWORK_RECORD_OF(name) &name##_framework,
inline constexpr framework_table frameworks = {DLTENSOR_FRAMEWORKS(DLTENSOR_FRAMEWORK_RECORD_OF)};
#undef DLTENSOR_FRAMEWORK_RECORD_OF
static_assert(frameworks.by_id[fw_none] == nullptr && frameworks.by_id[fw_memview] == nullptr &&
                  frameworks.by_id[fw_array_api] == nullptr,
              "frameworks/registry.h: a framework took a number that is no framework's");
}  // namespace detail

/// The framework numbered `id`, or NULL (none, `memview`, `array_api`, unknown numbers).
DLTENSOR_HOT_INLINE const framework *framework_by_id(int id) noexcept {
    return id > 0 && id < framework_capacity ? detail::frameworks.by_id[id] : nullptr;
}

/// The framework whose packages hold `module` (a class's `__module__`), or NULL.
inline const framework *framework_of_module(const char *module) noexcept {
    for (const framework *f : detail::frameworks.by_id)
        if (f && in_packages(module, f->packages)) return f;
    return nullptr;
}

DLTENSOR_CORE int allocate_for(int framework, dlpack::DataType dtype, size_t ndim, dlpack::Device device, char order,
                               bool read_only, imported &out) noexcept {
    const dlt::framework *f = framework_by_id(framework);
    int rc = f && f->empty ? f->empty(dtype, ndim, device, order, read_only, out) : 1;
    if (rc == 1 && device.device_type == dlpack::cpu) rc = fallback_allocators::cpu(dtype, ndim, order, out) ? 0 : -1;
    if (rc == 1) rc = fallback_allocators::other.empty(dtype, ndim, device, order, read_only, out);
    return rc;
}

DLTENSOR_CORE PyObject *export_tensor(tensor_handle *h, int framework, bool copy) noexcept {
    const dlt::framework *f = framework_by_id(framework);
    if (!f) return export_without_framework(h, framework, copy);
    if (!is_supported_dtype(h->tensor().dtype)) return refuse_unsupported_return(h, f->name);
    // A framework without read-only tensors gets a read-only tensor as a copy, so that its writes never
    // reach read-only memory (a read-only NumPy array, an immutable JAX array, a const C++ buffer).
    if (h->read_only() && f->copies_read_only) copy = true;
#define DLTENSOR_EXPORT_INLINED(name)                                                                                  \
    if (f == &name##_framework) return frameworks::name::to_python(h, copy);
    DLTENSOR_INLINED_EXPORTS(DLTENSOR_EXPORT_INLINED)
#undef DLTENSOR_EXPORT_INLINED
    if (needs_adapted_export(*f, h)) return detail::export_adapted(h, *f, copy);
    return f->to_python(h, copy);
}

}  // namespace dlt
