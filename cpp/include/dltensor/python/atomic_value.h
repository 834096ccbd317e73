// dltensor/python/atomic_value.h: the members of std::atomic that dltensor's state uses, over GCC's and Clang's
// atomic builtins (as std::atomic is), without <atomic>'s parse in every source; elsewhere std::atomic itself.
#pragma once

#include <type_traits>

#include "../tensor/config.h"

#if defined(__GNUC__) || defined(__clang__)

namespace dlt {

/// The memory orders of std::memory_order, as the builtins take them.
namespace atomic_order {
inline constexpr int relaxed = __ATOMIC_RELAXED;
inline constexpr int acquire = __ATOMIC_ACQUIRE;
inline constexpr int release = __ATOMIC_RELEASE;
inline constexpr int acq_rel = __ATOMIC_ACQ_REL;
inline constexpr int seq_cst = __ATOMIC_SEQ_CST;
}  // namespace atomic_order

/// A value of an integral or pointer type `T` read and written atomically, as `std::atomic<T>`.
template <typename T> class atomic_value {
public:
    constexpr atomic_value() noexcept : m_value() { }
    constexpr atomic_value(T value) noexcept : m_value(value) { }
    atomic_value(const atomic_value &) = delete;
    atomic_value &operator=(const atomic_value &) = delete;

    T load(int order = atomic_order::seq_cst) const noexcept { return __atomic_load_n(&m_value, order); }
    operator T() const noexcept { return load(); }
    /// load() and store() with a `std::memory_order`, whose values are the builtins' orders.
    template <typename Order, std::enable_if_t<std::is_enum_v<Order>, int> = 0> T load(Order order) const noexcept {
        return load(static_cast<int>(order));
    }
    template <typename Order, std::enable_if_t<std::is_enum_v<Order>, int> = 0>
    void store(T value, Order order) noexcept {
        store(value, static_cast<int>(order));
    }
    void store(T value, int order = atomic_order::seq_cst) noexcept { __atomic_store_n(&m_value, value, order); }
    atomic_value &operator=(T value) noexcept {
        store(value);
        return *this;
    }
    T exchange(T value, int order = atomic_order::seq_cst) noexcept {
        return __atomic_exchange_n(&m_value, value, order);
    }
    /// `failure` left out: `success`'s load part, as std::atomic derives it.
    bool compare_exchange_strong(T &expected, T desired, int success = atomic_order::seq_cst,
                                 int failure = -1) noexcept {
        return __atomic_compare_exchange_n(&m_value, &expected, desired, false, success,
                                           failure_order(success, failure));
    }
    bool compare_exchange_weak(T &expected, T desired, int success = atomic_order::seq_cst, int failure = -1) noexcept {
        return __atomic_compare_exchange_n(&m_value, &expected, desired, true, success,
                                           failure_order(success, failure));
    }
    T fetch_add(T delta, int order = atomic_order::seq_cst) noexcept {
        static_assert(std::is_integral_v<T>, "atomic_value: fetch_add of an integral value only");
        return __atomic_fetch_add(&m_value, delta, order);
    }
    T fetch_sub(T delta, int order = atomic_order::seq_cst) noexcept {
        static_assert(std::is_integral_v<T>, "atomic_value: fetch_sub of an integral value only");
        return __atomic_fetch_sub(&m_value, delta, order);
    }

private:
    static constexpr int failure_order(int success, int failure) noexcept {
        if (failure >= 0) return failure;
        return success == atomic_order::acq_rel   ? atomic_order::acquire
               : success == atomic_order::release ? atomic_order::relaxed
                                                  : success;
    }

    T m_value;
};

}  // namespace dlt

#else
#  include <atomic>

namespace dlt {
namespace atomic_order {
inline constexpr std::memory_order relaxed = std::memory_order_relaxed;
inline constexpr std::memory_order acquire = std::memory_order_acquire;
inline constexpr std::memory_order release = std::memory_order_release;
inline constexpr std::memory_order acq_rel = std::memory_order_acq_rel;
inline constexpr std::memory_order seq_cst = std::memory_order_seq_cst;
}  // namespace atomic_order
template <typename T> using atomic_value = std::atomic<T>;
}  // namespace dlt

#endif
