// dltensor/python/py_ref.h: an owned reference to a Python object, released at scope exit, and the calls that return
// one (empty, with the Python error set, on failure, as the C API does). Needs the GIL (free-threaded: an attached
// thread state).
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstddef>

#include "../tensor/config.h"

namespace dlt {

/// One strong reference (or none: empty), released with `Py_XDECREF` when the `py_ref` is destroyed or
/// assigned. Move-only, noexcept, the size of a pointer.
class py_ref {
public:
    py_ref() noexcept = default;
    /// Takes over a new reference, as a C API call returns it (NULL: empty).
    DLTENSOR_HOT_INLINE explicit py_ref(PyObject *owned) noexcept : p_(owned) { }
    /// A new reference to a borrowed object (NULL: empty).
    DLTENSOR_HOT_INLINE static py_ref borrow(PyObject *o) noexcept {
        Py_XINCREF(o);
        return py_ref(o);
    }

    DLTENSOR_HOT_INLINE py_ref(py_ref &&other) noexcept : p_(other.p_) { other.p_ = nullptr; }
    DLTENSOR_HOT_INLINE py_ref &operator=(py_ref &&other) noexcept {
        PyObject *old = p_;
        p_ = other.p_;
        other.p_ = nullptr;
        Py_XDECREF(old);  // last: freeing an object may run arbitrary code
        return *this;
    }
    py_ref(const py_ref &) = delete;
    py_ref &operator=(const py_ref &) = delete;
    DLTENSOR_HOT_INLINE ~py_ref() { Py_XDECREF(p_); }

    PyObject *get() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    /// Hands the reference to the caller; the `py_ref` is empty afterwards.
    PyObject *release() noexcept {
        PyObject *p = p_;
        p_ = nullptr;
        return p;
    }

private:
    PyObject *p_ = nullptr;
};

/// `import name` (a `sys.modules` lookup once imported). Empty, with the error set, on failure.
inline py_ref import_module(const char *name) noexcept { return py_ref(PyImport_ImportModule(name)); }

/// `obj.name`. Empty, with the error set, on failure (also when `obj` is NULL, with no error).
inline py_ref attribute(PyObject *obj, const char *name) noexcept {
    return py_ref(obj ? PyObject_GetAttrString(obj, name) : nullptr);
}

/// `obj.name(*args)` with optional keyword names (`kwnames`: a tuple of the last arguments' names).
/// Empty, with the error set, on failure (also when `obj` is NULL, with no error).
DLTENSOR_CORE py_ref call_method(PyObject *obj, const char *name, PyObject *const *args = nullptr, size_t nargs = 0,
                                 PyObject *kwnames = nullptr) noexcept;

/// `module.function(arg)`. Empty, with the error set, on failure.
DLTENSOR_CORE py_ref call_function(const char *module, const char *function, PyObject *arg) noexcept;

}  // namespace dlt
