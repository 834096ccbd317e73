// bench/caller_framework.h: answering in the caller's framework, bound into both bench modules
// (bench/run.py CALLER_FRAMEWORK). `Result` is a tensor type without a framework annotation
// (`py::dltensor<float, py::ndim<1>>`), `Arg` the read-only argument (`py::dltensor<const float, py::ndim<1>>`).
// `dltensor_empty_like_fill(x)` answers in x's framework (empty_like); `dltensor_tensor_fill(x)` answers with a
// dltensor.Tensor (empty()), which the caller converts with its framework's from_dlpack: what a library
// without empty_like makes every caller write.
#pragma once

#include <cstddef>

template <typename Result, typename Arg, typename Module> void def_caller_framework(Module &m) {
    m.def("dltensor_empty_like_fill", [](Arg x) {
        Result out = Result::empty_like(x, {x.shape(0)});
        for (size_t i = 0; i < x.shape(0); ++i) out(i) = 1.f;
        return out;
    });
    m.def("dltensor_tensor_fill", [](Arg x) {
        Result out = Result::empty({x.shape(0)});
        for (size_t i = 0; i < x.shape(0); ++i) out(i) = 1.f;
        return out;
    });
}
