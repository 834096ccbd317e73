// dltensor/tensor/strides.h: stride arithmetic on validated DLPack tensors: element counts, memory orders, and
// the positive-stride view of a tensor with negative strides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "config.h"
#include "dlpack.h"

namespace dlt {

/// `ndim` (<= dlpack::max_ndim) extents of integer type `From` as `To` (NumPy's `Py_ssize_t`, DLPack's `int64_t`):
/// the same array where the two differ at most in signedness (`size_t` and `int64_t` on 64-bit Linux and
/// Windows), else a converted copy held here.
template <typename To, typename From> class extents_as {
    static constexpr bool same = std::is_same_v<std::make_signed_t<From>, std::make_signed_t<To>>;

public:
    DLTENSOR_HOT_INLINE extents_as(const From *extents, size_t ndim) noexcept {
        if constexpr (same) {
            (void) ndim;
            p_ = reinterpret_cast<const To *>(extents);
        } else {
            for (size_t i = 0; i < ndim; ++i) copy_[i] = (To) extents[i];
            p_ = copy_;
        }
    }
    /// Not const: DLPack's `shape` field is a plain pointer (the extents are never written through it).
    To *get() const noexcept { return const_cast<To *>(p_); }

private:
    const To *p_;
    To copy_[same ? 1 : dlpack::max_ndim];
};

/// Number of elements, or -1 when the product overflows int64. Assumes validated extents (>= 0).
inline int64_t element_count(const dlpack::Tensor &t) noexcept {
    int64_t n = 1;
    for (int32_t i = 0; i < t.ndim; ++i)
        if (multiply_overflows(n, t.shape[i], &n)) return -1;
    return n;
}

/// The bytes of `elements` elements of `bits` bits each, `(bits * elements + 7) / 8`, computed without
/// overflow, and SIZE_MAX where the count does not fit in `size_t` (only a stride-0 broadcast, whose memory
/// is far smaller, has that many: shape (2^31, 2^31) of float32 is 2^64 bytes).
constexpr size_t byte_count(size_t elements, unsigned bits) noexcept {
    const size_t whole = elements / 8, rest = elements % 8;  // bits * elements = 8 * (bits * whole) + bits * rest
    const size_t tail = (rest * bits + 7) / 8;
    if (bits != 0 && whole > (SIZE_MAX - tail) / bits) return SIZE_MAX;
    return whole * bits + tail;
}

/// Can two elements of `t` share memory? Its dimensions of more than one element, sorted by |stride|,
/// must each step past the span of the smaller ones; any that does not (a stride of 0, an overlapping
/// `as_strided`, and a few interleaved layouts that in fact do not overlap) counts as overlapping.
inline bool may_overlap(const dlpack::Tensor &t) noexcept {
    if (!t.strides) return false;
    int64_t stride[dlpack::max_ndim], extent[dlpack::max_ndim];
    int32_t n = 0;
    for (int32_t i = 0; i < t.ndim; ++i) {
        if (t.shape[i] == 0) return false;  // no elements
        if (t.shape[i] == 1) continue;
        int64_t s = t.strides[i] < 0 ? -t.strides[i] : t.strides[i], e = t.shape[i];
        int32_t j = n++;
        for (; j > 0 && stride[j - 1] > s; --j) stride[j] = stride[j - 1], extent[j] = extent[j - 1];
        stride[j] = s, extent[j] = e;
    }
    int64_t span = 0;  // the largest offset, in elements, that the smaller dimensions reach
    for (int32_t i = 0; i < n; ++i) {
        if (stride[i] <= span) return true;
        span += (extent[i] - 1) * stride[i];
    }
    return false;
}

/// Is the tensor laid out in C (row-major) or F (column-major) order? Size-1 dimensions place no
/// constraint on their stride, and a tensor with at most one element (or none) has every order.
/// NULL strides mean C order (DLPack < 1.2 producers).
inline bool has_order(const dlpack::Tensor &t, char order) noexcept {
    if (order == '\0') return true;
    if (element_count(t) <= 1) return true;
    bool c = order == 'C' || order == 'A', f = order == 'F' || order == 'A';
    if (!t.strides) {
        if (c) return true;
        int nontrivial = 0;
        for (int32_t i = 0; i < t.ndim; ++i) nontrivial += t.shape[i] > 1;
        return nontrivial <= 1;
    }
    if (c) {
        int64_t expect = 1;
        for (int32_t i = t.ndim - 1; i >= 0; --i) {
            if (t.shape[i] == 1) continue;
            if (t.strides[i] != expect) {
                c = false;
                break;
            }
            expect *= t.shape[i];
        }
    }
    if (f) {
        int64_t expect = 1;
        for (int32_t i = 0; i < t.ndim; ++i) {
            if (t.shape[i] == 1) continue;
            if (t.strides[i] != expect) {
                f = false;
                break;
            }
            expect *= t.shape[i];
        }
    }
    return c || f;
}

/// Does any dimension of more than one element step backwards? (NULL strides never do.)
inline bool has_negative_stride(const dlpack::Tensor &t) noexcept {
    if (!t.strides) return false;
    for (int32_t i = 0; i < t.ndim; ++i)
        if (t.strides[i] < 0 && t.shape[i] > 1) return true;
    return false;
}

/// Fills `strides[0..ndim)` with the element strides of contiguous memory of `shape` in `order` ('F':
/// column-major, else row-major).
inline void contiguous_strides(const int64_t *shape, size_t ndim, char order, int64_t *strides) noexcept {
    int64_t step = 1;
    if (order == 'F') {
        for (size_t i = 0; i < ndim; ++i) {
            strides[i] = step;
            step *= shape[i];
        }
    } else {
        for (size_t i = ndim; i-- > 0;) {
            strides[i] = step;
            step *= shape[i];
        }
    }
}

/// Are `strides` the element strides of contiguous memory of `shape[0..ndim)` in `order` ('F':
/// column-major, else row-major)? Size-1 dimensions place no constraint on their stride.
DLTENSOR_HOT_INLINE bool is_contiguous_in(char order, const int64_t *shape, const int64_t *strides,
                                          size_t ndim) noexcept {
    int64_t step = 1;
    for (size_t k = 0; k < ndim; ++k) {
        const size_t i = order == 'F' ? k : ndim - 1 - k;
        if (shape[i] != 1 && strides[i] != step) return false;
        step *= shape[i];
    }
    return true;
}

/// Copies the elements of `shape[0..ndim)` lying densely at `src` in `order` ('F': column-major, else row-major),
/// `itemsize` bytes each, into `dst` with the element `strides`: one `memcpy` when those are `order`'s contiguous
/// strides, else element by element (`copy_of()` into a framework's allocation of another layout).
DLTENSOR_CORE void copy_dense_into(const void *src, char order, void *dst, const int64_t *shape, const int64_t *strides,
                                   size_t ndim, size_t itemsize) noexcept;

/// `t` with every stride non-negative: `out` views the same memory from its lowest address (`strides` receives
/// `t.ndim` strides; shape shared with `t`); `flip_dims[0..*n_flip)` are the dimensions to reverse to get `t`
/// back. For consumers without negative strides (PyTorch). Call only when `has_negative_stride(t)`.
DLTENSOR_CORE void positive_view(const dlpack::Tensor &t, dlpack::Tensor &out, int64_t *strides, int64_t *flip_dims,
                                 int32_t *n_flip) noexcept;

}  // namespace dlt
