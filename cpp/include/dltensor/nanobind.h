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

// The oldest nanobind and Python dltensor supports (README: Supported versions; CI proves them with
// tests/test_python_versions.py). nanobind <= 2.12 lacks the ndarray API this header uses.
#define DLTENSOR_VERSION_STR_(x) #x
#define DLTENSOR_VERSION_STR(x) DLTENSOR_VERSION_STR_(x)
#if NB_VERSION_MAJOR < 2 || (NB_VERSION_MAJOR == 2 && NB_VERSION_MINOR < 13)
#  pragma message("dltensor: found nanobind " DLTENSOR_VERSION_STR(NB_VERSION_MAJOR) "." DLTENSOR_VERSION_STR(NB_VERSION_MINOR))
#  error "dltensor needs nanobind >= 2.13 (found an older nanobind, named above)"
#endif
#if PY_VERSION_HEX < 0x03090000
#  pragma message("dltensor: found Python " PY_VERSION)
#  error "dltensor needs Python >= 3.9 (found an older Python, named above)"
#endif

#include <complex>
#include <new>
#include <stdexcept>
#include <string>

#include "array_t_members.h"
#include "construction.h"
#include "dtypes.h"
#include "exchange.h"
#include "frameworks.h"
#include "import.h"
#include "numpy_c_api.h"
#include "refusal.h"
#include "refusal_log.h"
#include "requirements.h"
#include "strides.h"
#include "torch.h"

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
    if constexpr (!std::is_void_v<std::remove_cv_t<Scalar>>) {
        r.dtype = dlt::dtype_of<Scalar>();
        r.alignment = (uint8_t) alignof(Scalar);
    }
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

template <typename... Args>
class dltensor : public ndarray<Args...>,
                 public dlt::array_t_members<dltensor<Args...>, typename ndarray<Args...>::Scalar,
                                             ndarray<Args...>::Config::N, ndarray<Args...>::ReadOnly, handle> {
    static_assert(detail::dltensor_annotations_unique<Args...>(),
                  "py::dltensor<...>: each kind of annotation (dtype, shape/ndim, ro, device, order, "
                  "framework) may appear at most once");

    using base = ndarray<Args...>;
    using members = dlt::array_t_members<dltensor<Args...>, typename ndarray<Args...>::Scalar,
                                         ndarray<Args...>::Config::N, ndarray<Args...>::ReadOnly, handle>;
    template <typename...> friend class dltensor;
    template <typename, typename> friend struct detail::type_caster;

public:
    using Config = typename base::Config;
    using Scalar = typename base::Scalar;
    using VoidPtr = typename base::VoidPtr;
    using base::ReadOnly;
    using base::data;
    using members::data;

    dltensor() = default;
    dltensor(const dltensor &) = default;
    dltensor(dltensor &&) noexcept = default;
    dltensor &operator=(const dltensor &) = default;
    dltensor &operator=(dltensor &&) noexcept = default;

    /// Wraps an existing nanobind handle (as `nb::ndarray`'s handle constructor).
    explicit dltensor(detail::ndarray_handle *handle) : base(handle) { }

    /// A view of memory that C++ provides, as `nb::ndarray`'s constructors. `owner` keeps it alive;
    /// `nb::handle()` says that the memory outlives the tensor (static data), and the `automatic` return
    /// policy then copies it. Strides count elements (unsigned braced strides are a compile error: see
    /// construction.h). Leaving the owner out is deprecated (a warning): see DLTENSOR_OWNERLESS_MESSAGE.
    dltensor(VoidPtr data, size_t ndim, const size_t *shape, handle owner, const int64_t *strides = nullptr,
             dlpack::dtype dtype = nanobind::dtype<Scalar>(), int device_type = base::DeviceType,
             int device_id = 0, char order = base::Order, uint64_t byte_offset = 0)
        : base(data, ndim, shape, owner, strides, dtype, device_type, device_id, order, byte_offset),
          m_owned(owner.is_valid()) { }

    dltensor(VoidPtr data, std::initializer_list<size_t> shape, handle owner,
             std::initializer_list<dlt::element_stride> strides = { },
             dlpack::dtype dtype = nanobind::dtype<Scalar>(), int device_type = base::DeviceType,
             int device_id = 0, char order = base::Order, uint64_t byte_offset = 0)
        : dltensor(dlt::construct_tag(), data,
                   dlt::shape_array(shape, Config::N, detail::dltensor_extents<typename Config::Shape>::value),
                   owner, strides, dtype, device_type, device_id, order, byte_offset) { }

    [[deprecated(DLTENSOR_OWNERLESS_MESSAGE)]] dltensor(VoidPtr data, size_t ndim, const size_t *shape)
        : dltensor(data, ndim, shape, handle()) { }

    [[deprecated(DLTENSOR_OWNERLESS_MESSAGE)]] dltensor(VoidPtr data, std::initializer_list<size_t> shape = { })
        : dltensor(data, shape, handle()) { }

    /// Adopts another `dltensor`'s tensor (no checks, as `nb::ndarray`'s converting constructor).
    template <typename... Args2>
    explicit dltensor(const dltensor<Args2...> &other)
        : base(other.handle()), m_stream(other.m_stream), m_source(other.m_source),
          m_source_framework(other.m_source_framework), m_owned(other.m_owned) { }

    /// Adopts any `nb::ndarray`'s tensor (no checks, as `nb::ndarray`'s converting constructor).
    template <typename... Args2>
    explicit dltensor(const ndarray<Args2...> &other) : base(other.handle()) { }

    /// Drops the reference to the tensor, taking the GIL when the caller released it, so that the owner
    /// (and the producer's deleter) is always released with the GIL held.
    ~dltensor() {
        // With the GIL held, nanobind's own release runs in ~ndarray. Without it, release here under the
        // GIL; once the interpreter is gone (a static destroyed at exit), ~ndarray skips the release.
        if (this->handle() && Py_IsInitialized() && !dlt::thread_holds_gil())
            dlt::with_gil([&] { static_cast<base &>(*this) = base(); });
    }

    /// `nb::ndarray::view()`, where `view<Args2...>()` may restate the tensor's annotations or add missing
    /// ones, not contradict them (a compile error); a view of a read-only tensor stays read-only.
    template <typename... Args2> auto view() const {
        using C2 = typename ndarray<Args2...>::Config;
        using S1 = std::remove_cv_t<Scalar>;
        using S2 = std::remove_cv_t<typename C2::Scalar>;
        static_assert(std::is_void_v<S1> || std::is_void_v<S2> || std::is_same_v<S1, S2>,
                      "view<...>(): the dtype contradicts the tensor's dtype annotation");
        static_assert(dlt::shapes_agree(Config::N, detail::dltensor_extents<typename Config::Shape>::value, C2::N,
                                        detail::dltensor_extents<typename C2::Shape>::value),
                      "view<...>(): the shape contradicts the tensor's shape annotation");
        return base::template view<std::conditional_t<ReadOnly && detail::is_ndarray_scalar_v<Args2>,
                                                      const Args2, Args2>...>();
    }

    /// Does the binding promise not to write (const dtype or `ro`)? A read-only source binds only then.
    static constexpr bool read_only() noexcept { return ReadOnly; }

    /// The producer's current work stream for the tensor's device (e.g. a `cudaStream_t`), when the tensor
    /// came through the DLPack C exchange API; NULL otherwise (CPU tensors, and `__dlpack__` imports,
    /// which the producer synchronized with the legacy default stream). Launch kernels on it.
    void *stream() const noexcept { return m_stream; }

    /// pybind11's `array_t::unchecked<N>()`: a read-only view (`view()`) with `Dims` dimensions (default:
    /// the annotated ndim).
    template <ssize_t Dims = -1> auto unchecked() const {
        static_assert(Dims < 0 || Config::N < 0 || Dims == Config::N,
                      "unchecked<N>(): N contradicts the tensor's annotated ndim");
        using S = std::add_const_t<std::remove_cv_t<Scalar>>;
        if constexpr (Dims < 0) return view<S>();
        else return view<S, nanobind::ndim<(size_t) Dims>>();
    }

    /// pybind11's `array_t::mutable_unchecked<N>()`: a writable view; a compile error on read-only tensors.
    template <ssize_t Dims = -1> auto mutable_unchecked() const {
        static_assert(!ReadOnly, "py::dltensor::mutable_unchecked(): the tensor is read-only (const dtype or "
                                 "py::ro); use unchecked()");
        static_assert(Dims < 0 || Config::N < 0 || Dims == Config::N,
                      "mutable_unchecked<N>(): N contradicts the tensor's annotated ndim");
        if constexpr (Dims < 0) return view();
        else return view<nanobind::ndim<(size_t) Dims>>();
    }

    /// Allocates an uninitialized tensor of this type for C++ to fill and return (as `py::array_t<T>(shape)`
    /// does): `numpy.empty` on the CPU (a `py::numpy` tensor returns as that very array), PyTorch's own
    /// allocator for `py::pytorch` and on other devices (on CUDA its caching allocator). Needs a dtype; the
    /// device is the annotated one (CPU when none), the order the annotated one. Throws `python_error`
    /// when allocation fails, `std::invalid_argument` when the shape contradicts the annotated ndim.
    static dltensor empty(std::initializer_list<size_t> shape, int device_id = 0);

    /// Wraps the tensor in a Python object of the annotated framework (see `dltensor_framework`).
    auto cast(rv_policy rvp = rv_policy::automatic, class handle parent = {}) const;

private:
    dltensor(dlt::construct_tag, VoidPtr data, const dlt::shape_array &shape, handle owner,
             std::initializer_list<dlt::element_stride> strides, dlpack::dtype dtype, int device_type,
             int device_id, char order, uint64_t byte_offset)
        : dltensor(data, shape.n, shape.v, owner, dlt::strides_array(strides, shape.n).get(), dtype, device_type,
                   device_id, order, byte_offset) { }

    void *m_stream = nullptr;  ///< See stream().
    /// The Python object the tensor was imported from (borrowed: the owner keeps it alive), returned for
    /// the tensor as nanobind returns its importer's source (`f(x) is x`); NULL when C++ made the tensor.
    PyObject *m_source = nullptr;
    int m_source_framework = 0;  ///< `m_source`'s framework (frameworks.h numbers).
    bool m_owned = false;        ///< An owner keeps the memory alive (imported, allocated, or given one).
};

NAMESPACE_BEGIN(detail)

/// The DLPack view of a valid nanobind ndarray (shape and strides borrowed from it).
template <typename... Args> dlt::dlpack::Tensor dltensor_view_of(const ndarray<Args...> &t) noexcept {
    dlt::dlpack::Tensor v{};
    v.data = const_cast<void *>((const void *) t.data_handle());
    v.device = {t.device_type(), t.device_id()};
    v.ndim = (int32_t) t.ndim();
    v.dtype = {t.dtype().code, t.dtype().bits, t.dtype().lanes};
    v.shape = const_cast<int64_t *>(t.shape_ptr());
    v.strides = const_cast<int64_t *>(t.stride_ptr());
    v.byte_offset = t.byte_offset();
    return v;
}

/// Hands a tensor to a framework through its exchange API (`managed_tensor_to_py_object_no_sync`). The
/// managed tensor keeps the nanobind handle alive and borrows its shape and strides; its deleter may run
/// on any thread and takes the GIL to release the handle. NULL with a Python error set on failure.
inline handle export_through(const dlt::dlpack::ExchangeAPI *api, ndarray<> tensor, bool read_only) noexcept {
    struct holder {
        dlt::dlpack::ManagedTensorVersioned mt;  // first: the deleter casts back
        ndarray<> keep;
    };
    auto *h = new (std::nothrow) holder{{}, std::move(tensor)};
    if (!h) { PyErr_NoMemory(); return handle(); }
    const ndarray<> &t = h->keep;
    auto &mt = h->mt;
    mt.version = {dlt::dlpack::major_version, dlt::dlpack::minor_version};
    mt.manager_ctx = h;
    mt.deleter = [](dlt::dlpack::ManagedTensorVersioned *self) {
        auto *h = static_cast<holder *>(self->manager_ctx);
        dlt::with_gil([&] { delete h; });  // leaked once the interpreter is gone
    };
    mt.flags = read_only ? dlt::dlpack::flag_read_only : 0;
    mt.dl_tensor.data = t.data_handle();
    mt.dl_tensor.device = {t.device_type(), t.device_id()};
    mt.dl_tensor.ndim = (int32_t) t.ndim();
    mt.dl_tensor.dtype = {t.dtype().code, t.dtype().bits, t.dtype().lanes};
    mt.dl_tensor.shape = const_cast<int64_t *>(t.shape_ptr());
    mt.dl_tensor.strides = const_cast<int64_t *>(t.stride_ptr());
    mt.dl_tensor.byte_offset = t.byte_offset();
    void *out = nullptr;
    if (api->managed_tensor_to_py_object_no_sync(&mt, &out) != 0 || !out) {
        // Whether a failing producer already took the tensor is unspecified: leak it rather than risk a
        // double free (the failure means an unsupported dtype or device, which the type system excludes).
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "dltensor: export through the DLPack "
                                                                   "exchange API failed");
        return handle();
    }
    return handle(static_cast<PyObject *>(out));
}

template <typename... Args> struct type_caster<dltensor<Args...>> {
    using Config = typename dltensor<Args...>::Config;
    using Scalar = typename Config::Scalar;
    using Framework = dltensor_framework<Config>;
    static constexpr dlt::requirements requirements = dltensor_requirements<Config>();

    // Writability is shown either way (nanobind shows only `writable=False`), so that the TypeError's
    // signature text alone tells a `float32` parameter from a `const float32` one.
    NB_TYPE_CASTER(dltensor<Args...>, dltensor_type_name<Framework>::name + const_name("[") +
                              concat_maybe(dtype_name<Scalar>::name, Config::Shape::name,
                                           Config::Order::name, Config::DeviceType::name,
                                           const_name<dltensor<Args...>::ReadOnly>("writable=False",
                                                                                   "writable=True")) +
                              const_name("]"))

    bool from_python(handle src, uint32_t flags, cleanup_list *) noexcept {
        if (src.is_none() && (flags & (uint32_t) cast_flags::accepts_none)) {
            value = Value();
            return true;
        }
        dlt::imported im;
        if (!dlt::import_tensor(src.ptr(), requirements, (flags & (uint32_t) cast_flags::convert) != 0, im)) {
            // nb::cast<T>(obj) in a function body: raise a TypeError that says why (nanobind raises a set
            // Python error instead of std::bad_cast). Overload resolution passes no `manual` flag: the
            // refusal is kept for dltensor.explain() instead.
            if (flags & (uint32_t) cast_flags::manual) refused(src);
            else dlt::log_refusal(src.ptr(), Name.text);
            return false;
        }

        const dlt::dlpack::Tensor &t = im.tensor;
        size_t extents[dlt::dlpack::max_ndim];
        for (int32_t i = 0; i < t.ndim; ++i) extents[i] = (size_t) t.shape[i];
        // NULL strides (DLPack < 1.2) mean C order; nanobind derives them from 'C'.
        value = Value((typename Value::VoidPtr) t.data, (size_t) t.ndim, extents, handle(im.owner), t.strides,
                      dlpack::dtype{t.dtype.code, t.dtype.bits, t.dtype.lanes}, t.device.device_type,
                      t.device.device_id, 'C', t.byte_offset);
        Py_DECREF(im.owner);  // the ndarray holds its own reference
        value.m_stream = im.stream;
        value.m_source = im.source;
        value.m_source_framework = im.source_framework;
        value.m_owned = true;
        return true;
    }

    /// Sets a Python TypeError that explains the calling thread's last refusal of `src`.
    static void refused(handle src) noexcept {
        std::string why;
        try {
            why = dlt::explain_last_refusal();
        } catch (...) { }
        PyErr_Format(PyExc_TypeError, "cannot convert %s to %s: %s", Py_TYPE(src.ptr())->tp_name, Name.text,
                     why.c_str());
    }

    /// Would nanobind's export hand out a view (no copy) under this policy? The fast export routes
    /// below apply only then; `reference_internal` (which attaches a parent) stays with nanobind.
    static bool exports_view(const Value &tensor, rv_policy policy) noexcept {
        return tensor.is_valid() && !copies(tensor, policy) && policy != rv_policy::reference_internal &&
               policy != rv_policy::none;
    }

    /// Does nanobind's export copy under this policy? `copy`, `move`, and the automatic policies for a
    /// tensor without an owner.
    static bool copies(const Value &tensor, rv_policy policy) noexcept {
        return policy == rv_policy::copy || policy == rv_policy::move ||
               ((policy == rv_policy::automatic || policy == rv_policy::automatic_reference) && !tensor.m_owned);
    }

    /// A copy of `tensor` as framework `framework` (frameworks.h numbers), through that framework's own
    /// caster. Raises (returns NULL) when there is no framework to copy into.
    static handle copy_into(int framework, const Value &tensor, cleanup_list *cleanup) noexcept {
        switch (framework) {
            case numpy::value: return make_caster<dltensor<numpy>>::from_cpp(dltensor<numpy>(tensor), rv_policy::copy, cleanup);
            case pytorch::value: return make_caster<dltensor<pytorch>>::from_cpp(dltensor<pytorch>(tensor), rv_policy::copy, cleanup);
            case jax::value: return make_caster<dltensor<jax>>::from_cpp(dltensor<jax>(tensor), rv_policy::copy, cleanup);
            case tensorflow::value: return make_caster<dltensor<tensorflow>>::from_cpp(dltensor<tensorflow>(tensor), rv_policy::copy, cleanup);
            case cupy::value: return make_caster<dltensor<cupy>>::from_cpp(dltensor<cupy>(tensor), rv_policy::copy, cleanup);
            default:
                PyErr_SetString(PyExc_RuntimeError, dlt::no_framework_to_copy_into);
                return handle();
        }
    }

    /// Exports another tensor over `tensor`'s memory (first element at `data`, `strides`, `dtype`) through
    /// this caster: its owner keeps `tensor` alive, and under `reference_internal` the parent too. It is
    /// exported as a view where `tensor` would have been, else copied.
    static handle export_view_of(const Value &tensor, rv_policy policy, cleanup_list *cleanup, void *data,
                                 const int64_t *strides, dlpack::dtype dtype) noexcept {
        const bool view = policy == rv_policy::reference_internal || exports_view(tensor, policy);
        handle keep = make_caster<ndarray<>>::from_cpp(ndarray<>(tensor.handle()), rv_policy::reference, cleanup);
        if (!keep.is_valid()) return handle();
        object owner = steal(keep);
        if (policy == rv_policy::reference_internal && cleanup && cleanup->self()) {
            PyObject *pair = PyTuple_Pack(2, owner.ptr(), cleanup->self());
            if (!pair) return handle();
            owner = steal(pair);
        }
        size_t extents[dlt::dlpack::max_ndim];
        for (size_t i = 0; i < tensor.ndim(); ++i) extents[i] = tensor.shape(i);
        try {
            Value v((typename Value::VoidPtr) data, tensor.ndim(), extents, owner, strides, dtype,
                    tensor.device_type(), tensor.device_id());
            v.m_stream = tensor.m_stream;
            rv_policy view_policy = rv_policy::copy;
            if (view) view_policy = rv_policy::reference;
            return from_cpp(v, view_policy, cleanup);
        } catch (python_error &e) {
            e.restore();
        } catch (...) {
            PyErr_SetString(PyExc_RuntimeError, "dltensor: could not export the tensor");
        }
        return handle();
    }

    /// A capsule (new reference) holding a reference to `tensor`'s nanobind handle, released when the
    /// capsule is freed; NULL with an error set.
    static PyObject *handle_owner(const Value &tensor) noexcept {
        static constexpr const char *name = "dltensor.nanobind_handle";
        auto *keep = new (std::nothrow) ndarray<>(tensor.handle());
        if (!keep) return PyErr_NoMemory();
        PyObject *capsule = PyCapsule_New(keep, name, [](PyObject *self) {
            delete static_cast<ndarray<> *>(PyCapsule_GetPointer(self, name));
        });
        if (!capsule) delete keep;
        return capsule;
    }

    /// The address of `tensor`'s first element.
    static void *first_element(const Value &tensor) noexcept {
        return (uint8_t *) tensor.data_handle() + tensor.byte_offset();
    }

    static handle from_cpp(const Value &tensor, rv_policy policy, cleanup_list *cleanup) noexcept {
        using Export = ndarray<Framework>;
        constexpr int annotated = Config::Framework::value;  // 0: no framework
        if (tensor.is_valid() && tensor.m_source) {
            // A tensor imported from Python: returned as that object when nothing is copied and the
            // annotation names no framework or the source's; copied into the source's framework when the
            // annotation names none.
            const bool copy = copies(tensor, policy);
            if (!copy && (annotated == 0 || annotated == tensor.m_source_framework))
                return handle(tensor.m_source).inc_ref();
            if (copy && annotated == 0) return copy_into(tensor.m_source_framework, tensor, cleanup);
        }
        if (policy == rv_policy::none) return handle();  // nanobind: `none` never creates an object
        if (annotated == 0 && tensor.is_valid() && copies(tensor, policy)) {
            PyErr_SetString(PyExc_RuntimeError, dlt::no_framework_to_copy_into);
            return handle();
        }
        if (policy == rv_policy::reference_internal && tensor.is_valid() && tensor.m_owned)
            // The tensor has an owner of its own: keep it and the parent alive (nanobind would refuse).
            return export_view_of(tensor, policy, cleanup, first_element(tensor), tensor.stride_ptr(),
                                  tensor.dtype());
        if constexpr (std::is_same_v<Framework, numpy>) {
            if (tensor.is_valid() && tensor.ndim() > (size_t) dlt::numpy_max_ndim) {
                PyErr_Format(PyExc_ValueError, "dltensor: a NumPy array has at most %d dimensions; this tensor "
                             "has %d", (int) dlt::numpy_max_ndim, (int) tensor.ndim());
                return handle();
            }
            // NumPy has no bfloat16: export the bits as uint16 and relabel them (ml_dtypes).
            if (tensor.is_valid() && tensor.dtype() == nanobind::dtype<dlt::bfloat16>())
                return dlt::numpy_bfloat16_view(export_view_of(tensor, policy, cleanup, first_element(tensor),
                                                               tensor.stride_ptr(), nanobind::dtype<uint16_t>()).ptr());
        }
        if constexpr (std::is_same_v<Framework, numpy>) {
            // NumPy's C API where nanobind's export would not copy: an array whose base is a capsule
            // holding the tensor's nanobind handle.
            if (exports_view(tensor, policy) && dlt::exchange_api_enabled()) {
                const dlt::dlpack::Tensor t = dltensor_view_of(tensor);
                const dlt::numpy_c_api &np = dlt::numpy_c_api::get();
                if (np.can_describe(t)) {
                    PyObject *base = handle_owner(tensor);
                    return base ? np.array_over(t, Value::ReadOnly, base) : nullptr;
                }
            }
        }
        if constexpr (std::is_same_v<Framework, jax> || std::is_same_v<Framework, tensorflow>) {
            // Immutable frameworks: a C-ordered NumPy copy where they cannot adopt the memory (frameworks.h),
            // and for the copy policies.
            if (tensor.is_valid() && (dlt::immutable_needs_copy(dltensor_view_of(tensor), Framework::value) ||
                                      copies(tensor, policy)))
                return dlt::immutable_from_numpy(
                    type_caster<dltensor<numpy>>::from_cpp(dltensor<numpy>(tensor.handle()), rv_policy::copy,
                                                           cleanup).ptr(),
                    Framework::value);
        }
        if constexpr (std::is_same_v<Framework, pytorch>) {
            // PyTorch tensors cannot have negative strides (torch.from_dlpack aborts on them): export the
            // positive-stride view and flip it back (a copy).
            if (tensor.is_valid()) {
                const dlt::dlpack::Tensor t = dltensor_view_of(tensor);
                if (dlt::has_negative_stride(t)) {
                    dlt::dlpack::Tensor pos;
                    int64_t strides[dlt::dlpack::max_ndim], dims[dlt::dlpack::max_ndim];
                    int32_t n = 0;
                    dlt::positive_view(t, pos, strides, dims, &n);
                    handle out = export_view_of(tensor, policy, cleanup, pos.data, strides, tensor.dtype());
                    return dlt::torch_flip(out.ptr(), dims, n);
                }
            }
        }
        if constexpr (std::is_same_v<Framework, pytorch>) {
            // The exchange API's managed_tensor_to_py_object_no_sync, where nanobind's export would not
            // copy: an owned tensor under the automatic policies, or the reference policies.
            if (exports_view(tensor, policy) && dlt::exchange_api_enabled())
                if (const dlt::dlpack::ExchangeAPI *api = dlt::torch_exchange_api())
                    return export_through(api, ndarray<>(tensor.handle()), Value::ReadOnly);
        }
        if constexpr (std::is_same_v<Framework, jax>) {
            // jaxlib's own DLPack entry point instead of jax.dlpack.from_dlpack (see frameworks.h).
            if (exports_view(tensor, policy) && dlt::exchange_api_enabled()) {
                handle capsule = make_caster<ndarray<>>::from_cpp(ndarray<>(tensor.handle()),
                                                                  rv_policy::reference, cleanup);
                if (!capsule.is_valid()) return handle();
                object owned = steal(capsule);
                auto dt = tensor.dtype();
                PyObject *arr = dlt::jax_array_from_capsule(owned.ptr(), {dt.code, dt.bits, dt.lanes},
                                                            tensor.device_type());
                if (arr || PyErr_Occurred()) return arr;
            }
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
dltensor<Args...> dltensor<Args...>::empty(std::initializer_list<size_t> shape, int device_id) {
    static_assert(!std::is_void_v<std::remove_cv_t<Scalar>>, "dltensor::empty() needs a dtype annotation");
    const int32_t device_type = base::DeviceType ? base::DeviceType : (int32_t) dlt::dlpack::cpu;
    dlt::imported im;
    int rc = dlt::allocate_framework_tensor(Config::Framework::value, dlt::dtype_of<Scalar>(), shape.begin(),
                                            shape.size(), Config::N, {device_type, (int32_t) device_id},
                                            (char) Config::Order::value, im);
    if (rc > 0) throw std::invalid_argument("dltensor::empty(): the shape does not match the annotated ndim");
    if (rc < 0) throw python_error();
    object owner = steal(im.owner);
    const dlt::dlpack::Tensor &t = im.tensor;
    size_t extents[dlt::dlpack::max_ndim + 1];
    for (size_t i = 0; i < shape.size(); ++i) extents[i] = (size_t) t.shape[i];
    dltensor result((VoidPtr) t.data, shape.size(), extents, owner, t.strides,
                    dlpack::dtype{t.dtype.code, t.dtype.bits, t.dtype.lanes}, t.device.device_type,
                    t.device.device_id, 'C', t.byte_offset);
    result.m_stream = im.stream;
    result.m_source = im.source;
    result.m_source_framework = im.source_framework;
    result.m_owned = true;
    return result;
}

/// `nb::try_cast(obj, out)` for a `dltensor` (the deduced form): the same rules as a parameter, and no
/// Python error left behind when it returns false (`dlt::last_refusal()` says why).
template <typename Derived, typename... Args>
bool try_cast(const detail::api<Derived> &value, dltensor<Args...> &out, bool convert = true) noexcept {
    detail::make_caster<dltensor<Args...>> caster;
    if (!caster.from_python(value.derived().ptr(), convert ? (uint8_t) detail::cast_flags::convert : 0, nullptr))
        return false;
    out = std::move(caster.value);
    return true;
}

template <typename... Args>
auto dltensor<Args...>::cast(rv_policy rvp, class handle parent) const {
    return borrow<detail::dltensor_object<Args...>>(nanobind::cast(*this, rvp, parent));
}

NAMESPACE_END(NB_NAMESPACE)
