// Task: accept a CUDA tensor and launch on the producer's stream. py::dltensor: x.stream() is the
// stream the producer works on (PyTorch through its DLPack exchange API), so the caller passes nothing.
#include "example_backend.h"

#include "cuda_stream/cuda_driver.h"

DLTENSOR_EXAMPLE_MODULE(cuda_stream, m) {
    // snippet: fill
    // Python: ext.fill(x, 1.0)
    m.def("fill", [](py::dltensor<float, py::device::cuda, py::c_contig> x, float value) {
        // The producer's current stream; NULL (the legacy default stream) for producers that only speak
        // __dlpack__, which synchronized with that stream before handing the tensor over.
        cuda_driver::fill_async(x.data(), x.size(), value, x.stream());
    });
    // end snippet

    // snippet: empty
    // A new tensor from PyTorch's own allocator (its caching allocator on CUDA), filled on its stream.
    using Out = py::dltensor<py::pytorch, float, py::ndim<1>, py::device::cuda>;
    m.def("filled", [](size_t n, float value) {
        Out out = Out::empty({n});
        cuda_driver::fill_async(out.data(), n, value, out.stream());
        return out;
    });
    // end snippet
}
