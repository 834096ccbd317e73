// dltensor/tensor/annotations.h: the annotation tags of `dltensor<...>` for backends without their own (pybind11;
// nanobind's are spelled the same: `py::shape<...>`, `py::ro`, ...) and the compile-time config collected from them.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "dlpack.h"
#include "dtypes.h"
#include "requirements.h"

namespace dlt {
namespace tags {

/// `shape<E...>`: fixed extents (`-1`: any extent in that dimension). Also fixes ndim.
template <int64_t... Is> struct shape {
    static_assert(((Is >= -1) && ...), "shape<...>: extents are >= 0, or -1 for any");
    static constexpr int32_t ndim = (int32_t) sizeof...(Is);
    static constexpr int64_t extents[sizeof...(Is) + 1] = {Is..., 0};
};

namespace detail {
template <typename> struct ndim_shape;
template <size_t... S> struct ndim_shape<std::index_sequence<S...>> {
    using type = shape<((void) S, -1)...>;
};
}  // namespace detail

/// `ndim<N>`: N dimensions of any extent.
template <size_t N> using ndim = typename detail::ndim_shape<std::make_index_sequence<N>>::type;

/// `ro`: the binding only reads (as a `const` dtype does); read-only sources may bind.
struct ro { };

/// Memory order: `c_contig` (row-major), `f_contig` (column-major), `any_contig` (either).
struct c_contig {
    static constexpr char value = 'C';
};
struct f_contig {
    static constexpr char value = 'F';
};
struct any_contig {
    static constexpr char value = 'A';
};

/// Device types (DLPack numbers).
namespace device {
#define DLTENSOR_DEVICE(Name, Value)                                                                                   \
    struct Name {                                                                                                      \
        static constexpr int value = Value;                                                                            \
        static constexpr const char *name = #Name;                                                                     \
    }
DLTENSOR_DEVICE(cpu, 1);
DLTENSOR_DEVICE(cuda, 2);
DLTENSOR_DEVICE(cuda_host, 3);
DLTENSOR_DEVICE(opencl, 4);
DLTENSOR_DEVICE(vulkan, 7);
DLTENSOR_DEVICE(metal, 8);
DLTENSOR_DEVICE(rocm, 10);
DLTENSOR_DEVICE(rocm_host, 11);
DLTENSOR_DEVICE(cuda_managed, 13);
DLTENSOR_DEVICE(oneapi, 14);
#undef DLTENSOR_DEVICE
}  // namespace device

/// What a returned tensor becomes without a framework (each framework's tag lives in its file,
/// frameworks/<name>.h, in `dlt::framework_tags`; numbers match nanobind's).
#define DLTENSOR_FRAMEWORK(Name, Value, TypeName)                                                                      \
    struct Name {                                                                                                      \
        static constexpr int value = Value;                                                                            \
        static constexpr const char *type_name = TypeName;                                                             \
    }
DLTENSOR_FRAMEWORK(memview, 6, "memoryview");    // a memoryview over the buffer protocol (CPU)
DLTENSOR_FRAMEWORK(array_api, 7, "typing.Any");  // a dltensor.Tensor (`__dlpack__`, buffer protocol)
#undef DLTENSOR_FRAMEWORK

}  // namespace tags

/// Which kind of annotation a type is: one detector per kind, each its own template (Clang and nvcc treat
/// several `void_t` partial specializations of one template as the same one).
template <typename T> struct is_shape_tag : std::false_type { };
template <int64_t... Is> struct is_shape_tag<tags::shape<Is...>> : std::true_type { };
template <typename T, typename = void> struct is_order_tag : std::false_type { };
template <typename T> struct is_order_tag<T, std::enable_if_t<std::is_same_v<decltype(T::value), const char>>>
    : std::true_type { };
template <typename T, typename = void> struct is_device_tag : std::false_type { };
template <typename T>
struct is_device_tag<T, std::void_t<decltype(T::name), std::enable_if_t<std::is_same_v<decltype(T::value), const int>>>>
    : std::true_type { };
template <typename T, typename = void> struct is_framework_tag : std::false_type { };
template <typename T>
struct is_framework_tag<T, std::void_t<decltype(T::type_name)>> : std::true_type { };

template <typename T> struct annotation_kind {
    static constexpr bool shape = is_shape_tag<T>::value, order = is_order_tag<T>::value,
                          device = is_device_tag<T>::value, framework = is_framework_tag<T>::value,
                          ro = std::is_same_v<T, tags::ro>;
    static constexpr bool scalar = !(shape || order || device || framework || ro) && dtype_of<T>().bits != 0;
};

struct no_framework {
    static constexpr int value = 0;
    static constexpr const char *type_name = "ArrayLike";
};
struct any_device {
    static constexpr int value = 0;
    static constexpr const char *name = "";
};
struct any_order {
    static constexpr char value = '\0';
};
struct any_shape {
    static constexpr int32_t ndim = -1;
    static constexpr const int64_t *extents = nullptr;
};

/// The annotations of one `dltensor<Args...>`, collected (order-free, each kind at most once).
template <typename... Args> struct config {
    static_assert(annotations_unique<annotation_kind, Args...>(), DLTENSOR_ANNOTATIONS_UNIQUE_MESSAGE);
    static_assert((annotation_known<Args, annotation_kind<Args>::scalar || annotation_kind<Args>::shape ||
                                              annotation_kind<Args>::ro || annotation_kind<Args>::order ||
                                              annotation_kind<Args>::device || annotation_kind<Args>::framework>() &&
                   ...));

    template <template <typename> class Pred, typename Default, typename... Ts> struct pick {
        using type = Default;
    };
    template <template <typename> class Pred, typename Default, typename T, typename... Ts>
    struct pick<Pred, Default, T, Ts...> {
        using type = std::conditional_t<Pred<T>::value, T, typename pick<Pred, Default, Ts...>::type>;
    };
    template <typename T> struct is_scalar : std::bool_constant<annotation_kind<T>::scalar> { };
    template <typename T> struct is_shape : std::bool_constant<annotation_kind<T>::shape> { };
    template <typename T> struct is_order : std::bool_constant<annotation_kind<T>::order> { };
    template <typename T> struct is_device : std::bool_constant<annotation_kind<T>::device> { };
    template <typename T> struct is_framework : std::bool_constant<annotation_kind<T>::framework> { };

    static constexpr bool read_only =
        (annotation_kind<Args>::ro || ...) || std::is_const_v<typename pick<is_scalar, void, Args...>::type>;
    using Scalar = std::conditional_t<read_only, std::add_const_t<typename pick<is_scalar, void, Args...>::type>,
                                      typename pick<is_scalar, void, Args...>::type>;
    using Shape = typename pick<is_shape, any_shape, Args...>::type;
    using Order = typename pick<is_order, any_order, Args...>::type;
    using Device = typename pick<is_device, any_device, Args...>::type;
    using Framework = typename pick<is_framework, no_framework, Args...>::type;
    static constexpr int32_t N = Shape::ndim;

    static constexpr requirements requirements_() {
        return requirements_of<Scalar>(N, Shape::extents, Device::value, Order::value, read_only, Framework::value);
    }
};

}  // namespace dlt
