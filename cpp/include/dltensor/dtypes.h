// dltensor/dtypes.h: element types: the 2-byte storage types float16/bfloat16, the map from C++ scalar
// types to DLPack data types, and the dtype names that conversions and messages use.
// Backend-independent: no Python, no binding library.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "dlpack.h"

namespace dlt {

/// IEEE 754 binary16, stored as its 16 bits. Arithmetic is the user's business; dltensor only moves it.
struct float16 {
    uint16_t bits = 0;  ///< Sign (1), exponent (5), mantissa (10).

    constexpr float16() = default;
    static constexpr float16 from_bits(uint16_t b) noexcept { float16 h; h.bits = b; return h; }

    /// Rounds a float to the nearest binary16 (ties to even); overflow gives infinity, NaN stays NaN.
    explicit float16(float f) noexcept {
        uint32_t x; std::memcpy(&x, &f, 4);
        uint32_t sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
        if (absx > 0x7f800000u) { bits = (uint16_t) (sign | 0x7e00u); return; }       // NaN
        if (absx >= 0x477ff000u) { bits = (uint16_t) (sign | 0x7c00u); return; }      // overflow -> inf
        if (absx < 0x38800000u) {                                                     // subnormal or zero
            float a; std::memcpy(&a, &absx, 4);
            // 2^-24 is one subnormal step; adding 0.5 (as 2^23 * step) rounds to nearest even in float.
            float t = a + 0.5f; uint32_t tb; std::memcpy(&tb, &t, 4);
            bits = (uint16_t) (sign | (tb - 0x3f000000u)); return;
        }
        uint32_t mant_odd = (absx >> 13) & 1u;
        absx += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
        bits = (uint16_t) (sign | (absx >> 13));
    }

    /// Widens exactly to float.
    explicit operator float() const noexcept {
        uint32_t sign = (uint32_t) (bits & 0x8000u) << 16, exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu;
        uint32_t out;
        if (exp == 0x1f) out = sign | 0x7f800000u | (mant << 13);       // inf / NaN
        else if (exp != 0) out = sign | ((exp + 112u) << 23) | (mant << 13);
        else if (mant == 0) out = sign;                                  // signed zero
        else {                                                            // subnormal: value = mant * 2^-24
            float v = (float) mant * 5.9604644775390625e-8f;
            std::memcpy(&out, &v, 4); out |= sign;
        }
        float f; std::memcpy(&f, &out, 4); return f;
    }
};

/// bfloat16: the upper 16 bits of an IEEE 754 binary32, stored as those bits.
struct bfloat16 {
    uint16_t bits = 0;  ///< Sign (1), exponent (8), mantissa (7).

    constexpr bfloat16() = default;
    static constexpr bfloat16 from_bits(uint16_t b) noexcept { bfloat16 h; h.bits = b; return h; }

    /// Rounds a float to the nearest bfloat16 (ties to even); NaN stays NaN.
    explicit bfloat16(float f) noexcept {
        uint32_t x; std::memcpy(&x, &f, 4);
        if ((x & 0x7fffffffu) > 0x7f800000u) { bits = (uint16_t) ((x >> 16) | 0x40u); return; }
        x += 0x7fffu + ((x >> 16) & 1u);
        bits = (uint16_t) (x >> 16);
    }

    /// Widens exactly to float.
    explicit operator float() const noexcept {
        uint32_t x = (uint32_t) bits << 16; float f; std::memcpy(&f, &x, 4); return f;
    }
};

static_assert(sizeof(float16) == 2 && std::is_trivially_copyable_v<float16>);
static_assert(sizeof(bfloat16) == 2 && std::is_trivially_copyable_v<bfloat16>);

/// The DLPack data type of a C++ scalar type (cv-qualifiers ignored); `bits == 0` for "not a scalar".
template <typename T> constexpr dlpack::DataType dtype_of() noexcept {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, bool>) return {dlpack::bool_, 8, 1};
    else if constexpr (std::is_same_v<U, float16>) return {dlpack::float_, 16, 1};
    else if constexpr (std::is_same_v<U, bfloat16>) return {dlpack::bfloat_, 16, 1};
    else if constexpr (std::is_same_v<U, std::complex<float>>) return {dlpack::complex_, 64, 1};
    else if constexpr (std::is_same_v<U, std::complex<double>>) return {dlpack::complex_, 128, 1};
    else if constexpr (std::is_floating_point_v<U> && (sizeof(U) == 4 || sizeof(U) == 8))
        return {dlpack::float_, (uint8_t) (sizeof(U) * 8), 1};
    else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) <= 8)
        return {dlpack::int_, (uint8_t) (sizeof(U) * 8), 1};
    else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) <= 8)
        return {dlpack::uint_, (uint8_t) (sizeof(U) * 8), 1};
    else return {0, 0, 0};
}

/// True for a data type dltensor can carry: one lane of bool8, (u)int8..64, float16/32/64, bfloat16,
/// complex64/128.
constexpr bool is_supported_dtype(dlpack::DataType t) noexcept {
    if (t.lanes != 1) return false;
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

/// Writes the array-API name of a supported data type ("float32", "bfloat16", "bool", ...) into `out`
/// (at least 16 bytes). Returns false, leaving `out` empty, for an unsupported type.
inline bool dtype_name(dlpack::DataType t, char *out) noexcept {
    out[0] = '\0';
    if (!is_supported_dtype(t)) return false;
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

} // namespace dlt
