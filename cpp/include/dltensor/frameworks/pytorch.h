// dltensor/frameworks/pytorch.h: PyTorch: imports through `torch.Tensor`'s exchange API with PyTorch's own rules
// checked (pytorch_checks.h, pytorch_key_set.h), else `__dlpack__`; conversions with `.to()`; returns and `empty()`
// through the exchange API (its allocator; on CUDA the caching allocator), else `torch.from_dlpack`.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "../python/atomic_value.h"
#include "../tensor/dlpack.h"
#include "framework.h"

DLTENSOR_FRAMEWORK_TAG(pytorch, 2, "torch.Tensor")

namespace dlt {

inline constexpr int fw_pytorch = framework_tags::pytorch::value;

/// Whether PyTorch's negative and conjugate bits are read from the tensor's dispatch key set
/// (pytorch_key_set.h) rather than asked of `is_neg()` / `is_conj()`; one switch per extension module.
DLTENSOR_CORE atomic_value<bool> &torch_key_set_enabled() noexcept;
/// The DLPack C exchange API of `torch.Tensor` (pytorch_checks.h); NULL when PyTorch is not installed or
/// predates the API.
DLTENSOR_CORE const dlpack::ExchangeAPI *torch_exchange_api() noexcept;

}  // namespace dlt
