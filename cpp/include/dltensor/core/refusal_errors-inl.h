// dltensor/core/refusal_errors-inl.h: the bodies of refusal_errors.h's core entry points (config.h: DLTENSOR_CORE).
#pragma once

#include "refusal_errors.h"
#include "../python/atomic_value.h"
#include "refusal_log-inl.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace dlt {

namespace detail {

/// A function whose vectorcall slot explained_call() took over, and the slot's original value.
struct explained_function {
    PyObject *function;
    vectorcallfunc original;
};

/// The functions explain_refusals() took over, sorted by address. Replaced whole when functions are added (one writer
/// at a time); a replaced table is never freed: another thread's call may still read it.
DLTENSOR_CORE atomic_value<const std::vector<explained_function> *> &explained_functions() noexcept {
    static atomic_value<const std::vector<explained_function> *> table{nullptr};
    return table;
}

/// The vectorcall slot of `f`, or NULL where its type has none.
inline vectorcallfunc *vectorcall_slot(PyObject *f) noexcept {
    PyTypeObject *tp = Py_TYPE(f);
    if (!(tp->tp_flags & Py_TPFLAGS_HAVE_VECTORCALL) || tp->tp_vectorcall_offset <= 0) return nullptr;
    return reinterpret_cast<vectorcallfunc *>(reinterpret_cast<char *>(f) + tp->tp_vectorcall_offset);
}

/// The UTF-8 of `text` (a new reference, released), or "?" where it is NULL or has none.
DLTENSOR_MESSAGE_PATH std::string utf8_of(PyObject *text) {
    const char *utf8 = text ? PyUnicode_AsUTF8(text) : nullptr;
    std::string out = utf8 ? utf8 : "?";
    if (!utf8) PyErr_Clear();
    Py_XDECREF(text);
    return out;
}

/// "[1]" or "['a']" where `object` is an element of the list, tuple or dict `arg`; else "".
DLTENSOR_MESSAGE_PATH std::string element_index(uintptr_t object, PyObject *arg) {
    // copies, not the containers' own storage: another thread may resize them meanwhile
    const bool dict = PyDict_Check(arg);
    PyObject *items = dict                                      ? PyDict_Items(arg)
                      : PyList_Check(arg) || PyTuple_Check(arg) ? PySequence_Tuple(arg)
                                                                : nullptr;
    if (!items) {
        PyErr_Clear();
        return std::string();
    }
    std::string index;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items) && index.empty(); ++i) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, i);  // a (key, value) tuple of a dict
        if ((uintptr_t) (dict ? PyTuple_GET_ITEM(item, 1) : item) != object) continue;
        index = "[" + (dict ? utf8_of(PyObject_Repr(PyTuple_GET_ITEM(item, 0))) : std::to_string(i)) + "]";
    }
    Py_DECREF(items);
    return index;
}

/// "argument 2", "argument `out`" (a keyword), "element [1] of argument 2" (of a list, tuple or dict
/// argument), or what else `object` was to the call.
DLTENSOR_MESSAGE_PATH std::string argument_label(uintptr_t object, PyObject *const *args, size_t nargs,
                                                 PyObject *kwnames) {
    const size_t nkw = kwnames ? (size_t) PyTuple_GET_SIZE(kwnames) : 0;
    const auto name = [&](size_t i) {
        return i < nargs ? std::to_string(i + 1)
                         : "`" + utf8_of(PyObject_Str(PyTuple_GET_ITEM(kwnames, (Py_ssize_t) (i - nargs)))) + "`";
    };
    for (size_t i = 0; i < nargs + nkw; ++i)
        if ((uintptr_t) args[i] == object) return "argument " + name(i);
    for (size_t i = 0; i < nargs + nkw; ++i) {
        const std::string index = element_index(object, args[i]);
        if (!index.empty()) return "element " + index + " of argument " + name(i);
    }
    return "an element of an argument";
}

/// Appends this thread's refusals since the log had written `before` to the TypeError the failed call
/// `args` raised, where it is the binding library's "incompatible function arguments"; else leaves the
/// error as it is.
DLTENSOR_CORE DLTENSOR_COLD void add_refusal_reasons(PyObject *const *args, size_t nargsf, PyObject *kwnames,
                                                     uint64_t before) noexcept {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return;
    PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    PyObject *text = value ? PyObject_Str(value) : nullptr;
    const char *message = text ? PyUnicode_AsUTF8(text) : nullptr;
    if (!message || !std::strstr(message, "incompatible function arguments")) {
        PyErr_Clear();
        Py_XDECREF(text);
        PyErr_Restore(type, value, traceback);
        return;
    }
    try {
        const refusal_log &log = refusal_log::of_this_thread();
        const uint64_t fresh = std::min<uint64_t>(log.written - before, log.count);
        // The last refusal of each (argument, parameter): a converting pass's, where both passes refused.
        std::vector<const refusal *> kept;
        for (uint64_t k = fresh; k > 0; --k) {
            const refusal &r = log.entries[(log.written - k) % refusal_log::capacity].r;
            for (const refusal *&p : kept)
                if (p && p->object == r.object && p->signature == r.signature) p = nullptr;
            kept.push_back(&r);
        }
        const size_t nargs = (size_t) PyVectorcall_NARGS(nargsf);
        std::string reasons, line;
        for (const refusal *r : kept) {
            if (!r) continue;
            // "argument 1, a numpy.ndarray: dtype ...", or "argument 1: list is not ..." where the reason names the type
            const std::string why = explain(*r), type = r->type_name;
            const bool named = why.compare(0, type.size(), type) == 0 && why.size() > type.size() &&
                               (why[type.size()] == ':' || why[type.size()] == ' ');
            line =
                "\n  " + argument_label(r->object, args, nargs, kwnames) + (named ? ": " : ", a " + type + ": ") + why;
            if (reasons.find(line) == std::string::npos) reasons += line;
        }
        PyErr_Format(PyExc_TypeError, "%s\n\nWhy py::dltensor parameters refused the arguments:%s", message,
                     reasons.c_str());
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
    } catch (...) {  // no memory for the text: the binding library's error as it was
        PyErr_Restore(type, value, traceback);
    }
    Py_DECREF(text);
}

/// The vectorcall of a function explain_refusals() took over: the original call, then the reasons.
DLTENSOR_CORE PyObject *explained_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                                       PyObject *kwnames) noexcept {
    const std::vector<explained_function> *table = explained_functions().load(atomic_order::acquire);
    const auto it = table ? std::lower_bound(table->begin(), table->end(), callable,
                                             [](const explained_function &e, PyObject *f) { return e.function < f; })
                          : std::vector<explained_function>::const_iterator();
    if (!table || it == table->end() || it->function != callable) {
        PyErr_SetString(PyExc_SystemError, "dltensor: a function's original call was lost");
        return nullptr;
    }
    const uint64_t before = refusal_log::of_this_thread().written;
    PyObject *result = it->original(callable, args, nargsf, kwnames);
    if (!result && refusal_log::of_this_thread().written != before) add_refusal_reasons(args, nargsf, kwnames, before);
    return result;
}

/// Adds `f` to `found` where it is a function of the module named `module` (not a Python function, not
/// taken over already); follows methods, static and class methods, and classes of that module.
DLTENSOR_CORE void collect_explained(PyObject *f, PyObject *module, std::vector<explained_function> &found, int depth) {
    if (PyInstanceMethod_Check(f)) f = PyInstanceMethod_GET_FUNCTION(f);
    PyObject *owner = PyObject_GetAttrString(f, "__module__");
    if (!owner) PyErr_Clear();
    const int same = owner ? PyObject_RichCompareBool(owner, module, Py_EQ) : 0;
    Py_XDECREF(owner);
    if (same != 1) {
        PyErr_Clear();
        return;
    }
    if (PyType_Check(f)) {  // a class of this module: its methods
        if (depth > 4) return;
        PyObject *dict = ((PyTypeObject *) f)->tp_dict;
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (dict && PyDict_Next(dict, &pos, &key, &value)) {
            PyObject *inner = value;
            if (Py_TYPE(value) == &PyStaticMethod_Type || Py_TYPE(value) == &PyClassMethod_Type) {
                inner = PyObject_GetAttrString(value, "__func__");
                if (!inner) {
                    PyErr_Clear();
                    continue;
                }
                collect_explained(inner, module, found, depth + 1);
                Py_DECREF(inner);
            } else collect_explained(inner, module, found, depth + 1);
        }
        return;
    }
    vectorcallfunc *slot = PyFunction_Check(f) ? nullptr : vectorcall_slot(f);
    if (slot && *slot && *slot != explained_call) found.push_back({f, *slot});
}

}  // namespace detail

DLTENSOR_CORE bool explain_refusals(PyObject *module) noexcept {
    PyObject *name = PyObject_GetAttrString(module, "__name__");
    PyObject *dict = PyModule_Check(module) ? PyModule_GetDict(module) : nullptr;
    if (!name || !dict) {
        Py_XDECREF(name);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "explain_refusals(): not a module");
        return false;
    }
    try {
        std::vector<detail::explained_function> found;
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(dict, &pos, &key, &value)) detail::collect_explained(value, name, found, 0);
        Py_DECREF(name);
        auto &table = detail::explained_functions();
        // writers one at a time: interpreters with a GIL each may initialize modules at once
        static std::mutex writers;
        const std::lock_guard<std::mutex> lock(writers);
        const std::vector<detail::explained_function> *old = table.load(atomic_order::acquire);
        auto *merged = new std::vector<detail::explained_function>();
        if (old)  // an address used again by a new function: the new entry
            for (const detail::explained_function &e : *old)
                if (std::none_of(found.begin(), found.end(), [&](const auto &n) { return n.function == e.function; }))
                    merged->push_back(e);
        merged->insert(merged->end(), found.begin(), found.end());
        std::sort(merged->begin(), merged->end(), [](const auto &a, const auto &b) { return a.function < b.function; });
        // a function reached twice (a class attribute and a module attribute): one entry
        merged->erase(std::unique(merged->begin(), merged->end(),
                                  [](const auto &a, const auto &b) { return a.function == b.function; }),
                      merged->end());
        table.store(merged, atomic_order::release);  // `old` stays allocated (see explained_functions())
        for (const detail::explained_function &e : found) *detail::vectorcall_slot(e.function) = detail::explained_call;
        return true;
    } catch (...) {
        PyErr_NoMemory();
        return false;
    }
}

}  // namespace dlt
