// dltensor/nanobind.h: the nanobind backend. `nanobind::dltensor<Annotations...>` is an `nb::ndarray`
// (same annotations, members, `view()`, `cast()`) whose Python -> C++ conversion goes through dltensor's
// importer (dltensor/import.h) and whose C++ -> Python conversion is nanobind's own export.
//
//   #include <dltensor/nanobind.h>
//   namespace py = nanobind;
//   m.def("f", [](py::dltensor<py::shape<-1, 3>, const float, py::device::cpu> x) { ... });
//
// The annotations are nanobind's tags (`py::shape`, `py::ndim`, `py::ro`, `py::device::*`, `py::c_contig`,
// `py::numpy`, ...); this header adds the 2-byte storage types `py::float16` and `py::bfloat16`.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <complex>

#include "dtypes.h"
#include "import.h"
#include "requirements.h"

NAMESPACE_BEGIN(NB_NAMESPACE)

using dlt::bfloat16;
using dlt::float16;

NAMESPACE_BEGIN(detail)

// Let nanobind's dtype machinery (nb::dtype<T>(), signatures, view()) know the 2-byte storage types.
template <> struct dtype_traits<dlt::float16> {
    static constexpr dlpack::dtype value{(uint8_t) dlpack::dtype_code::Float, 16, 1};
    static constexpr auto name = const_name("float16");
};
template <> struct dtype_traits<dlt::bfloat16> {
    static constexpr dlpack::dtype value{(uint8_t) dlpack::dtype_code::Bfloat, 16, 1};
    static constexpr auto name = const_name("bfloat16");
};

/// The fixed extents of a `shape<...>` annotation as an array (-1 for a free extent).
template <typename Shape> struct dltensor_extents { static constexpr const int64_t *value = nullptr; };
template <ssize_t... Is> struct dltensor_extents<shape<Is...>> {
    static constexpr int64_t value[sizeof...(Is) + 1] = {(int64_t) Is..., 0};
};

/// A parameter's annotations, collected by nanobind's config, in the backend-independent run-time form.
template <typename Config> constexpr dlt::requirements dltensor_requirements() {
    using Scalar = typename Config::Scalar;
    dlt::requirements r;
    if constexpr (!std::is_void_v<std::remove_cv_t<Scalar>>) r.dtype = dlt::dtype_of<Scalar>();
    r.ndim = Config::N;
    r.shape = dltensor_extents<typename Config::Shape>::value;
    r.device_type = Config::DeviceType::value;
    r.order = (char) Config::Order::value;
    r.read_only = std::is_const_v<Scalar>;
    return r;
}

/// Framework a returned tensor becomes: the annotated one, else an array-API object (`__dlpack__` and
/// `__dlpack_device__`), never a bare capsule.
template <typename Config>
using dltensor_framework =
    std::conditional_t<std::is_same_v<typename Config::Framework, no_framework>, array_api,
                       typename Config::Framework>;

/// The type name in signatures: the framework's, except that TensorFlow is named by its public type
/// (`tensorflow.Tensor`, which nanobind's stubgen maps) rather than the private EagerTensor path.
template <typename Framework> struct dltensor_type_name { static constexpr auto name = Framework::name; };
template <> struct dltensor_type_name<tensorflow> { static constexpr auto name = const_name("tensorflow.Tensor"); };

/// How many annotations of each kind a parameter list holds: each kind may appear at most once.
template <typename T> struct dltensor_is_shape : std::false_type { };
template <ssize_t... Is> struct dltensor_is_shape<shape<Is...>> : std::true_type { };
template <typename T, typename = int> struct dltensor_kind {
    static constexpr int scalar = is_ndarray_scalar_v<T>, shape = dltensor_is_shape<T>::value,
                         ro = std::is_same_v<T, nanobind::ro>, device = 0, framework = 0, order = 0;
};
template <typename T> struct dltensor_kind<T, enable_if_t<T::is_device_type>> {
    static constexpr int scalar = 0, shape = 0, ro = 0, device = 1, framework = 0, order = 0;
};
template <typename T> struct dltensor_kind<T, enable_if_t<T::is_framework>> {
    static constexpr int scalar = 0, shape = 0, ro = 0, device = 0, framework = 1, order = 0;
};
template <typename T> struct dltensor_kind<T, enable_if_t<T::is_order>> {
    static constexpr int scalar = 0, shape = 0, ro = 0, device = 0, framework = 0, order = 1;
};
template <typename... Args> constexpr bool dltensor_annotations_unique() {
    return (0 + ... + dltensor_kind<Args>::scalar) <= 1 && (0 + ... + dltensor_kind<Args>::shape) <= 1 &&
           (0 + ... + dltensor_kind<Args>::ro) <= 1 && (0 + ... + dltensor_kind<Args>::device) <= 1 &&
           (0 + ... + dltensor_kind<Args>::framework) <= 1 && (0 + ... + dltensor_kind<Args>::order) <= 1;
}

NAMESPACE_END(detail)

template <typename... Args> class dltensor : public ndarray<Args...> {
    static_assert(detail::dltensor_annotations_unique<Args...>(),
                  "py::dltensor<...>: each kind of annotation (dtype, shape/ndim, ro, device, order, "
                  "framework) may appear at most once");

    using base = ndarray<Args...>;

public:
    using Config = typename base::Config;
    using Scalar = typename base::Scalar;
    using base::ReadOnly;

    using base::base;
    dltensor() = default;
    dltensor(const dltensor &) = default;
    dltensor(dltensor &&) noexcept = default;
    dltensor &operator=(const dltensor &) = default;
    dltensor &operator=(dltensor &&) noexcept = default;

    /// Adopts any `nb::ndarray` / `dltensor` handle (no checks, as `nb::ndarray`'s converting constructor).
    template <typename... Args2>
    explicit dltensor(const ndarray<Args2...> &other) : base(other.handle()) { }

    /// Drops the reference to the tensor, taking the GIL when the caller released it, so that the owner
    /// (and the producer's deleter) is always released with the GIL held.
    ~dltensor() {
        if (this->handle() && !dlt::thread_holds_gil()) {
            gil_scoped_acquire guard;
            static_cast<base &>(*this) = base();
        }
    }

    /// Does the binding promise not to write (const dtype or `ro`)? A read-only source binds only then.
    static constexpr bool read_only() noexcept { return ReadOnly; }

    /// Wraps the tensor in a Python object of the annotated framework (see `dltensor_framework`).
    auto cast(rv_policy rvp = rv_policy::automatic, class handle parent = {}) const;
};

NAMESPACE_BEGIN(detail)

/// A TensorFlow tensor holding a copy of `t` (see the caster's from_cpp). NULL with an error set on failure.
inline handle tensorflow_copy(const ndarray<> &t, cleanup_list *cleanup) noexcept {
    handle arr = make_caster<ndarray<numpy>>::from_cpp(ndarray<numpy>(t.handle()), rv_policy::copy, cleanup);
    if (!arr.is_valid()) return handle();
    object copy = steal(arr);
    try {
        return module_::import_("tensorflow").attr("convert_to_tensor")(copy).release();
    } catch (python_error &e) {
        e.restore();
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "dltensor: could not convert the result to a TensorFlow tensor");
    }
    return handle();
}

template <typename... Args> struct type_caster<dltensor<Args...>> {
    using Config = typename dltensor<Args...>::Config;
    using Scalar = typename Config::Scalar;
    using Framework = dltensor_framework<Config>;
    static constexpr dlt::requirements requirements = dltensor_requirements<Config>();

    NB_TYPE_CASTER(dltensor<Args...>, dltensor_type_name<Framework>::name + const_name("[") +
                              concat_maybe(dtype_name<Scalar>::name, Config::Shape::name,
                                           Config::Order::name, Config::DeviceType::name,
                                           dtype_const_name<Scalar>::name) +
                              const_name("]"))

    bool from_python(handle src, uint32_t flags, cleanup_list *) noexcept {
        if (src.is_none() && (flags & (uint32_t) cast_flags::accepts_none)) {
            value = Value();
            return true;
        }
        dlt::imported im;
        if (!dlt::import_tensor(src.ptr(), requirements, (flags & (uint32_t) cast_flags::convert) != 0, im))
            return false;

        const dlt::dlpack::Tensor &t = im.tensor;
        size_t extents[dlt::dlpack::max_ndim];
        for (int32_t i = 0; i < t.ndim; ++i) extents[i] = (size_t) t.shape[i];
        // NULL strides (DLPack < 1.2) mean C order; nanobind derives them from 'C'.
        value = Value((typename Value::VoidPtr) t.data, (size_t) t.ndim, extents, handle(im.owner), t.strides,
                      dlpack::dtype{t.dtype.code, t.dtype.bits, t.dtype.lanes}, t.device.device_type,
                      t.device.device_id, 'C', t.byte_offset);
        Py_DECREF(im.owner);  // the ndarray holds its own reference
        return true;
    }

    static handle from_cpp(const Value &tensor, rv_policy policy, cleanup_list *cleanup) noexcept {
        using Export = ndarray<Framework>;
        if constexpr (std::is_same_v<Framework, tensorflow>) {
            // TensorFlow adopts DLPack memory without checking alignment and aborts the process in the
            // first kernel that needs 64-byte alignment. Its tensors are immutable, so a copy is
            // indistinguishable from a view: misaligned CPU data is copied through NumPy.
            auto addr = (uintptr_t) tensor.data();
            if (tensor.is_valid() && tensor.device_type() == device::cpu::value && addr % 64 != 0)
                return tensorflow_copy(ndarray<>(tensor.handle()), cleanup);
        }
        return make_caster<Export>::from_cpp(Export(tensor.handle()), policy, cleanup);
    }
};

template <typename... Args> class dltensor_object : public object {
public:
    using object::object;
    using object::operator=;
    static constexpr auto Name = type_caster<dltensor<Args...>>::Name;
};

NAMESPACE_END(detail)

template <typename... Args>
auto dltensor<Args...>::cast(rv_policy rvp, class handle parent) const {
    return borrow<detail::dltensor_object<Args...>>(nanobind::cast(*this, rvp, parent));
}

NAMESPACE_END(NB_NAMESPACE)
