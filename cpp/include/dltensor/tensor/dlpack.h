// dltensor/tensor/dlpack.h: dltensor's own declarations of the DLPack 1.x ABI, in `dlt::dlpack` (never colliding
// with a user's <dlpack/dlpack.h>); layouts match `DLTensor` and `DLManagedTensor(Versioned)` field for field.
#pragma once

#include <cstdint>

namespace dlt {
namespace dlpack {

/// The DLPack ABI major version dltensor reads; a versioned tensor with another major is rejected.
inline constexpr uint32_t major_version = 1;
/// The newest DLPack minor version dltensor knows; sent as `__dlpack__(max_version=(1, minor))`.
inline constexpr uint32_t minor_version = 3;
/// The largest `ndim` dltensor accepts (NumPy's limit); anything above is treated as malformed.
inline constexpr int32_t max_ndim = 64;

/// `DLPackVersion`: the ABI version of a versioned managed tensor.
struct Version {
    uint32_t major;  ///< Incompatible ABI changes bump this; only `major_version` is read.
    uint32_t minor;  ///< Compatible additions bump this; any value is accepted.
};

/// `DLDeviceType`: where the memory lives. Numbers are DLPack's; gaps (5, 6) are unassigned there.
enum device_code : int32_t {
    cpu = 1,            ///< Host memory.
    cuda = 2,           ///< CUDA device memory.
    cuda_host = 3,      ///< Pinned host memory allocated through CUDA.
    opencl = 4,         ///< OpenCL device memory.
    vulkan = 7,         ///< Vulkan buffer.
    metal = 8,          ///< Metal buffer (Apple GPUs).
    vpi = 9,            ///< Verilog simulator buffer.
    rocm = 10,          ///< ROCm/HIP device memory.
    rocm_host = 11,     ///< Pinned host memory allocated through ROCm.
    ext_dev = 12,       ///< Reserved for extension devices.
    cuda_managed = 13,  ///< CUDA unified (managed) memory.
    oneapi = 14,        ///< oneAPI unified shared memory.
    webgpu = 15,        ///< WebGPU buffer.
    hexagon = 16,       ///< Qualcomm Hexagon DSP memory.
    maia = 17,          ///< Microsoft MAIA device memory.
    trn = 18,           ///< AWS Trainium device memory.
};

/// True for a device type number that DLPack assigns (1..18 without 5 and 6).
constexpr bool is_known_device_type(int32_t t) noexcept { return t >= cpu && t <= trn && t != 5 && t != 6; }

/// A device type's name, as DLPack's enum spells it without `kDL` ("cpu", "cuda", ...).
constexpr const char *device_name(int32_t type) noexcept {
    switch (type) {
        case cpu: return "cpu";
        case cuda: return "cuda";
        case cuda_host: return "cuda_host";
        case opencl: return "opencl";
        case vulkan: return "vulkan";
        case metal: return "metal";
        case vpi: return "vpi";
        case rocm: return "rocm";
        case rocm_host: return "rocm_host";
        case ext_dev: return "ext_dev";
        case cuda_managed: return "cuda_managed";
        case oneapi: return "oneapi";
        case webgpu: return "webgpu";
        case hexagon: return "hexagon";
        case maia: return "maia";
        case trn: return "trn";
        default: return "unknown device";
    }
}

/// `DLDevice`: a device type and the index of the device within that type.
struct Device {
    int32_t device_type;  ///< A `device_code` number.
    int32_t device_id;    ///< Index of the device (0 for the CPU).
};

/// `DLDataTypeCode`: the kind of scalar. The float8 codes (7..14, DLPack 1.1) are accepted with 8 bits; the
/// sub-byte float6/float4 codes (15..17) are named in refusals and rejected.
enum dtype_code : uint8_t {
    int_ = 0,                ///< Signed two's-complement integer.
    uint_ = 1,               ///< Unsigned integer.
    float_ = 2,              ///< IEEE 754 binary floating point.
    opaque_ = 3,             ///< Opaque handle; never accepted.
    bfloat_ = 4,             ///< bfloat16: the upper 16 bits of a float32.
    complex_ = 5,            ///< Two floats (real, imaginary); `bits` counts both.
    bool_ = 6,               ///< Boolean stored in `bits` (8 in practice) per element.
    float8_e3m4 = 7,         ///< `kDLFloat8_e3m4`
    float8_e4m3 = 8,         ///< `kDLFloat8_e4m3`
    float8_e4m3b11fnuz = 9,  ///< `kDLFloat8_e4m3b11fnuz`
    float8_e4m3fn = 10,      ///< `kDLFloat8_e4m3fn`
    float8_e4m3fnuz = 11,    ///< `kDLFloat8_e4m3fnuz`
    float8_e5m2 = 12,        ///< `kDLFloat8_e5m2`
    float8_e5m2fnuz = 13,    ///< `kDLFloat8_e5m2fnuz`
    float8_e8m0fnu = 14,     ///< `kDLFloat8_e8m0fnu`
    float6_e2m3fn = 15,      ///< `kDLFloat6_e2m3fn` (6 bits: sub-byte, rejected)
    float6_e3m2fn = 16,      ///< `kDLFloat6_e3m2fn` (6 bits: sub-byte, rejected)
    float4_e2m1fn = 17,      ///< `kDLFloat4_e2m1fn` (4 bits: sub-byte, rejected)
};

/// `DLDataType`: scalar kind, width in bits, and vector lanes (dltensor accepts only `lanes == 1`).
struct DataType {
    uint8_t code;    ///< A `dtype_code`.
    uint8_t bits;    ///< Width of one lane in bits (complex: both halves together).
    uint16_t lanes;  ///< Vector lanes per element; 1 for scalars.

    constexpr bool operator==(const DataType &o) const noexcept {
        return code == o.code && bits == o.bits && lanes == o.lanes;
    }
    constexpr bool operator!=(const DataType &o) const noexcept { return !(*this == o); }
};

/// `DLTensor`: a strided view of memory. Shape and strides are borrowed from the managed tensor.
struct Tensor {
    void *data;            ///< Base pointer; the first element is at `data + byte_offset`. NULL only when empty.
    Device device;         ///< Where `data` lives.
    int32_t ndim;          ///< Number of dimensions, 0 for a scalar.
    DataType dtype;        ///< Element type.
    int64_t *shape;        ///< `ndim` extents, each >= 0.
    int64_t *strides;      ///< `ndim` strides in elements (may be 0 or negative); NULL means C order.
    uint64_t byte_offset;  ///< Bytes from `data` to the first element.
};

/// `dst = src`, field by field: compilers optimizing for size (nanobind's default, `-Os`) copy a whole
/// 48-byte structure with `rep movs`, whose start-up costs more than the copy. For hot paths.
inline void copy_view(Tensor &dst, const Tensor &src) noexcept {
    dst.data = src.data;
    dst.device = src.device;
    dst.ndim = src.ndim;
    dst.dtype = src.dtype;
    dst.shape = src.shape;
    dst.strides = src.strides;
    dst.byte_offset = src.byte_offset;
}

/// `DLManagedTensor` (DLPack < 1.0, capsule name "dltensor"): a tensor with its owner's deleter.
struct ManagedTensor {
    Tensor dl_tensor;                      ///< The view.
    void *manager_ctx;                     ///< The producer's bookkeeping; opaque.
    void (*deleter)(ManagedTensor *self);  ///< Frees the tensor; called exactly once by the consumer. May be NULL.
};

/// `DLManagedTensorVersioned` (DLPack >= 1.0, capsule name "dltensor_versioned").
struct ManagedTensorVersioned {
    Version version;                                ///< ABI version of this struct.
    void *manager_ctx;                              ///< The producer's bookkeeping; opaque.
    void (*deleter)(ManagedTensorVersioned *self);  ///< Frees the tensor; called exactly once. May be NULL.
    uint64_t flags;                                 ///< `flag_*` bits below.
    Tensor dl_tensor;                               ///< The view.
};

/// `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write through this tensor.
inline constexpr uint64_t flag_read_only = 1ull << 0;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`: the producer made a copy for this export.
inline constexpr uint64_t flag_is_copied = 1ull << 1;
/// `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`: sub-byte elements are padded to one byte each.
inline constexpr uint64_t flag_is_subbyte_type_padded = 1ull << 2;

/// Capsule names of the DLPack Python protocol: a fresh capsule, and one a consumer has taken.
inline constexpr const char *capsule_name = "dltensor";
inline constexpr const char *capsule_name_versioned = "dltensor_versioned";
inline constexpr const char *used_capsule_name = "used_dltensor";
inline constexpr const char *used_capsule_name_versioned = "used_dltensor_versioned";

// ---------------------------------------------------------------------------------------------------
// The DLPack C exchange API (DLPack 1.3): a table of C functions that a tensor type publishes as
// `type(t).__dlpack_c_exchange_api__`, a capsule named "dlpack_exchange_api" (PyTorch >= 2.10).

/// Capsule name of `__dlpack_c_exchange_api__`.
inline constexpr const char *exchange_api_capsule_name = "dlpack_exchange_api";

/// `DLPackExchangeAPIHeader`: stable across versions. A consumer checks `version.major` and may walk
/// `prev_api` to an older table it supports.
struct ExchangeAPIHeader {
    Version version;              ///< DLPack version of the table that follows this header.
    ExchangeAPIHeader *prev_api;  ///< An older version of the same table, or NULL.
};

/// `DLPackManagedTensorAllocator`: allocates a tensor like `prototype` (dtype, ndim, shape, device are
/// read) with the framework's allocator. Returns 0, or -1 after calling `set_error` exactly once.
using ManagedTensorAllocator = int (*)(Tensor *prototype, ManagedTensorVersioned **out, void *error_ctx,
                                       void (*set_error)(void *error_ctx, const char *kind, const char *message));
/// `DLPackManagedTensorFromPyObjectNoSync`: an owning export of `py_object`; no stream synchronization.
/// Returns 0, or -1 with a Python error set.
using ManagedTensorFromPyObjectNoSync = int (*)(void *py_object, ManagedTensorVersioned **out);
/// `DLPackManagedTensorToPyObjectNoSync`: wraps (and takes ownership of) `tensor` in the framework's
/// Python tensor type. Returns 0, or -1 with a Python error set (the tensor is then not taken).
using ManagedTensorToPyObjectNoSync = int (*)(ManagedTensorVersioned *tensor, void **out_py_object);
/// `DLPackDLTensorFromPyObjectNoSync`: a non-owning view, valid while the object is alive and unchanged.
/// Returns 0, or -1 with a Python error set.
using DLTensorFromPyObjectNoSync = int (*)(void *py_object, Tensor *out);
/// `DLPackCurrentWorkStream`: the framework's current stream for a device (NULL for the CPU).
/// Returns 0, or -1 with a Python error set.
using CurrentWorkStream = int (*)(int32_t device_type, int32_t device_id, void **out_current_stream);

/// `DLPackExchangeAPI` (major version 1): the function table behind the header. Lives for the process.
struct ExchangeAPI {
    ExchangeAPIHeader header;                                               ///< Version and older tables.
    ManagedTensorAllocator managed_tensor_allocator;                        ///< Never NULL.
    ManagedTensorFromPyObjectNoSync managed_tensor_from_py_object_no_sync;  ///< Never NULL.
    ManagedTensorToPyObjectNoSync managed_tensor_to_py_object_no_sync;      ///< Never NULL.
    DLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;             ///< May be NULL.
    CurrentWorkStream current_work_stream;                                  ///< Never NULL.
};

}  // namespace dlpack
}  // namespace dlt
