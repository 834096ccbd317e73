// dltensor/tensor/refusal-inl.h: the bodies of refusal.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "refusal.h"

namespace dlt {

DLTENSOR_CORE DLTENSOR_CORE_COLD std::string explain(const refusal &r) {
    using namespace detail;
    const requirements &q = r.required;
    const std::string type = r.type_name[0] ? r.type_name : "object";
    if (r.sub_interpreter) return "this sub-interpreter's dltensor state could not be made (out of memory)";
    switch (r.why) {
        case mismatch::none: return "accepted";
        case mismatch::read_only:
            if (!r.converted && r.immutable_framework)
                return "a " + type + " for a writable parameter: " + r.immutable_framework +
                       " arrays are immutable and cannot be written in place; pass a writable array "
                       "(e.g. a NumPy array), or declare the dtype const (or add py::ro) if the "
                       "function only reads it";
            return "read-only source (" + type + (r.converted ? ", whose conversion is a copy" : "") +
                   ") for a writable parameter: declare the dtype const (or add py::ro) if the function "
                   "only reads it";
        case mismatch::device:
            return "device " + std::string(dlpack::device_name(r.device_type)) + ", expected " +
                   dlpack::device_name(q.device_type);
        case mismatch::shape:
            if (r.ndim != q.ndim)
                return "ndim " + std::to_string(r.ndim) + ", expected " + std::to_string(q.ndim) + " (shape " +
                       tuple_text(r.shape, r.ndim) + ")";
            return "shape " + tuple_text(r.shape, r.ndim) + ", expected " + required_shape_text(q);
        case mismatch::dtype:
            if (!r.tensor_known)  // a buffer whose byte order is not the machine's (buffer_import.h)
                return "dtype differs from " + dtype_text(q.dtype) +
                       (r.detail[0] ? std::string(": ") + r.detail : std::string());
            if (!q.read_only)
                return "dtype " + dtype_text(r.dtype) + ", expected " + dtype_text(q.dtype) +
                       "; a writable parameter never converts (" + dtype_text(r.dtype) + " -> " + dtype_text(q.dtype) +
                       " would be a copy): declare it const to allow the conversion";
            if (!r.convert)
                return "dtype " + dtype_text(r.dtype) + ", expected " + dtype_text(q.dtype) + no_conversion_text;
            if (r.dtype.code == dlpack::complex_ && q.dtype.code != dlpack::complex_)
                return "dtype " + dtype_text(r.dtype) + ", expected " + dtype_text(q.dtype) +
                       " (complex -> real would drop the imaginary part; never converted)";
            if (std::strcmp(r.type_name, "PyCapsule") == 0)
                return "dtype " + dtype_text(r.dtype) + ", expected " + dtype_text(q.dtype) +
                       " (a raw DLPack capsule is never converted: there is no producer to ask)";
            return "dtype " + dtype_text(r.dtype) + ", expected " + dtype_text(q.dtype) +
                   " (the producer could not convert it)";
        case mismatch::order: {
            const char *want = q.order == 'C' ? "C-contiguous" : q.order == 'F' ? "F-contiguous" : "contiguous";
            // No tensor recorded: a buffer whose strides are no whole elements (buffer_import.h).
            std::string s = !r.tensor_known ? "order: " + std::string(r.detail)
                                            : "order: strides " + strides_text(r) + " are not " + want;
            if (!q.read_only) return s + "; a writable parameter never converts (a contiguous copy)";
            if (!r.convert) return s + no_conversion_text;
            return s;
        }
        case mismatch::lazy_view:
            return r.framework_reason ? r.framework_reason
                                      : "a view whose memory does not hold its values (negative or conjugate)";
        case mismatch::misaligned: {
            std::string s = "the first element's address is not a multiple of " +
                            std::to_string((unsigned) q.alignment) + " bytes (misaligned for " + dtype_text(q.dtype) +
                            ")";
            if (!q.read_only) return s + "; a writable parameter never gets an aligned copy";
            if (!r.convert) return s + no_conversion_text;
            return s;
        }
        case mismatch::overlapping:
            return "elements that share memory (strides " + strides_text(r) + " over shape " +
                   tuple_text(r.shape, r.ndim) +
                   ") for a writable parameter: a write through one element would "
                   "change others (in-place operations refuse such memory too); pass a contiguous copy";
        case mismatch::copied:
            return "a copy its producer made for this call (DLPack's IS_COPIED flag) for a writable parameter: "
                   "the writes would be lost; pass memory the caller owns";
        case mismatch::requires_grad:
            return r.framework_reason ? r.framework_reason
                                      : "a tensor that requires grad for a writable parameter while grad mode is on";
        case mismatch::inference:
            return r.framework_reason ? r.framework_reason : "an inference tensor for a writable parameter";
        case mismatch::framework:
            return "a " + type + " for a parameter annotated with the framework " +
                   (r.detail[0] ? std::string(r.detail) : std::string("of another type")) +
                   ": without conversion (.noconvert(), or the first pass of overload resolution) only that "
                   "framework's tensors bind";
        case mismatch::invalid:
            if (r.not_a_tensor) {
                if (q.read_only && r.convert && r.asarray_failed)
                    return type + " is not a tensor, and numpy.asarray() could not convert it" +
                           (r.detail[0] ? std::string(" (") + r.detail + ")" : std::string());
                if (q.read_only && r.convert)
                    return type + " is not a tensor: it has no __dlpack__ and no buffer, and is not what is read "
                                  "through numpy.asarray() (a list, tuple, number or object with __array__)";
                if (!q.read_only)
                    return type + " is not a tensor (a writable parameter takes no lists or scalars: their "
                                  "conversion would be a copy that C++ writes are lost in)";
                return type + " is not a tensor" + no_conversion_text;
            }
            if (r.converted)
                return type + ": numpy.asarray() made an array with no DLPack dtype of it (strings, objects, "
                              "ragged nesting)";
            if (r.unsupported.code != 0 || r.unsupported.bits != 0 || r.unsupported.lanes != 0)
                return type + ": " + unsupported_dtype_text(r.unsupported);
            if (r.detail[0]) return type + ": not a usable DLPack tensor; its producer said: " + r.detail;
            if (r.malformed) return type + ": not a usable DLPack tensor: " + r.malformed;
            return type + ": not a usable DLPack tensor (malformed, already consumed, or an unsupported "
                          "dtype or device)";
    }
    return "refused";
}

}  // namespace dlt
