// A realistic example: a 3x3 box blur over batches of float32 images from NumPy, PyTorch or JAX, read and
// written in place through their strides (no copies in or out), with the GIL released while it runs.
#include "example_backend.h"

#include "stencil/box_blur.h"

// snippet: bind
using Images = py::dltensor<const float, py::ndim<3>, py::device::cpu>;  // (batch, height, width), any strides
using Output = py::dltensor<float, py::ndim<3>, py::device::cpu>;        // writable: never a copy

void box_blur_into(Images src, Output dst) {
    auto in = stack_of<const float>(src);
    auto out = stack_of<float>(dst);
    check_blur_operands(in, out);  // ValueError: wrong shape, or dst overlaps src
    py::gil_scoped_release unlocked;  // the parameters keep both tensors alive meanwhile
    box_blur_3x3(in, out);
}

/// A new (batch, height, width) result, returned without a framework tag: an object with __dlpack__
/// that the caller's framework adopts without a copy (np.from_dlpack, torch.from_dlpack, jnp.from_dlpack).
py::dltensor<float, py::ndim<3>, py::c_contig> box_blur(Images src) {
    size_t n = src.shape(0), h = src.shape(1), w = src.shape(2);
    float *data = new float[n * h * w];
    py::capsule owner(data, [](void *p) noexcept { delete[] static_cast<float *>(p); });
    py::dltensor<float, py::ndim<3>, py::c_contig> result(data, {n, h, w}, owner);
    box_blur_into(src, Output(result));
    return result;
}
// end snippet

DLTENSOR_EXAMPLE_MODULE(stencil, m) {
    // snippet: def
    m.def("box_blur_into", &box_blur_into, py::arg("src"), py::arg("dst"));
    m.def("box_blur", &box_blur, py::arg("src"));
    // end snippet
}
