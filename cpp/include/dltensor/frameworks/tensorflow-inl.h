// dltensor/frameworks/tensorflow-inl.h: the bodies of tensorflow.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "tensorflow.h"

#include <cstdint>
#include <cstring>
#include "../core/capsule_import-inl.h"
#include "../python/handle.h"
#include "numpy-inl.h"

namespace dlt {

/// TensorFlow: can `__dlpack__` be called on this tensor? TensorFlow aborts the process (a failed CHECK)
/// when asked to export a string, variant or resource tensor, so those are refused before the call.
inline bool tensorflow_exportable(PyObject *tensor) noexcept {
    py_ref dtype = attribute(tensor, "dtype");
    py_ref name = attribute(dtype.get(), "name");
    const char *s = name && PyUnicode_Check(name.get()) ? PyUnicode_AsUTF8(name.get()) : nullptr;
    const bool ok =
        s && std::strcmp(s, "string") != 0 && std::strcmp(s, "variant") != 0 && std::strcmp(s, "resource") != 0;
    PyErr_Clear();
    return ok;
}

namespace frameworks {
namespace tensorflow {

inline constexpr const char *packages[] = {"tensorflow", nullptr};

/// `__dlpack__`, for the tensors it can export (else the buffer protocol is tried).
DLTENSOR_CORE mismatch export_capsule(PyObject *src, const producer_info &, const requirements &, PyObject *method,
                                      py_ref &capsule, dlpack::DataType &) noexcept {
    if (tensorflow_exportable(src)) capsule = detail::call_dlpack(src, method);
    return mismatch::none;
}

/// tf.cast keeps TensorFlow's C order: an F-order copy of a CPU tensor comes from NumPy.
DLTENSOR_CORE py_ref convert(PyObject *src, const conversion_request &c) noexcept {
    if (!c.name) return py_ref();
    if (c.order == 'F' && c.on_cpu) return convert_through_numpy(src, c);
    py_ref tf = import_module("tensorflow");
    PyObject *args[] = {src, c.dtype()};
    if (!args[1]) return py_ref();
    return call_method(tf.get(), "cast", args, 2);
}

/// TensorFlow's float8 dtypes (TensorFlow 2.21): its DLPack import has none, its NumPy import (ml_dtypes)
/// these. Any other float8 format: false with a TypeError naming it.
inline bool has_float8(uint8_t code) noexcept {
    switch (code) {
        case dlpack::float8_e4m3b11fnuz:
        case dlpack::float8_e4m3fn:
        case dlpack::float8_e4m3fnuz:
        case dlpack::float8_e5m2:
        case dlpack::float8_e5m2fnuz: return true;
        default:
            PyErr_Format(PyExc_TypeError,
                         "dltensor: TensorFlow has no %s dtype: a tensor of it cannot become a "
                         "tensorflow.Tensor",
                         small_float_name(code));
            return false;
    }
}

/// TensorFlow adopts only C-ordered CPU memory, aborts in the first kernel needing 64-byte alignment of adopted memory,
/// and its DLPack import has no float8: other CPU tensors, float8 (CPU only) and copies reach it as a C-ordered NumPy
/// copy (`tensorflow.convert_to_tensor`, which copies; float8 as ml_dtypes' dtypes).
DLTENSOR_CORE PyObject *to_python(tensor_handle *h, bool copy) noexcept {
    const dlpack::Tensor &t = h->tensor();
    const bool cpu = t.device.device_type == dlpack::cpu;
    if (is_float8_code(t.dtype.code)) {
        if (!has_float8(t.dtype.code)) return nullptr;
        if (!cpu) {
            PyErr_SetString(PyExc_TypeError, "dltensor: TensorFlow's DLPack import has no float8: a float8 tensor "
                                             "becomes a tensorflow.Tensor only from the CPU (through NumPy)");
            return nullptr;
        }
        copy = true;
    }
    if (copy || (cpu && (!has_order(t, 'C') || ((uintptr_t) t.data + t.byte_offset) % 64 != 0))) {
        const py_ref array(export_tensor(h, fw_numpy, true));
        return array ? call_function("tensorflow", "convert_to_tensor", array.get()).release() : nullptr;
    }
    const py_ref cap(make_capsule(h, false));
    return cap ? call_function("tensorflow.experimental.dlpack", "from_dlpack", cap.get()).release() : nullptr;
}

}  // namespace tensorflow
}  // namespace frameworks

inline constexpr framework tensorflow_framework = {
    fw_tensorflow,
    "TensorFlow",
    frameworks::tensorflow::packages,
    "tensorflow.Tensor",
    true,
    /*immutable*/ true,
    /*copies_read_only*/ false,
    /*reason*/ nullptr,
    /*ignores_byte_offset*/ true,
    /*deleter_not_reentrant*/ false,
    /*classify*/ nullptr,
    /*read*/ nullptr,
    /*check_view*/ nullptr,
    frameworks::tensorflow::export_capsule,
    /*written*/ nullptr,
    frameworks::tensorflow::convert,
    frameworks::tensorflow::to_python,
    /*empty*/ nullptr,
};

}  // namespace dlt
