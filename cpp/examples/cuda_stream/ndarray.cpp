// Task: accept a CUDA tensor and launch on the producer's stream. nanobind with nb::ndarray: the caller
// passes the stream (nanobind's import does not report one).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>

#include "cuda_stream/cuda_driver.h"

namespace nb = nanobind;

NB_MODULE(cuda_stream_ndarray, m) {
    // snippet: fill
    // Python: ext.fill(x, 1.0, torch.cuda.current_stream().cuda_stream)
    m.def("fill", [](nb::ndarray<float, nb::device::cuda, nb::c_contig> x, float value, uintptr_t stream) {
        cuda_driver::fill_async(x.data(), x.size(), value, (void *) stream);
    }, nb::arg("x").noconvert(), nb::arg("value"), nb::arg("stream"));
    // end snippet
}
