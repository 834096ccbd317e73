// dltensor/core/refusal_log.h: the arguments a binding refused on this thread, for `dltensor.explain()` and
// `dltensor.refusals()`: log_refusal() keeps each in a per-thread ring; a module's first refusal registers its reader
// in `_dltensor_refusals.readers`. Each extension module keeps its own records.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <cstring>
#include <string>
#include <type_traits>

#include "../tensor/config.h"
#include "../python/process_state.h"
#include "../tensor/refusal.h"

namespace dlt {

/// The ring of a thread's recent refusals (oldest overwritten first).
struct refusal_log {
    static constexpr unsigned capacity = 32;
    /// A slot holds a refusal once written (the `count` most recent do), else nothing: the ring is zero bits (.tbss).
    union slot {
        char unwritten;
        refusal r;
        constexpr slot() noexcept : unwritten() { }
    };
    slot entries[capacity];
    static_assert(std::is_trivially_copy_assignable_v<refusal> && std::is_trivially_destructible_v<refusal>,
                  "a slot's refusal is written by assignment and never destroyed");
    uint64_t written = 0;  ///< refusals ever written; the next goes to slot `written % capacity`
    unsigned count = 0;    ///< refusals held (at most capacity)

    static refusal_log &of_this_thread() noexcept {
        static thread_local refusal_log log;
        return log;
    }
};

namespace detail {

inline const char *mismatch_name(mismatch m) noexcept {
    switch (m) {
        case mismatch::none: return "none";
        case mismatch::read_only: return "read_only";
        case mismatch::device: return "device";
        case mismatch::shape: return "shape";
        case mismatch::dtype: return "dtype";
        case mismatch::order: return "order";
        case mismatch::lazy_view: return "lazy";
        case mismatch::misaligned: return "misaligned";
        case mismatch::overlapping: return "overlapping";
        case mismatch::copied: return "copied";
        case mismatch::requires_grad: return "requires_grad";
        case mismatch::inference: return "inference";
        case mismatch::framework: return "framework";
        case mismatch::invalid: return "invalid";
    }
    return "invalid";
}

/// `reader(clear=False)`: this thread's refusals in this module, oldest first, as dicts {"object": id, "type", "kind",
/// "explanation", "signature" (whole text), "convert" (conversion allowed), "writable" (the parameter), "when"
/// (steady_clock ns, to order several modules' records)}; `clear` empties the ring after reading.
inline PyObject *read_refusals(PyObject *, PyObject *const *args, Py_ssize_t nargs) noexcept {
    const bool clear = nargs > 0 && PyObject_IsTrue(args[0]) == 1;
    refusal_log &log = refusal_log::of_this_thread();
    PyObject *list = PyList_New(0);
    if (!list) return nullptr;
    const unsigned first = (unsigned) ((log.written - log.count) % refusal_log::capacity);
    for (unsigned k = 0; k < log.count; ++k) {
        const refusal &r = log.entries[(first + k) % refusal_log::capacity].r;
        std::string text;
        try {
            text = explain(r);
        } catch (...) {
            Py_DECREF(list);
            return PyErr_NoMemory();
        }
        // (no "s#" format: it needs PY_SSIZE_T_CLEAN, which a binding library may include Python.h without)
        PyObject *d = Py_BuildValue("{s:N,s:s,s:s,s:N,s:s,s:N,s:N,s:K}", "object", PyLong_FromSize_t((size_t) r.object),
                                    "type", r.type_name, "kind", mismatch_name(r.why), "explanation",
                                    PyUnicode_FromStringAndSize(text.data(), (Py_ssize_t) text.size()), "signature",
                                    r.signature ? r.signature : "", "convert", PyBool_FromLong(r.convert), "writable",
                                    PyBool_FromLong(!r.required.read_only), "when", (unsigned long long) r.when);
        if (!d || PyList_Append(list, d) != 0) {
            Py_XDECREF(d);
            Py_DECREF(list);
            return nullptr;
        }
        Py_DECREF(d);
    }
    if (clear) log.count = 0;
    return list;
}

/// This module's reader, in the interpreter's `_dltensor_refusals.readers` (process_state.h: once per module and
/// interpreter). Errors are cleared: the explanation never makes a call fail.
struct refusal_reader {
    bool registered = false;
    static refusal_reader make() noexcept {
        static PyMethodDef def = {"dltensor_refusals", (PyCFunction) (void (*)(void)) read_refusals, METH_FASTCALL,
                                  "This thread's recent argument refusals in this extension module."};
        PyObject *module = PyImport_AddModule("_dltensor_refusals");  // borrowed
        PyObject *reader = module ? PyCFunction_New(&def, nullptr) : nullptr;
        PyObject *readers = module ? PyObject_GetAttrString(module, "readers") : nullptr;
        if (module && !readers) {
            PyErr_Clear();
            readers = PyList_New(0);
            if (readers && PyObject_SetAttrString(module, "readers", readers) != 0) Py_CLEAR(readers);
        }
        const bool added = readers && reader && PyList_Append(readers, reader) == 0;
        Py_XDECREF(readers);
        Py_XDECREF(reader);
        PyErr_Clear();
        return {added};
    }
};

inline void register_refusal_reader() noexcept { (void) process_state<refusal_reader>(refusal_reader::make); }

}  // namespace detail

/// Keeps the importer's last refusal (refusal.h) of `src` by the parameter whose signature text is `signature`
/// (static storage; whole, "@parameter@return@" segments too: signature.h). Refusal path only; needs the GIL.
DLTENSOR_CORE void log_refusal(PyObject *src, const char *signature) noexcept;

/// The parameter's form of a signature text: each "@parameter@return@" segment (signature.h) without the
/// return's part; the whole text where a segment is not closed.
DLTENSOR_MESSAGE_PATH std::string parameter_form(const char *signature) {
    std::string form;
    for (const char *a = signature; *a; ++a) {
        if (*a != '@') {
            form += *a;
            continue;
        }
        const char *b = std::strchr(a + 1, '@');
        const char *c = b ? std::strchr(b + 1, '@') : nullptr;
        if (!c) return signature;
        form.append(a + 1, b);
        a = c;
    }
    return form;
}

/// "cannot convert <type of src> to <signature>: <why>", the message of a failed in-body conversion
/// (`py::cast<T>(obj)`) on both backends: the calling thread's last refusal of `src`, explained.
DLTENSOR_CORE DLTENSOR_CORE_COLD std::string refusal_message(PyObject *src, const char *signature);

/// Sets refusal_message() as a Python TypeError (where nothing may throw).
DLTENSOR_CORE DLTENSOR_CORE_COLD void set_refusal_type_error(PyObject *src, const char *signature) noexcept;

}  // namespace dlt
