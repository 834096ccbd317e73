// dltensor/tensor/config.h: the compiler attributes, builtins, build-mode macros and version checks every header
// shares; needs no Python. The entry headers include it first, so the C++17 check below is a build's first error.
#ifndef DLTENSOR_CONFIG_H
#define DLTENSOR_CONFIG_H

// C++17 (MSVC reports its standard in _MSVC_LANG; __cplusplus stays 199711L without /Zc:__cplusplus).
// clang-format off: diagnostics on one line each
#if defined(_MSVC_LANG) ? _MSVC_LANG < 201703L : __cplusplus < 201703L
#  error "dltensor needs C++17 or newer, and this file is compiled for an older C++ standard: compile with -std=c++17 (MSVC: /std:c++17); in CMake, target_compile_features(<target> PRIVATE cxx_std_17) or set(CMAKE_CXX_STANDARD 17)"
#endif
// clang-format on

// CPython's limited API (nanobind_add_module's STABLE_ABI defines Py_LIMITED_API): dltensor reads objects'
// fields and calls what the limited API leaves out, so a build with it stops here, not at dozens of errors.
// clang-format off: diagnostics on one line each
#if defined(Py_LIMITED_API)
#  error "dltensor needs CPython's full C API, and this file is compiled with Py_LIMITED_API (nanobind_add_module's STABLE_ABI): leave STABLE_ABI out and build one wheel per Python version (docs/reference.md §1: Supported builds)"
#endif
// clang-format on

#include <cstdint>

/// Always inlined: for the few functions of the argument hot path that must not cost a call.
#if defined(__GNUC__)
#  define DLTENSOR_HOT_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#  define DLTENSOR_HOT_INLINE __forceinline
#else
#  define DLTENSOR_HOT_INLINE inline
#endif

/// A function kept out of line (its callers' code stays small).
#if defined(__GNUC__)
#  define DLTENSOR_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#  define DLTENSOR_NOINLINE __declspec(noinline)
#else
#  define DLTENSOR_NOINLINE
#endif

/// Makes the pointer variable `p` one opaque value for the optimizer: a kernel inlined beside `data()` keeps one
/// register per tensor, not the base and the byte offset apart.
#if defined(__GNUC__)
#  define DLTENSOR_ONE_VALUE(p) __asm__("" : "+r"(p))
#else
#  define DLTENSOR_ONE_VALUE(p) ((void) 0)
#endif

/// Code that runs once or on failure (first-call set-up, refusals): out of line and laid out apart, so
/// that the accepting path stays small.
#if defined(__GNUC__)
#  define DLTENSOR_COLD __attribute__((noinline, cold))
#else
#  define DLTENSOR_COLD DLTENSOR_NOINLINE
#endif

/// The refusal paths (conversions, lists): an inline function that is DLTENSOR_COLD.
#define DLTENSOR_REFUSAL_PATH inline DLTENSOR_COLD
/// Building a message (a refusal's explanation, an error's text): an inline function that is DLTENSOR_COLD
/// (GCC optimizes it for size and keeps it out of the hot code).
#define DLTENSOR_MESSAGE_PATH inline DLTENSOR_COLD

/// `DLTENSOR_CORE_SHARED` (CMake's `DLTENSOR_SHARED_CORE`): the core library is shared and exports its entry
/// points (`DLTENSOR_CORE_VISIBILITY`: default visibility; GCC and Clang only).
#if defined(DLTENSOR_CORE_SHARED)
#  if !defined(DLTENSOR_CORE_LIBRARY) && !defined(DLTENSOR_CORE_LIBRARY_BUILD)
#    error "DLTENSOR_CORE_SHARED needs DLTENSOR_CORE_LIBRARY (the CMake target dltensor::dltensor sets both)"
#  endif
#  if defined(__GNUC__)
#    define DLTENSOR_CORE_VISIBILITY __attribute__((visibility("default")))
#  else
#    error "dltensor's shared core library needs GCC or Clang; elsewhere (MSVC) build the core as a static library"
#  endif
#else
#  define DLTENSOR_CORE_VISIBILITY
#endif

/// The build mode (docs/architecture.md, "The core, compiled once"): `DLTENSOR_CORE` marks the core's entry points
/// (bodies in `<name>-inl.h`); `DLTENSOR_CORE_DEFINITIONS` is 1 where this unit compiles them (core/core-inl.h).
#if defined(DLTENSOR_CORE_LIBRARY_BUILD) && defined(__GNUC__)
// `DLTENSOR_CORE_LIBRARY_BUILD` (src/core.cpp): the library itself; inline (the core inlines into itself) and
// always emitted (`used`), since the modules call them.
#  define DLTENSOR_CORE inline __attribute__((used)) DLTENSOR_CORE_VISIBILITY
#  define DLTENSOR_CORE_DEFINITIONS 1
#elif defined(DLTENSOR_CORE_LIBRARY_BUILD)
#  define DLTENSOR_CORE
#  define DLTENSOR_CORE_DEFINITIONS 1
#elif defined(DLTENSOR_CORE_LIBRARY)
// `DLTENSOR_CORE_LIBRARY` (the CMake target): declarations only; the library `dltensor_core` has the bodies.
#  define DLTENSOR_CORE DLTENSOR_CORE_VISIBILITY
#  define DLTENSOR_CORE_DEFINITIONS 0
#else
// Header-only (the default): every unit compiles the bodies.
#  define DLTENSOR_CORE inline
#  define DLTENSOR_CORE_DEFINITIONS 1
#endif

/// Where the nanobind backend's non-template functions (nanobind-inl.h) compile: by default in every unit that
/// includes the backend; with `DLTENSOR_NANOBIND_LIBRARY` (the CMake package) only in the library built from
/// src/nanobind.cpp once per nanobind library (`DLTENSOR_NANOBIND_LIBRARY_BUILD`).
#if defined(DLTENSOR_NANOBIND_LIBRARY_BUILD) && defined(__GNUC__)
#  define DLTENSOR_NANOBIND_PART inline __attribute__((used))
#  define DLTENSOR_NANOBIND_DEFINITIONS 1
#elif defined(DLTENSOR_NANOBIND_LIBRARY_BUILD)
#  define DLTENSOR_NANOBIND_PART
#  define DLTENSOR_NANOBIND_DEFINITIONS 1
#elif defined(DLTENSOR_NANOBIND_LIBRARY)
#  define DLTENSOR_NANOBIND_PART
#  define DLTENSOR_NANOBIND_DEFINITIONS 0
#else
#  define DLTENSOR_NANOBIND_PART inline
#  define DLTENSOR_NANOBIND_DEFINITIONS 1
#endif

/// DLTENSOR_COLD for a core entry point, declared apart from its body: cold but not noinline, which GCC
/// refuses on an inline function declared before its definition.
#if defined(__GNUC__)
#  define DLTENSOR_CORE_COLD __attribute__((cold))
#else
#  define DLTENSOR_CORE_COLD
#endif

/// State that a module's inline code and the core share (docs/architecture.md): plain inline (one copy per module)
/// except in a shared core's modules, which call the library's copy. Declared `DLTENSOR_PROCESS_WIDE <signature>;`,
/// bodies in python/process_wide-inl.h, which the entry headers include where `DLTENSOR_PROCESS_WIDE_BODIES`.
#if defined(DLTENSOR_CORE_SHARED) && !defined(DLTENSOR_CORE_LIBRARY_BUILD)
#  define DLTENSOR_PROCESS_WIDE DLTENSOR_CORE_VISIBILITY
#  define DLTENSOR_PROCESS_WIDE_BODIES 0
#elif defined(DLTENSOR_CORE_SHARED)
#  define DLTENSOR_PROCESS_WIDE inline __attribute__((used)) DLTENSOR_CORE_VISIBILITY
#  define DLTENSOR_PROCESS_WIDE_BODIES 1
#else
#  define DLTENSOR_PROCESS_WIDE inline
#  define DLTENSOR_PROCESS_WIDE_BODIES 1
#endif

/// A number as text, for the version checks' messages.
#define DLTENSOR_VERSION_STR_(x) #x
#define DLTENSOR_VERSION_STR(x) DLTENSOR_VERSION_STR_(x)

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
    while (!(x & 1)) {
        x >>= 1;
        ++n;
    }
    return n;
#endif
}

}  // namespace dlt

#endif  // DLTENSOR_CONFIG_H

// The oldest supported Python (README: Supported versions), checked by the first inclusion after Python.h: outside
// the include guard, since the entry headers include this file before Python.h. Backends check their library's.
#if defined(PY_VERSION_HEX) && !defined(DLTENSOR_PYTHON_VERSION_CHECKED)
#define DLTENSOR_PYTHON_VERSION_CHECKED
#if PY_VERSION_HEX < 0x03090000
#  pragma message("dltensor: found Python " PY_VERSION)
#  error "dltensor needs Python >= 3.9 (found an older Python, named above)"
#endif
#endif
