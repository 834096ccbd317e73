// dltensor/bindings/signature.h: the signature text of a `dltensor<...>` parameter or return, built at compile
// time as a Python annotation (`typing.Annotated[<type>, dict(...)]`, reference §18), one spelling for both
// backends; no binding library (framework names come from frameworks/registry.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "../tensor/dtypes.h"
#include "../frameworks/registry.h"
#include "../tensor/requirements.h"

namespace dlt {

/// A text under construction (at most `Capacity - 1` characters, the rest cut off).
template <size_t Capacity> struct text_buffer {
    static constexpr size_t capacity = Capacity;
    char s[capacity] = {};
    size_t len = 0;
    constexpr void put(const char *t) {
        while (*t && len < capacity - 1) s[len++] = *t++;
    }
    constexpr void put(char c) {
        if (len < capacity - 1) s[len++] = c;
    }
    template <size_t C> constexpr void put(const text_buffer<C> &o) {
        for (size_t i = 0; i < o.len; ++i) put(o.s[i]);
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

/// A signature text: at most 767 characters.
using signature_text = text_buffer<768>;

/// The signature text of a parameter or return with requirements `r` and framework number `framework`: as
/// a parameter, or (`both`) with each difference as "@parameter@return@", which the binding library resolves.
enum class signature_role { parameter, both };

namespace detail {

/// Writes the parameter's form, or both forms merged (`both`): a text that both forms share goes out once;
/// differing texts wait until the forms meet again, then go out as "@parameter@return@".
struct signature_writer {
    signature_text &t;
    signature_role role;
    text_buffer<128> param = {}, ret = {};  // the differing texts not yet written (a type, a key: short)

    constexpr void put(const char *common) {
        flush();
        t.put(common);
    }
    constexpr void put(char common) {
        flush();
        t.put(common);
    }
    constexpr void put_uint(uint64_t common) {
        flush();
        t.put_uint(common);
    }
    /// The parameter's text `p` and the return's `q` at the same place.
    constexpr void put(const char *p, const char *q) {
        if (role == signature_role::parameter) return t.put(p);
        if (same(p, q)) return put(p);
        param.put(p);
        ret.put(q);
    }
    constexpr void flush() {
        if (!param.len && !ret.len) return;
        t.put('@');
        t.put(param);
        t.put('@');
        t.put(ret);
        t.put('@');
        param.len = ret.len = 0;
    }
    static constexpr bool same(const char *p, const char *q) {
        while (*p && *p == *q) ++p, ++q;
        return *p == *q;
    }
};

/// A parameter's type: its framework's (frameworks/: NumPy's names the dtype), else `Array` or `ArrayLike`.
constexpr const char *parameter_type(const requirements &r, int framework) {
    const char *name = framework_stub_type(framework, r.dtype);
    return name[0] ? name : r.read_only ? "dltensor.typing.ArrayLike" : "dltensor.typing.Array";
}

/// A return's type: its framework's, else `memoryview`, `dltensor.Tensor` or `DLPackArray`.
constexpr const char *return_type(const requirements &r, int framework) {
    const char *name = framework_stub_type(framework, r.dtype);
    return name[0]                     ? name
           : framework == fw_memview   ? "memoryview"
           : framework == fw_array_api ? "dltensor.Tensor"
                                       : "dltensor.typing.DLPackArray";
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

/// `typing.Annotated[<type>, dict(dtype='float32', shape=(None, 3), order='C', device='cpu', writable=False)]`,
/// the keys its form names only (keys_of()), or the type alone where the dict would name nothing. Only
/// the leading `typing.Annotated[`, the type and `writable=False` differ between the forms.
constexpr void put_annotated(signature_writer &w, const requirements &r, int framework) {
    const dict_keys kp = keys_of(r, framework, true), kr = keys_of(r, framework, false);
    w.put(kp.any() ? "typing.Annotated[" : "", kr.any() ? "typing.Annotated[" : "");
    w.put(parameter_type(r, framework), return_type(r, framework));
    const char *sep = ", dict(";
    auto key = [&](const char *name) {
        w.put(sep);
        w.put(name);
        sep = ", ";
    };
    if (kp.dtype) {
        key("dtype='");
        const dlpack::DataType d = r.dtype;
        if (is_float8_code(d.code)) w.put(small_float_name(d.code));  // float8_e4m3fn, ...
        else {
            w.put(d.code == dlpack::bool_     ? "bool"
                  : d.code == dlpack::int_    ? "int"
                  : d.code == dlpack::uint_   ? "uint"
                  : d.code == dlpack::float_  ? "float"
                  : d.code == dlpack::bfloat_ ? "bfloat"
                                              : "complex");
            if (d.code != dlpack::bool_) w.put_uint(d.bits);
        }
        w.put('\'');
    }
    if (kp.shape) {
        key("shape=(");
        for (int32_t i = 0; i < r.ndim; ++i) {
            if (i) w.put(", ");
            if (r.shape[i] < 0) w.put("None");
            else w.put_uint((uint64_t) r.shape[i]);
        }
        w.put(r.ndim == 1 ? ",)" : ")");
    }
    if (kp.order) {
        key("order='");
        w.put(r.order);
        w.put('\'');
    }
    if (kp.device) {
        key("device='");
        w.put(dlpack::device_name(r.device_type));
        w.put('\'');
    }
    w.put(kp.read_only ? sep : "", kr.read_only ? sep : "");
    w.put(kp.read_only ? "writable=False" : "", kr.read_only ? "writable=False" : "");
    w.put(kp.any() ? ")]" : "", kr.any() ? ")]" : "");
}

}  // namespace detail

constexpr signature_text make_signature(const requirements &r, int framework, signature_role role) {
    signature_text t;
    detail::signature_writer w{t, role};
    detail::put_annotated(w, r, framework);
    w.flush();
    return t;
}

}  // namespace dlt
