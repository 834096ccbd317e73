// dltensor/signature.h: the signature text of a `dltensor<...>` parameter or return, built at compile time
// as a valid Python annotation, one spelling for both backends (docs/reference.md §18):
//
//   typing.Annotated[<type>, dict(dtype='float32', shape=(None, 3), order='C', device='cpu', writable=False)]
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
// pybind11 >= 3: "@parameter@return@", which their signatures resolve), the leading type holds both.
// Backend-independent: no binding library (the framework names come from frameworks/registry.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.h"
#include "dlpack.h"
#include "dtypes.h"
#include "frameworks/registry.h"

namespace dlt {

/// What a signature names: a parameter's or return's annotations, in the run-time form of either backend.
struct signature_spec {
    int framework = 0;                  ///< The framework annotation's number (frameworks/), 0: none.
    dlpack::DataType dtype{0, 0, 0};    ///< The dtype annotation; `bits == 0`: none.
    int32_t ndim = -1;                  ///< The shape annotation's ndim, -1: none.
    const int64_t *extents = nullptr;   ///< Its `ndim` extents (-1: any).
    char order = '\0';                  ///< 'C', 'F', 'A', or '\0' (none).
    int32_t device_type = 0;            ///< The device annotation's DLPack number, 0: none.
    bool read_only = false;             ///< const dtype or `py::ro`.
};

/// A signature text under construction (at most `capacity - 1` characters, the rest cut off).
struct signature_text {
    static constexpr size_t capacity = 768;
    char s[capacity] = {};
    size_t len = 0;
    constexpr void put(const char *t) { while (*t && len < capacity - 1) s[len++] = *t++; }
    constexpr void put(char c) { if (len < capacity - 1) s[len++] = c; }
    constexpr void put_uint(uint64_t v) {
        char buf[24] = {};
        int n = 0;
        do { buf[n++] = (char) ('0' + v % 10); v /= 10; } while (v);
        while (n) put(buf[--n]);
    }
};

namespace detail {

/// The framework's type (frameworks/: NumPy's names the dtype); false (nothing put) for none, `memview`
/// and `array_api`.
constexpr bool put_framework_type(signature_text &t, const signature_spec &s) {
    const char *name = framework_stub_type(s.framework, s.dtype);
    t.put(name);
    return name[0] != '\0';
}

constexpr void put_parameter_type(signature_text &t, const signature_spec &s) {
    if (!put_framework_type(t, s)) t.put(s.read_only ? "dltensor.typing.ArrayLike" : "dltensor.typing.Array");
}

constexpr void put_return_type(signature_text &t, const signature_spec &s) {
    if (put_framework_type(t, s)) return;
    t.put(s.framework == fw_memview ? "memoryview" : s.framework == fw_array_api ? "dltensor.Tensor"
                                                                                : "dltensor.typing.DLPackArray");
}

/// `, dict(dtype='float32', shape=(None, 3), order='C', device='cpu', writable=False)]`.
constexpr void put_annotations(signature_text &t, const signature_spec &s) {
    t.put(", dict(");
    if (s.dtype.bits != 0) {
        t.put("dtype='");
        const dlpack::DataType d = s.dtype;
        if (is_float8_code(d.code)) t.put(small_float_name(d.code));  // float8_e4m3fn, ...
        else {
            t.put(d.code == dlpack::bool_ ? "bool" : d.code == dlpack::int_ ? "int" : d.code == dlpack::uint_ ? "uint"
                  : d.code == dlpack::float_ ? "float" : d.code == dlpack::bfloat_ ? "bfloat" : "complex");
            if (d.code != dlpack::bool_) t.put_uint(d.bits);
        }
        t.put("', ");
    }
    if (s.ndim >= 0) {
        t.put("shape=(");
        for (int32_t i = 0; i < s.ndim; ++i) {
            if (i) t.put(", ");
            if (s.extents[i] < 0) t.put("None");
            else t.put_uint((uint64_t) s.extents[i]);
        }
        t.put(s.ndim == 1 ? ",), " : "), ");
    }
    if (s.order != '\0') {
        t.put("order='");
        t.put(s.order);
        t.put("', ");
    }
    if (s.device_type != 0) {
        t.put("device='");
        t.put(dlpack::device_name(s.device_type));
        t.put("', ");
    }
    // writability either way: the TypeError's signature text tells float32 from const float32
    t.put(s.read_only ? "writable=False)]" : "writable=True)]");
}

} // namespace detail

/// The signature text of `s`: as a parameter, as a return, or (`both`) with the leading type as
/// "@parameter type@return type@", which the binding library resolves where the text is used (the rest of
/// the text is the same for both).
enum class signature_role { parameter, result, both };
constexpr signature_text make_signature(const signature_spec &s, signature_role role) {
    signature_text t;
    t.put("typing.Annotated[");
    if (role == signature_role::both) t.put('@');
    if (role != signature_role::result) detail::put_parameter_type(t, s);
    if (role == signature_role::both) t.put('@');
    if (role != signature_role::parameter) detail::put_return_type(t, s);
    if (role == signature_role::both) t.put('@');
    detail::put_annotations(t, s);
    return t;
}

} // namespace dlt
