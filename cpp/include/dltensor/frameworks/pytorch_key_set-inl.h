// dltensor/frameworks/pytorch_key_set-inl.h: the bodies of pytorch_key_set.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "pytorch_key_set.h"
#include "../python/process_state-inl.h"

namespace dlt {

DLTENSOR_CORE std::atomic<bool> &torch_key_set_enabled() noexcept {
    static std::atomic<bool> on{[] {
        const char *v = std::getenv("DLTENSOR_TORCH_KEY_SET");
        return !(v && std::strcmp(v, "0") == 0);
    }()};
    return on;
}

// declared in the class
DLTENSOR_CORE const torch_key_set &torch_key_set::get(const dlpack::ExchangeAPI *(*api)()) noexcept {
    static const torch_key_set unknown;
    static std::atomic<const torch_key_set *> found{nullptr};
    static std::atomic<bool> started{false};
    const torch_key_set *k = found.load(std::memory_order_acquire);
    if (k) return *k;
    // One thread calibrates (running Python, which may switch threads); the others use the queries meanwhile.
    if (started.exchange(true, std::memory_order_acq_rel)) return unknown;
    const torch_key_set *fresh = new (std::nothrow) torch_key_set(calibrate(api()));
    found.store(fresh ? fresh : &unknown, std::memory_order_release);
    return fresh ? *fresh : unknown;
}

}  // namespace dlt
