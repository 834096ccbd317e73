// dltensor/python/process_wide-inl.h: the bodies of the process-wide state (config.h: DLTENSOR_PROCESS_WIDE),
// compiled in every unit but a shared core's modules, which call the library's.
#pragma once

#include "interpreter.h"
#include "atomic_value.h"
#include "process_state.h"
#include "producer_error.h"
#include "../tensor/refusal.h"

namespace dlt {

namespace detail {

DLTENSOR_PROCESS_WIDE atomic_value<int> &sub_interpreters_in_use() noexcept {
    static atomic_value<int> n{0};  // constant-initialized: no guard, one load per call
    return n;
}

}  // namespace detail

DLTENSOR_PROCESS_WIDE atomic_value<bool> &fast_paths_enabled() noexcept {
    static atomic_value<bool> on{true};
    return on;
}

namespace detail {

DLTENSOR_PROCESS_WIDE unsigned new_state_index(uint64_t key) noexcept {
    static atomic_value<uint64_t> keys[interpreter_states::capacity] = {};
    for (unsigned i = 0; i < interpreter_states::capacity; ++i) {
        uint64_t k = keys[i].load(atomic_order::acquire);
        if (k == 0) {
            uint64_t expected = 0;
            if (keys[i].compare_exchange_strong(expected, key, atomic_order::acq_rel)) return i;
            k = expected;  // taken meanwhile by another module's kind (or the same kind)
        }
        if (k == key) return i;
    }
    return interpreter_states::capacity;
}

}  // namespace detail

// declared in the struct; a shared core's modules call the library's
DLTENSOR_PROCESS_WIDE producer_error_state &producer_error_state::of_this_thread() noexcept {
    static thread_local producer_error_state s;
    return s;
}

DLTENSOR_PROCESS_WIDE refusal &last_refusal() noexcept {
    static thread_local refusal record;
    return record;
}

}  // namespace dlt
