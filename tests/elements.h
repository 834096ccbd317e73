// tests/elements.h: element-wise reading and writing of any tensor, honouring dtype, shape and strides,
// so that Python tests compare every element with the framework's own values.
#pragma once

#include "backend.h"

#include <complex>
#include <cstring>

namespace tb {

/// Converts one element at `p` to a Python object (bool, int, float or complex). New reference.
inline PyObject *element_to_python(const void *p, uint8_t code, uint8_t bits) {
    using namespace dlt::dlpack;
    auto load = [&](auto v) { std::memcpy(&v, p, sizeof(v)); return v; };
    switch (code) {
        case bool_: return PyBool_FromLong(load(uint8_t()) != 0);
        case int_:
            switch (bits) {
                case 8: return PyLong_FromLong(load(int8_t()));
                case 16: return PyLong_FromLong(load(int16_t()));
                case 32: return PyLong_FromLong(load(int32_t()));
                default: return PyLong_FromLongLong(load(int64_t()));
            }
        case uint_:
            switch (bits) {
                case 8: return PyLong_FromUnsignedLong(load(uint8_t()));
                case 16: return PyLong_FromUnsignedLong(load(uint16_t()));
                case 32: return PyLong_FromUnsignedLong(load(uint32_t()));
                default: return PyLong_FromUnsignedLongLong(load(uint64_t()));
            }
        case float_:
            switch (bits) {
                case 16: return PyFloat_FromDouble((double) (float) load(dlt::float16()));
                case 32: return PyFloat_FromDouble(load(float()));
                default: return PyFloat_FromDouble(load(double()));
            }
        case bfloat_: return PyFloat_FromDouble((double) (float) load(dlt::bfloat16()));
        case complex_:
            if (bits == 64) {
                auto c = load(std::complex<float>());
                return PyComplex_FromDoubles(c.real(), c.imag());
            } else {
                auto c = load(std::complex<double>());
                return PyComplex_FromDoubles(c.real(), c.imag());
            }
    }
    PyErr_SetString(PyExc_TypeError, "unexpected dtype");
    return nullptr;
}

/// Writes the double `v` into the element at `p`, converting to the element's dtype.
inline void element_from_double(void *p, uint8_t code, uint8_t bits, double v) {
    using namespace dlt::dlpack;
    auto store = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
    switch (code) {
        case bool_: store((uint8_t) (v != 0)); break;
        case int_:
            if (bits == 8) store((int8_t) v); else if (bits == 16) store((int16_t) v);
            else if (bits == 32) store((int32_t) v); else store((int64_t) v);
            break;
        case uint_:
            if (bits == 8) store((uint8_t) v); else if (bits == 16) store((uint16_t) v);
            else if (bits == 32) store((uint32_t) v); else store((uint64_t) v);
            break;
        case float_:
            if (bits == 16) store(dlt::float16((float) v)); else if (bits == 32) store((float) v);
            else store(v);
            break;
        case bfloat_: store(dlt::bfloat16((float) v)); break;
        case complex_:
            if (bits == 64) store(std::complex<float>((float) v, 0.f)); else store(std::complex<double>(v, 0.));
            break;
    }
}

/// Calls `f(byte_address)` for every element in C (row-major) logical order, following the strides.
template <typename Tensor, typename F> void for_each_element(const Tensor &x, F &&f) {
    const size_t nd = x.ndim();
    size_t n = 1;
    for (size_t i = 0; i < nd; ++i) n *= x.shape(i);
    if (n == 0) return;
    size_t idx[64] = {};
    const int64_t item = (int64_t) x.itemsize();
    auto *base = (const char *) x.data();
    for (size_t k = 0; k < n; ++k) {
        int64_t off = 0;
        for (size_t i = 0; i < nd; ++i) off += (int64_t) idx[i] * x.stride(i);
        f(base + off * item);
        for (size_t i = nd; i-- > 0;) {
            if (++idx[i] < x.shape(i)) break;
            idx[i] = 0;
        }
    }
}

/// Every element as a flat Python list, in C logical order.
template <typename Tensor> py::object values(const Tensor &x) {
    py::object list = steal(PyList_New(0));
    auto dt = x.dtype();
    for_each_element(x, [&](const char *p) {
        py::object v = steal(element_to_python(p, dt.code, dt.bits));
        if (PyList_Append(list.ptr(), v.ptr()) != 0) throw std::runtime_error("append failed");
    });
    return list;
}

/// Shape or strides as a Python tuple.
template <typename Tensor> py::object shape_tuple(const Tensor &x, bool strides) {
    py::object t = steal(PyTuple_New((Py_ssize_t) x.ndim()));
    for (size_t i = 0; i < x.ndim(); ++i)
        PyTuple_SET_ITEM(t.ptr(), (Py_ssize_t) i,
                         strides ? PyLong_FromLongLong(x.stride(i)) : PyLong_FromSize_t(x.shape(i)));
    return t;
}

/// Everything the accessors report, by name: ndim, shape, strides, dtype ((code, bits, lanes)),
/// device_type, device_id, data (the first element's address), read_only, size, itemsize, nbytes.
template <typename Tensor> py::dict describe(const Tensor &x) {
    auto dt = x.dtype();
    py::dict d;
    d["ndim"] = (long long) x.ndim();
    d["shape"] = shape_tuple(x, false);
    d["strides"] = shape_tuple(x, true);
    d["dtype"] = py::make_tuple((int) dt.code, (int) dt.bits, (int) dt.lanes);
    d["device_type"] = (int) x.device_type();
    d["device_id"] = (int) x.device_id();
    d["data"] = (unsigned long long) (uintptr_t) x.data();
    d["read_only"] = x.read_only();
    d["size"] = (long long) x.size();
    d["itemsize"] = (long long) x.itemsize();
    d["nbytes"] = (long long) x.nbytes();
    return d;
}

/// What a parameter received, by name: values (every element, in C logical order), strides and data
/// (the first element's address): whether, and how, the argument was converted.
template <typename Tensor> py::dict contents(const Tensor &x) {
    py::dict d;
    d["values"] = values(x);
    d["strides"] = shape_tuple(x, true);
    d["data"] = (unsigned long long) (uintptr_t) x.data();
    return d;
}

} // namespace tb
