// dltensor/bindings/array_t_members.h: the members code written for pybind11's `py::array_t` reaches for
// (`data(i, j)`, `at()`, `mutable_at()`, `adopt()`, `copy_of()`, `leading()`, `unchecked<N>()`), on both
// backends' `dltensor<...>` (a base class; `Derived` is the tensor class). Reference §4 lists them.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <string>  // also declares std::size and std::begin ([iterator.range]), without <iterator>'s streams
#include <type_traits>
#include <utility>

#include "allocation.h"
#include "construction.h"
#include "../tensor/annotations.h"
#include "../tensor/dlpack.h"
#include "../tensor/requirements.h"
#include "../tensor/strides.h"

namespace dlt {

/// pybind11's direct-access members of `unchecked<N>()` views over `Derived`: `data(i, j)`, `mutable_data(i, j)`
/// (one index per dimension, unchecked; a compile error on a read-only view) and `size()`.
template <typename Derived, typename Scalar> struct view_members {  // a struct: public members only
    /// Pointer to element `indices` (pybind11's `unchecked_reference::data(i, j)`).
    template <typename... Ix, std::enable_if_t<(sizeof...(Ix) > 0), int> = 0> Scalar *data(Ix... indices) const {
        static_assert((std::is_integral_v<Ix> && ...), "view data(i, j): indices must be integers");
        return &static_cast<const Derived &>(*this)(indices...);
    }

    /// Pointer to element `indices`, for writing (`mutable_unchecked_reference::mutable_data(i, j)`); with
    /// no index, the first element.
    template <typename... Ix> Scalar *mutable_data(Ix... indices) const {
        static_assert(!std::is_const_v<Scalar>, "view mutable_data(): the view is read-only (unchecked(), or a "
                                                "read-only tensor); write through mutable_unchecked()");
        static_assert((std::is_integral_v<Ix> && ...), "view mutable_data(i, j): indices must be integers");
        const Derived &v = static_cast<const Derived &>(*this);
        if constexpr (sizeof...(Ix) == 0) return v.data();
        else return &v(indices...);
    }

    /// The number of elements (pybind11's `unchecked_reference::size()`).
    size_t size() const {
        const Derived &v = static_cast<const Derived &>(*this);
        size_t n = 1;
        for (size_t i = 0; i < v.ndim(); ++i) n *= v.shape(i);
        return n;
    }
};

/// A backend's view type `View` (nanobind's `ndarray_view`) with `view_members` added: what the nanobind
/// backend's `unchecked<N>()` / `mutable_unchecked<N>()` return.
template <typename View>
struct unchecked_view
    : View,
      view_members<unchecked_view<View>, std::remove_pointer_t<decltype(std::declval<const View &>().data())>> {
    using members =
        view_members<unchecked_view<View>, std::remove_pointer_t<decltype(std::declval<const View &>().data())>>;
    explicit unchecked_view(const View &v) : View(v) { }
    using View::data;
    using members::data;
    using members::mutable_data;
    using members::size;
};

/// `View` itself when it has `view_members` (the pybind11 backend's views), else `unchecked_view<View>`.
template <typename View, typename Scalar = std::remove_pointer_t<decltype(std::declval<const View &>().data())>>
using unchecked_view_t =
    std::conditional_t<std::is_base_of_v<view_members<View, Scalar>, View>, View, unchecked_view<View>>;

/// The compile-time rules of `view<...>()` on both backends: a tensor of dtype `S1` and shape annotation
/// `Shape1`, viewed with dtype `S2` and shape `Shape2` (`tags::shape` or `any_shape`; void: no dtype).
template <typename S1, typename Shape1, typename S2, typename Shape2> struct view_rules {
    static_assert(std::is_void_v<S1> || std::is_void_v<S2> || std::is_same_v<S1, S2>,
                  "view<...>(): the dtype contradicts the tensor's dtype annotation");
    static_assert(view_shape_possible(Shape1::ndim, Shape1::extents, Shape2::ndim, Shape2::extents),
                  "view<...>(): the shape's element count differs from the tensor's fixed shape");
    /// Another fixed shape of as many elements over the same contiguous memory.
    static constexpr bool reshaped = Shape2::ndim >= 0 && static_size(Shape2::ndim, Shape2::extents) >= 0 &&
                                     !shapes_agree(Shape1::ndim, Shape1::extents, Shape2::ndim, Shape2::extents);
    /// The view takes (some) extents from the tensor, whose ndim must then be the view's.
    static constexpr bool takes_extents = Shape2::ndim >= 0 && static_size(Shape2::ndim, Shape2::extents) < 0;
};

/// The run-time rule of `view<...>()`: a valid tensor of `ndim` dimensions viewed with `view_ndim`.
inline void check_view_ndim(bool valid, size_t ndim, int32_t view_ndim) {
    if (valid && ndim != (size_t) view_ndim)
        throw std::invalid_argument("view<...>(): the view's ndim differs from the tensor's");
}

/// Has `T` a size and elements (`std::size`, `std::begin`): a container, `std::array` or C array.
template <typename T, typename = void> struct is_sized_range : std::false_type { };
template <typename T>
struct is_sized_range<
    T, std::void_t<decltype(std::size(std::declval<const T &>())), decltype(std::begin(std::declval<const T &>()))>>
    : std::true_type { };

template <typename Derived, typename Scalar, int32_t N, bool ReadOnly, typename Handle> class array_t_members {
    const Derived &self() const noexcept { return static_cast<const Derived &>(*this); }

    template <typename... Ix> int64_t offset(bool all, Ix... indices) const {
        static_assert(!std::is_void_v<std::remove_cv_t<Scalar>>,
                      "py::dltensor: element access needs a dtype annotation");
        static_assert((std::is_integral_v<Ix> && ...), "py::dltensor: indices must be integers");
        static_assert(N < 0 || sizeof...(Ix) <= (size_t) N, "py::dltensor: more indices than the annotated ndim");
        const Derived &t = self();
        const size_t nd = t.ndim();
        if (all ? sizeof...(Ix) != nd : sizeof...(Ix) > nd)
            throw std::out_of_range("py::dltensor: " + std::to_string(sizeof...(Ix)) +
                                    (sizeof...(Ix) == 1 ? " index" : " indices") + " for a tensor of " +
                                    std::to_string(nd) + " dimensions");
        const int64_t idx[] = {(int64_t) indices..., 0};
        int64_t off = 0;
        for (size_t k = 0; k < sizeof...(Ix); ++k) {
            if (idx[k] < 0 || (uint64_t) idx[k] >= (uint64_t) t.shape(k))
                throw std::out_of_range("py::dltensor: index " + std::to_string(idx[k]) +
                                        " is out of bounds for "
                                        "axis " +
                                        std::to_string(k) + " with size " + std::to_string(t.shape(k)));
            off += idx[k] * t.stride(k);
        }
        return off;
    }

    /// The writable first element of a tensor C++ just allocated (also a `const` one), which must be on the CPU.
    static std::remove_cv_t<Scalar> *cpu_data_of(const Derived &t) {
        if (t.device_type() != dlpack::cpu)
            throw std::invalid_argument("py::dltensor::copy_of(): copies into CPU tensors only");
        return const_cast<std::remove_cv_t<Scalar> *>(t.data());
    }

public:
    /// Pointer to the element at `indices` (pybind11's `array_t::data(i, j)`).
    template <typename... Ix, std::enable_if_t<(sizeof...(Ix) > 0), int> = 0>
    Scalar *data(Ix... indices) const {
        return self().data() + offset(false, indices...);
    }

    /// Pointer to the element at `indices`, for writing (pybind11's `array_t::mutable_data(i, j)`).
    template <typename... Ix> auto *mutable_data(Ix... indices) const {
        static_assert(!ReadOnly, "py::dltensor::mutable_data(): the tensor is read-only (const dtype or py::ro); "
                                 "declare the parameter writable, or read through data()");
        return self().data() + offset(false, indices...);
    }

    /// Reference to the element at `indices`, bounds-checked (pybind11's `array_t::at(i, j)`).
    template <typename... Ix> auto &at(Ix... indices) const { return self().data()[offset(true, indices...)]; }

    /// Writable reference to the element at `indices`, bounds-checked (`array_t::mutable_at(i, j)`).
    template <typename... Ix> auto &mutable_at(Ix... indices) const {
        static_assert(!ReadOnly, "py::dltensor::mutable_at(): the tensor is read-only (const dtype or py::ro)");
        return self().data()[offset(true, indices...)];
    }

    /// A tensor over the memory of `container` (`std::vector`, `std::array`, anything with `data()` and
    /// `size()` holding the dtype), which it takes over: zero-copy, freed with the last Python or C++
    /// reference. `shape` defaults to one dimension of `container.size()`.
    template <typename Container> static Derived adopt(Container &&container,
                                                       std::initializer_list<size_t> shape = {}) {
        static_assert(!std::is_lvalue_reference_v<Container>,
                      "py::dltensor::adopt(): pass the container with std::move (the tensor takes it over); "
                      "to keep it, use copy_of(c.data(), shape)");
        using Element = std::remove_cv_t<std::remove_pointer_t<decltype(container.data())>>;
        static_assert(std::is_same_v<Element, std::remove_cv_t<Scalar>>,
                      "py::dltensor::adopt(): the container's elements must be the tensor's dtype");
        const size_t count = container.size();
        const size_t flat[1] = {count};
        if (shape.size() == 0) {
            check_factory_shape("adopt", flat, 1, N, count, true);
        } else {
            check_factory_shape("adopt", shape.begin(), shape.size(), N, count, true);
        }
        Element *data = nullptr;
        PyObject *owner = container_owner(std::move(container), data);
        if (!owner) {  // out of memory: the C++ exception says so (no Python error left set)
            PyErr_Clear();
            throw std::bad_alloc();
        }
        const size_t *dims = shape.size() ? shape.begin() : flat;
        const size_t nd = shape.size() ? shape.size() : 1;
        Derived t(data, nd, dims, Handle(owner));
        Py_DECREF(owner);  // the tensor holds its own reference
        return t;
    }

    /// pybind11's `array_t::unchecked<N>()`: a read-only view with `Dims` dimensions (default: annotated),
    /// with `data(i, j)` and `size()` (`view_members`).
    template <int64_t Dims = -1> auto unchecked() const {
        static_assert(Dims < 0 || N < 0 || Dims == N, "unchecked<N>(): N contradicts the tensor's annotated ndim");
        using S = std::add_const_t<std::remove_cv_t<Scalar>>;
        if constexpr (Dims < 0) return unchecked_view_t<decltype(self().template view<S>())>(self().template view<S>());
        else {
            using D = typename Derived::template ndim_annotation<(size_t) Dims>;
            return unchecked_view_t<decltype(self().template view<S, D>())>(self().template view<S, D>());
        }
    }

    /// pybind11's `array_t::mutable_unchecked<N>()`: a writable view, plus `mutable_data(i, j)`; a compile
    /// error on read-only tensors.
    template <int64_t Dims = -1> auto mutable_unchecked() const {
        static_assert(!ReadOnly, "py::dltensor::mutable_unchecked(): the tensor is read-only (const dtype or "
                                 "py::ro); use unchecked()");
        static_assert(Dims < 0 || N < 0 || Dims == N,
                      "mutable_unchecked<N>(): N contradicts the tensor's annotated ndim");
        if constexpr (Dims < 0) return unchecked_view_t<decltype(self().view())>(self().view());
        else {
            using D = typename Derived::template ndim_annotation<(size_t) Dims>;
            return unchecked_view_t<decltype(self().template view<D>())>(self().template view<D>());
        }
    }

    /// An uninitialized tensor of this type for C++ to fill (`py::array_t<T>(shape)`), allocated as allocation.h
    /// says; throws the backend's Python error, or `std::invalid_argument` for a shape of another ndim.
    DLTENSOR_HOT_INLINE static Derived empty(size_t ndim, const size_t *shape, int device_id = 0) {
        imported im;
        const int rc =
            allocate_empty<typename Derived::Config, Scalar>(shape, ndim, Derived::DeviceType, device_id, ReadOnly, im);
        return Derived::allocated(rc, im, ndim);
    }
    /// The same with the shape as a braced list.
    static Derived empty(std::initializer_list<size_t> shape, int device_id = 0) {
        return Derived::empty(shape.size(), shape.begin(), device_id);
    }
    /// The same with a shape known at run time: a contiguous container of integers (`std::vector<size_t>`,
    /// `std::vector<py::ssize_t>`, `std::array`); a negative extent throws `std::invalid_argument`.
    template <typename Shape, std::enable_if_t<is_extent_container_v<Shape>, int> = 0>
    static Derived empty(const Shape &shape, int device_id = 0) {
        const extent_list e(shape, "empty");
        return Derived::empty(e.n, e.v, device_id);
    }

    /// Answers in the caller's framework: a new tensor (as `empty()`) on the device of `like` (an argument),
    /// allocated by `like`'s framework where it allocates (NumPy, PyTorch, PaddlePaddle; else NumPy's on the
    /// CPU) and returned as `return_like(like)` makes it. Needs no framework annotation.
    template <typename Like> static Derived empty_like(const Like &like, size_t ndim, const size_t *shape) {
        if (!like.is_valid()) throw std::invalid_argument("dltensor::empty_like(): the tensor to follow is empty");
        imported im;
        const int rc = allocate_like<typename Derived::Config, Scalar>(
            shape, ndim, like.source_framework(), {like.device_type(), like.device_id()}, ReadOnly, im);
        Derived result = Derived::allocated(rc, im, ndim);
        result.return_like(like);
        return result;
    }
    /// The same with the shape as a braced list or a container.
    template <typename Like> static Derived empty_like(const Like &like, std::initializer_list<size_t> shape) {
        return Derived::empty_like(like, shape.size(), shape.begin());
    }
    template <typename Like, typename Shape, std::enable_if_t<is_extent_container_v<Shape>, int> = 0>
    static Derived empty_like(const Like &like, const Shape &shape) {
        const extent_list e(shape, "empty_like");
        return Derived::empty_like(like, e.n, e.v);
    }

    /// Makes this tensor return in the framework of `like` (an argument) when its annotation names none:
    /// NumPy in, NumPy out; PyTorch in, PyTorch out. A `like` of no known framework changes nothing.
    template <typename Like> Derived &return_like(const Like &like) noexcept {
        static_assert(Derived::Config::Framework::value == 0, DLTENSOR_FOLLOW_ANNOTATED_MESSAGE);
        Derived &d = static_cast<Derived &>(*this);
        d.m_return_framework = like.source_framework();
        return d;
    }

    /// A new tensor (as `empty(shape)`) holding a copy, made now, of the `shape` elements at `data`, laid out
    /// in the annotated order (C unless `f_contig`). pybind11's `py::array_t<T>(n, ptr)`; CPU tensors only.
    static Derived copy_of(const std::remove_const_t<Scalar> *data, std::initializer_list<size_t> shape) {
        return copy_of(data, shape.size(), shape.begin());
    }
    /// The same with a shape known at run time: a contiguous container of integers (`std::vector<size_t>`,
    /// `std::vector<py::ssize_t>`, `std::array`); a negative extent throws `std::invalid_argument`.
    template <typename Shape, std::enable_if_t<is_extent_container_v<Shape>, int> = 0>
    static Derived copy_of(const std::remove_const_t<Scalar> *data, const Shape &shape) {
        const extent_list e(shape, "copy_of");
        return copy_of(data, e.n, e.v);
    }
    /// The same with `ndim` extents at `shape`.
    static Derived copy_of(const std::remove_const_t<Scalar> *data, size_t ndim, const size_t *shape) {
        check_factory_shape("copy_of", shape, ndim, N, 0, false);
        Derived t = Derived::empty(ndim, shape);
        auto *out = cpu_data_of(t);
        const size_t bytes = t.nbytes();
        if (!bytes) return t;
        constexpr char order = (char) Derived::Config::Order::value == 'F' ? 'F' : 'C';
        if (is_contiguous_in(order, t.shape_ptr(), t.stride_ptr(), ndim))  // what empty() gives: one memcpy
            std::memcpy((void *) out, data, bytes);
        else copy_dense_into(data, order, out, t.shape_ptr(), t.stride_ptr(), ndim, sizeof(*out));
        return t;
    }

    /// `copy_of(data, shape)` of a container: 1-D for a container of the dtype, 2-D (rows, row length) for a
    /// container of such rows (no rows: shape (0, 0)); rows of different lengths throw `std::invalid_argument`.
    template <typename Container, typename = decltype(std::size(std::declval<const Container &>()))>
    static Derived copy_of(const Container &c) {
        using S = std::remove_cv_t<Scalar>;
        using Element = std::remove_cv_t<std::remove_reference_t<decltype(*std::begin(c))>>;
        const size_t n = (size_t) std::size(c);
        if constexpr (!is_sized_range<Element>::value) {
            static_assert(std::is_same_v<Element, S>, "py::dltensor::copy_of(container): the elements must be the "
                                                      "tensor's dtype");
            static_assert(N < 0 || N == 1, "py::dltensor::copy_of(container): a container of the dtype makes a "
                                           "1-D tensor; annotate py::ndim<1> (or give copy_of(data, shape))");
            Derived t = Derived::empty({n});
            S *out = cpu_data_of(t);
            size_t i = 0;
            for (const auto &e : c) out[(int64_t) i++ * t.stride(0)] = e;
            return t;
        } else {
            using RowElement = std::remove_cv_t<std::remove_reference_t<decltype(*std::begin(*std::begin(c)))>>;
            static_assert(std::is_same_v<RowElement, S>, "py::dltensor::copy_of(rows): the rows' elements must be "
                                                         "the tensor's dtype");
            static_assert(N < 0 || N == 2, "py::dltensor::copy_of(rows): a container of rows makes a 2-D tensor; "
                                           "annotate py::ndim<2>");
            const size_t cols = n ? (size_t) std::size(*std::begin(c)) : 0;
            size_t r = 0;
            for (const auto &row : c) {
                if ((size_t) std::size(row) != cols)
                    throw std::invalid_argument("py::dltensor::copy_of(rows): row " + std::to_string(r) + " holds " +
                                                std::to_string((size_t) std::size(row)) + " elements, row 0 " +
                                                std::to_string(cols));
                ++r;
            }
            Derived t = Derived::empty({n, cols});
            S *out = cpu_data_of(t);
            r = 0;
            for (const auto &row : c) {
                size_t j = 0;
                for (const auto &e : row) out[(int64_t) r * t.stride(0) + (int64_t) j++ * t.stride(1)] = e;
                ++r;
            }
            return t;
        }
    }

    /// A view of the first `rows` along the first axis, keeping the owner (`array_t::resize()` to fewer rows).
    /// Throws `std::out_of_range` past `shape(0)`, `std::invalid_argument` for a 0-d tensor; not `f_contig`.
    Derived leading(size_t rows) const {
        static_assert((char) Derived::Config::Order::value != 'F',
                      "py::dltensor::leading(): the leading rows of an f_contig tensor are not F-contiguous; "
                      "allocate C order (or no order) to shrink along the first axis");
        const Derived &t = self();
        const size_t nd = t.ndim();
        if (nd == 0) throw std::invalid_argument("py::dltensor::leading(): the tensor has no dimensions");
        if (rows > t.shape(0))
            throw std::out_of_range("py::dltensor::leading(): " + std::to_string(rows) + " rows of a tensor of " +
                                    std::to_string(t.shape(0)));
        size_t shape[dlpack::max_ndim];
        int64_t strides[dlpack::max_ndim];
        for (size_t i = 0; i < nd; ++i) {
            shape[i] = t.shape(i);
            strides[i] = t.stride(i);
        }
        shape[0] = rows;
        return Derived(t.data(), nd, shape, t.memory_owner(), strides, t.dtype(), t.device_type(), t.device_id());
    }

    // array_t members with no equivalent: compile errors that name the replacement.
    template <typename... T> void request(T...) const {
        static_assert(dependent_false<T...>, "py::dltensor has no request()/buffer_info: read data(), ndim(), "
                                             "shape(i) and stride(i) (strides in elements, not bytes)");
    }
    template <typename... T> void strides(T...) const {
        static_assert(dependent_false<T...>, "py::dltensor has no strides(): stride(i) is in elements (array_t's "
                                             "strides(i) is in bytes: stride(i) * itemsize())");
    }
    template <typename... T> void writeable(T...) const {
        static_assert(dependent_false<T...>, "py::dltensor has no writeable(): a tensor is writable unless "
                                             "read_only() (const dtype or py::ro); writability is checked on entry");
    }
    template <typename... T> void owndata(T...) const {
        static_assert(dependent_false<T...>, "py::dltensor has no owndata(): the owner keeps the memory alive "
                                             "whoever allocated it");
    }
    template <typename... T> void offset_at(T...) const {
        static_assert(dependent_false<T...>, "py::dltensor has no offset_at(): use data(i, j) (a pointer to the "
                                             "element) or at(i, j)");
    }
    template <typename... T> void index_at(T...) const {
        static_assert(dependent_false<T...>, "py::dltensor has no index_at(): use data(i, j) - data() (elements)");
    }
    template <typename... T> void resize(T...) const {
        static_assert(dependent_false<T...>, "py::dltensor has no resize(): to shrink a result to its first "
                                             "rows, return t.leading(rows) (a view that keeps the allocation); "
                                             "to grow one, allocate anew with empty(shape) or copy_of(data, "
                                             "shape)");
    }
    template <typename... T> void reshape(T...) const {
        static_assert(dependent_false<T...>, "py::dltensor has no reshape(): construct a view with the new "
                                             "shape over data(), keeping the tensor as its owner");
    }
    template <typename... T> void squeeze(T...) const {
        static_assert(dependent_false<T...>, "py::dltensor has no squeeze(): construct a view with the new "
                                             "shape over data(), keeping the tensor as its owner");
    }
};

}  // namespace dlt
