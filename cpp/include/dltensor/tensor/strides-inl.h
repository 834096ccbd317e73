// dltensor/tensor/strides-inl.h: the bodies of strides.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "strides.h"

namespace dlt {

DLTENSOR_CORE void copy_dense_into(const void *src, char order, void *dst, const int64_t *shape, const int64_t *strides,
                                   size_t ndim, size_t itemsize) noexcept {
    int64_t count = 1;
    for (size_t i = 0; i < ndim; ++i) count *= shape[i];
    const bool same = is_contiguous_in(order, shape, strides, ndim);
    if (count == 0) return;
    if (same) {
        std::memcpy(dst, src, (size_t) count * itemsize);
        return;
    }
    const char *from = static_cast<const char *>(src);
    char *to = static_cast<char *>(dst);
    int64_t index[dlpack::max_ndim] = {}, offset = 0;  // `offset`: the current element's, in elements of dst
    for (int64_t k = 0; k < count; ++k) {
        std::memcpy(to + offset * (int64_t) itemsize, from + k * (int64_t) itemsize, itemsize);
        for (size_t j = 0; j < ndim; ++j) {  // the next element in `order`: the fastest dimension first
            const size_t d = order == 'F' ? j : ndim - 1 - j;
            if (++index[d] < shape[d]) {
                offset += strides[d];
                break;
            }
            offset -= strides[d] * (shape[d] - 1);
            index[d] = 0;
        }
    }
}

DLTENSOR_CORE void positive_view(const dlpack::Tensor &t, dlpack::Tensor &out, int64_t *strides, int64_t *flip_dims,
                                 int32_t *n_flip) noexcept {
    out = t;
    int64_t first = 0;  // element offset of the lowest address, from the current first element
    *n_flip = 0;
    const bool empty = element_count(t) == 0;
    for (int32_t i = 0; i < t.ndim; ++i) {
        strides[i] = t.strides[i] < 0 ? -t.strides[i] : t.strides[i];
        if (t.strides[i] < 0 && t.shape[i] > 1 && !empty) {
            first += t.strides[i] * (t.shape[i] - 1);
            flip_dims[(*n_flip)++] = i;
        }
    }
    out.data = (char *) t.data + t.byte_offset + first * (int64_t) ((t.dtype.bits + 7) / 8);
    out.byte_offset = 0;
    out.strides = strides;
}

}  // namespace dlt
