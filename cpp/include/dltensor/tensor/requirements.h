// dltensor/tensor/requirements.h: what a `dltensor<...>` parameter asks of a tensor, and the checks that decide
// whether a DLPack tensor satisfies it. Backend-independent: no Python, no binding library.
#pragma once

#include <cstdint>
#include <type_traits>

#include "config.h"
#include "dlpack.h"
#include "dtypes.h"
#include "strides.h"

namespace dlt {

/// Whether `Args` hold each kind of annotation at most once, `Kind<T>` saying which kind `T` is (its
/// `scalar`, `shape`, `ro`, `order`, `device` and `framework`): annotations.h's annotation_kind for its
/// tags, nanobind's own detector for nanobind's (nanobind.h). Both backends' one uniqueness rule.
template <template <typename> class Kind, typename... Args> constexpr bool annotations_unique() {
    return (0 + ... + (int) Kind<Args>::scalar) <= 1 && (0 + ... + (int) Kind<Args>::shape) <= 1 &&
           (0 + ... + (int) Kind<Args>::ro) <= 1 && (0 + ... + (int) Kind<Args>::order) <= 1 &&
           (0 + ... + (int) Kind<Args>::device) <= 1 && (0 + ... + (int) Kind<Args>::framework) <= 1;
}

/// The run-time form of a parameter's annotations. Each backend fills it from its compile-time config.
struct requirements {
    dlpack::DataType dtype{0, 0, 0};  ///< Required element type; `bits == 0` accepts any.
    int32_t ndim = -1;                ///< Required number of dimensions; -1 accepts any.
    const int64_t *shape = nullptr;   ///< `ndim` required extents (-1: any) when `ndim >= 0`; else unused.
    int32_t device_type = 0;          ///< Required DLPack device type; 0 accepts any.
    char order = '\0';                ///< 'C', 'F', 'A' (either), or '\0' for any strides.
    bool read_only = false;           ///< The parameter promises not to write (const dtype or `ro`).
    uint8_t alignment = 1;  ///< Bytes the first element's address must be a multiple of (the dtype's; a power of two).
    /// The framework annotation (frameworks/ number; 0: none): without conversion (overload resolution's
    /// first pass, `.noconvert()`) only that framework's tensors bind; with it, any producer's.
    uint8_t framework = 0;
};

/// A parameter's framework annotation as `requirements::framework`: the number of a framework whose
/// tensors a parameter can tell apart (frameworks/), 0 for none and for `array_api` (any producer, 7).
constexpr uint8_t parameter_framework(int annotated) noexcept { return annotated == 7 ? 0 : (uint8_t) annotated; }

/// A parameter's requirements from its annotations: element type `Scalar` (void: any), `ndim` (-1: any) with
/// `extents` (-1: any), `device_type` and `framework` (0: any), `order` ('\0': any), `read_only`.
template <typename Scalar>
constexpr requirements requirements_of(int32_t ndim, const int64_t *extents, int32_t device_type, char order,
                                       bool read_only, int framework = 0) noexcept {
    requirements r;
    if constexpr (!std::is_void_v<std::remove_cv_t<Scalar>>) {
        r.dtype = dtype_of<Scalar>();
        r.alignment = (uint8_t) alignof(Scalar);
    }
    r.ndim = ndim;
    r.shape = extents;
    r.device_type = device_type;
    r.order = order;
    r.read_only = read_only;
    r.framework = parameter_framework(framework);
    return r;
}

/// The compile error of a `dltensor<...>` that repeats a kind of annotation (both backends).
#define DLTENSOR_ANNOTATIONS_UNIQUE_MESSAGE                                                                            \
    "py::dltensor<...>: each kind of annotation (dtype, shape/ndim, ro, device, order, framework) may appear "         \
    "at most once"

/// The compile error of an annotation that is neither a tag nor a scalar type DLPack has a dtype for. The
/// compiler names the type: it is `T` of the `annotation_known<T, false>` the error is reported in.
template <typename T, bool Known> constexpr bool annotation_known() {
    static_assert(Known, "py::dltensor<...>: unknown annotation: T (in this instantiation) is neither an annotation "
                         "tag nor a scalar type with a DLPack dtype (long double and __int128 have none: see the "
                         "migration guide, \"Dtypes DLPack lacks\")");
    return Known;
}

/// The compile error of a `py::memview` parameter (both backends): the tag names what a return becomes.
#define DLTENSOR_MEMVIEW_PARAMETER_MESSAGE                                                                             \
    "py::dltensor<py::memview, ...> as a parameter: py::memview says what a returned tensor becomes (a "               \
    "memoryview); a parameter without a framework annotation already binds memoryviews and every buffer"

/// Why a tensor does not satisfy a parameter; the first failing check wins.
enum class mismatch : uint8_t {
    none,           ///< Satisfied.
    read_only,      ///< The source is read-only and the parameter is writable.
    device,         ///< Wrong device type.
    shape,          ///< Wrong ndim or a fixed extent differs.
    dtype,          ///< Wrong element type (a conversion may fix it).
    order,          ///< Strides are not of the required order (a conversion may fix it).
    lazy_view,      ///< The memory does not hold the values: a lazily conjugated or negated view.
    misaligned,     ///< The first element's address is not aligned for the dtype (a copy fixes it).
    overlapping,    ///< Elements that may share memory, for a writable parameter (strides.h: may_overlap).
    copied,         ///< The producer's copy (DLPack's IS_COPIED flag), for a writable parameter.
    requires_grad,  ///< A tensor its framework's autograd records, for a writable parameter while grad mode is on.
    inference,      ///< An inference-only tensor, for a writable parameter outside its framework's inference mode.
    framework,      ///< Another framework's tensor, without conversion, for a framework-annotated parameter.
    invalid,        ///< Not a usable DLPack tensor: malformed, foreign, already consumed, or no tensor at all.
};

/// Do two shape annotations agree (the same ndim, and equal extents where both fix one)? `n < 0`: no shape
/// annotation (its extents are not read); an extent of -1: any. (No pointer is compared with NULL: not a
/// constant expression under -fsanitize=undefined.)
constexpr bool shapes_agree(int32_t n1, const int64_t *e1, int32_t n2, const int64_t *e2) noexcept {
    if (n1 < 0 || n2 < 0) return true;
    if (n1 != n2) return false;
    for (int32_t i = 0; i < n1; ++i)
        if (e1[i] >= 0 && e2[i] >= 0 && e1[i] != e2[i]) return false;
    return true;
}

/// The number of elements of a fully static shape annotation, or -1 (no shape, or a free extent).
constexpr int64_t static_size(int32_t n, const int64_t *e) noexcept {
    if (n < 0) return -1;
    int64_t size = 1;
    for (int32_t i = 0; i < n; ++i) {
        if (e[i] < 0) return -1;
        size *= e[i];
    }
    return size;
}

/// May `view<...>()` with shape 2 be taken of a tensor annotated with shape 1? As nanobind: refused at
/// compile time only when both are fully static with different element counts.
constexpr bool view_shape_possible(int32_t n1, const int64_t *e1, int32_t n2, const int64_t *e2) noexcept {
    const int64_t s1 = static_size(n1, e1), s2 = static_size(n2, e2);
    return s1 < 0 || s2 < 0 || s1 == s2;
}

/// Checks a validated tensor against a parameter's requirements. `source_read_only` says whether the
/// producer forbids writes (flag, immutable framework, read-only buffer).
DLTENSOR_HOT_INLINE mismatch check(const requirements &r, const dlpack::Tensor &t, bool source_read_only) noexcept {
    if (source_read_only && !r.read_only) return mismatch::read_only;
    if (r.device_type != 0 && t.device.device_type != r.device_type) return mismatch::device;
    if (r.ndim >= 0) {
        if (t.ndim != r.ndim) return mismatch::shape;
        for (int32_t i = 0; i < r.ndim; ++i)
            if (r.shape && r.shape[i] != -1 && r.shape[i] != t.shape[i]) return mismatch::shape;
    }
    if (r.dtype.bits != 0 && r.dtype != t.dtype) return mismatch::dtype;
    if (!has_order(t, r.order)) return mismatch::order;
    // A mask, not `%`: alignments are powers of two, and a division by a run-time value costs tens of cycles.
    if (r.alignment > 1 && (((uintptr_t) t.data + t.byte_offset) & (uintptr_t) (r.alignment - 1)) != 0 &&
        element_count(t) != 0)
        return mismatch::misaligned;                                   // an empty tensor's pointer is never read
    if (!r.read_only && may_overlap(t)) return mismatch::overlapping;  // one location written twice
    return mismatch::none;
}

/// Can a conversion (a copy made by the producer) fix this mismatch for this parameter? Only dtype,
/// order, alignment and lazy-view mismatches, only for read-only parameters, and never complex -> real
/// (it would drop data). `source` is the tensor's element type (`bits == 0` when unknown).
inline bool conversion_may_fix(const requirements &r, dlpack::DataType source, mismatch m) noexcept {
    if (!r.read_only ||
        (m != mismatch::dtype && m != mismatch::order && m != mismatch::lazy_view && m != mismatch::misaligned))
        return false;
    if (m == mismatch::dtype && source.code == dlpack::complex_ && r.dtype.code != dlpack::complex_) return false;
    return true;
}

/// The dtype of the last tensor that validate() (or the NumPy reader, frameworks/numpy_arrays.h) refused for its dtype
/// alone on this thread, e.g. a sub-byte float4_e2m1fn: the refusal that follows names it, and clears it
/// (import.h). Written only when refusing.
inline dlpack::DataType &unsupported_dtype_seen() noexcept {
    static thread_local dlpack::DataType seen{0, 0, 0};
    return seen;
}

/// Why the last tensor that validate() or a buffer's reader refused on this thread was malformed (a
/// static text), for the refusal that follows (import.h clears it); NULL when none was. Written only when
/// refusing.
inline const char *&malformed_reason_seen() noexcept {
    static thread_local const char *seen = nullptr;
    return seen;
}

/// Rejects a malformed tensor before anything reads through it: ndim outside [0, max_ndim], NULL
/// shape, negative extents, an element count or byte span that overflows, an unsupported dtype or
/// device type, NULL data with elements. Returns NULL when valid, else the reason (also recorded).
DLTENSOR_HOT_INLINE const char *validate(const dlpack::Tensor &t) noexcept {
    const char *why = nullptr;
    int64_t n = 0, bytes;
    if (t.ndim < 0 || t.ndim > dlpack::max_ndim) why = "its ndim is outside 0..64";
    else if (t.ndim > 0 && !t.shape) why = "its shape is NULL";
    for (int32_t i = 0; !why && i < t.ndim; ++i)
        if (t.shape[i] < 0) why = "an extent is negative";
    if (!why && ((n = element_count(t)) < 0 || multiply_overflows(n, (int64_t) ((t.dtype.bits + 7) / 8), &bytes)))
        why = "its element count or byte size does not fit in 64 bits";
    if (!why && !is_supported_dtype(t.dtype)) {
        unsupported_dtype_seen() = t.dtype;
        return "unsupported dtype";  // named by its dtype
    }
    if (!why && !dlpack::is_known_device_type(t.device.device_type)) why = "its device type is unknown";
    if (!why && !t.data && n > 0) why = "its data pointer is NULL";
    if (why) malformed_reason_seen() = why;
    return why;
}

}  // namespace dlt
