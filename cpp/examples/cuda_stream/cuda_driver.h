// The CUDA work of the cuda_stream examples, through the CUDA driver library loaded at run time, so that
// the examples build without a CUDA toolkit. A real extension compiles its kernel with nvcc and launches
// it the same way, on the same stream: `kernel<<<grid, block, 0, (cudaStream_t) stream>>>(...)`.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace cuda_driver {

using result = int;                 // CUresult; 0 is CUDA_SUCCESS
using device_ptr = unsigned long long;  // CUdeviceptr
constexpr int pointer_attribute_context = 1;  // CU_POINTER_ATTRIBUTE_CONTEXT

/// The five driver entry points the example needs, resolved once from libcuda.
struct api {
    result (*init)(unsigned int) = nullptr;
    result (*pointer_get_attribute)(void *, int, device_ptr) = nullptr;
    result (*ctx_push)(void *) = nullptr;
    result (*ctx_pop)(void **) = nullptr;
    result (*memset_d32_async)(device_ptr, unsigned int, size_t, void *) = nullptr;
};

inline const api &load() {
    static const api table = [] {
        api a;
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return a;
        a.init = (decltype(a.init)) dlsym(lib, "cuInit");
        a.pointer_get_attribute = (decltype(a.pointer_get_attribute)) dlsym(lib, "cuPointerGetAttribute");
        a.ctx_push = (decltype(a.ctx_push)) dlsym(lib, "cuCtxPushCurrent_v2");
        a.ctx_pop = (decltype(a.ctx_pop)) dlsym(lib, "cuCtxPopCurrent_v2");
        a.memset_d32_async = (decltype(a.memset_d32_async)) dlsym(lib, "cuMemsetD32Async");
        return a;
    }();
    if (!table.init || !table.pointer_get_attribute || !table.ctx_push || !table.ctx_pop || !table.memset_d32_async)
        throw std::runtime_error("cuda_driver: libcuda.so.1 (the CUDA driver) is not available");
    return table;
}

inline void check(result r, const char *what) {
    if (r != 0) throw std::runtime_error(std::string("cuda_driver: ") + what + " failed with CUresult " + std::to_string(r));
}

/// Enqueues "set `count` floats at `data` to `value`" on `stream` (NULL: the legacy default stream), in
/// the context that owns `data`. Returns at once; the work runs in stream order.
inline void fill_async(float *data, size_t count, float value, void *stream) {
    const api &cu = load();
    check(cu.init(0), "cuInit");
    void *ctx = nullptr;
    check(cu.pointer_get_attribute(&ctx, pointer_attribute_context, (device_ptr) (uintptr_t) data),
          "cuPointerGetAttribute");
    check(cu.ctx_push(ctx), "cuCtxPushCurrent");
    unsigned int bits;
    std::memcpy(&bits, &value, sizeof bits);
    result r = cu.memset_d32_async((device_ptr) (uintptr_t) data, bits, count, stream);
    void *popped = nullptr;
    cu.ctx_pop(&popped);
    check(r, "cuMemsetD32Async");
}

} // namespace cuda_driver
