// dltensor/config.h: the compiler attributes, builtins and version checks the headers share, in one
// place. Needs nothing, not even Python (strides.h uses it): the Python check below applies wherever
// Python.h came first, as in both backends.
#pragma once

#include <cstdint>

/// For the few functions of the argument hot path that must not cost a call (the compiler left py_ref's
/// members out of line in the caster, at 10-20 instructions an argument).
#if defined(__GNUC__)
#define DLTENSOR_HOT_INLINE inline __attribute__((always_inline))
#else
#define DLTENSOR_HOT_INLINE inline
#endif

/// Code that runs once or on failure (first-call set-up, refusals): out of line and laid out apart, so
/// that the accepting path stays small.
#if defined(__GNUC__)
#define DLTENSOR_COLD __attribute__((noinline, cold))
#else
#define DLTENSOR_COLD
#endif

/// The refusal paths (conversions, lists): an inline function that is DLTENSOR_COLD.
#define DLTENSOR_REFUSAL_PATH inline DLTENSOR_COLD

/// A number as text, for the version checks' messages.
#define DLTENSOR_VERSION_STR_(x) #x
#define DLTENSOR_VERSION_STR(x) DLTENSOR_VERSION_STR_(x)

// The oldest Python dltensor supports (README: Supported versions; CI proves it with
// tests/test_python_versions.py). Each backend checks its binding library's version itself.
#if defined(PY_VERSION_HEX) && PY_VERSION_HEX < 0x03090000
#  pragma message("dltensor: found Python " PY_VERSION)
#  error "dltensor needs Python >= 3.9 (found an older Python, named above)"
#endif

namespace dlt {

/// `*out = a * b`; true when that overflows int64_t.
inline bool multiply_overflows(int64_t a, int64_t b, int64_t *out) noexcept {
#if defined(__GNUC__)
    return __builtin_mul_overflow(a, b, out);
#else
    if (a != 0 && (b > INT64_MAX / (a < 0 ? -a : a) || b < -(INT64_MAX / (a < 0 ? -a : a)))) return true;
    *out = a * b;
    return false;
#endif
}

/// The number of trailing zero bits of `x` (not 0).
inline int trailing_zeros(unsigned long long x) noexcept {
#if defined(__GNUC__)
    return __builtin_ctzll(x);
#else
    int n = 0;
    while (!(x & 1)) { x >>= 1; ++n; }
    return n;
#endif
}

} // namespace dlt
