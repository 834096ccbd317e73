// Task: per-segment means of the rows of a matrix, labels given as any integer array or a list; the ids
// of the non-empty segments computed into a local std::vector. py::dltensor: any framework, both backends.
#include "example_backend.h"

#include <vector>

DLTENSOR_EXAMPLE_MODULE(segments, m) {
    // snippet: segment_mean
    m.def("segment_mean", [](py::dltensor<const float, py::ndim<2>, py::c_contig, py::device::cpu> values,
                             py::dltensor<const uint32_t, py::ndim<1>, py::device::cpu> labels, size_t k) {
        auto v = values.unchecked<2>();
        auto l = labels.unchecked<1>();
        const size_t d = v.shape(1);
        auto out = py::dltensor<py::numpy, float, py::ndim<2>>::empty({k, d});  // allocated by shape
        auto o = out.mutable_unchecked<2>();
        std::vector<size_t> count(k, 0);
        for (size_t s = 0; s < k; ++s)
            for (size_t j = 0; j < d; ++j) o(s, j) = 0;
        for (size_t i = 0; i < v.shape(0); ++i) {
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
    using Ids = py::dltensor<py::numpy, uint32_t, py::ndim<1>>;
    m.def("nonempty_segments", [](py::dltensor<const uint32_t, py::ndim<1>, py::device::cpu> labels) {
        std::vector<uint32_t> ids;
        for (size_t i = 0; i < labels.shape(0); ++i) {
            const uint32_t s = labels.at(i);
            if (ids.size() <= s) ids.resize(s + 1, 0);
            ids[s] = 1;
        }
        std::vector<uint32_t> result;
        for (uint32_t s = 0; s < ids.size(); ++s)
            if (ids[s]) result.push_back(s);
        return Ids::copy_of(result.data(), {result.size()});  // copies now; or Ids::adopt(std::move(result))
    });
    // end snippet

    // snippet: column
    m.def("column", [](py::dltensor<float, py::ndim<2>, py::device::cpu> values, size_t j) {
        if (j >= values.shape(1)) throw py::index_error("no such column");
        // strides in elements ({values.strides(0)} in bytes would not compile); values.cast() is the
        // caller's own object, the view's owner
        return py::dltensor<py::numpy, float, py::ndim<1>>(values.mutable_data(0, j), {values.shape(0)},
                                                           values.cast(), {values.stride(0)});
    });
    // end snippet

    // snippet: count_labels
    m.def("count_labels", [](py::object obj) {  // converted in the body: the parameter's rules
        using Labels = py::dltensor<const uint32_t, py::ndim<1>, py::device::cpu>;
        Labels labels;
        if (!py::try_cast(obj, labels)) throw py::type_error("labels: an integer array or a list");
        return labels.shape(0);  // or: auto labels = py::cast<Labels>(obj);  (raises, saying why)
    });
    // end snippet
}
