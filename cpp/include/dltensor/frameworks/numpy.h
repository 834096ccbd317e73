// dltensor/frameworks/numpy.h: NumPy: exact ndarrays and ml_dtypes' bfloat16/float8 arrays read from NumPy's
// structures; conversions, returns and `empty()` through its C API where it can describe the tensor, else its Python
// API. Also the CPU workhorse of other frameworks (convert_through_numpy(), numpy_empty_cpu()).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "framework.h"

DLTENSOR_FRAMEWORK_TAG(numpy, 1, "numpy.ndarray")

namespace dlt {

inline constexpr int fw_numpy = framework_tags::numpy::value;

/// NumPy's stub type names the dtype: `numpy.typing.NDArray[numpy.float32]`, and `typing.Any` for a dtype
/// NumPy has no scalar type of (bfloat16, float8, vectors) or none annotated.
template <> struct stub_type_of<framework_tags::numpy> {
    static constexpr const char *of(dlpack::DataType d) noexcept {
        if (d.lanes != 1) return "numpy.typing.NDArray[typing.Any]";
        const int key = d.code * 1000 + d.bits;
        switch (key) {
            case dlpack::bool_ * 1000 + 8: return "numpy.typing.NDArray[numpy.bool_]";
            case dlpack::int_ * 1000 + 8: return "numpy.typing.NDArray[numpy.int8]";
            case dlpack::int_ * 1000 + 16: return "numpy.typing.NDArray[numpy.int16]";
            case dlpack::int_ * 1000 + 32: return "numpy.typing.NDArray[numpy.int32]";
            case dlpack::int_ * 1000 + 64: return "numpy.typing.NDArray[numpy.int64]";
            case dlpack::uint_ * 1000 + 8: return "numpy.typing.NDArray[numpy.uint8]";
            case dlpack::uint_ * 1000 + 16: return "numpy.typing.NDArray[numpy.uint16]";
            case dlpack::uint_ * 1000 + 32: return "numpy.typing.NDArray[numpy.uint32]";
            case dlpack::uint_ * 1000 + 64: return "numpy.typing.NDArray[numpy.uint64]";
            case dlpack::float_ * 1000 + 16: return "numpy.typing.NDArray[numpy.float16]";
            case dlpack::float_ * 1000 + 32: return "numpy.typing.NDArray[numpy.float32]";
            case dlpack::float_ * 1000 + 64: return "numpy.typing.NDArray[numpy.float64]";
            case dlpack::complex_ * 1000 + 64: return "numpy.typing.NDArray[numpy.complex64]";
            case dlpack::complex_ * 1000 + 128: return "numpy.typing.NDArray[numpy.complex128]";
            default: return "numpy.typing.NDArray[typing.Any]";
        }
    }
};

namespace frameworks {
namespace numpy {
/// `empty()` of a `py::numpy` tensor (below), which registry.h's allocate_by_framework() calls directly.
DLTENSOR_CORE int empty(dlpack::DataType dtype, size_t ndim, dlpack::Device device, char order, bool read_only,
                        imported &out) noexcept;
}
}  // namespace frameworks::numpy

}  // namespace dlt
