// dltensor/bindings/strided_view.h: a strided view with compile-time dtype and ndim, as `nb::ndarray_view`:
// what the pybind11 backend's `dltensor::view()` returns (`py::dltensor_view`).
#pragma once

#include <cstddef>
#include <cstdint>

#include "array_t_members.h"

namespace dlt {

template <typename Scalar, size_t Dim> class strided_view : public view_members<strided_view<Scalar, Dim>, Scalar> {
    using members = view_members<strided_view<Scalar, Dim>, Scalar>;

public:
    strided_view(Scalar *data, const int64_t *shape, const int64_t *strides) : m_data(data) {
        for (size_t i = 0; i < Dim; ++i) {
            m_shape[i] = shape[i];
            m_strides[i] = strides[i];
        }
    }
    /// A view of the contiguous memory at `data` in `order` ('C' or 'F') with the fixed extents `shape`.
    static strided_view contiguous(Scalar *data, const int64_t *shape, char order) {
        int64_t strides[Dim ? Dim : 1] = {}, step = 1;
        for (size_t k = 0; k < Dim; ++k) {
            const size_t i = order == 'C' ? Dim - 1 - k : k;
            strides[i] = step;
            step *= shape[i];
        }
        return strided_view(data, shape, strides);
    }
    template <typename... Ix> Scalar &operator()(Ix... indices) const {
        static_assert(sizeof...(Ix) == Dim, "dltensor_view::operator(): one index per dimension");
        const int64_t idx[] = {(int64_t) indices..., 0};
        int64_t off = 0;
        for (size_t i = 0; i < Dim; ++i) off += idx[i] * m_strides[i];
        return m_data[off];
    }
    size_t ndim() const { return Dim; }
    size_t shape(size_t i) const { return (size_t) m_shape[i]; }
    int64_t stride(size_t i) const { return m_strides[i]; }
    Scalar *data() const { return m_data; }
    // pybind11's unchecked-reference members: data(i, j), mutable_data(i, j), size() (array_t_members.h).
    using members::data;
    using members::mutable_data;
    using members::size;

private:
    Scalar *m_data;
    int64_t m_shape[Dim ? Dim : 1] = {};
    int64_t m_strides[Dim ? Dim : 1] = {};
};

}  // namespace dlt
