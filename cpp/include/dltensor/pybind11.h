// dltensor/pybind11.h: the pybind11 backend. `pybind11::dltensor<Annotations...>` has the nanobind
// backend's spelling, members and semantics, over dltensor's own tensor handle (python/handle.h) and
// annotation tags (tensor/annotations.h), since pybind11 has neither (docs/architecture.md).
#pragma once

#include "tensor/config.h"  // first: its C++17 check must come before anything an older standard breaks

// `py::cast(t)` keeps a `py::dltensor`'s own return policy only when declared before pybind11's headers;
// included after them, this header warns, unless DLTENSOR_PYBIND11_INCLUDED_LATE is defined.
// clang-format off: diagnostics on one line each
#if defined(PYBIND11_TYPE_CASTER) && !defined(DLTENSOR_PYBIND11_INCLUDED_LATE)
#  if defined(_MSC_VER)
#    pragma message("dltensor: <dltensor/pybind11.h> is included after pybind11's headers, so list.append(t), l[i] = t and d[k] = t of a py::dltensor append a copy (C++ writes made afterwards never reach it). Include <dltensor/pybind11.h> first, or define DLTENSOR_PYBIND11_INCLUDED_LATE and write l.append(t.cast())")
#  else
#    warning "dltensor: <dltensor/pybind11.h> is included after pybind11's headers, so list.append(t), l[i] = t and d[k] = t of a py::dltensor append a copy (C++ writes made afterwards never reach it). Include <dltensor/pybind11.h> first, or define DLTENSOR_PYBIND11_INCLUDED_LATE and write l.append(t.cast())"
#  endif
#endif
// clang-format on
#include <pybind11/detail/common.h>

namespace PYBIND11_NAMESPACE {
class handle;
class object;
template <typename... Args> class dltensor;
template <typename... Args> object cast(dltensor<Args...> &t);
template <typename... Args> object cast(const dltensor<Args...> &t);
template <typename... Args> object cast(dltensor<Args...> &&t);
}  // namespace pybind11

#include <pybind11/pybind11.h>

#include "tensor/config.h"  // again, now after Python.h: Python's version check

// The oldest pybind11 dltensor supports (README: Supported versions; CI proves it with
// tests/test_python_versions.py).
// clang-format off: diagnostics on one line each
#if PYBIND11_VERSION_MAJOR < 2 || (PYBIND11_VERSION_MAJOR == 2 && PYBIND11_VERSION_MINOR < 13)
#  pragma message("dltensor: found pybind11 " DLTENSOR_VERSION_STR(PYBIND11_VERSION_MAJOR) "." DLTENSOR_VERSION_STR(PYBIND11_VERSION_MINOR))
#  error "dltensor needs pybind11 >= 2.13 (found an older pybind11, named above)"
#endif
// clang-format on

#include <array>
#include <deque>
#include <initializer_list>
#include <list>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bindings/allocation.h"
#include "tensor/annotations.h"
#include "bindings/array_t_members.h"
#include "bindings/caster_protocol.h"
#include "bindings/construction.h"
#include "bindings/handle_tensor.h"
#include "bindings/strided_view.h"
#include "core/converted_arguments.h"
#include "tensor/dtypes.h"
#include "core/export.h"
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

namespace PYBIND11_NAMESPACE {  // pybind11, with its visibility (hidden)

using namespace dlt::storage_types;  // py::float16, py::bfloat16, py::float8_e4m3fn, ... (dtypes.h)
using dlt::tags::any_contig;
using dlt::tags::array_api;
using dlt::tags::c_contig;
using dlt::tags::f_contig;
using dlt::tags::memview;
using dlt::tags::ndim;
using dlt::tags::ro;
using dlt::tags::shape;
namespace device = dlt::tags::device;
/// The frameworks' return tags (`py::numpy`, `py::pytorch`, `py::paddle`, ...: frameworks/registry.h).
using namespace dlt::framework_tags;

/// dltensor's reasons in the TypeError of a call no overload took, for every function and method of `m`
/// (refusal_errors.h): call it at the end of the module's body.
inline void explain_refusals(module_ &m) {
    if (!dlt::explain_refusals(m.ptr())) throw error_already_set();
}

/// A strided view with compile-time dtype and ndim, as `nb::ndarray_view` (what `dltensor::view()` returns).
template <typename Scalar, size_t Dim> using dltensor_view = dlt::strided_view<Scalar, Dim>;

template <typename... Args>
class dltensor
    : public dlt::handle_tensor<dlt::config<Args...>>,
      public dlt::array_t_members<dltensor<Args...>, typename dlt::config<Args...>::Scalar, dlt::config<Args...>::N,
                                  dlt::config<Args...>::read_only, pybind11::handle> {
    template <typename...> friend class dltensor;
    template <typename, typename> friend class detail::type_caster;
    template <typename, typename, int32_t, bool, typename> friend class dlt::array_t_members;
    using base = dlt::handle_tensor<dlt::config<Args...>>;
    using members = dlt::array_t_members<dltensor<Args...>, typename dlt::config<Args...>::Scalar,
                                         dlt::config<Args...>::N, dlt::config<Args...>::read_only, pybind11::handle>;

public:
    using Config = dlt::config<Args...>;
    using typename base::Scalar;
    using typename base::VoidPtr;
    using base::data;
    using members::data;
    using base::DeviceType;
    using base::Order;
    using base::ReadOnly;
    template <size_t N> using ndim_annotation = pybind11::ndim<N>;  ///< what unchecked<N>() views with

    dltensor() = default;

    /// Adopts another `dltensor`'s tensor (no checks, as `nb::ndarray`'s converting constructor). A
    /// read-only tensor adopted from a writable one gets a read-only handle of its own (kept alive by the
    /// other's), so that its exports are read-only as the nanobind backend's are. Needs the GIL then.
    template <typename... Args2> explicit dltensor(const dltensor<Args2...> &o) {
        if (!this->adopt_handle(o)) throw error_already_set();
    }

    /// A view of memory that C++ provides; `owner` keeps it alive (`py::handle()`: static memory, which
    /// the `automatic` policy copies). Strides count elements; NULL strides follow `order`.
    dltensor(VoidPtr data, size_t ndim, const size_t *shape, pybind11::handle owner, const int64_t *strides = nullptr,
             dlt::dlpack::DataType dtype = dlt::dtype_of<Scalar>(), int device_type = DeviceType, int device_id = 0,
             char order = Order, uint64_t byte_offset = 0) {
        if (!this->make(data, ndim, shape, owner.ptr(), strides, dtype, device_type, device_id, order, byte_offset))
            throw error_already_set();
    }

    dltensor(VoidPtr data, std::initializer_list<size_t> shape, pybind11::handle owner,
             std::initializer_list<dlt::element_stride> strides = {},
             dlt::dlpack::DataType dtype = dlt::dtype_of<Scalar>(), int device_type = DeviceType, int device_id = 0,
             char order = Order, uint64_t byte_offset = 0) {
        const dlt::shape_array dims(shape, Config::N, Config::Shape::extents);
        const dlt::strides_array steps(strides, dims.n);
        if (!this->make(data, dims.n, dims.v, owner.ptr(), steps.get(), dtype, device_type, device_id, order,
                        byte_offset))
            throw error_already_set();
    }

    /// pybind11's `py::array_t<T, flags> a(obj)`: binds `obj` with a parameter's rules, conversion allowed,
    /// as `py::cast<dltensor>(obj)` does, and throws as it does (`py::dltensor_cast_error`, a TypeError).
    template <typename Object, std::enable_if_t<std::is_base_of_v<pybind11::handle, Object>, int> = 0>
    explicit dltensor(const Object &obj);
    /// The same for an item or attribute (`d["k"]`, `l[i]`, `obj.attr("x")`).
    template <typename Policy>
    explicit dltensor(const detail::accessor<Policy> &item) : dltensor(pybind11::object(item)) { }

    template <typename NoOwner = void>
    DLTENSOR_OWNERLESS dltensor(VoidPtr data, size_t ndim, const size_t *shape)
        : dltensor(data, ndim, shape, pybind11::handle()) {
        static_assert(dlt::ownerless_allowed<NoOwner>, DLTENSOR_OWNERLESS_MESSAGE);
    }

    template <typename NoOwner = void>
    DLTENSOR_OWNERLESS dltensor(VoidPtr data, std::initializer_list<size_t> shape = {})
        : dltensor(data, shape, pybind11::handle()) {
        static_assert(dlt::ownerless_allowed<NoOwner>, DLTENSOR_OWNERLESS_MESSAGE);
    }

    /// What keeps this tensor's memory alive, for a view of it (`leading()`): its owner; empty for owner-less
    /// memory.
    object memory_owner() const {
        dlt::tensor_handle *h = this->handle();
        return h && h->owner() ? reinterpret_borrow<object>(h->owner()) : object();
    }

    /// Wraps the tensor in a Python object of the annotated framework.
    object cast(return_value_policy policy = return_value_policy::automatic, pybind11::handle parent = {}) const;

private:
    explicit dltensor(dlt::tensor_handle *adopted, bool owned) noexcept : base(adopted, owned) { }

    /// The tensor that empty() or empty_like() allocated (`rc`, `im`: allocate_empty()'s), or their throw.
    static dltensor allocated(int rc, dlt::imported &im, size_t ndim);
};

namespace detail {

/// The signature text (signature.h), as pybind11's descriptor: a parameter's and a return's type apart
/// where pybind11 can tell them (pybind11 >= 3), else the parameter's (pybind11-stubgen copies it).
template <typename Config> struct dltensor_signature {
#if PYBIND11_VERSION_MAJOR >= 3
    static constexpr dlt::signature_role role = dlt::signature_role::both;
#else
    static constexpr dlt::signature_role role = dlt::signature_role::parameter;
#endif
    static constexpr dlt::signature_text value =
        dlt::make_signature(Config::requirements_(), Config::Framework::value, role);
    template <size_t... Is> static constexpr auto descr_of(std::index_sequence<Is...>) {
        return detail::descr<sizeof...(Is)>(value.s[Is]...);
    }
    static constexpr auto name = descr_of(std::make_index_sequence<value.len>());
};

/// What every caster's load() does when the import refused `src` (not a template: one for all annotation
/// sets): false when a Python error is to be raised (throw error_already_set()), else true after keeping
/// the refusal for dltensor.explain(). `signature`: the parameter's signature text.
DLTENSOR_COLD inline bool dltensor_refusal(handle src, const char *signature) noexcept {
    // An interrupt in the producer's code (producer_error.h) stops overload resolution: pybind11 raises
    // what a caster throws.
    if (dlt::restore_pending_error()) return false;
    if (dlt::last_refusal().sub_interpreter) {  // pybind11 modules may declare sub-interpreter support
        PyErr_SetString(PyExc_RuntimeError, dlt::sub_interpreter_message);
        return false;
    }
    dlt::log_refusal(src.ptr(), signature);
    return true;
}

/// What every caster's load() does after its framework check (one for all annotation sets): a new handle
/// over `src` imported under `r`, or NULL (refused and kept; a Python error is thrown as error_already_set).
inline dlt::tensor_handle *dltensor_load(handle src, bool convert, bool other_framework, const dlt::requirements &r,
                                         const char *signature, dlt::consumed_argument &consumed,
                                         dlt::converted_argument &converted) {
    dlt::imported im;
    if (other_framework || !dlt::import_tensor(src.ptr(), r, convert, im)) {
        if (!dltensor_refusal(src, signature)) throw error_already_set();
        return nullptr;
    }
    // The handle takes its own reference to the owner; `im` drops the importer's.
    dlt::tensor_handle *h = dlt::tensor_handle::create_inline(im.tensor, im.owner.get(), r.read_only, im.stream);
    if (!h) {
        PyErr_Clear();
        return nullptr;
    }
    h->set_source(im.source, im.source_framework);
    consumed.note(im.consumed, h->owner());
    // Another object's tensor (a converted copy, a raw capsule's): the caster keeps its owner, and so the
    // tensor, until pybind11 destroys the call's casters, after the return's cast (a by-value parameter
    // is moved out of the caster and dropped before that); a reference_internal return finds it here.
    if (im.source != src.ptr()) dlt::remember_converted_argument(converted, src.ptr(), im.owner.get());
    return h;
}

template <typename... Args> class type_caster<pybind11::dltensor<Args...>> {
public:
    using Value = pybind11::dltensor<Args...>;
    using Config = typename Value::Config;
    static constexpr dlt::requirements requirements = Config::requirements_();

    // What PYBIND11_TYPE_CASTER declares, with one addition: the conversions to the parameter mark the value
    // taken (the call goes ahead), so that a capsule consumed for a call that never happens is handed back.
protected:
    Value value;

public:
    static constexpr auto name = dltensor_signature<Config>::name;
    template <typename T_, enable_if_t<std::is_same<Value, remove_cv_t<T_>>::value, int> = 0>
    static handle cast(T_ *src, return_value_policy policy, handle parent) {
        if (!src) return none().release();
        return cast(*src, policy, parent);
    }
    DLTENSOR_TAKING_CONVERSIONS(Value, , &&, value)
    template <typename T_> using cast_op_type = movable_cast_op_type<T_>;

    type_caster() = default;
    type_caster(type_caster &&o) noexcept : value(std::move(o.value)), m_consumed(std::move(o.m_consumed)) {
        dlt::move_converted_argument(m_converted, o.m_converted);  // py::cast's load_type() returns a caster
    }
    ~type_caster() {
        dlt::tensor_handle *h = value.handle();
        m_consumed.restore_untaken(h && h->unique() ? h->owner() : nullptr);
        dlt::forget_converted_argument(m_converted);
    }

    /// Fails (no Python error set; `dlt::last_refusal()` says why) unless `src` satisfies the annotations,
    /// so that overload resolution goes on; `convert` is false in pybind11's first pass and for
    /// `.noconvert()` arguments.
    bool load(handle src, bool convert) {
        static_assert(Config::Framework::value != dlt::fw_memview, DLTENSOR_MEMVIEW_PARAMETER_MESSAGE);
        // A framework annotation: without conversion only that framework's tensors (overloads by framework).
        bool other_framework = false;
        if constexpr (requirements.framework != 0)
            other_framework = !convert && !dlt::of_annotated_framework(src.ptr(), requirements);
        dlt::tensor_handle *h = dltensor_load(src, convert, other_framework, requirements,
                                              dltensor_signature<Config>::name.text, m_consumed, m_converted);
        if (!h) return false;
        value.adopt_imported(h);
        return true;
    }

private:
    dlt::consumed_argument m_consumed;    ///< the caller's raw capsule that load() consumed
    dlt::converted_argument m_converted;  ///< what load() bound instead of `src` (converted_arguments.h)

public:
    /// The return, under the policies of return_policy.h (shared with the nanobind backend).
    static handle cast(const Value &src, return_value_policy policy, handle parent) {
        if (!dlt::enter_interpreter_or_raise()) throw error_already_set();
        dlt::tensor_handle *h = src.handle();
        const dlt::return_plan plan =
            dlt::plan_return(dlt::return_policy_of(policy), src.is_valid(), src.m_owned,
                             Config::Framework::value ? Config::Framework::value : src.m_return_framework,
                             h && h->source(), h ? h->source_framework() : 0, parent.ptr() != nullptr);
        const dlt::return_start start = dlt::start_return(plan, h ? h->source() : nullptr);
        if (start.done) return start.object;
        // An owner-less view kept by a parent that is a converted argument (pybind11's parent of a function
        // is its first argument): that argument keeps nothing of the converted tensor alive; its owner too.
        PyObject *also = plan.keep_parent && !src.m_owned ? dlt::converted_owner_of(parent.ptr()) : nullptr;
        PyObject *o = dlt::export_planned(h, plan, parent.ptr(), also);
        if (!o) throw error_already_set();
        return o;
    }

    /// A returned tensor (pybind11 casts a function's result as an rvalue): as above, and then the tensor
    /// is dropped here, where the GIL is held and the interpreter entered, not by its destructor, which
    /// must first ask for both.
    static handle cast(Value &&src, return_value_policy policy, handle parent) {
        const handle out = cast(static_cast<const Value &>(src), policy, parent);
        src.release_entered();
        return out;
    }
};

}  // namespace detail

/// What a failed conversion to a `py::dltensor` in a function body throws (`py::cast<T>(obj)`,
/// `obj.cast<T>()`, `T(obj)`): a `cast_error` for C++ (`catch (py::cast_error &)` still works), raised in
/// Python as `TypeError`, the type a refused argument raises and nanobind's `py::cast` raises.
class dltensor_cast_error : public cast_error {
public:
    using cast_error::cast_error;
    void set_error() const override { PyErr_SetString(PyExc_TypeError, what()); }
};

namespace detail {

/// `obj.cast<py::dltensor<...>>()` / `py::cast<...>(obj)` in a function body: the parameter's rules
/// (with conversion), and on failure a `dltensor_cast_error` (TypeError) that says why instead of "C++ type
/// '?'". (Found by argument-dependent lookup: more specialized than pybind11's own `load_type`.)
template <typename... Args>
type_caster<pybind11::dltensor<Args...>> &load_type(type_caster<pybind11::dltensor<Args...>> &conv, const handle &h) {
    if (!conv.load(h, true))
        throw dltensor_cast_error(dlt::refusal_message(h.ptr(), dltensor_signature<dlt::config<Args...>>::name.text));
    return conv;
}

}  // namespace detail

namespace detail {

// Containers of tensors. A raw capsule that an element consumed is handed back when the container does
// not go to the call (capsule_import.h: consumed_capsules). pybind11's casters for the containers come
// from pybind11/stl.h, which the extension includes; declared here so that either order works.
template <typename Type, typename Value> struct list_caster;
template <typename ArrayType, typename Value, bool Resizable, size_t Size> struct array_caster;
template <typename Type, typename Value> struct optional_caster;
template <typename Type, typename Key, typename Value> struct map_caster;

/// pybind11's caster `Base` for `Container`, whose conversions to the parameter mark the value taken.
template <typename Container, typename Base> struct dltensor_container_caster : Base {
    // The base's members are called through a `Base &` (nvcc's front end took `Base::f()` for this class's
    // own `f`: a call to itself).
    bool load(handle src, bool convert) {
        dlt::detail::consumed_capsules_scope scope(m_consumed);
        return static_cast<Base &>(*this).load(src, convert);
    }
    DLTENSOR_TAKING_CONVERSIONS(Container, , &&, static_cast<Base &>(*this).operator Container &())
    dlt::detail::consumed_capsules m_consumed;
};

template <typename... A, typename Alloc>
struct type_caster<std::vector<pybind11::dltensor<A...>, Alloc>>
    : dltensor_container_caster<std::vector<pybind11::dltensor<A...>, Alloc>,
                                list_caster<std::vector<pybind11::dltensor<A...>, Alloc>, pybind11::dltensor<A...>>> {
};
template <typename... A, typename Alloc>
struct type_caster<std::deque<pybind11::dltensor<A...>, Alloc>>
    : dltensor_container_caster<std::deque<pybind11::dltensor<A...>, Alloc>,
                                list_caster<std::deque<pybind11::dltensor<A...>, Alloc>, pybind11::dltensor<A...>>> { };
template <typename... A, typename Alloc>
struct type_caster<std::list<pybind11::dltensor<A...>, Alloc>>
    : dltensor_container_caster<std::list<pybind11::dltensor<A...>, Alloc>,
                                list_caster<std::list<pybind11::dltensor<A...>, Alloc>, pybind11::dltensor<A...>>> { };
template <typename... A, size_t Size>
struct type_caster<std::array<pybind11::dltensor<A...>, Size>>
    : dltensor_container_caster<
          std::array<pybind11::dltensor<A...>, Size>,
          array_caster<std::array<pybind11::dltensor<A...>, Size>, pybind11::dltensor<A...>, false, Size>> { };
template <typename... A>
struct type_caster<std::optional<pybind11::dltensor<A...>>>
    : dltensor_container_caster<std::optional<pybind11::dltensor<A...>>,
                                optional_caster<std::optional<pybind11::dltensor<A...>>, pybind11::dltensor<A...>>> { };
template <typename Key, typename... A, typename Compare, typename Alloc>
struct type_caster<std::map<Key, pybind11::dltensor<A...>, Compare, Alloc>>
    : dltensor_container_caster<
          std::map<Key, pybind11::dltensor<A...>, Compare, Alloc>,
          map_caster<std::map<Key, pybind11::dltensor<A...>, Compare, Alloc>, Key, pybind11::dltensor<A...>>> { };
template <typename Key, typename... A, typename Hash, typename Equal, typename Alloc>
struct type_caster<std::unordered_map<Key, pybind11::dltensor<A...>, Hash, Equal, Alloc>>
    : dltensor_container_caster<std::unordered_map<Key, pybind11::dltensor<A...>, Hash, Equal, Alloc>,
                                map_caster<std::unordered_map<Key, pybind11::dltensor<A...>, Hash, Equal, Alloc>, Key,
                                           pybind11::dltensor<A...>>> { };

}  // namespace detail

/// `py::try_cast(obj, out)`, as nanobind's: the parameter's rules (conversion unless `convert` is false);
/// false, with no Python error set, when `obj` does not bind (`dlt::last_refusal()` says why).
template <typename... Args> bool try_cast(handle obj, dltensor<Args...> &out, bool convert = true) noexcept {
    detail::type_caster<dltensor<Args...>> conv;
    try {
        if (!conv.load(obj, convert)) return false;
    } catch (error_already_set &e) {  // an interrupt in the producer's code: left set for the caller
        e.restore();
        return false;
    }
    out = std::move(static_cast<dltensor<Args...> &>(conv));
    return true;
}

template <typename... Args>
DLTENSOR_HOT_INLINE dltensor<Args...> dltensor<Args...>::allocated(int rc, dlt::imported &im, size_t) {
    if (rc > 0) throw std::invalid_argument(dlt::empty_shape_message);
    if (rc < 0) throw error_already_set();
    object owner = reinterpret_steal<object>(im.owner.release());
    dlt::tensor_handle *h = dlt::tensor_handle::create_inline(im.tensor, owner.ptr(), ReadOnly, im.stream);
    if (!h) throw error_already_set();
    h->set_source(im.source, im.source_framework);
    return dltensor(h, true);
}

template <typename... Args>
object dltensor<Args...>::cast(return_value_policy policy, pybind11::handle parent) const {
    return reinterpret_steal<object>(detail::type_caster<dltensor>::cast(*this, policy, parent));
}

template <typename... Args>
template <typename Object, std::enable_if_t<std::is_base_of_v<pybind11::handle, Object>, int>>
dltensor<Args...>::dltensor(const Object &obj) : dltensor(pybind11::cast<dltensor>(pybind11::handle(obj))) { }

namespace detail {
/// The policy `py::cast(t, policy)` hands a tensor's caster: pybind11's defaults (`automatic`,
/// `automatic_reference`) stay the tensor's `automatic` instead of becoming `copy` / `move`.
inline return_value_policy dltensor_cast_policy(return_value_policy policy) noexcept {
    return policy == return_value_policy::automatic_reference ? return_value_policy::automatic : policy;
}
}  // namespace detail

// `py::cast(t)` / `py::cast(t, policy[, parent])` of a `py::dltensor`, any value category (declared at the
// top of this file): the tensor's own return rules, as when a function returns it.
template <typename... Args> object cast(const dltensor<Args...> &t) { return t.cast(); }
template <typename... Args> object cast(dltensor<Args...> &t) { return t.cast(); }
template <typename... Args> object cast(dltensor<Args...> &&t) { return t.cast(); }
template <typename... Args> object cast(const dltensor<Args...> &t, return_value_policy policy,
                                        handle parent = handle()) {
    return t.cast(detail::dltensor_cast_policy(policy), parent);
}
template <typename... Args> object cast(dltensor<Args...> &t, return_value_policy policy, handle parent = handle()) {
    return t.cast(detail::dltensor_cast_policy(policy), parent);
}
template <typename... Args> object cast(dltensor<Args...> &&t, return_value_policy policy, handle parent = handle()) {
    return t.cast(detail::dltensor_cast_policy(policy), parent);
}

}  // namespace pybind11

// The bodies, where the build mode says (config.h): the core's in every unit header-only, else in the
// library dltensor_core; the process-wide state's in every unit but a shared core's modules.
#if DLTENSOR_PROCESS_WIDE_BODIES
#  include "python/process_wide-inl.h"
#endif
#if DLTENSOR_CORE_DEFINITIONS
#  include "core/core-inl.h"
#endif
