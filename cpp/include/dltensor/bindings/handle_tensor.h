// dltensor/bindings/handle_tensor.h: a tensor over a reference-counted `tensor_handle` (python/handle.h)
// with the annotations `Config` (tensor/annotations.h), for a backend whose binding library has no tensor
// type of its own: the pybind11 backend's `dltensor` adds its binding library's parts to it.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "strided_view.h"
#include "../tensor/annotations.h"
#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "../tensor/requirements.h"
#include "../tensor/strides.h"
#include "../python/handle.h"
#include "../python/process_state.h"
#include "../core/export.h"

namespace dlt {

/// What a handle_tensor holds (not a template, so that what every tensor type does alike compiles once).
class handle_tensor_state {
protected:
    handle_tensor_state() = default;
    handle_tensor_state(tensor_handle *adopted, bool owned) noexcept : m_handle(adopted), m_owned(owned) { }
    /// Holds `adopted` (its reference taken over, its memory owned) instead of the tensor held before,
    /// which it drops: a parameter's import.
    void adopt_imported(tensor_handle *adopted) noexcept {
        tensor_handle *former = m_handle;
        m_handle = adopted;
        m_owned = true;
        m_return_framework = 0;
        if (former) former->dec_ref();
    }

    tensor_handle *m_handle = nullptr;
    bool m_owned = false;  ///< an owner keeps the memory alive (imported, allocated, or given one)
    /// The framework to return in when the annotation names none (return_like(), empty_like(): the
    /// followed tensor's source framework); 0: none to follow.
    int m_return_framework = 0;
};

template <typename Config> class handle_tensor : public handle_tensor_state {
    template <typename> friend class handle_tensor;

public:
    using Scalar = typename Config::Scalar;
    static constexpr bool ReadOnly = Config::read_only;
    static constexpr char Order = Config::Order::value;
    static constexpr int DeviceType = Config::Device::value;
    using VoidPtr = std::conditional_t<ReadOnly, const void *, void *>;

    handle_tensor() = default;
    ~handle_tensor() {
        if (m_handle) m_handle->dec_ref();
    }
    handle_tensor(const handle_tensor &o) : handle_tensor_state(o.m_handle, o.m_owned) {
        m_return_framework = o.m_return_framework;
        if (m_handle) m_handle->inc_ref();
    }
    handle_tensor(handle_tensor &&o) noexcept : handle_tensor_state(o.m_handle, o.m_owned) {
        m_return_framework = o.m_return_framework;
        o.m_handle = nullptr;
    }
    handle_tensor &operator=(handle_tensor o) noexcept {
        std::swap(m_handle, o.m_handle);
        std::swap(m_owned, o.m_owned);
        std::swap(m_return_framework, o.m_return_framework);
        return *this;
    }

    dlpack::DataType dtype() const { return t().dtype; }
    size_t ndim() const { return m_handle ? (size_t) t().ndim : 0; }
    size_t shape(size_t i) const { return (size_t) t().shape[i]; }
    int64_t stride(size_t i) const { return t().strides[i]; }
    const int64_t *shape_ptr() const { return t().shape; }
    const int64_t *stride_ptr() const { return t().strides; }
    bool is_valid() const { return m_handle != nullptr; }
    int device_type() const { return t().device.device_type; }
    int device_id() const { return t().device.device_id; }
    void *data_handle() const { return t().data; }
    uint64_t byte_offset() const { return t().byte_offset; }
    tensor_handle *handle() const { return m_handle; }
    static constexpr bool read_only() noexcept { return ReadOnly; }
    /// The producer's stream for exchange-API imports (see the nanobind backend), else NULL.
    void *stream() const { return m_handle ? m_handle->stream() : nullptr; }

    size_t size() const {
        size_t n = is_valid();
        for (size_t i = 0; i < ndim(); ++i) n *= shape(i);
        return n;
    }
    size_t itemsize() const { return ((size_t) dtype().bits + 7) / 8; }
    size_t nbytes() const { return byte_count(size(), dtype().bits); }  ///< SIZE_MAX where it overflows

    Scalar *data() const { return (Scalar *) first_byte_whole(); }

    template <typename... Ix> auto &operator()(Ix... indices) const {
        static_assert(!std::is_void_v<std::remove_cv_t<Scalar>>, "operator(): annotate a dtype");
        static_assert(Config::N >= 0 && sizeof...(Ix) == (size_t) Config::N,
                      "operator(): annotate shape<...>/ndim<N> and pass one index per dimension");
        const int64_t idx[] = {(int64_t) indices..., 0};
        int64_t off = 0;
        for (size_t i = 0; i < sizeof...(Ix); ++i) off += idx[i] * t().strides[i];
        return ((Scalar *) first_byte())[off];
    }

    /// A strided view (`py::dltensor_view`) under the rules of array_t_members.h's view_rules; another fixed
    /// shape needs a `c_contig` or `f_contig` tensor. A view of a read-only tensor stays read-only.
    template <typename... Args2> auto view() const {
        using C2 = config<Args2...>;
        using S1 = std::remove_cv_t<Scalar>;
        using S2 = std::remove_cv_t<typename C2::Scalar>;
        using rules = view_rules<S1, typename Config::Shape, S2, typename C2::Shape>;
        using S = std::conditional_t<std::is_void_v<S2>, S1, S2>;
        constexpr int32_t N = C2::N >= 0 ? C2::N : Config::N;
        static_assert(!std::is_void_v<S>, "view(): needs a dtype");
        static_assert(N >= 0, "view(): needs shape<...> or ndim<N>");
        using V = std::conditional_t<ReadOnly || C2::read_only, const S, S>;
        V *first = (V *) first_byte_whole();
        if constexpr (rules::reshaped) {  // another fixed shape over the same contiguous memory
            static_assert(Order == 'C' || Order == 'F', "view<...>() with another shape needs contiguous memory: "
                                                        "annotate the tensor py::c_contig or py::f_contig");
            if (m_handle && size() != (size_t) static_size(C2::N, C2::Shape::extents))
                throw std::invalid_argument("view<...>(): the view's shape holds another number of elements");
            return strided_view<V, (size_t) N>::contiguous(first, C2::Shape::extents, Order);
        } else {
            check_view_ndim(m_handle != nullptr, ndim(), N);
            return strided_view<V, (size_t) N>(first, t().shape, t().strides);
        }
    }

protected:
    handle_tensor(tensor_handle *adopted, bool owned) noexcept : handle_tensor_state(adopted, owned) { }

    /// Makes the handle of C++ memory (the backend's constructors): false with a Python error set.
    /// Throws `std::invalid_argument` for more than dlpack::max_ndim dimensions.
    bool make(VoidPtr data, size_t nd, const size_t *shape, PyObject *owner, const int64_t *strides,
              dlpack::DataType dtype, int device_type, int device_id, char order, uint64_t byte_offset) {
        if (nd > (size_t) dlpack::max_ndim) throw std::invalid_argument("dltensor: too many dimensions");
        const extents_as<int64_t, size_t> dims(shape, nd);
        dlpack::Tensor tensor{};
        tensor.data = const_cast<void *>(data);
        tensor.device = {device_type ? device_type : (int) dlpack::cpu, device_id};
        tensor.ndim = (int32_t) nd;
        tensor.dtype = dtype;
        tensor.shape = dims.get();
        tensor.strides = const_cast<int64_t *>(strides);
        tensor.byte_offset = byte_offset;
        if (owner && !enter_interpreter_or_raise_out_of_line()) return false;  // the owner is this interpreter's
        m_handle = tensor_handle::create_inline(tensor, owner, ReadOnly, nullptr, order == 'F' ? 'F' : 'C');
        m_owned = owner != nullptr;
        return m_handle != nullptr;
    }

    /// Takes another tensor's handle (the converting constructor); a read-only tensor adopted from a
    /// writable one gets a read-only handle of its own. False with a Python error set.
    template <typename Other> bool adopt_handle(const handle_tensor<Other> &o) {
        m_owned = o.m_owned;
        m_return_framework = o.m_return_framework;
        if (!o.m_handle) return true;
        if (!ReadOnly || o.m_handle->read_only()) {
            m_handle = o.m_handle;
            m_handle->inc_ref();
            return true;
        }
        py_ref keep(make_exported(o.m_handle));
        m_handle = keep ? tensor_handle::create(o.m_handle->tensor(), keep.get(), true, o.m_handle->stream()) : nullptr;
        if (!m_handle) return false;
        m_handle->set_source(o.m_handle->source(), o.m_handle->source_framework());
        return true;
    }

    int source_framework() const noexcept { return m_handle ? m_handle->source_framework() : 0; }

    /// Drops the tensor now, for a caller that holds the GIL and entered the interpreter (a return's cast
    /// of an rvalue): see tensor_handle::dec_ref_in_entered_interpreter().
    void release_entered() noexcept {
        if (m_handle) m_handle->dec_ref_in_entered_interpreter();
        m_handle = nullptr;
    }

    const dlpack::Tensor &t() const { return m_handle->tensor(); }

    /// The first element's address.
    uint8_t *first_byte() const { return (uint8_t *) t().data + t().byte_offset; }
    /// first_byte() as one value for the optimizer (config.h: DLTENSOR_ONE_VALUE), not base and offset apart:
    /// for data() and view(), which a kernel holds across its loops (per element, in operator(), it costs).
    uint8_t *first_byte_whole() const {
        uint8_t *p = first_byte();
        DLTENSOR_ONE_VALUE(p);
        return p;
    }
};

}  // namespace dlt
