// dltensor/nanobind.h: the nanobind backend. `nanobind::dltensor<Annotations...>` is an `nb::ndarray`
// (nanobind's tags, members, `view()`, `cast()`) that imports through dltensor's core and returns through
// its export, as the pybind11 backend does (docs/architecture.md).
#pragma once

#include "tensor/config.h"  // first: its C++17 check must come before anything an older standard breaks

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "tensor/config.h"  // again, now after Python.h: Python's version check

// The oldest nanobind dltensor supports (README: Supported versions; CI proves it with
// tests/test_python_versions.py). nanobind <= 2.12 lacks the ndarray API this header uses.
// clang-format off: diagnostics on one line each
#if NB_VERSION_MAJOR < 2 || (NB_VERSION_MAJOR == 2 && NB_VERSION_MINOR < 13)
#  pragma message("dltensor: found nanobind " DLTENSOR_VERSION_STR(NB_VERSION_MAJOR) "." DLTENSOR_VERSION_STR(NB_VERSION_MINOR))
#  error "dltensor needs nanobind >= 2.13 (found an older nanobind, named above)"
#endif
// clang-format on

#include <new>
#include <stdexcept>
#include <string>

#include "bindings/allocation.h"
#include "bindings/array_t_members.h"
#include "bindings/caster_protocol.h"
#include "bindings/construction.h"
#include "tensor/annotations.h"
#include "tensor/dtypes.h"
#include "python/handle.h"
#include "core/import.h"
#include "python/producer_error.h"  // an interrupt raised in a producer
#include "tensor/refusal.h"
#include "core/refusal_errors.h"
#include "core/refusal_log.h"
#include "tensor/requirements.h"
#include "core/return_policy.h"
#include "bindings/signature.h"
#include "tensor/strides.h"

NAMESPACE_BEGIN(NB_NAMESPACE)

using namespace dlt::storage_types;  // py::float16, py::bfloat16, py::float8_e4m3fn, ... (dtypes.h)

/// dltensor's reasons in the TypeError of a call no overload took, for every function and method of `m`
/// (refusal_errors.h): call it at the end of the module's body.
inline void explain_refusals(module_ &m) {
    if (!dlt::explain_refusals(m.ptr())) throw python_error();
}

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
// ... and the 1-byte float8 storage types, by their DLPack codes (numbers: nanobind 2.x names none of them).
#define DLTENSOR_FLOAT8_DTYPE_TRAITS(T)                                                                                \
    template <> struct dtype_traits<dlt::T> {                                                                          \
        static constexpr dlpack::dtype value{(uint8_t) dlt::T::code, 8, 1};                                            \
        static constexpr auto name = const_name(#T);                                                                   \
    };
DLTENSOR_FLOAT8_DTYPE_TRAITS(float8_e3m4)
DLTENSOR_FLOAT8_DTYPE_TRAITS(float8_e4m3)
DLTENSOR_FLOAT8_DTYPE_TRAITS(float8_e4m3b11fnuz)
DLTENSOR_FLOAT8_DTYPE_TRAITS(float8_e4m3fn)
DLTENSOR_FLOAT8_DTYPE_TRAITS(float8_e4m3fnuz)
DLTENSOR_FLOAT8_DTYPE_TRAITS(float8_e5m2)
DLTENSOR_FLOAT8_DTYPE_TRAITS(float8_e5m2fnuz)
DLTENSOR_FLOAT8_DTYPE_TRAITS(float8_e8m0fnu)
#undef DLTENSOR_FLOAT8_DTYPE_TRAITS

/// nanobind's shape annotation as dltensor's (`ndim`, `extents`; -1 for a free extent).
template <typename Shape> struct dltensor_shape {
    using type = dlt::any_shape;
};
template <ssize_t... Is> struct dltensor_shape<shape<Is...>> {
    using type = dlt::tags::shape<(int64_t) Is...>;
};
template <typename Config> using dltensor_shape_t = typename dltensor_shape<typename Config::Shape>::type;

/// A parameter's annotations, collected by nanobind's config, in the backend-independent run-time form.
template <typename Config> constexpr dlt::requirements dltensor_requirements() {
    using Scalar = typename Config::Scalar;
    return dlt::requirements_of<Scalar>(Config::N, dltensor_shape_t<Config>::extents, Config::DeviceType::value,
                                        (char) Config::Order::value, std::is_const_v<Scalar>, Config::Framework::value);
}

/// Framework a returned tensor becomes: the annotated one, else an array-API object (`__dlpack__` and
/// `__dlpack_device__`), never a bare capsule.
template <typename Config>
using dltensor_framework =
    std::conditional_t<std::is_same_v<typename Config::Framework, no_framework>, array_api, typename Config::Framework>;

/// A dltensor framework tag (frameworks/) that nanobind has none of its own for, as a nanobind tag
/// (signatures name its type from the number: signature.h).
template <typename Tag> struct dltensor_framework_tag {
    static constexpr auto name = const_name("ArrayLike");
    static constexpr int value = Tag::value;
    static constexpr bool is_framework = true;
};

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
template <typename T> using dltensor_kind_of = dltensor_kind<T>;  // the one-parameter form annotations_unique takes

/// What a `dltensor` holds beside its `nb::ndarray` (not a template: type_caster<dltensor_untyped>::load() fills
/// it for every type).
struct dltensor_state {
    dltensor_state() = default;
    dltensor_state(PyObject *owner, bool owner_known) noexcept : m_owner(owner), m_owner_known(owner_known) { }
    // Copied member by member: a base's default copy is a byte copy of its 33 bytes (`rep movsb` under -Os).
    dltensor_state(const dltensor_state &o) noexcept
        : m_stream(o.m_stream), m_source(o.m_source), m_source_framework(o.m_source_framework),
          m_return_framework(o.m_return_framework), m_owner(o.m_owner), m_owner_known(o.m_owner_known) { }
    dltensor_state &operator=(const dltensor_state &o) noexcept {
        m_stream = o.m_stream;
        m_source = o.m_source;
        m_source_framework = o.m_source_framework;
        m_return_framework = o.m_return_framework;
        m_owner = o.m_owner;
        m_owner_known = o.m_owner_known;
        return *this;
    }
    /// An imported tensor's: its stream, source and owner.
    void set(void *stream, PyObject *source, int source_framework, PyObject *owner) noexcept {
        m_stream = stream;
        m_source = source;
        m_source_framework = source_framework;
        m_return_framework = 0;
        m_owner = owner;
        m_owner_known = true;
    }

    void *m_stream = nullptr;  ///< See dltensor::stream().
    /// The Python object the tensor was imported from (borrowed: the owner keeps it alive), returned for
    /// the tensor as nanobind returns its importer's source (`f(x) is x`); NULL when C++ made the tensor.
    PyObject *m_source = nullptr;
    int m_source_framework = 0;  ///< `m_source`'s framework (frameworks/ numbers).
    /// The framework to return in when the annotation names none (return_like(), empty_like(): the
    /// followed tensor's source framework); 0: none to follow.
    int m_return_framework = 0;
    /// The Python object that keeps the memory alive (imported, allocated, or given one), borrowed: the
    /// nanobind handle holds a reference to it. NULL: none (static memory). What a NumPy array made of the
    /// tensor takes as its base, and what an export holds instead of the nanobind handle.
    PyObject *m_owner = nullptr;
    /// False for a tensor adopted from a plain `nb::ndarray` or handle: only nanobind knows whether that
    /// handle has an owner (`m_owner` is then NULL, meaning unknown), so the automatic policies ask nanobind's
    /// export.
    bool m_owner_known = true;
};

NAMESPACE_END(detail)

/// `py::paddle`: returns a `paddle.Tensor` (nanobind has no tag for PaddlePaddle).
using paddle = detail::dltensor_framework_tag<dlt::framework_tags::paddle>;

template <typename... Args>
class dltensor : public ndarray<Args...>,
                 public dlt::array_t_members<dltensor<Args...>, typename ndarray<Args...>::Scalar,
                                             ndarray<Args...>::Config::N, ndarray<Args...>::ReadOnly, handle>,
                 private detail::dltensor_state {
    static_assert(dlt::annotations_unique<detail::dltensor_kind_of, Args...>(), DLTENSOR_ANNOTATIONS_UNIQUE_MESSAGE);
    // nanobind takes every arithmetic type as a dtype; dltensor only those DLPack has (not long double).
    static_assert(
        (dlt::annotation_known<Args, !detail::is_ndarray_scalar_v<Args> || dlt::dtype_of<Args>().bits != 0>() && ...));

    using base = ndarray<Args...>;
    using members = dlt::array_t_members<dltensor<Args...>, typename ndarray<Args...>::Scalar,
                                         ndarray<Args...>::Config::N, ndarray<Args...>::ReadOnly, handle>;
    template <typename...> friend class dltensor;
    template <typename, typename> friend struct detail::type_caster;
    template <typename, typename, int32_t, bool, typename> friend class dlt::array_t_members;

public:
    using Config = typename base::Config;
    using Scalar = typename base::Scalar;
    using VoidPtr = typename base::VoidPtr;
    using base::ReadOnly;
    using base::data;
    using members::data;
    template <size_t N> using ndim_annotation = nanobind::ndim<N>;  ///< what unchecked<N>() views with

    dltensor() = default;
    dltensor(const dltensor &) = default;
    dltensor(dltensor &&) noexcept = default;
    dltensor &operator=(const dltensor &) = default;
    dltensor &operator=(dltensor &&) noexcept = default;

    /// Wraps an existing nanobind handle (as `nb::ndarray`'s handle constructor).
    explicit dltensor(detail::ndarray_handle *handle) : base(handle), detail::dltensor_state(nullptr, false) { }

    /// A view of memory that C++ provides, as `nb::ndarray`'s constructors; `owner` keeps it alive (`nb::handle()`:
    /// static memory, which the `automatic` policy copies). Strides count elements (construction.h).
    dltensor(VoidPtr data, size_t ndim, const size_t *shape, handle owner, const int64_t *strides = nullptr,
             dlpack::dtype dtype = nanobind::dtype<Scalar>(), int device_type = base::DeviceType, int device_id = 0,
             char order = base::Order, uint64_t byte_offset = 0)
        : base(data, ndim, shape, owner, strides, dtype, device_type, device_id, order, byte_offset),
          detail::dltensor_state(owner.ptr(), true) { }

    dltensor(VoidPtr data, std::initializer_list<size_t> shape, handle owner,
             std::initializer_list<dlt::element_stride> strides = {}, dlpack::dtype dtype = nanobind::dtype<Scalar>(),
             int device_type = base::DeviceType, int device_id = 0, char order = base::Order, uint64_t byte_offset = 0)
        : dltensor(dlt::construct_tag(), data,
                   dlt::shape_array(shape, Config::N, detail::dltensor_shape_t<Config>::extents), owner, strides, dtype,
                   device_type, device_id, order, byte_offset) { }

    template <typename NoOwner = void>
    DLTENSOR_OWNERLESS dltensor(VoidPtr data, size_t ndim, const size_t *shape)
        : dltensor(data, ndim, shape, handle()) {
        static_assert(dlt::ownerless_allowed<NoOwner>, DLTENSOR_OWNERLESS_MESSAGE);
    }

    template <typename NoOwner = void>
    DLTENSOR_OWNERLESS dltensor(VoidPtr data, std::initializer_list<size_t> shape = {})
        : dltensor(data, shape, handle()) {
        static_assert(dlt::ownerless_allowed<NoOwner>, DLTENSOR_OWNERLESS_MESSAGE);
    }

    /// Adopts another `dltensor`'s tensor (no checks, as `nb::ndarray`'s converting constructor).
    template <typename... Args2>
    explicit dltensor(const dltensor<Args2...> &other)
        : base(other.handle()), detail::dltensor_state(static_cast<const detail::dltensor_state &>(other)) { }

    /// Adopts any `nb::ndarray`'s tensor (no checks, as `nb::ndarray`'s converting constructor).
    template <typename... Args2>
    explicit dltensor(const ndarray<Args2...> &other) : base(other.handle()), detail::dltensor_state(nullptr, false) { }

    /// pybind11's `py::array_t<T, flags> a(obj)`: binds `obj` with a parameter's rules, conversion allowed,
    /// as `py::cast<dltensor>(obj)` does, and raises as it does (a `TypeError` that says why).
    template <typename Object, std::enable_if_t<std::is_base_of_v<handle, Object>, int> = 0>
    explicit dltensor(const Object &obj) : dltensor(nanobind::cast<dltensor>(obj)) { }
    /// The same for an item or attribute (`d["k"]`, `l[i]`, `obj.attr("x")`).
    template <typename Impl>
    explicit dltensor(const detail::accessor<Impl> &item) : dltensor(nanobind::object(item)) { }

    /// `nb::ndarray::view()` under dltensor's rules (array_t_members.h: view_rules): the annotations
    /// restated or added, or another fixed shape of as many elements; a view of a read-only tensor stays
    /// read-only.
    template <typename... Args2> auto view() const {
        using C2 = typename ndarray<Args2...>::Config;
        using rules = dlt::view_rules<std::remove_cv_t<Scalar>, detail::dltensor_shape_t<Config>,
                                      std::remove_cv_t<typename C2::Scalar>, detail::dltensor_shape_t<C2>>;
        if constexpr (rules::takes_extents) dlt::check_view_ndim(this->is_valid(), this->ndim(), C2::N);
        return base::template view<
            std::conditional_t<ReadOnly && detail::is_ndarray_scalar_v<Args2>, const Args2, Args2>...>();
    }

    /// Does the binding promise not to write (const dtype or `ro`)? A read-only source binds only then.
    static constexpr bool read_only() noexcept { return ReadOnly; }

    /// `nb::ndarray::nbytes()` without its overflow: SIZE_MAX where the byte count does not fit in `size_t`
    /// (strides.h: byte_count()).
    size_t nbytes() const { return dlt::byte_count(this->size(), this->dtype().bits); }

    /// The producer's current work stream (a `cudaStream_t`) for a tensor that came through the DLPack C
    /// exchange API; NULL otherwise (already synchronized). Launch kernels on it.
    void *stream() const noexcept { return m_stream; }

    /// What keeps this tensor's memory alive, for a view of it (`leading()`): its owner; a capsule holding
    /// its nanobind handle when only nanobind knows the owner (adopted from a plain nb::ndarray); empty for
    /// owner-less memory.
    object memory_owner() const;

    /// Wraps the tensor in a Python object of the annotated framework (see `dltensor_framework`).
    auto cast(rv_policy rvp = rv_policy::automatic, class handle parent = {}) const;

private:
    /// The tensor that empty() or empty_like() allocated (`rc`, `im`: allocate_empty()'s), or their throw.
    static dltensor allocated(int rc, dlt::imported &im, size_t ndim);
    int source_framework() const noexcept { return m_source_framework; }

    dltensor(dlt::construct_tag, VoidPtr data, const dlt::shape_array &shape, handle owner,
             std::initializer_list<dlt::element_stride> strides, dlpack::dtype dtype, int device_type, int device_id,
             char order, uint64_t byte_offset)
        : dltensor(data, shape.n, shape.v, owner, dlt::strides_array(strides, shape.n).get(), dtype, device_type,
                   device_id, order, byte_offset) { }
};

NAMESPACE_BEGIN(detail)

// Two spellings of one DLPack dtype meet in this backend: nanobind's `nb::dlpack::dtype` (what
// `nb::ndarray`'s constructors and `dtype()` use, so ported code keeps compiling) and dltensor's
// `dlt::dlpack::DataType` (the core's). These are the only conversions between them.
constexpr dlpack::dtype nanobind_dtype(dlt::dlpack::DataType t) noexcept { return {t.code, t.bits, t.lanes}; }
constexpr dlt::dlpack::DataType dltensor_dtype(dlpack::dtype t) noexcept { return {t.code, t.bits, t.lanes}; }

/// A validated tensor's extents as the `size_t` array nanobind's constructor takes: the same array,
/// read as the unsigned type of `int64_t` (which may alias it), since validation made every extent
/// non-negative.
inline const size_t *dltensor_extents_of(const dlt::dlpack::Tensor &t) noexcept {
    static_assert(std::is_same_v<std::make_unsigned_t<int64_t>, size_t>,
                  "dltensor: size_t must be the unsigned type of int64_t");
    return reinterpret_cast<const size_t *>(t.shape);
}

/// An owner for a tensor whose owner only nanobind knows (adopted from a plain `nb::ndarray`) or that has
/// none (static memory): an owner capsule holding an `nb::ndarray<>` over its nanobind handle (one more
/// reference to it). Not a template: one for every annotation set's caster.
struct handle_keeper {
    static constexpr char name[] = "dltensor.nanobind_handle";
    /// Ends the capsule (dlt::owner_capsule's `End`): the nb::ndarray<> and its memory.
    static void end(ndarray<> *kept) noexcept;
    /// The capsule, made on the Python heap (the GIL is held here and in the capsule's destructor): a new
    /// reference, or NULL with a Python error set.
    static PyObject *capsule(ndarray_handle *handle) noexcept;
};

/// What every caster's from_python() does when the import refused `src` (not a template: one for all
/// annotation sets). `name`: the parameter's signature text.
DLTENSOR_CORE_COLD DLTENSOR_NANOBIND_PART void dltensor_refusal(handle src, uint32_t flags, const char *name) noexcept;

/// The tag of the non-template part of every tensor caster below.
struct dltensor_untyped { };

/// What every tensor caster does apart from its types (not a template: one for all annotation sets; a
/// type_caster, hence a friend of nb::ndarray).
template <> struct type_caster<dltensor_untyped> {
    /// from_python() after its framework check: imports `src` under `r` and rebuilds the caster's value over
    /// it, the nb::ndarray's fields `h` and `dl` and the dltensor's `st`. `name`: the signature text.
    static bool load(handle src, uint32_t flags, cleanup_list *cleanup, const dlt::requirements &r, const char *name,
                     ndarray_handle *&h, dlpack::dltensor &dl, dltensor_state &st,
                     dlt::consumed_argument &consumed) noexcept;
    /// from_cpp() but for a tensor adopted from a plain nb::ndarray: the return of `st`, `h`, `dl` under
    /// return_policy.h, over a handle that keeps the owner (else the nanobind handle); `framework`: 0 for none.
    static handle from_cpp(const dltensor_state &st, ndarray_handle *h, const dlpack::dltensor &dl, bool read_only,
                           int framework, rv_policy policy, cleanup_list *cleanup) noexcept;
    /// A nanobind handle over the imported tensor, made by `Nd`'s constructor, in `h` and `dl`.
    template <typename Nd> static void make(const dlt::imported &im, ndarray_handle *&h, dlpack::dltensor &dl) noexcept;
};

template <typename... Args> struct type_caster<dltensor<Args...>> {
    using Config = typename dltensor<Args...>::Config;
    using Scalar = typename Config::Scalar;
    using Framework = dltensor_framework<Config>;
    static constexpr dlt::requirements requirements = dltensor_requirements<Config>();

    using Value = dltensor<Args...>;
    // The signature text (signature.h): parameter and return types apart ("@parameter@return@", which
    // nanobind's signatures resolve), and every annotation named, writability either way.
    static constexpr dlt::signature_text signature =
        dlt::make_signature(requirements, Config::Framework::value, dlt::signature_role::both);
    template <size_t... Is> static constexpr auto name_of(std::index_sequence<Is...>) {
        return descr<sizeof...(Is)>(signature.s[Is]...);
    }
    static constexpr auto Name = name_of(std::make_index_sequence<signature.len>());
    // What NB_TYPE_CASTER declares, with one addition: the conversions to the parameter mark the value taken
    // (the call goes ahead), so that a capsule consumed for a call that never happens is handed back.
    template <typename T_> using Cast = movable_cast_t<T_>;
    template <typename T_> static constexpr bool can_cast() { return true; }
    template <typename T_, enable_if_t<std::is_same_v<std::remove_cv_t<T_>, Value>> = 0>
    static handle from_cpp(T_ *p, rv_policy policy, cleanup_list *list) noexcept {
        if (!p) return none().release();
        return from_cpp(*p, policy, list);
    }
    DLTENSOR_TAKING_CONVERSIONS(Value, explicit, , value)
    Value value;
    dlt::consumed_argument m_consumed;  ///< the caller's raw capsule that from_python() consumed

    type_caster() = default;
    ~type_caster() { m_consumed.restore_untaken(value.m_owner); }

    bool from_python(handle src, uint32_t flags, cleanup_list *cleanup) noexcept {
        static_assert(Config::Framework::value != dlt::fw_memview, DLTENSOR_MEMVIEW_PARAMETER_MESSAGE);
        // A framework annotation: without conversion only that framework's tensors (overloads by framework).
        if constexpr (requirements.framework != 0) {
            if (!(flags & (uint32_t) cast_flags::convert) &&
                !(src.is_none() && (flags & (uint32_t) cast_flags::accepts_none)) &&
                !dlt::of_annotated_framework(src.ptr(), requirements)) {
                dltensor_refusal(src, flags, Name.text);
                return false;
            }
        }
        return type_caster<dltensor_untyped>::load(src, flags, cleanup, requirements, Name.text, value.m_handle,
                                                   value.m_dltensor, value, m_consumed);
    }

    /// The return (type_caster<dltensor_untyped>::from_cpp()).
    static handle from_cpp(const Value &tensor, rv_policy policy, cleanup_list *cleanup) noexcept {
        if (!dlt::enter_interpreter_or_raise()) return handle();
        if (!tensor.m_owner_known && tensor.is_valid() && !tensor.m_return_framework &&
            (policy == rv_policy::automatic || policy == rv_policy::automatic_reference))
            // Adopted from a plain nb::ndarray: whether to copy depends on whether its handle has an owner,
            // which only nanobind knows; its own export decides (a view when there is an owner).
            return make_caster<ndarray<Framework>>::from_cpp(ndarray<Framework>(tensor.handle()), policy, cleanup);
        return type_caster<dltensor_untyped>::from_cpp(tensor, tensor.m_handle, tensor.m_dltensor, Value::ReadOnly,
                                                       (int) Config::Framework::value, policy, cleanup);
    }
};

// Containers of tensors: a raw capsule an entry consumed is handed back when the container does not go to
// the call (capsule_import.h). nanobind's container casters are specialized for tensor entries.
template <typename List, typename Entry> struct list_caster;
template <typename Array, typename Entry, size_t Size> struct array_caster;
template <typename Optional, typename T> struct optional_caster;
template <typename Dict, typename Key, typename Val> struct dict_caster;

/// A tensor as a container's entry: its caster is the tensor's, and its conversion gives the tensor.
template <typename... A> struct dltensor_entry { };
template <typename... A> struct type_caster<dltensor_entry<A...>> : type_caster<dltensor<A...>> {
    template <typename T_> using Cast = dltensor<A...> &&;
};

/// nanobind's caster `Base` for `Container`, whose conversions to the parameter mark the value taken.
template <typename Container, typename Base> struct dltensor_container_caster : Base {
    // The base's members are called through a `Base &` (nvcc's front end took `Base::f()` for this class's
    // own `f`: a call to itself).
    bool from_python(handle src, uint32_t flags, cleanup_list *cleanup) noexcept {
        dlt::detail::consumed_capsules_scope scope(m_consumed);
        return static_cast<Base &>(*this).from_python(src, flags, cleanup);
    }
    DLTENSOR_TAKING_CONVERSIONS(Container, explicit, , static_cast<Base &>(*this).operator Container &())
    dlt::detail::consumed_capsules m_consumed;
};

template <typename List, typename... A>
struct list_caster<List, dltensor<A...>> : dltensor_container_caster<List, list_caster<List, dltensor_entry<A...>>> { };
template <typename Array, typename... A, size_t Size>
struct array_caster<Array, dltensor<A...>, Size>
    : dltensor_container_caster<Array, array_caster<Array, dltensor_entry<A...>, Size>> { };
template <typename Optional, typename... A>
struct optional_caster<Optional, dltensor<A...>>
    : dltensor_container_caster<Optional, optional_caster<Optional, dltensor_entry<A...>>> { };
template <typename Dict, typename Key, typename... A>
struct dict_caster<Dict, Key, dltensor<A...>>
    : dltensor_container_caster<Dict, dict_caster<Dict, Key, dltensor_entry<A...>>> { };

template <typename... Args> class dltensor_object : public object {
public:
    using object::object;
    using object::operator=;
    static constexpr auto Name = type_caster<dltensor<Args...>>::Name;
};

NAMESPACE_END(detail)

template <typename... Args> object dltensor<Args...>::memory_owner() const {
    if (m_owner_known || !this->is_valid()) return borrow(handle(m_owner));
    PyObject *keeper = detail::handle_keeper::capsule(this->handle());
    if (!keeper) throw python_error();
    return steal(keeper);
}

template <typename... Args>
DLTENSOR_HOT_INLINE dltensor<Args...> dltensor<Args...>::allocated(int rc, dlt::imported &im, size_t ndim) {
    if (rc > 0) throw std::invalid_argument(dlt::empty_shape_message);
    if (rc < 0) throw python_error();
    object owner = steal(im.owner.release());
    const dlt::dlpack::Tensor &t = im.tensor;
    dltensor result((VoidPtr) t.data, ndim, detail::dltensor_extents_of(t), owner, t.strides,
                    detail::nanobind_dtype(t.dtype), t.device.device_type, t.device.device_id, 'C', t.byte_offset);
    result.m_stream = im.stream;
    result.m_source = im.source;
    result.m_source_framework = im.source_framework;
    return result;
}

/// `nb::try_cast(obj, out)` for a `dltensor` (the deduced form): the same rules as a parameter, and no
/// Python error left behind when it returns false (`dlt::last_refusal()` says why).
template <typename Derived, typename... Args>
bool try_cast(const detail::api<Derived> &value, dltensor<Args...> &out, bool convert = true) noexcept {
    detail::make_caster<dltensor<Args...>> caster;
    if (!caster.from_python(value.derived().ptr(), convert ? (uint8_t) detail::cast_flags::convert : 0, nullptr))
        return false;
    out = std::move(caster.operator dltensor<Args...> &&());
    return true;
}

template <typename... Args>
auto dltensor<Args...>::cast(rv_policy rvp, class handle parent) const {
    return borrow<detail::dltensor_object<Args...>>(nanobind::cast(*this, rvp, parent));
}

NAMESPACE_END(NB_NAMESPACE)

// The bodies, where the build mode says (config.h): the core's in every unit header-only, else in the
// library dltensor_core; the process-wide state's in every unit but a shared core's modules.
#if DLTENSOR_PROCESS_WIDE_BODIES
#  include "python/process_wide-inl.h"
#endif
#if DLTENSOR_CORE_DEFINITIONS
#  include "core/core-inl.h"
#endif
#if DLTENSOR_NANOBIND_DEFINITIONS
#  include "nanobind-inl.h"
#endif
