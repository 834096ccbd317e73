// dltensor/core/buffer_import.h: buffer-protocol objects in (bytes, array.array, memoryview, and NumPy arrays
// that DLPack cannot describe, such as byte-swapped ones): the struct-module format read as a DLPack
// dtype, the export held by an owner capsule. CPU memory only.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstdint>
#include <cstdio>
#include <utility>

#include "../tensor/config.h"
#include "../tensor/dlpack.h"
#include "../tensor/dtypes.h"
#include "import_result.h"
#include "../python/keep_alive.h"
#include "../python/py_ref.h"
#include "../tensor/refusal.h"
#include "../tensor/requirements.h"

namespace dlt {
namespace detail {

/// A buffer-protocol export turned into a DLPack view: the Py_buffer plus strides in elements.
struct buffer_owner {
    Py_buffer view;
    int64_t shape[dlpack::max_ndim];
    int64_t strides[dlpack::max_ndim];
};

inline constexpr char buffer_owner_name[] = "dltensor.buffer_owner";

/// Ends a taken buffer_owner (keep_alive.h: the owner capsule's `End`): the export released, then its memory.
inline void release_buffer(buffer_owner *b) noexcept {
    PyBuffer_Release(&b->view);
    PyMem_Free(b);
}

/// Maps a struct-module format string ("f", "<i", "Zd", ...) of the given item size to a DLPack dtype.
/// Returns `bits == 0` for a format with no DLPack dtype. `native` tells whether the byte order is the
/// machine's; DLPack has no byte order, so a swapped buffer is only usable through a conversion.
inline dlpack::DataType dtype_from_format(const char *fmt, Py_ssize_t itemsize, bool &native) noexcept {
    dlpack::DataType none{0, 0, 0};
    native = true;
    if (!fmt) fmt = "B";  // PEP 3118: a NULL format means unsigned bytes
    if (*fmt == '@' || *fmt == '=') ++fmt;
    else if (*fmt == '<' || *fmt == '>' || *fmt == '!') {
        const uint16_t probe = 1;
        bool little = *reinterpret_cast<const uint8_t *>(&probe) == 1;
        native = (*fmt == '<') == little || itemsize == 1;
        ++fmt;
    }
    uint8_t code;
    bool complex = false;
    if (*fmt == 'Z') {
        complex = true;
        ++fmt;
    }
    switch (*fmt) {
        case 'b':
        case 'h':
        case 'i':
        case 'l':
        case 'q':
        case 'n': code = dlpack::int_; break;
        case 'B':
        case 'H':
        case 'I':
        case 'L':
        case 'Q':
        case 'N': code = dlpack::uint_; break;
        case 'e':
        case 'f':
        case 'd': code = complex ? (uint8_t) dlpack::complex_ : (uint8_t) dlpack::float_; break;
        case '?': code = dlpack::bool_; break;
        default: return none;
    }
    if (fmt[1] != '\0' || (complex && code != dlpack::complex_)) return none;
    if (itemsize <= 0 || itemsize > 16) return none;
    dlpack::DataType t{code, (uint8_t) (itemsize * 8), 1};
    return is_supported_dtype(t) ? t : none;
}

/// A `buffer_owner` being filled: released (the buffer too, once taken) unless handed to a capsule.
class pending_buffer {
public:
    pending_buffer() noexcept : b_(static_cast<buffer_owner *>(PyMem_Malloc(sizeof(buffer_owner)))) { }
    ~pending_buffer() {
        if (!b_) return;
        if (taken_) PyBuffer_Release(&b_->view);
        PyMem_Free(b_);
    }
    pending_buffer(const pending_buffer &) = delete;
    pending_buffer &operator=(const pending_buffer &) = delete;

    buffer_owner *get() const noexcept { return b_; }
    /// `PyObject_GetBuffer(src, ...)` into the owner; false (no error set) when `src` refuses.
    bool take(PyObject *src) noexcept {
        taken_ = PyObject_GetBuffer(src, &b_->view, PyBUF_RECORDS_RO) == 0;
        if (!taken_) PyErr_Clear();
        return taken_;
    }
    /// The owner capsule, which releases the buffer when freed; empty (no error set) when it cannot be
    /// made, and the buffer is then released here.
    py_ref into_capsule() noexcept {
        py_ref capsule(owner_capsule<buffer_owner, release_buffer, buffer_owner_name>(b_));
        if (!capsule) {
            PyErr_Clear();
            return capsule;
        }
        b_ = nullptr;
        return capsule;
    }

private:
    buffer_owner *b_;
    bool taken_ = false;
};

/// A buffer of elements `dt` that only a copy can read: notes the dtype a conversion starts from and
/// returns the thread's refusal record, with no tensor recorded, for the caller's `detail`.
inline refusal &note_copy_only_buffer(imported &out, dlpack::DataType dt) noexcept {
    out.seen = dt;
    refusal &rec = last_refusal();
    rec.tensor_known = false;
    return rec;
}

/// Imports a buffer-protocol object (CPU memory) when it satisfies `r`.
inline mismatch import_buffer(PyObject *src, const requirements &r, imported &out) noexcept {
    pending_buffer pending;
    buffer_owner *b = pending.get();
    if (!b) {
        PyErr_Clear();
        return mismatch::invalid;
    }
    if (!pending.take(src)) return mismatch::invalid;
    const Py_buffer &v = b->view;

    bool native;
    dlpack::DataType dt = dtype_from_format(v.format, v.itemsize, native);
    if (dt.bits == 0) {
        malformed_reason_seen() = "its buffer format has no DLPack dtype (a struct of fields, a character "
                                  "type, a pointer)";
        return mismatch::invalid;
    }
    if (v.ndim < 0 || v.ndim > dlpack::max_ndim) return mismatch::invalid;
    if (!native) {  // readable only through a byte-swapping conversion
        refusal &rec = note_copy_only_buffer(out, dt);
        std::snprintf(rec.detail, sizeof rec.detail, "its byte order is not the machine's (buffer format '%s')",
                      v.format ? v.format : "B");
        return mismatch::dtype;
    }
    int64_t step = 1;
    for (int i = v.ndim - 1; i >= 0; --i) {
        b->shape[i] = v.shape ? (int64_t) v.shape[i] : (int64_t) (v.len / v.itemsize);
        if (v.strides) {
            if (v.strides[i] % v.itemsize != 0) {  // no element stride says this: readable only through a copy
                refusal &rec = note_copy_only_buffer(out, dt);
                std::snprintf(rec.detail, sizeof rec.detail,
                              "a byte stride of %lld is no whole number of its %lld-byte elements",
                              (long long) v.strides[i], (long long) v.itemsize);
                return mismatch::order;
            }
            b->strides[i] = (int64_t) (v.strides[i] / v.itemsize);
        } else {
            b->strides[i] = step;
        }
        step *= b->shape[i];
    }
    dlpack::Tensor t{};
    t.data = v.buf;
    t.device = {dlpack::cpu, 0};
    t.ndim = v.ndim;
    t.dtype = dt;
    t.shape = b->shape;
    t.strides = b->strides;
    if (validate(t)) return mismatch::invalid;
    out.seen = dt;
    mismatch m = check_and_record(r, t, v.readonly != 0);
    if (m != mismatch::none) return m;

    py_ref owner = pending.into_capsule();
    if (!owner) return mismatch::invalid;
    out.tensor = t;
    out.owner = std::move(owner);
    return mismatch::none;
}

}  // namespace detail
}  // namespace dlt
