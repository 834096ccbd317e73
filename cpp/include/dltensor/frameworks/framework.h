// dltensor/frameworks/framework.h: what one framework file provides: its number, return tag and one
// `framework` record (recognition, and the hooks through which import, conversion, export and allocation
// reach the framework). frameworks/registry.h lists the records.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "../python/process_state.h"
#include "../python/py_ref.h"
#include "../tensor/requirements.h"

namespace dlt {

class tensor_handle;  // handle.h
struct imported;      // import_result.h

/// Framework numbers of what is no framework: a return tag's `value` and a producer's kind. Each framework
/// file defines its own (`fw_numpy = 1`, ...: nanobind's numbers where nanobind has the framework, so that
/// nanobind's own tags name them; new frameworks take numbers after nanobind's).
inline constexpr int fw_none = 0;       ///< No framework annotation; an unknown producer.
inline constexpr int fw_memview = 6;    ///< `py::memview`: a memoryview over the buffer protocol (CPU).
inline constexpr int fw_array_api = 7;  ///< `py::array_api`: a `dltensor.Tensor` (`__dlpack__`, buffer protocol).
inline constexpr int framework_capacity = 16;  ///< Numbers are below this.

/// What the importer remembers about a Python type (producer.h caches one per type; copied on every
/// argument, so it stays 24 bytes).
struct producer_info {
    uint8_t framework_id = fw_none;  ///< The framework whose tensors the type's objects are (its number).
    uint8_t path = 0;                ///< The `route` its tensors take while the fast paths are on (producer.h).
    bool immutable = false;          ///< Immutable arrays, although they export no read-only flag.
    /// No tensor yet (PyTorch's lazy modules' placeholders, until the module's first forward pass): refused.
    bool uninitialized = false;
    const dlpack::ExchangeAPI *api = nullptr;  ///< The type's DLPack C exchange API, if it publishes one.
    /// The framework's per-type data for its hooks (PyTorch: the entry points of its queries, interned), or
    /// NULL; a framework's hooks that need it are only installed where it is set.
    const void *checks = nullptr;
};

static_assert(sizeof(void *) != 8 || sizeof(producer_info) == 24, "producer_info is copied on every argument");

/// A conversion a read-only parameter asks of the producer (conversion.h): a copy of the source with
/// `target` dtype and `order`, on the same device. The Python strings a hook may pass on are made on
/// first use: NumPy's C API, the common conversion, needs none.
struct conversion_request {
    dlpack::DataType target;              ///< The dtype wanted: the parameter's, else the source's.
    const char *name;                     ///< Its name ("float32"); NULL only when unknown (a PyTorch lazy view).
    char order;                           ///< 'C', 'F', or 'K' (keep the source's).
    bool fresh;                           ///< Misaligned: only a fresh copy helps, even with the same dtype and order.
    bool on_cpu;                          ///< The source lives on the CPU.
    mutable py_ref dtype_str, order_str;  ///< Made by dtype() and order_name(); empty until then.

    /// `name` as a `str` (borrowed); NULL when the dtype is unknown (no error) or the string cannot be
    /// made (error set).
    PyObject *dtype() const noexcept {
        if (!dtype_str && name) dtype_str = py_ref(PyUnicode_FromString(name));
        return dtype_str.get();
    }
    /// `order` as a `str` (borrowed); NULL with an error set when it cannot be made.
    PyObject *order_name() const noexcept {
        const char text[2] = {order, '\0'};
        if (!order_str) order_str = py_ref(PyUnicode_FromString(text));
        return order_str.get();
    }
};

/// One framework: recognition (data) and hooks (each optional: NULL means the portable behaviour). Hooks
/// are noexcept and report failure as documented, never by a C++ exception.
struct framework {
    int id;                       ///< Its number (annotation `value`s, `imported::source_framework`).
    const char *name;             ///< For explanations: "PyTorch", "JAX", ...
    const char *const *packages;  ///< Top-level packages whose types are its tensors; NULL-terminated.
    /// Explanations name its tensors so ("jax.Array"), NULL: by their class. `public_type_always`: for every
    /// class of the framework (private array types); else only for a class of the same name.
    const char *public_type;
    bool public_type_always;
    bool immutable;         ///< Its arrays are immutable, though they export no read-only flag (JAX, TensorFlow).
    bool copies_read_only;  ///< It has no read-only tensors: a read-only tensor reaches it as a copy.
    /// The explanation of a refusal for one of its own rules (`lazy`, `requires_grad`, `inference`; for a
    /// read-only parameter when `read_only`), a static string, or NULL for the generic one.
    const char *(*reason)(mismatch why, bool read_only) noexcept;
    /// Its DLPack import ignores `byte_offset` (PaddlePaddle) or refuses a non-zero one (TensorFlow): a
    /// return reaches it with the offset folded into `data` (export.h: export_adapted()).
    bool ignores_byte_offset;
    /// Its DLPack deleter hangs when it runs inside another of its deleters (PaddlePaddle): what keeps a
    /// returned tensor's memory is released after its deleter returned (deferred_release.h).
    bool deleter_not_reentrant;

    /// A type it has not seen (`info.framework_id` set): fills the rest of `info` (`checks`, `uninitialized`) and
    /// may veto the exchange route (`use_exchange_api` false). May run Python; leaves no error set.
    void (*classify)(PyTypeObject *type, producer_info &info, bool &use_exchange_api) noexcept;
    /// Its own reader of its C structures (the `framework_reader` route): fills `t` (shape and strides in the caller's
    /// arrays) and `read_only`, valid while `obj` is alive; false to take the portable route. `exact`:
    /// only its main array type (the fast path), else also what only this reader can read.
    bool (*read)(PyObject *obj, dlpack::Tensor &t, int64_t *shape, int64_t *strides, bool &read_only,
                 bool exact) noexcept;
    /// Its checks beyond DLPack on a view the exchange route read: a `mismatch` (none to go on).
    mismatch (*check_view)(PyObject *src, const producer_info &info, const requirements &r,
                           const dlpack::Tensor &t) noexcept;
    /// The portable route's export instead of calling `__dlpack__` (`method`): fills `capsule`, or leaves it
    /// empty (buffer protocol next); a mismatch refuses, with `seen` the dtype found (NULL hook: `__dlpack__`).
    mismatch (*export_capsule)(PyObject *src, const producer_info &info, const requirements &r, PyObject *method,
                               py_ref &capsule, dlpack::DataType &seen) noexcept;
    /// C++ may write into `src` (accepted for a writable parameter): tell the framework, as an in-place
    /// operation would.
    void (*written)(PyObject *src) noexcept;
    /// The producer's copy of `src` for a conversion; empty with an error set (or none) when it cannot.
    py_ref (*convert)(PyObject *src, const conversion_request &c) noexcept;
    /// Its tensor for `h` (a view, or a copy when `copy`); a new reference, or NULL with an error set.
    PyObject *(*to_python)(tensor_handle *h, bool copy) noexcept;
    /// `empty()`: an uninitialized tensor of `out.shape[0..ndim)` owned by the framework, filling `out`
    /// (view, owner, stream; `source` when the result returns as that very object). 0, or -1 with an
    /// error set. NULL: NumPy's on the CPU, else PyTorch's allocator (registry.h).
    int (*empty)(dlpack::DataType dtype, size_t ndim, dlpack::Device device, char order, bool read_only,
                 imported &out) noexcept;
};

/// Is `module` (a `__module__`, "torch.nn.parameter") in one of `packages` (NULL-terminated top-level names)?
inline bool in_packages(const char *module, const char *const *packages) noexcept {
    const std::size_t n = std::strcspn(module, ".");
    for (; packages && *packages; ++packages)
        if (std::strlen(*packages) == n && std::strncmp(module, *packages, n) == 0) return true;
    return false;
}

/// The `__module__` of a class (a borrowed UTF-8 view valid while `holder` lives), or NULL; no error set.
inline const char *module_of(PyObject *type, py_ref &holder) noexcept {
    holder = attribute(type, "__module__");
    const char *s = holder && PyUnicode_Check(holder.get()) ? PyUnicode_AsUTF8(holder.get()) : nullptr;
    PyErr_Clear();
    return s;
}

/// Asks an array for `src.astype(dtype, order=order)` (NumPy, CuPy), or `src.astype(dtype)` when
/// `with_order` is false; empty with an error set on failure.
inline py_ref astype_copy(PyObject *src, const conversion_request &c, bool with_order = true) noexcept {
    PyObject *args[] = {c.dtype(), with_order ? c.order_name() : nullptr};
    if (!args[0] || (with_order && !args[1])) return py_ref();
    return with_order ? call_method(src, "astype", args, 1, py_names::get().order_kwnames)
                      : call_method(src, "astype", args, 1);
}

}  // namespace dlt

namespace dlt {
/// The type that signatures and stubs name for a tensor of the framework tagged `Tag` with dtype `d`
/// (signature.h): the tag's `type_name`, unless its file specializes this (NumPy's names the dtype).
template <typename Tag> struct stub_type_of {
    static constexpr const char *of(dlpack::DataType) noexcept { return Tag::type_name; }
};
}  // namespace dlt

/// A framework's annotation tag (`py::numpy`, ...; the pybind11 backend's, nanobind has its own for the
/// frameworks it knows): its number and the type name a stub annotates.
#define DLTENSOR_FRAMEWORK_TAG(Name, Value, TypeName)                                                                  \
    namespace dlt {                                                                                                    \
    namespace framework_tags {                                                                                         \
    struct Name {                                                                                                      \
        static constexpr int value = Value;                                                                            \
        static constexpr char type_name[] = TypeName;                                                                  \
    };                                                                                                                 \
    }                                                                                                                  \
    }
