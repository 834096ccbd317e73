// Task: per-segment means of the rows of a matrix, labels given as any integer array or a list; the ids
// of the non-empty segments computed into a local std::vector. pybind11 with py::array_t (NumPy only).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

namespace py = pybind11;

PYBIND11_MODULE(segments_array_t, m) {
    // snippet: segment_mean
    m.def("segment_mean", [](py::array_t<float, py::array::c_style | py::array::forcecast> values,
                             py::array_t<uint32_t, py::array::forcecast> labels, size_t k) {
        auto v = values.unchecked<2>();
        auto l = labels.unchecked<1>();
        const size_t d = (size_t) v.shape(1);
        py::array_t<float> out({k, d});  // allocated by shape
        auto o = out.mutable_unchecked<2>();
        std::vector<size_t> count(k, 0);
        for (size_t s = 0; s < k; ++s)
            for (size_t j = 0; j < d; ++j) o(s, j) = 0;
        for (py::ssize_t i = 0; i < v.shape(0); ++i) {
            const uint32_t s = l(i);
            if (s >= k) throw py::index_error("label out of range");
            ++count[s];
            for (size_t j = 0; j < d; ++j) o(s, j) += v(i, j);
        }
        for (size_t s = 0; s < k; ++s)
            for (size_t j = 0; j < d && count[s]; ++j) *out.mutable_data(s, j) /= (float) count[s];
        return out;
    });
    // end snippet

    // snippet: nonempty_segments
    m.def("nonempty_segments", [](py::array_t<uint32_t, py::array::forcecast> labels) {
        std::vector<uint32_t> ids;
        for (py::ssize_t i = 0; i < labels.size(); ++i) {
            const uint32_t s = labels.at(i);
            if (ids.size() <= s) ids.resize(s + 1, 0);
            ids[s] = 1;
        }
        std::vector<uint32_t> result;
        for (uint32_t s = 0; s < ids.size(); ++s)
            if (ids[s]) result.push_back(s);
        return py::array_t<uint32_t>(result.size(), result.data());  // copies now
    });
    // end snippet

    // snippet: column
    m.def("column", [](py::array_t<float> values, size_t j) {  // a view of column j of the input
        if (values.ndim() != 2 || j >= (size_t) values.shape(1)) throw py::index_error("no such column");
        // strides in bytes; the input is the view's base, which keeps it alive
        return py::array_t<float>({values.shape(0)}, {values.strides(0)}, values.mutable_data(0, j), values);
    });
    // end snippet

    // snippet: count_labels
    m.def("count_labels", [](py::object obj) {  // converted in the body
        if (!py::isinstance<py::array_t<uint32_t>>(obj) && !py::isinstance<py::list>(obj))
            throw py::type_error("labels: a uint32 array or a list");
        auto labels = obj.cast<py::array_t<uint32_t, py::array::forcecast>>();
        return labels.size();
    });
    // end snippet
}
