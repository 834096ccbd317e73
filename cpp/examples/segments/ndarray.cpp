// Task: per-segment means of the rows of a matrix, labels given as any integer array; the ids of the
// non-empty segments computed into a local std::vector. nanobind with nb::ndarray (no lists).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <vector>

namespace nb = nanobind;

NB_MODULE(segments_ndarray, m) {
    // snippet: segment_mean
    m.def("segment_mean", [](nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu> values,
                             nb::ndarray<const uint32_t, nb::ndim<1>, nb::device::cpu> labels, size_t k) {
        auto v = values.view();
        auto l = labels.view();
        const size_t d = v.shape(1);
        float *buf = new float[k * d]();  // allocated by hand, freed by the owner
        nb::capsule owner(buf, [](void *p) noexcept { delete[] static_cast<float *>(p); });
        nb::ndarray<nb::numpy, float, nb::ndim<2>> out(buf, {k, d}, owner);
        auto o = out.view();
        std::vector<size_t> count(k, 0);
        for (size_t i = 0; i < v.shape(0); ++i) {
            const uint32_t s = l(i);
            if (s >= k) throw nb::index_error("label out of range");
            ++count[s];
            for (size_t j = 0; j < d; ++j) o(s, j) += v(i, j);
        }
        for (size_t s = 0; s < k; ++s)
            for (size_t j = 0; j < d && count[s]; ++j) o(s, j) /= (float) count[s];
        return out;
    });
    // end snippet

    // snippet: nonempty_segments
    m.def("nonempty_segments", [](nb::ndarray<const uint32_t, nb::ndim<1>, nb::device::cpu> labels) {
        std::vector<uint32_t> ids;
        for (size_t i = 0; i < labels.shape(0); ++i) {
            const uint32_t s = labels(i);
            if (ids.size() <= s) ids.resize(s + 1, 0);
            ids[s] = 1;
        }
        auto *result = new std::vector<uint32_t>();  // on the heap, handed to the owner
        for (uint32_t s = 0; s < ids.size(); ++s)
            if (ids[s]) result->push_back(s);
        nb::capsule owner(result, [](void *p) noexcept { delete static_cast<std::vector<uint32_t> *>(p); });
        return nb::ndarray<nb::numpy, uint32_t, nb::ndim<1>>(result->data(), {result->size()}, owner);
    });
    // end snippet

    // snippet: column
    m.def("column", [](nb::ndarray<float, nb::ndim<2>, nb::device::cpu> values, size_t j) {
        if (j >= values.shape(1)) throw nb::index_error("no such column");
        // strides in elements; the input's Python object is the view's owner, which keeps it alive
        return nb::ndarray<nb::numpy, float, nb::ndim<1>>(values.data() + j * values.stride(1), {values.shape(0)},
                                                          values.cast(), {values.stride(0)});
    });
    // end snippet

    // snippet: count_labels
    m.def("count_labels", [](nb::object obj) {  // converted in the body (raises std::bad_cast on failure)
        if (!nb::ndarray_check(obj)) throw nb::type_error("labels: a uint32 array");
        auto labels = nb::cast<nb::ndarray<const uint32_t, nb::ndim<1>, nb::device::cpu>>(obj);
        return labels.shape(0);
    });
    // end snippet
}
