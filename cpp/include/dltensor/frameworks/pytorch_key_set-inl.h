// dltensor/frameworks/pytorch_key_set-inl.h: the bodies of pytorch_key_set.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "pytorch_key_set.h"
#include "../python/atomic_value.h"
#include "../python/process_state-inl.h"

namespace dlt {

DLTENSOR_CORE atomic_value<bool> &torch_key_set_enabled() noexcept {
    static atomic_value<bool> on{[] {
        const char *v = std::getenv("DLTENSOR_TORCH_KEY_SET");
        return !(v && std::strcmp(v, "0") == 0);
    }()};
    return on;
}

// declared in the class
DLTENSOR_CORE const torch_key_set &torch_key_set::get(const dlpack::ExchangeAPI *(*api)()) noexcept {
    static const torch_key_set unknown;
    static atomic_value<const torch_key_set *> found{nullptr};
    static atomic_value<bool> started{false};
    const torch_key_set *k = found.load(atomic_order::acquire);
    if (k) return *k;
    // One thread calibrates (running Python, which may switch threads); the others use the queries meanwhile.
    if (started.exchange(true, atomic_order::acq_rel)) return unknown;
    const torch_key_set *fresh = new (std::nothrow) torch_key_set(calibrate(api()));
    found.store(fresh ? fresh : &unknown, atomic_order::release);
    return fresh ? *fresh : unknown;
}

}  // namespace dlt
