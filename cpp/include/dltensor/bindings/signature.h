// dltensor/bindings/signature.h: the signature text of a `dltensor<...>` parameter or return, built at compile time
// as a valid Python annotation, one spelling for both backends (docs/reference.md §18):
//
//   typing.Annotated[<type>, dict(dtype='float32', shape=(None, 3), order='C', device='cpu', writable=False)]
//
// The dict names each annotation the C++ type carries that the leading type does not say: no `writable=True`
// (as nanobind writes it, a tensor is writable unless `writable=False`), no `writable=False` for an
// unannotated parameter (`ArrayLike` says it), no dtype the type names (NumPy's `NDArray[numpy.float32]`),
// and no `typing.Annotated[...]` at all where nothing is left to name.
//
// <type> says what a type checker may pass or will get (python/dltensor/typing.py):
// - a parameter with a framework annotation: that framework's type (`numpy.typing.NDArray[numpy.float32]`,
//   `torch.Tensor`, `jax.Array`, ...), the tensors its exact pass binds;
// - a parameter without one: `dltensor.typing.Array` (any DLPack or buffer-protocol object) when writable,
//   `dltensor.typing.ArrayLike` (also `__array__` objects and nested sequences of numbers) when read-only;
// - a return: its framework's type, `memoryview` for `py::memview`, `dltensor.Tensor` for `py::array_api`;
//   without a framework annotation `dltensor.typing.DLPackArray`, since it may be a new `dltensor.Tensor`,
//   the argument it was imported from (`f(x) is x`) or a tensor in the caller's framework (`empty_like()`,
//   `return_like()`).
// Where the binding library can name a type differently as parameter and return (nanobind >= 2.13,
// pybind11 >= 3: "@parameter@return@", which their signatures resolve), the text holds both whole.
// Backend-independent: no binding library (the framework names come from frameworks/registry.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "../tensor/dtypes.h"
#include "../frameworks/registry.h"
#include "../tensor/requirements.h"

namespace dlt {

/// A signature text under construction (at most `capacity - 1` characters, the rest cut off).
struct signature_text {
    static constexpr size_t capacity = 768;
    char s[capacity] = {};
    size_t len = 0;
    constexpr void put(const char *t) {
        while (*t && len < capacity - 1) s[len++] = *t++;
    }
    constexpr void put(char c) {
        if (len < capacity - 1) s[len++] = c;
    }
    constexpr void put_uint(uint64_t v) {
        char buf[24] = {};
        int n = 0;
        do {
            buf[n++] = (char) ('0' + v % 10);
            v /= 10;
        } while (v);
        while (n) put(buf[--n]);
    }
};

namespace detail {

/// The framework's type (frameworks/: NumPy's names the dtype); false (nothing put) for none, `memview`
/// and `array_api`.
constexpr bool put_framework_type(signature_text &t, const requirements &r, int framework) {
    const char *name = framework_stub_type(framework, r.dtype);
    t.put(name);
    return name[0] != '\0';
}

constexpr void put_parameter_type(signature_text &t, const requirements &r, int framework) {
    if (!put_framework_type(t, r, framework))
        t.put(r.read_only ? "dltensor.typing.ArrayLike" : "dltensor.typing.Array");
}

constexpr void put_return_type(signature_text &t, const requirements &r, int framework) {
    if (put_framework_type(t, r, framework)) return;
    t.put(framework == fw_memview     ? "memoryview"
          : framework == fw_array_api ? "dltensor.Tensor"
                                      : "dltensor.typing.DLPackArray");
}

/// Whether the framework's type names the dtype (it changes with it: NumPy's `NDArray[numpy.float32]`).
constexpr bool type_names_dtype(const requirements &r, int framework) {
    const char *with = framework_stub_type(framework, r.dtype), *without = framework_stub_type(framework, {});
    while (*with && *with == *without) ++with, ++without;
    return *with != *without;
}

/// The annotations the dict names for a parameter or a return: those its type does not say already.
struct dict_keys {
    bool dtype, shape, order, device, read_only;
    constexpr bool any() const { return dtype || shape || order || device || read_only; }
};
constexpr dict_keys keys_of(const requirements &r, int framework, bool parameter) {
    // an unannotated parameter's type says its writability (`Array`, `ArrayLike`); a return's never does
    const bool type_says_writability = parameter && framework_stub_type(framework, r.dtype)[0] == '\0';
    return {r.dtype.bits != 0 && !type_names_dtype(r, framework), r.ndim >= 0, r.order != '\0', r.device_type != 0,
            r.read_only && !type_says_writability};
}

/// `, dict(dtype='float32', shape=(None, 3), order='C', device='cpu', writable=False)]`, the keys `k` only.
constexpr void put_annotations(signature_text &t, const requirements &r, dict_keys k) {
    const char *sep = ", dict(";
    auto key = [&](const char *name) {
        t.put(sep);
        t.put(name);
        sep = ", ";
    };
    if (k.dtype) {
        key("dtype='");
        const dlpack::DataType d = r.dtype;
        if (is_float8_code(d.code)) t.put(small_float_name(d.code));  // float8_e4m3fn, ...
        else {
            t.put(d.code == dlpack::bool_     ? "bool"
                  : d.code == dlpack::int_    ? "int"
                  : d.code == dlpack::uint_   ? "uint"
                  : d.code == dlpack::float_  ? "float"
                  : d.code == dlpack::bfloat_ ? "bfloat"
                                              : "complex");
            if (d.code != dlpack::bool_) t.put_uint(d.bits);
        }
        t.put('\'');
    }
    if (k.shape) {
        key("shape=(");
        for (int32_t i = 0; i < r.ndim; ++i) {
            if (i) t.put(", ");
            if (r.shape[i] < 0) t.put("None");
            else t.put_uint((uint64_t) r.shape[i]);
        }
        t.put(r.ndim == 1 ? ",)" : ")");
    }
    if (k.order) {
        key("order='");
        t.put(r.order);
        t.put('\'');
    }
    if (k.device) {
        key("device='");
        t.put(dlpack::device_name(r.device_type));
        t.put('\'');
    }
    if (k.read_only) key("writable=False");
    t.put(")]");
}

/// A parameter's or a return's text: `typing.Annotated[<type>, dict(...)]`, or the type alone where the
/// dict would name nothing.
constexpr void put_annotated(signature_text &t, const requirements &r, int framework, bool parameter) {
    const dict_keys k = keys_of(r, framework, parameter);
    if (k.any()) t.put("typing.Annotated[");
    if (parameter) put_parameter_type(t, r, framework);
    else put_return_type(t, r, framework);
    if (k.any()) put_annotations(t, r, k);
}

}  // namespace detail

/// The signature text of a parameter or return with requirements `r` (its annotations: requirements.h) and
/// framework annotation `framework` (its number: `array_api` too, which `r` leaves out): as a parameter, or
/// (`both`) as "@parameter text@return text@", which the binding library resolves where the text is used.
enum class signature_role { parameter, both };
constexpr signature_text make_signature(const requirements &r, int framework, signature_role role) {
    signature_text t;
    if (role == signature_role::both) t.put('@');
    detail::put_annotated(t, r, framework, true);
    if (role == signature_role::both) {
        t.put('@');
        detail::put_annotated(t, r, framework, false);
        t.put('@');
    }
    return t;
}

}  // namespace dlt
