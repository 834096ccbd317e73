// bench/copy_stages.h: copy_of's stages, bound into both bench modules (bench/callgrind.py --copy-of).
// Each function does one stage more than the one before it and returns a float, so that differences of
// their instruction counts price each stage: the body's vector; then an empty `Out` allocated (and
// dropped); then `Out::copy_of` of the vector (dropped). The idiom itself, returned, is `dltensor_copy_of`.
#pragma once

#include <cstddef>
#include <vector>

template <typename Out, typename Module> void def_copy_stages(Module &m) {
    m.def("copy_stage_body", [](size_t n) {  // the body's own vector, as in *_copy_of
        std::vector<float> v(n, 1.f);
        return v[0];
    });
    m.def("dltensor_copy_stage_alloc", [](size_t n) {
        std::vector<float> v(n, 1.f);
        Out out = Out::empty({n});
        return v[0] + (float) out.size();
    });
    m.def("dltensor_copy_stage_copy", [](size_t n) {
        std::vector<float> v(n, 1.f);
        Out out = Out::copy_of(v.data(), {n});
        return v[0] + (float) out.size();
    });
}
