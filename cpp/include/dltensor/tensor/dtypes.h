// dltensor/tensor/dtypes.h: the storage types float16, bfloat16 and float8_*, C++ scalar type -> DLPack data type,
// and the dtype names that conversions and messages use.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>

#include "config.h"
#include "dlpack.h"

namespace dlt {

/// IEEE 754 binary16, stored as its 16 bits. Arithmetic is the user's business; dltensor only moves it.
struct float16 {
    uint16_t bits = 0;  ///< Sign (1), exponent (5), mantissa (10).

    constexpr float16() = default;
    static constexpr float16 from_bits(uint16_t b) noexcept {
        float16 h;
        h.bits = b;
        return h;
    }

    /// Rounds a float to the nearest binary16 (ties to even); overflow gives infinity, NaN stays NaN.
    explicit float16(float f) noexcept {
        uint32_t x;
        std::memcpy(&x, &f, 4);
        uint32_t sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
        if (absx > 0x7f800000u) {
            bits = (uint16_t) (sign | 0x7e00u);
            return;
        }  // NaN
        if (absx >= 0x477ff000u) {
            bits = (uint16_t) (sign | 0x7c00u);
            return;
        }  // overflow -> inf
        if (absx < 0x38800000u) {  // subnormal or zero
            float a;
            std::memcpy(&a, &absx, 4);
            // 2^-24 is one subnormal step; adding 0.5 (as 2^23 * step) rounds to nearest even in float.
            float t = a + 0.5f;
            uint32_t tb;
            std::memcpy(&tb, &t, 4);
            bits = (uint16_t) (sign | (tb - 0x3f000000u));
            return;
        }
        uint32_t mant_odd = (absx >> 13) & 1u;
        absx += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
        bits = (uint16_t) (sign | (absx >> 13));
    }

    /// Widens exactly to float.
    explicit operator float() const noexcept {
        uint32_t sign = (uint32_t) (bits & 0x8000u) << 16, exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu;
        uint32_t out;
        if (exp == 0x1f) out = sign | 0x7f800000u | (mant << 13);  // inf / NaN
        else if (exp != 0) out = sign | ((exp + 112u) << 23) | (mant << 13);
        else if (mant == 0) out = sign;  // signed zero
        else {                           // subnormal: value = mant * 2^-24
            float v = (float) mant * 5.9604644775390625e-8f;
            std::memcpy(&out, &v, 4);
            out |= sign;
        }
        float f;
        std::memcpy(&f, &out, 4);
        return f;
    }
};

/// bfloat16: the upper 16 bits of an IEEE 754 binary32, stored as those bits.
struct bfloat16 {
    uint16_t bits = 0;  ///< Sign (1), exponent (8), mantissa (7).

    constexpr bfloat16() = default;
    static constexpr bfloat16 from_bits(uint16_t b) noexcept {
        bfloat16 h;
        h.bits = b;
        return h;
    }

    /// Rounds a float to the nearest bfloat16 (ties to even); NaN stays NaN.
    explicit bfloat16(float f) noexcept {
        uint32_t x;
        std::memcpy(&x, &f, 4);
        if ((x & 0x7fffffffu) > 0x7f800000u) {
            bits = (uint16_t) ((x >> 16) | 0x40u);
            return;
        }
        x += 0x7fffu + ((x >> 16) & 1u);
        bits = (uint16_t) (x >> 16);
    }

    /// Widens exactly to float.
    explicit operator float() const noexcept {
        uint32_t x = (uint32_t) bits << 16;
        float f;
        std::memcpy(&f, &x, 4);
        return f;
    }
};

static_assert(sizeof(float16) == 2 && std::is_trivially_copyable_v<float16>);
static_assert(sizeof(bfloat16) == 2 && std::is_trivially_copyable_v<bfloat16>);

namespace detail {

/// How an 8-bit float format spends its encodings (the suffixes of the names: "fn" finite with NaN,
/// "uz" unsigned zero, "u" unsigned).
enum class float8_kind : uint8_t {
    ieee,  ///< IEEE 754 style: the top exponent holds infinity (mantissa 0) and NaNs (e5m2, e4m3, e3m4).
    fn,    ///< No infinity; only S.1111.111 is NaN, the rest of the top exponent is finite (e4m3fn).
    fnuz,  ///< No infinity, no negative zero; 0x80 is the only NaN (e4m3fnuz, e5m2fnuz, e4m3b11fnuz).
    e8m0,  ///< Exponent only, no sign, no zero: 2^(bits - 127); 0xff is NaN (e8m0fnu).
};

/// The layout of an 8-bit float format: exponent bits, mantissa bits, exponent bias, kind.
struct float8_format {
    int exp_bits, man_bits, bias;
    float8_kind kind;
};

/// The formats by DLPack type code (7..14); an all-zero format for any other code.
constexpr float8_format float8_format_of(uint8_t code) noexcept {
    switch (code) {
        case dlpack::float8_e3m4: return {3, 4, 3, float8_kind::ieee};
        case dlpack::float8_e4m3: return {4, 3, 7, float8_kind::ieee};
        case dlpack::float8_e4m3b11fnuz: return {4, 3, 11, float8_kind::fnuz};
        case dlpack::float8_e4m3fn: return {4, 3, 7, float8_kind::fn};
        case dlpack::float8_e4m3fnuz: return {4, 3, 8, float8_kind::fnuz};
        case dlpack::float8_e5m2: return {5, 2, 15, float8_kind::ieee};
        case dlpack::float8_e5m2fnuz: return {5, 2, 16, float8_kind::fnuz};
        case dlpack::float8_e8m0fnu: return {8, 0, 127, float8_kind::e8m0};
        default: return {0, 0, 0, float8_kind::ieee};
    }
}

inline float float_of_bits(uint32_t x) noexcept {
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

/// Widens the 8 bits of format `code` exactly to float (NaN: the quiet NaN, with the format's sign).
inline float float8_to_float(uint8_t code, uint8_t b) noexcept {
    const float8_format f = float8_format_of(code);
    if (f.kind == float8_kind::e8m0)  // 2^(b - 127); b == 0 is 2^-127, a float subnormal
        return float_of_bits(b == 0xff ? 0x7fc00000u : b == 0 ? 0x00400000u : (uint32_t) b << 23);
    const uint32_t sign = (uint32_t) (b & 0x80u) << 24;
    const uint32_t exp_max = (1u << f.exp_bits) - 1, man_mask = (1u << f.man_bits) - 1;
    const uint32_t e = ((uint32_t) b >> f.man_bits) & exp_max, m = b & man_mask;
    if (f.kind == float8_kind::fnuz && b == 0x80) return float_of_bits(0xffc00000u);  // the one NaN
    if (f.kind == float8_kind::ieee && e == exp_max) return float_of_bits(sign | (m == 0 ? 0x7f800000u : 0x7fc00000u));
    if (f.kind == float8_kind::fn && e == exp_max && m == man_mask) return float_of_bits(sign | 0x7fc00000u);
    if (e != 0) return float_of_bits(sign | ((e - (uint32_t) f.bias + 127u) << 23) | (m << (23 - f.man_bits)));
    // Zero or subnormal: m * 2^(1 - bias - man_bits), exact in float (at most 4 significant bits).
    const float v = (float) m * float_of_bits((uint32_t) (127 + 1 - f.bias - f.man_bits) << 23);
    return sign ? -v : v;
}

/// `v >> s` rounded to nearest, ties to even, for `v < 2^31` and any `s` (`s >= 25`: only `v < 2^24`, a
/// float's significand, which is then below one half).
constexpr uint32_t shift_round_even(uint32_t v, int s) noexcept {
    if (s <= 0) return v;
    if (s >= 32) return 0;
    const uint32_t q = v >> s, r = v & ((1u << s) - 1), half = 1u << (s - 1);
    return q + ((r > half || (r == half && (q & 1u))) ? 1u : 0u);
}

/// Rounds a float to format `code` as ml_dtypes does: to nearest, ties to even (e8m0fnu: upward); overflow gives
/// infinity where the format has one, else NaN; NaN gives the quiet NaN (signed where possible); underflow gives
/// zero (e8m0fnu: 2^-127); -0.0 gives +0 in fnuz formats; e8m0fnu gives NaN for zero and negatives.
inline uint8_t float8_from_float(uint8_t code, float value) noexcept {
    const float8_format f = float8_format_of(code);
    uint32_t x;
    std::memcpy(&x, &value, 4);
    const uint32_t sign = x >> 31, absx = x & 0x7fffffffu;
    const bool nan = absx > 0x7f800000u, inf = absx == 0x7f800000u;
    if (f.kind == float8_kind::e8m0) {
        if (nan || inf || sign || absx == 0) return 0xff;
        if (absx < 0x00800000u) return absx >= 0x00600000u ? 1 : 0;          // float subnormal: 2^-126 or 2^-127
        const uint32_t e = (absx >> 23) + ((absx & 0x00400000u) ? 1u : 0u);  // ties (and above) round up
        return e > 254 ? 0xff : (uint8_t) e;
    }
    const uint32_t exp_max = (1u << f.exp_bits) - 1;
    const uint32_t s8 = sign << 7, quiet_nan = (exp_max << f.man_bits) | (1u << (f.man_bits - 1));
    if (nan || inf) {
        if (f.kind == float8_kind::fnuz) return 0x80;
        if (f.kind == float8_kind::fn) return (uint8_t) (s8 | 0x7f);
        return (uint8_t) (s8 | (inf ? exp_max << f.man_bits : quiet_nan));
    }
    // The magnitude's encoding, rounded: exponent and mantissa as one integer, so that rounding up carries
    // into the exponent (and past the largest finite value, into the overflow checked below).
    const int e = (int) (absx >> 23) - 127 + f.bias;  // the target's biased exponent (float normals)
    uint32_t r;
    if (e >= 1) {  // a normal of the target (rounding may carry it into overflow)
        r = shift_round_even(absx - ((uint32_t) (127 - f.bias) << 23), 23 - f.man_bits);
    } else {  // a subnormal of the target (or zero): the magnitude in units of its smallest subnormal,
              // 2^(1 - bias - man_bits); the float is mant * 2^(ef - 150)
        const bool normal = absx >= 0x00800000u;
        const uint32_t mant = normal ? (absx & 0x007fffffu) | 0x00800000u : absx;
        const int ef = normal ? (int) (absx >> 23) : 1;  // the float's biased exponent
        r = shift_round_even(mant, 151 - f.bias - f.man_bits - ef);
    }
    switch (f.kind) {
        case float8_kind::ieee: {
            const uint32_t inf_code = exp_max << f.man_bits;
            return (uint8_t) (s8 | (r >= inf_code ? inf_code : r));
        }
        case float8_kind::fn: return (uint8_t) (s8 | (r > 0x7eu ? 0x7fu : r));
        default: return r > 0x7fu ? 0x80 : r == 0 ? 0 : (uint8_t) (s8 | r);  // fnuz
    }
}

}  // namespace detail

/// An 8-bit float of the DLPack type code `Code` (dlpack::float8_e4m3fn, ...), stored as its 8 bits.
/// Arithmetic is the user's business; dltensor only moves it. Use the names below
/// (`float8_e4m3fn`, `float8_e5m2`, ...).
template <dlpack::dtype_code Code> struct float8 {
    static_assert(Code >= dlpack::float8_e3m4 && Code <= dlpack::float8_e8m0fnu, "float8<Code>: a float8 code");
    static constexpr dlpack::dtype_code code = Code;  ///< The DLPack type code.
    uint8_t bits = 0;  ///< The encoding; the layout is the format's (see the aliases below).

    constexpr float8() = default;
    static constexpr float8 from_bits(uint8_t b) noexcept {
        float8 h;
        h.bits = b;
        return h;
    }

    /// Rounds a float to the nearest value of the format, as ml_dtypes does (ties to even; see
    /// detail::float8_from_float for overflow, NaN and the formats without negative zero or infinity).
    explicit float8(float f) noexcept : bits(detail::float8_from_float(Code, f)) { }

    /// Widens exactly to float.
    explicit operator float() const noexcept { return detail::float8_to_float(Code, bits); }
};

/// Sign, exponent (4, bias 7), mantissa (3); no infinity, NaN S.1111.111; largest 448 (OCP FP8 E4M3).
using float8_e4m3fn = float8<dlpack::float8_e4m3fn>;
/// Sign, exponent (5, bias 15), mantissa (2); IEEE 754 style infinities and NaNs; largest 57344.
using float8_e5m2 = float8<dlpack::float8_e5m2>;
/// Sign, exponent (4, bias 8), mantissa (3); no infinity or negative zero, NaN 0x80; largest 240.
using float8_e4m3fnuz = float8<dlpack::float8_e4m3fnuz>;
/// Sign, exponent (5, bias 16), mantissa (2); no infinity or negative zero, NaN 0x80; largest 57344.
using float8_e5m2fnuz = float8<dlpack::float8_e5m2fnuz>;
/// Sign, exponent (4, bias 11), mantissa (3); no infinity or negative zero, NaN 0x80; largest 30.
using float8_e4m3b11fnuz = float8<dlpack::float8_e4m3b11fnuz>;
/// Sign, exponent (3, bias 3), mantissa (4); IEEE 754 style infinities and NaNs; largest 15.5.
using float8_e3m4 = float8<dlpack::float8_e3m4>;
/// Sign, exponent (4, bias 7), mantissa (3); IEEE 754 style infinities and NaNs; largest 240.
using float8_e4m3 = float8<dlpack::float8_e4m3>;
/// Exponent only (8, bias 127): 2^(bits - 127), from 2^-127 to 2^127; no sign, no zero, NaN 0xff (OCP MX
/// scale).
using float8_e8m0fnu = float8<dlpack::float8_e8m0fnu>;

template <typename T> struct is_float8 : std::false_type { };
template <dlpack::dtype_code Code> struct is_float8<float8<Code>> : std::true_type { };

static_assert(sizeof(float8_e4m3fn) == 1 && std::is_trivially_copyable_v<float8_e4m3fn>);

/// True for the DLPack type codes of the 8-bit floats (7..14).
constexpr bool is_float8_code(uint8_t code) noexcept {
    return code >= dlpack::float8_e3m4 && code <= dlpack::float8_e8m0fnu;
}

/// The name (ml_dtypes', PyTorch's and JAX's) of a float8, float6 or float4 type code (7..17), else NULL.
constexpr const char *small_float_name(uint8_t code) noexcept {
    switch (code) {
        case dlpack::float8_e3m4: return "float8_e3m4";
        case dlpack::float8_e4m3: return "float8_e4m3";
        case dlpack::float8_e4m3b11fnuz: return "float8_e4m3b11fnuz";
        case dlpack::float8_e4m3fn: return "float8_e4m3fn";
        case dlpack::float8_e4m3fnuz: return "float8_e4m3fnuz";
        case dlpack::float8_e5m2: return "float8_e5m2";
        case dlpack::float8_e5m2fnuz: return "float8_e5m2fnuz";
        case dlpack::float8_e8m0fnu: return "float8_e8m0fnu";
        case dlpack::float6_e2m3fn: return "float6_e2m3fn";
        case dlpack::float6_e3m2fn: return "float6_e3m2fn";
        case dlpack::float4_e2m1fn: return "float4_e2m1fn";
        default: return nullptr;
    }
}

/// A complex number of float or double parts laid out as two of them (std::complex<float>, std::complex<double>
/// or a type like them), recognised by its members so that this header need not include <complex>.
template <typename T, typename = void> struct complex_parts {
    using type = void;
};
template <typename T>
struct complex_parts<T, std::void_t<typename T::value_type, decltype(std::declval<const T &>().real()),
                                    decltype(std::declval<const T &>().imag())>> {
    using V = typename T::value_type;
    static constexpr bool layout = (std::is_same_v<V, float> || std::is_same_v<V, double>) &&
                                   sizeof(T) == 2 * sizeof(V) &&
                                   std::is_same_v<std::decay_t<decltype(std::declval<const T &>().real())>, V> &&
                                   std::is_same_v<std::decay_t<decltype(std::declval<const T &>().imag())>, V>;
    using type = std::conditional_t<layout, V, void>;
};

/// The DLPack data type of a C++ scalar type (cv-qualifiers ignored); `bits == 0` for "not a scalar".
template <typename T> constexpr dlpack::DataType dtype_of() noexcept {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, bool>) return {dlpack::bool_, 8, 1};
    else if constexpr (std::is_same_v<U, float16>) return {dlpack::float_, 16, 1};
    else if constexpr (std::is_same_v<U, bfloat16>) return {dlpack::bfloat_, 16, 1};
    else if constexpr (is_float8<U>::value) return {(uint8_t) U::code, 8, 1};
    else if constexpr (!std::is_void_v<typename complex_parts<U>::type>)
        return {dlpack::complex_, (uint8_t) (sizeof(U) * 8), 1};
    else if constexpr (std::is_floating_point_v<U> && (sizeof(U) == 4 || sizeof(U) == 8))
        return {dlpack::float_, (uint8_t) (sizeof(U) * 8), 1};
    else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) <= 8)
        return {dlpack::int_, (uint8_t) (sizeof(U) * 8), 1};
    else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) <= 8)
        return {dlpack::uint_, (uint8_t) (sizeof(U) * 8), 1};
    else return {0, 0, 0};
}

/// True for a data type dltensor can carry: one lane of bool8, (u)int8..64, float16/32/64, bfloat16,
/// complex64/128, the 8-bit floats (codes 7..14, 8 bits). Sub-byte types (float6, float4, int4, ...) are not.
DLTENSOR_HOT_INLINE constexpr bool is_supported_dtype(dlpack::DataType t) noexcept {
    if (t.lanes != 1) return false;
    if (is_float8_code(t.code)) return t.bits == 8;
    switch (t.code) {
        case dlpack::bool_: return t.bits == 8;
        case dlpack::int_:
        case dlpack::uint_: return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
        case dlpack::float_: return t.bits == 16 || t.bits == 32 || t.bits == 64;
        case dlpack::bfloat_: return t.bits == 16;
        case dlpack::complex_: return t.bits == 64 || t.bits == 128;
        default: return false;
    }
}

/// The size of a buffer that every dtype name fits in ("float8_e4m3b11fnuz" and its NUL).
inline constexpr std::size_t dtype_name_capacity = 24;

/// Writes the array-API name of a supported data type ("float32", "bfloat16", "bool", "float8_e4m3fn", ...)
/// into `out` (at least `dtype_name_capacity` bytes). Returns false, leaving `out` empty, for an
/// unsupported type.
inline bool dtype_name(dlpack::DataType t, char *out) noexcept {
    out[0] = '\0';
    if (!is_supported_dtype(t)) return false;
    if (is_float8_code(t.code)) {
        std::strcpy(out, small_float_name(t.code));
        return true;
    }
    const char *prefix = "";
    switch (t.code) {
        case dlpack::bool_: std::strcpy(out, "bool"); return true;
        case dlpack::int_: prefix = "int"; break;
        case dlpack::uint_: prefix = "uint"; break;
        case dlpack::float_: prefix = "float"; break;
        case dlpack::bfloat_: prefix = "bfloat"; break;
        case dlpack::complex_: prefix = "complex"; break;
    }
    std::size_t n = std::strlen(prefix);
    std::memcpy(out, prefix, n);
    unsigned bits = t.bits, div = bits >= 100 ? 100 : bits >= 10 ? 10 : 1;
    for (; div; div /= 10) out[n++] = (char) ('0' + (bits / div) % 10);
    out[n] = '\0';
    return true;
}

/// The size of a buffer that every dtype description fits in.
inline constexpr std::size_t dtype_description_capacity = 64;

/// Writes a name for any DLPack data type into `out` (`dtype_description_capacity` bytes): the array-API
/// name of a supported one, else the code's name with its bits and lanes ("int4", "bfloat32",
/// "float32 x 4 lanes", "float8_e4m3fn (16 bits)", "type code 99 (8 bits)").
inline void dtype_description(dlpack::DataType t, char *out) noexcept {
    if (dtype_name(t, out)) return;
    static const char *const base[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
    int n;
    if (t.code <= dlpack::bool_)
        n = std::snprintf(out, dtype_description_capacity, "%s%u", base[t.code], (unsigned) t.bits);
    else if (const char *name = small_float_name(t.code))
        n = std::snprintf(out, dtype_description_capacity, "%s (%u bits)", name, (unsigned) t.bits);
    else
        n = std::snprintf(out, dtype_description_capacity, "type code %u (%u bits)", (unsigned) t.code,
                          (unsigned) t.bits);
    if (t.lanes != 1 && n > 0 && (std::size_t) n < dtype_description_capacity)
        std::snprintf(out + n, dtype_description_capacity - (std::size_t) n, " x %u lanes", (unsigned) t.lanes);
}

/// The storage types a backend brings into its namespace (`py::float16`, `py::float8_e4m3fn`, ...), listed once.
namespace storage_types {
using dlt::bfloat16;
using dlt::float16;
using dlt::float8_e3m4;
using dlt::float8_e4m3;
using dlt::float8_e4m3b11fnuz;
using dlt::float8_e4m3fn;
using dlt::float8_e4m3fnuz;
using dlt::float8_e5m2;
using dlt::float8_e5m2fnuz;
using dlt::float8_e8m0fnu;
}  // namespace storage_types

}  // namespace dlt
