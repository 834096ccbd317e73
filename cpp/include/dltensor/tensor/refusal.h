// dltensor/tensor/refusal.h: why the importer refused an argument: a per-thread record of plain values, written only
// on refusal, and explain(), its one line of text for `py::cast<T>(obj)` errors and `dltensor.explain()`.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "config.h"
#include "dlpack.h"
#include "dtypes.h"
#include "requirements.h"

namespace dlt {

/// One refused import: the first requirement the argument failed, what was passed, what was required.
struct refusal {
    mismatch why = mismatch::none;  ///< The failing check; `invalid` also for "no tensor at all".
    bool tensor_known = false;      ///< `dtype`, `ndim`, `shape`, `device_type` describe the refused tensor.
    bool not_a_tensor = false;      ///< The object has no `__dlpack__`, no buffer and no array conversion.
    bool converted = false;         ///< The argument was a conversion (list, scalar, other dtype) of the object.
    bool convert = false;           ///< The binding allowed conversion for this argument.
    bool source_read_only = false;  ///< The producer forbids writes (flag, immutable framework, read-only buffer).
    bool sub_interpreter = false;   ///< Refused: this sub-interpreter's state could not be made (process_state.h).
    bool asarray_failed = false;    ///< `not_a_tensor`: `numpy.asarray()` was asked and failed (else never asked).
    /// The producer's framework (frameworks/): its name where its arrays are immutable (for `read_only`),
    /// and its own explanation of `why` (its rules: `lazy`, `requires_grad`, `inference`); static strings,
    /// else NULL.
    const char *immutable_framework = nullptr;
    const char *framework_reason = nullptr;
    dlpack::DataType dtype{0, 0, 0};
    int32_t ndim = 0;
    int32_t device_type = 0;
    int64_t shape[8] = {};    ///< The first extents (at most 8 are shown).
    int64_t strides[8] = {};  ///< Their strides in elements (C order when the tensor had none).
    uintptr_t address = 0;    ///< The first element's address (for `misaligned`).
    requirements required;    ///< The parameter's requirements (its `shape` pointer is static).
    char type_name[64] = {};  ///< The argument's Python type (`tp_name`, truncated).
    /// NumPy's reason when `numpy.asarray` failed, why a buffer's dtype is unusable, or the producer's own
    /// reason for refusing to export (`invalid`: the first line of what its code raised); truncated; else empty.
    char detail[160] = {};
    /// `invalid` for its dtype alone (a sub-byte float4_e2m1fn, int4, ...): that dtype; else all zero.
    dlpack::DataType unsupported{0, 0, 0};
    /// `invalid` for a malformed tensor (validate()) or a buffer DLPack cannot describe: why (static text).
    const char *malformed = nullptr;
    uintptr_t object = 0;             ///< The refused object's address (its `id()`), set by `refusal_log`.
    const char *signature = nullptr;  ///< The parameter's signature text (static), set by `refusal_log`.
    uint64_t when = 0;                ///< steady_clock's nanoseconds at the refusal, set by `refusal_log`.

    /// Sets `detail` to `text` (NULL: empty), cut to what fits, always terminated.
    void set_detail(const char *text) noexcept {
        size_t n = 0;
        if (text)
            while (n < sizeof detail - 1 && text[n]) ++n;
        std::memcpy(detail, text ? text : "", n);
        detail[n] = '\0';
    }
};

/// The calling thread's most recent refusal.
DLTENSOR_PROCESS_WIDE refusal &last_refusal() noexcept;

/// Records the tensor a check refused (refusal path only).
inline void note_refused_tensor(const dlpack::Tensor &t, mismatch why, bool source_read_only) noexcept {
    refusal &r = last_refusal();
    r.tensor_known = true;
    r.why = why;
    r.source_read_only = source_read_only;
    r.dtype = t.dtype;
    r.ndim = t.ndim;
    r.device_type = t.device.device_type;
    r.address = (uintptr_t) t.data + (uintptr_t) t.byte_offset;
    int64_t step = 1;
    for (int32_t i = t.ndim; i-- > 0;) {
        if (i < 8) {
            r.shape[i] = t.shape[i];
            r.strides[i] = t.strides ? t.strides[i] : step;
        }
        step *= t.shape[i];
    }
}

/// The end of an explanation whose attempt allowed no conversion: a caster sees the same for a `.noconvert()`
/// parameter and for the exact first pass of an overloaded function (dltensor.explain() says which).
constexpr const char *no_conversion_text = ", without conversion (.noconvert(), or the exact first pass of overloads)";

namespace detail {

/// `check()`, recording what it refuses (the thread's refusal record, above) for the explanation of a
/// failed call: every import route checks through this.
DLTENSOR_HOT_INLINE mismatch check_and_record(const requirements &r, const dlpack::Tensor &t,
                                              bool source_read_only) noexcept {
    mismatch m = check(r, t, source_read_only);
    if (m != mismatch::none) note_refused_tensor(t, m, source_read_only);
    return m;
}

DLTENSOR_MESSAGE_PATH std::string dtype_text(dlpack::DataType t) {
    char name[dtype_name_capacity];
    if (dtype_name(t, name)) return name;
    char buf[48];
    std::snprintf(buf, sizeof buf, "code %u, %u bits, %u lanes", (unsigned) t.code, (unsigned) t.bits,
                  (unsigned) t.lanes);
    return buf;
}

/// Why a dtype is not supported, naming its format: "dtype float4_e2m1fn (4 bits): a sub-byte type, which
/// no dltensor annotation reads".
DLTENSOR_MESSAGE_PATH std::string unsupported_dtype_text(dlpack::DataType t) {
    std::string name;
    if (const char *n = small_float_name(t.code)) name = n;
    else if (t.code == dlpack::int_ || t.code == dlpack::uint_ || t.code == dlpack::float_ ||
             t.code == dlpack::bfloat_ || t.code == dlpack::complex_)
        name = std::string(t.code == dlpack::int_      ? "int"
                           : t.code == dlpack::uint_   ? "uint"
                           : t.code == dlpack::float_  ? "float"
                           : t.code == dlpack::bfloat_ ? "bfloat"
                                                       : "complex") +
               std::to_string((unsigned) t.bits);
    else if (t.code == dlpack::bool_) name = "bool";
    else name = "code " + std::to_string((unsigned) t.code);
    std::string s = "dtype " + name + " (" + std::to_string((unsigned) t.bits) + " bits";
    if (t.lanes != 1) s += ", " + std::to_string((unsigned) t.lanes) + " lanes";
    s += ")";
    if (t.bits < 8 || t.code == dlpack::float6_e2m3fn || t.code == dlpack::float6_e3m2fn ||
        t.code == dlpack::float4_e2m1fn)
        return s + ": a sub-byte type, which no dltensor annotation reads (packed or padded)";
    if (t.lanes != 1) return s + ": vector lanes are not supported";
    return s + ": not a dtype dltensor supports";
}

/// "(2, 3)" for the first extents of `v` (n of them), with "..." past 8.
DLTENSOR_MESSAGE_PATH std::string tuple_text(const int64_t *v, int32_t n) {
    std::string s = "(";
    for (int32_t i = 0; i < n && i < 8; ++i) {
        if (i) s += ", ";
        s += std::to_string(v[i]);
    }
    if (n > 8) s += ", ...";
    if (n == 1) s += ",";
    return s + ")";
}

/// A refused tensor's strides in both units: "(4, 2) in elements ((16, 8) in bytes)" (elements alone for
/// sub-byte dtypes).
DLTENSOR_MESSAGE_PATH std::string strides_text(const refusal &r) {
    std::string s = tuple_text(r.strides, r.ndim) + " in elements";
    const uint64_t bits = (uint64_t) r.dtype.bits * (r.dtype.lanes ? r.dtype.lanes : 1);
    if (bits == 0 || bits % 8) return s;
    int64_t bytes[8] = {};
    for (int32_t i = 0; i < r.ndim && i < 8; ++i) bytes[i] = r.strides[i] * (int64_t) (bits / 8);
    return s + " (" + tuple_text(bytes, r.ndim) + " in bytes)";
}

DLTENSOR_MESSAGE_PATH std::string required_shape_text(const requirements &r) {
    std::string s = "(";
    for (int32_t i = 0; i < r.ndim; ++i) {
        if (i) s += ", ";
        s += r.shape && r.shape[i] >= 0 ? std::to_string(r.shape[i]) : std::string("*");
    }
    if (r.ndim == 1) s += ",";
    return s + ")";
}

}  // namespace detail

/// One line saying which requirement `r` failed and what was passed, e.g. "dtype float64, expected
/// float32" or "read-only source (a numpy.ndarray that is not writeable) for a writable parameter".
DLTENSOR_CORE DLTENSOR_CORE_COLD std::string explain(const refusal &r);

/// The calling thread's last refusal, explained; `argument` (may be NULL) names the parameter.
inline std::string explain_last_refusal(const char *argument = nullptr) {
    std::string s = explain(last_refusal());
    return argument ? "argument `" + std::string(argument) + "`: " + s : s;
}

}  // namespace dlt
