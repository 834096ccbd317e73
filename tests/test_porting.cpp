// tests/test_porting.cpp: what code ported from pybind11's `py::array_t` does, in its dltensor spelling, on
// both backends (registered as the submodule `porting`): results copied out of local containers
// (`copy_of`) or handed over (`adopt`), lists and scalars as read-only input, conversion inside a function
// body (`cast`, `try_cast`) with an explanation on failure, array_t's element-access members, callbacks
// that return a tensor or None, and the order of overloads.
#include "backend.h"

#ifdef DLTENSOR_TEST_PYBIND11
#  include <pybind11/numpy.h>  // a kept array_t overload (the mixing trap)
#endif

#include <array>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace {

/// A container that counts its destructions, to see an adopted container freed exactly once.
struct counted_vector {
    static inline long destroyed = 0;
    std::vector<double> v;
    explicit counted_vector(size_t n) : v(n) { std::iota(v.begin(), v.end(), 0.0); }
    counted_vector(counted_vector &&) = default;
    ~counted_vector() { if (!v.empty()) ++destroyed; }  // moved-from shells hold nothing
    double *data() { return v.data(); }
    size_t size() const { return v.size(); }
};

template <typename Framework> void def_local_results(py::module_ &m, const char *suffix) {
    using Out = py::dltensor<Framework, uint32_t, py::ndim<1>>;
    // The values are computed into a local vector, which is gone when the caller reads the result.
    m.def((std::string("copy_of_local_") + suffix).c_str(), [](size_t n) {
        std::vector<uint32_t> v(n);
        std::iota(v.begin(), v.end(), 1u);
        return Out::copy_of(v.data(), {v.size()});
    });
    m.def((std::string("adopt_local_") + suffix).c_str(), [](size_t n) {
        std::vector<uint32_t> v(n);
        std::iota(v.begin(), v.end(), 1u);
        return Out::adopt(std::move(v));
    });
}

/// What `try_cast` saw: {bound, ndim, first (element, or None), error_left (a Python error was left set)}.
template <typename T> py::dict try_cast_report(py::handle obj, bool convert) {
    T t;
    const bool ok = py::try_cast(obj, t, convert);
    const bool error_left = PyErr_Occurred() != nullptr;
    PyErr_Clear();
    py::object first = py::none();
    if (ok && t.size()) first = py::float_((double) *t.data());
    py::dict d;
    d["bound"] = ok;
    d["ndim"] = ok ? t.ndim() : 0;
    d["first"] = first;
    d["error_left"] = error_left;
    return d;
}

} // namespace

void init_porting(py::module_ &parent) {
    py::module_ m = parent.def_submodule("porting", "Code ported from py::array_t (tests/test_porting.py).");
#ifdef DLTENSOR_TEST_PYBIND11
    // A port that keeps array_t for a dtype DLPack lacks (long double), registered after the dltensor
    // overload: without .noconvert() it converts (forcecast) whatever dltensor refused (the trap).
    // snippet: mixing-array-t
    m.def("fill_seven", [](py::dltensor<float, py::ndim<1>> out) {
        for (size_t i = 0; i < out.shape(0); ++i) out(i) = 7.0f;
        return "dltensor";
    }, py::arg("out"));
    m.def("fill_seven", [](py::array_t<long double> out) {
        auto w = out.mutable_unchecked<1>();
        for (py::ssize_t i = 0; i < w.shape(0); ++i) w(i) = 7.0L;
        return "array_t";
    }, py::arg("out").noconvert());  // only long double arrays: never a converted copy
    // end snippet
    m.def("fill_seven_trap", [](py::dltensor<float, py::ndim<1>> out) {
        for (size_t i = 0; i < out.shape(0); ++i) out(i) = 7.0f;
        return "dltensor";
    }, py::arg("out"));
    m.def("fill_seven_trap", [](py::array_t<long double> out) {  // no .noconvert(): the trap
        auto w = out.mutable_unchecked<1>();
        for (py::ssize_t i = 0; i < w.shape(0); ++i) w(i) = 7.0L;
        return "array_t";
    }, py::arg("out"));
#endif

    // ---- a tagged .noconvert() parameter, renamed from nb::ndarray (sparse_dot_topn's spelling), and the
    // port's fix (the tag dropped); overloads per dtype, as its templates make them
    m.def("tagged_total", [](py::dltensor<py::numpy, const float, py::ndim<1>> x) { return 32 + 0 * x.size(); },
          py::arg("x").noconvert());
    m.def("tagged_total", [](py::dltensor<py::numpy, const double, py::ndim<1>> x) { return 64 + 0 * x.size(); },
          py::arg("x").noconvert());
    m.def("untagged_total", [](py::dltensor<const float, py::ndim<1>> x) { return 32 + 0 * x.size(); },
          py::arg("x").noconvert());
    m.def("untagged_total", [](py::dltensor<const double, py::ndim<1>> x) { return 64 + 0 * x.size(); },
          py::arg("x").noconvert());

    // ---- results of a local container -----------------------------------------------------------------
    def_local_results<py::numpy>(m, "numpy");
    def_local_results<py::pytorch>(m, "pytorch");
    def_local_results<py::jax>(m, "jax");
    m.def("copy_of_const", [](size_t n) {
        // A `const` result: C++ fills it, Python gets a read-only array (as for any read-only return).
        std::vector<float> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = 0.5f * (float) i;
        return py::dltensor<py::numpy, const float, py::ndim<1>>::copy_of(v.data(), {n});
    });
    m.def("empty_const", [](size_t n) {
        using Out = py::dltensor<py::numpy, const int32_t, py::ndim<1>>;
        Out out = Out::empty({n});
        auto *p = const_cast<int32_t *>(out.data());
        for (size_t i = 0; i < n; ++i) p[i] = (int32_t) i;
        return out;
    });
    m.def("copy_of_matrix", [](size_t rows, size_t cols) {
        std::vector<float> v(rows * cols);
        std::iota(v.begin(), v.end(), 0.f);
        return py::dltensor<py::numpy, float, py::ndim<2>>::copy_of(v.data(), {rows, cols});
    });
    m.def("copy_of_fortran", [] {
        const float v[6] = {0, 1, 2, 3, 4, 5};  // column-major 2x3
        return py::dltensor<py::numpy, float, py::ndim<2>, py::f_contig>::copy_of(v, {2, 3});
    });
    m.def("adopt_matrix", [](size_t rows, size_t cols) {
        std::vector<float> v(rows * cols);
        std::iota(v.begin(), v.end(), 0.f);
        return py::dltensor<py::numpy, float, py::ndim<2>>::adopt(std::move(v), {rows, cols});
    });
    m.def("adopt_array", [] {
        return py::dltensor<py::numpy, int16_t, py::shape<3>>::adopt(std::array<int16_t, 3>{4, 5, 6});
    });
    m.def("adopt_counted", [](size_t n) {
        return py::dltensor<py::numpy, double, py::ndim<1>>::adopt(counted_vector(n));
    });
    m.def("adopt_counted_as_none", [](size_t n) {
        return py::dltensor<double, py::ndim<1>>::adopt(counted_vector(n));
    });
    m.def("destroyed_counted", [] { return counted_vector::destroyed; });
    m.def("adopt_wrong_size", [] {
        return py::dltensor<py::numpy, float, py::ndim<2>>::adopt(std::vector<float>(5), {2, 3});
    });
    m.def("adopt_shape_too_small", [] {
        return py::dltensor<py::numpy, float, py::ndim<2>>::adopt(std::vector<float>(5), {2, 2});
    });
    m.def("copy_of_wrong_ndim", [] {
        const float v[6] = {};
        return py::dltensor<py::numpy, float, py::ndim<2>>::copy_of(v, {6});
    });

    // ---- element strides: what array_t's byte strides must be divided into ----------------------------
    m.def("column_view", [](py::dltensor<py::numpy, float, py::ndim<2>, py::c_contig> a) {
        // every other column of a C-contiguous matrix, with strides in elements
        const int64_t cols = (int64_t) a.shape(1);
        return py::dltensor<py::numpy, float, py::ndim<2>>(a.data(), {a.shape(0), a.shape(1) / 2},
                                                            a.cast(), {cols, 2});
    });

    // ---- lists, tuples, scalars -----------------------------------------------------------------------
    m.def("index_sum", [](py::dltensor<const uint32_t, py::ndim<1>> index) {
        uint64_t s = 0;
        for (size_t k = 0; k < index.shape(0); ++k) s += index.data()[k];
        return s;
    });
    m.def("matrix_sum", [](py::dltensor<const double, py::ndim<2>, py::c_contig> a) {
        double s = 0;
        for (size_t k = 0; k < a.size(); ++k) s += a.data()[k];
        py::dict d;
        d["rows"] = a.shape(0);
        d["cols"] = a.shape(1);
        d["sum"] = s;
        return d;
    });
    m.def("scalar_value", [](py::dltensor<const int64_t, py::ndim<0>> a) { return *a.data(); });
    m.def("any_sum", [](py::dltensor<const double> a) {
        double s = 0;
        for (size_t k = 0; k < a.size(); ++k) s += a.data()[k];
        py::dict d;
        d["ndim"] = a.ndim();
        d["sum"] = s;
        return d;
    });
    m.def("strict_sum", [](py::dltensor<const double, py::ndim<1>> a) { return a.size(); }, py::arg("a").noconvert());
    m.def("writable_fill", [](py::dltensor<double, py::ndim<1>> a) { a.data()[0] = 1; });
    m.def("identity_ro", [](py::dltensor<const double, py::ndim<1>> a) { return a; });

    // ---- conversion inside a function body ------------------------------------------------------------
    m.def("cast_in_body", [](py::object obj) {
        using T = py::dltensor<const float, py::ndim<1>>;
#if defined(DLTENSOR_TEST_PYBIND11)
        T t = obj.cast<T>();
#else
        T t = py::cast<T>(obj);
#endif
        py::dict d;
        d["size"] = t.shape(0);
        d["first"] = (double) t.data()[0];
        return d;
    });
    m.def("cast_in_body_uint32", [](py::object obj) {
        return py::cast<py::dltensor<const uint32_t, py::ndim<1>>>(obj).shape(0);
    });
    m.def("cast_writable_in_body", [](py::object obj) {
        using T = py::dltensor<float, py::ndim<1>>;
#if defined(DLTENSOR_TEST_PYBIND11)
        T t = obj.cast<T>();
#else
        T t = py::cast<T>(obj);
#endif
        return t.shape(0);
    });
    m.def("try_cast_ro", [](py::handle obj, bool convert) {
        return try_cast_report<py::dltensor<const float, py::ndim<1>>>(obj, convert);
    });
    m.def("try_cast_writable", [](py::handle obj) { return try_cast_report<py::dltensor<float, py::ndim<1>>>(obj, true); });

    // ---- array_t's element-access members -------------------------------------------------------------
    m.def("element_pointers", [](py::dltensor<const double, py::ndim<2>> a, size_t i, size_t j) {
        // data(i, j) points at element (i, j) whatever the strides; data(i) at the row's first element
        py::dict d;
        d["value"] = *a.data(i, j);
        d["row_first"] = *a.data(i);
        d["at"] = a.at(i, j);
        d["offset"] = (int64_t) (a.data(i, j) - a.data());  // in elements
        return d;
    });
    m.def("at_out_of_range", [](py::dltensor<const double, py::ndim<2>> a) { return a.at(a.shape(0), 0); });
    m.def("at_wrong_count", [](py::dltensor<const double> a) { return a.at(0); });
    m.def("data_out_of_range", [](py::dltensor<const double, py::ndim<2>> a) { return *a.data(0, a.shape(1)); });
    m.def("mutable_members_write", [](py::dltensor<double, py::ndim<2>> a) {
        *a.mutable_data(0, 1) = 10;
        a.mutable_at(1, 0) = 20;
        auto v = a.mutable_unchecked<2>();
        v(1, 1) = 30;
    });
    m.def("unchecked_sum", [](py::dltensor<const double, py::ndim<2>> a) {
        auto v = a.unchecked<2>();
        double s = 0;
        for (size_t i = 0; i < v.shape(0); ++i)
            for (size_t j = 0; j < v.shape(1); ++j) s += v(i, j);
        return s;
    });
    m.def("unchecked_annotated_ndim", [](py::dltensor<const double, py::ndim<1>> a) { return a.unchecked()(0); });
    m.def("view_element_pointers", [](py::dltensor<double, py::ndim<2>> a, size_t i, size_t j) {
        // snippet: view_data
        auto r = a.unchecked<2>();           // pybind11's direct access: element pointers of the views
        auto w = a.mutable_unchecked<2>();
        const double value = *r.data(i, j);  // pointer to element (i, j), whatever the strides
        *w.mutable_data(i, j) = -value;      // the same element, for writing
        // end snippet
        py::dict d;
        d["value"] = value;
        d["offset"] = (int64_t) (r.data(i, j) - r.data());  // in elements
        d["size"] = r.size();
        d["first"] = w.mutable_data() == a.data();
        return d;
    });

    // ---- py::cast of a tensor: the caller's own object, as a return is -------------------------------
    using Written = py::dltensor<float, py::ndim<1>>;
    // Each way of making a Python object of a parameter, then a C++ write: the write must reach the caller.
    m.def("cast_then_write", [](Written t, const std::string &how) -> py::object {
        float *first = t.data();
        py::object out;
        if (how == "lvalue") {
            // snippet: cast_identity
            py::object obj = py::cast(t);  // the caller's own array or tensor (`obj is x`), never a copy
            t.data()[0] = 42;              // so writes made afterwards reach Python
            // end snippet
            out = obj;
        } else if (how == "rvalue") {
            out = py::cast(std::move(t));
        } else if (how == "list_append") {
            py::list l;
            l.append(t);
            out = l[0];
        } else if (how == "list_append_rvalue") {
            py::list l;
            l.append(std::move(t));
            out = l[0];
        } else if (how == "list_item") {
            py::list l;
            l.append(py::none());
            l[0] = t;
            out = l[0];
        } else if (how == "dict_item") {
            py::dict d;
            d["t"] = t;
            out = d["t"];
        } else if (how == "make_tuple") {
            out = py::make_tuple(t)[0];
        } else if (how == "member_cast") {
            py::list l;
            l.append(t.cast());  // dltensor::cast(): the caller's object whatever the include order
            out = l[0];
        } else {
            throw py::value_error(("unknown way: " + how).c_str());
        }
        first[0] = 42;
        return out;
    });
    m.def("cast_const_ref_then_write", [](const Written &t) {
        py::object obj = py::cast(t);
        t.data()[0] = 42;
        return obj;
    });
    m.def("cast_with_copy_policy_then_write", [](Written t) {
        py::object obj = py::cast(t, tb::rvp::copy);  // an explicit copy policy still copies
        t.data()[0] = 42;
        return obj;
    });

    // ---- array_t's converting constructor from a Python object ----------------------------------------
    m.def("construct_from_object", [](py::object obj) {
        // snippet: object_constructor
        py::dltensor<const double, py::ndim<2>> items(obj);  // was: py::array_t<double, forcecast> items(obj);
        // end snippet
        double s = 0;
        for (size_t i = 0; i < items.shape(0); ++i)
            for (size_t j = 0; j < items.shape(1); ++j) s += items(i, j);
        py::dict d;
        d["rows"] = items.shape(0);
        d["cols"] = items.shape(1);
        d["sum"] = s;
        return d;
    });
    m.def("construct_from_item", [](py::dict d) {
        py::dltensor<const double, py::ndim<2>> t(d["items"]);  // an item or attribute, as array_t(d["items"])
        return t.shape(0);
    });
    m.def("construct_writable_from_object", [](py::handle obj) {
        py::dltensor<float, py::ndim<1>> t(obj);  // writable: the object itself, never a converted copy
        t(0) = 5;
        return t.shape(0);
    });
    m.def("construct_error_caught_in_cpp", [](py::handle obj) -> std::string {
        // What C++ catches when the conversion fails: pybind11's cast_error (raised as TypeError), nanobind's
        // python_error (a TypeError).
        try {
            py::dltensor<const double, py::ndim<2>> t(obj);
            return "bound";
#if defined(DLTENSOR_TEST_PYBIND11)
        } catch (const py::cast_error &e) {
#else
        } catch (const py::python_error &e) {
#endif
            return e.what();
        }
    });

    // ---- nested C++ containers to a 2-D tensor: array_t(py::cast(vector<vector<T>>)) ------------------
    m.def("rows_to_matrix", [](size_t rows, size_t cols, bool ragged) {
        std::vector<std::vector<double>> v(rows, std::vector<double>(cols));
        for (size_t i = 0; i < rows; ++i)
            for (size_t j = 0; j < cols; ++j) v[i][j] = 10.0 * (double) i + (double) j;
        if (ragged && rows > 1) v[1].pop_back();
        // snippet: copy_of_rows
        using Matrix = py::dltensor<py::numpy, double, py::ndim<2>>;
        return Matrix::copy_of(v);  // a std::vector<std::vector<double>>: shape (rows, cols), (0, 0) when empty
        // end snippet
    });
    m.def("container_to_vector", [](size_t n) {
        std::vector<int32_t> v(n);
        std::iota(v.begin(), v.end(), 1);
        return py::dltensor<py::numpy, int32_t, py::ndim<1>>::copy_of(v);
    });
    m.def("rows_to_f_matrix", [] {
        const std::vector<std::vector<float>> v = {{1, 2, 3}, {4, 5, 6}};
        return py::dltensor<py::numpy, float, py::ndim<2>, py::f_contig>::copy_of(v);
    });
    m.def("nested_list_in_body", [](py::object obj) {
        // snippet: nested_list
        // A nested Python list (or any array-like) read as a 2-D array, through numpy.asarray; raises a
        // TypeError that says why for ragged lists and for [] (NumPy reads it as shape (0,))
        auto a = py::cast<py::dltensor<const double, py::ndim<2>>>(obj);
        // end snippet
        return py::make_tuple(a.shape(0), a.shape(1));
    });

    // ---- a Python callback that returns a tensor, or None ----------------------------------------------
    // snippet: optional_callback
    using Values = py::dltensor<const float, py::ndim<1>>;
    m.def("sum_of_produced", [](const std::function<std::optional<Values>()> &produce) -> std::optional<double> {
        const std::optional<Values> x = produce();  // std::nullopt when the callback returned None
        if (!x) return std::nullopt;
        double s = 0;
        for (size_t i = 0; i < x->shape(0); ++i) s += (*x)(i);
        return s;
    });
    // end snippet
    m.def("size_of_produced", [](const std::function<Values()> &produce) { return produce().shape(0); });

    // ---- overloads: a mismatch of any kind reaches the converting pass, where the first that converts wins
    using Floats = py::dltensor<const float, py::ndim<1>, py::c_contig>;
    using Int64s = py::dltensor<const int64_t, py::ndim<1>, py::c_contig>;
    // snippet: overload_order
    // float32 first: a strided int64 array fails both in the first pass (dtype, order) and is converted to float32
    m.def("first_value", [](Floats x) { return py::make_tuple("float32", (double) x(0)); });
    m.def("first_value", [](Int64s x) { return py::make_tuple("int64", x(0)); });
    // the lossless overload first: its conversion (a C-ordered copy) wins
    m.def("first_value_int64_first", [](Int64s x) { return py::make_tuple("int64", x(0)); });
    m.def("first_value_int64_first", [](Floats x) { return py::make_tuple("float32", (double) x(0)); });
    // end snippet
}
