// dltensor/bindings/construction.h: C++ memory made into a tensor safely, for both backends' constructors:
// element-count strides (`element_stride`), a container moved into an owner (`container_owner`), and the
// compile error for a constructor call without an owner (`DLTENSOR_OWNERLESS_MESSAGE`).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdint>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "../tensor/dlpack.h"
#include "../python/keep_alive.h"

/// Why a constructor call without an owner does not compile (the memory is read again on return, after the
/// locals are gone); `DLTENSOR_ALLOW_OWNERLESS` turns the error into this warning.
#define DLTENSOR_OWNERLESS_TEXT                                                                                        \
    "dltensor: a tensor without an owner views memory that must outlive the returned Python object; a "                \
    "local container is freed before the default return policy copies it (a use-after-free). Return "                  \
    "Out::copy_of(data, shape) (copies now) or Out::adopt(std::move(container), shape) (hands the container "          \
    "over), or pass an owner; pass py::handle() as the owner to say that the memory outlives the tensor "              \
    "(static data), or that the tensor is copied at once (Out(v.data(), {n}, py::handle()).cast())"
/// The error's text: the warning's, and the opt-in.
#define DLTENSOR_OWNERLESS_MESSAGE DLTENSOR_OWNERLESS_TEXT ". Defining DLTENSOR_ALLOW_OWNERLESS makes this a warning"

// The error is reported at the user's call: `unavailable` (GCC >= 12, Clang), else the constructor's
// static_assert.
#if defined(DLTENSOR_ALLOW_OWNERLESS)
#  define DLTENSOR_OWNERLESS [[deprecated(DLTENSOR_OWNERLESS_TEXT)]]
#elif defined(__has_attribute)
#  if __has_attribute(unavailable)
#    define DLTENSOR_OWNERLESS __attribute__((unavailable(DLTENSOR_OWNERLESS_MESSAGE)))
#    define DLTENSOR_OWNERLESS_REFUSED_AT_CALL
#  endif
#endif
#ifndef DLTENSOR_OWNERLESS
#  define DLTENSOR_OWNERLESS
#endif

namespace dlt {

template <typename...> inline constexpr bool dependent_false = false;

/// Whether the owner-less constructors' bodies compile (their template parameter delays the check to a
/// call): with DLTENSOR_ALLOW_OWNERLESS, and where the `unavailable` attribute has already refused the call.
template <typename T>
inline constexpr bool ownerless_allowed =
#if defined(DLTENSOR_ALLOW_OWNERLESS) || defined(DLTENSOR_OWNERLESS_REFUSED_AT_CALL)
    true;
#else
    dependent_false<T>;
#endif

/// One stride in a constructor's braced list: a signed count of elements.
struct element_stride {
    int64_t value;
    constexpr element_stride(int64_t v) noexcept : value(v) { }
    /// Unsigned strides are refused at compile time (see the static_assert).
    template <typename U, std::enable_if_t<std::is_unsigned_v<U> && !std::is_same_v<U, bool>, int> = 0>
    constexpr element_stride(U) noexcept : value(0) {
        static_assert(dependent_false<U>,
                      "py::dltensor: strides count elements (signed int64_t), not bytes. An unsigned stride "
                      "usually comes from sizeof(): pybind11 array_t's strides are in bytes, so divide them by "
                      "sizeof(T); for an element stride held in an unsigned variable, write int64_t(x)");
    }
};

/// A braced shape as an array; an empty one means the annotated fixed shape (`annotated` dimensions with
/// extents `fixed`, -1 for a free one). Throws `std::invalid_argument` when that is not fully fixed.
struct shape_array {
    size_t v[dlpack::max_ndim + 1];  // the first n are set: no 65-entry clear on every construction
    size_t n = 0;
    shape_array(std::initializer_list<size_t> s, int32_t annotated, const int64_t *fixed) {
        if (s.size() > (size_t) dlpack::max_ndim) throw std::invalid_argument("py::dltensor: too many dimensions");
        if (s.size() == 0 && annotated > 0) {
            for (int32_t i = 0; i < annotated; ++i) {
                if (fixed[i] < 0)
                    throw std::invalid_argument("py::dltensor: give a shape; the annotation leaves extents open");
                v[n++] = (size_t) fixed[i];
            }
            return;
        }
        for (size_t e : s) v[n++] = e;
    }
};

/// Tag of the backends' private delegating constructors.
struct construct_tag { };

/// Braced strides as an int64_t array (`n` = 0 when none were given). Throws `std::invalid_argument` when
/// they are given and their number differs from the number of dimensions.
struct strides_array {
    int64_t v[dlpack::max_ndim + 1];  // the first n are set
    size_t n = 0;
    strides_array(std::initializer_list<element_stride> s, size_t ndim) {
        if (s.size() != 0 && s.size() != ndim)
            throw std::invalid_argument("py::dltensor: give one stride per dimension (or none)");
        if (s.size() > (size_t) dlpack::max_ndim) throw std::invalid_argument("py::dltensor: too many dimensions");
        for (const element_stride &e : s) v[n++] = e.value;
    }
    const int64_t *get() const noexcept { return n ? v : nullptr; }
};

/// Name of the capsules that own adopted containers.
inline constexpr char container_owner_name[] = "dltensor.container";

/// Moves `c` to the heap and returns a capsule (new reference) that deletes it when freed (with the GIL
/// held), and in `data` the container's element pointer after the move. NULL, with a Python error set,
/// when either allocation fails.
template <typename Container, typename T>
PyObject *container_owner(Container &&c, T *&data) noexcept {
    using C = std::decay_t<Container>;
    auto *heap = new (std::nothrow) C(std::move(c));
    if (!heap) return PyErr_NoMemory();
    data = heap->data();
    PyObject *capsule = owner_capsule<C, delete_object<C>, container_owner_name>(heap);
    if (!capsule) delete heap;
    return capsule;
}

/// Is `Shape` a contiguous container of integers (`std::vector<size_t>`, `std::vector<py::ssize_t>`,
/// `std::array`, a C array): what `empty()` and `copy_of()` take as a run-time shape besides a braced list.
template <typename Shape, typename = void> struct is_extent_container : std::false_type { };
template <typename Shape>
struct is_extent_container<Shape, std::void_t<decltype(std::data(std::declval<const Shape &>())),
                                              decltype(std::size(std::declval<const Shape &>()))>> {
    using element = std::remove_cv_t<std::remove_pointer_t<decltype(std::data(std::declval<const Shape &>()))>>;
    static constexpr bool value = std::is_integral_v<element> && !std::is_same_v<element, bool>;
};
template <typename Shape> inline constexpr bool is_extent_container_v = is_extent_container<Shape>::value;

/// A run-time shape (a container of integers) as `size_t` extents, for `who` ("empty", "copy_of"). Throws
/// `std::invalid_argument` for a negative extent or more than dlpack::max_ndim dimensions.
struct extent_list {
    size_t v[dlpack::max_ndim];  // the first n are set
    size_t n;
    template <typename Shape> extent_list(const Shape &shape, const char *who) : n((size_t) std::size(shape)) {
        if (n > (size_t) dlpack::max_ndim)
            throw std::invalid_argument(std::string("py::dltensor::") + who + "(): too many dimensions");
        const auto *e = std::data(shape);
        for (size_t i = 0; i < n; ++i) {
            if constexpr (std::is_signed_v<std::remove_cv_t<std::remove_pointer_t<decltype(e)>>>) {
                if (e[i] < 0)
                    throw std::invalid_argument(std::string("py::dltensor::") + who + "(): extent " +
                                                std::to_string((long long) e[i]) + " of dimension " +
                                                std::to_string(i) + " is negative");
            }
            v[i] = (size_t) e[i];
        }
    }
};

/// Checks a shape of `ndim` extents for `adopt()` / `copy_of()`: `ndim` dimensions when the annotation
/// fixes them (`annotated` >= 0), and (for `adopt`) `count` elements in all. Throws `std::invalid_argument`.
inline void check_factory_shape(const char *who, const size_t *shape, size_t ndim, int32_t annotated, size_t count,
                                bool check_count) {
    if (annotated >= 0 && ndim != (size_t) annotated)
        throw std::invalid_argument(std::string("py::dltensor::") + who +
                                    "(): the shape does not match the annotated ndim");
    size_t n = 1;
    for (size_t i = 0; i < ndim; ++i) n *= shape[i];
    if (check_count && n != count)
        throw std::invalid_argument(std::string("py::dltensor::") + who + "(): the shape holds " + std::to_string(n) +
                                    " elements, the container " + std::to_string(count));
}

}  // namespace dlt
