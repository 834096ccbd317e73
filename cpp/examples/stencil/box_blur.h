// The stencil examples' kernel: a 3x3 box blur over a batch of float32 images, in plain C++. It takes
// element strides, so it reads and writes any view (sliced, transposed, flipped) where it lives; only the
// bindings around it differ between pybind11, nanobind and py::dltensor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>

/// A (batch, height, width) float32 image stack: where element (b, i, j) lives is
/// `data + b * stride[0] + i * stride[1] + j * stride[2]` (strides in elements, any sign).
template <typename T> struct image_stack {
    T *data;
    int64_t shape[3];
    int64_t stride[3];

    T &at(int64_t b, int64_t i, int64_t j) const { return data[b * stride[0] + i * stride[1] + j * stride[2]]; }

    /// The lowest and one-past-the-highest element addresses the stack touches (empty stacks: equal).
    void span(const T *&lo, const T *&hi) const {
        lo = hi = data;
        if (shape[0] == 0 || shape[1] == 0 || shape[2] == 0) return;
        int64_t low = 0, high = 0;
        for (int k = 0; k < 3; ++k) (stride[k] < 0 ? low : high) += (shape[k] - 1) * stride[k];
        lo = data + low;
        hi = data + high + 1;
    }
};

/// True when the address ranges of `src` and `dst` meet (conservative: interleaved views count too); the
/// blur reads neighbours, so it cannot run in place.
inline bool overlaps(const image_stack<const float> &src, const image_stack<float> &dst) {
    const float *a0, *a1, *b0, *b1;
    src.span(a0, a1);
    dst.span(b0, b1);
    return a0 < b1 && b0 < a1;
}

/// The stack of a 3-D tensor whose accessors count strides in elements (nb::ndarray, py::dltensor).
template <typename T, typename Tensor> image_stack<T> stack_of(const Tensor &t) {
    return {t.data(), {(int64_t) t.shape(0), (int64_t) t.shape(1), (int64_t) t.shape(2)},
            {t.stride(0), t.stride(1), t.stride(2)}};
}

/// Throws std::invalid_argument (Python: ValueError) unless `dst` has `src`'s shape and its own memory.
inline void check_blur_operands(const image_stack<const float> &src, const image_stack<float> &dst) {
    for (int k = 0; k < 3; ++k)
        if (src.shape[k] != dst.shape[k]) throw std::invalid_argument("box_blur_into(): dst must have src's shape");
    if (overlaps(src, dst)) throw std::invalid_argument("box_blur_into(): dst overlaps src");
}

/// dst(b, i, j) = the mean of src(b, i + di, j + dj) over di, dj in {-1, 0, 1}, with indices clamped to
/// the image (the edge pixels repeat). `dst` has `src`'s shape and does not overlap it. Kept out of line
/// so that every binding runs the same machine code (inlined, it vectorized differently per module, by
/// up to 25%, which the benchmark would have charged to the bindings).
[[gnu::noinline]] inline void box_blur_3x3(const image_stack<const float> &src, const image_stack<float> &dst) {
    const int64_t n = src.shape[0], h = src.shape[1], w = src.shape[2];
    for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < h; ++i) {
            const int64_t rows[3] = {std::max<int64_t>(i - 1, 0), i, std::min<int64_t>(i + 1, h - 1)};
            for (int64_t j = 0; j < w; ++j) {
                const int64_t cols[3] = {std::max<int64_t>(j - 1, 0), j, std::min<int64_t>(j + 1, w - 1)};
                float s = 0;
                for (int64_t r : rows)
                    for (int64_t c : cols) s += src.at(b, r, c);
                dst.at(b, i, j) = s * (1.0f / 9.0f);
            }
        }
}
