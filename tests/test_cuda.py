"""CUDA tensors from PyTorch: accepted by CUDA parameters in place, refused by CPU parameters. Skips only
where no CUDA device exists (CI machines without a GPU); the device checks themselves also run on the
CPU through capsules that claim CUDA memory (test_constraints.py)."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_cuda_tensor_binds_to_a_cuda_parameter_in_place(m):
    t = torch.arange(6, dtype=torch.float32, device="cuda").reshape(2, 3)
    assert m.constraints.take_cuda(t) == 2
    info = m.common.describe(t)
    assert (info["device_type"], info["device_id"], info["data"]) == (2, t.device.index or 0, t.data_ptr())


def test_cuda_tensor_is_refused_by_a_cpu_parameter(m):
    t = torch.zeros(3, device="cuda")
    with pytest.raises(TypeError, match="incompatible function arguments"):
        m.constraints.take_cpu(t)


def test_cuda_conversion_stays_on_the_device(m):
    t = torch.arange(4, dtype=torch.int32, device="cuda")
    with pytest.raises(TypeError):
        m.common.squared_norms(t)  # CPU parameter: a device mismatch is never converted


def test_cuda_tensor_carries_the_producers_stream(m):
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.zeros(4, device="cuda")
        if m.common.fast_paths_enabled():
            assert m.torch.stream_of(t) == s.cuda_stream
        else:
            assert m.torch.stream_of(t) == 0  # __dlpack__ synchronized with the legacy default stream


def test_cuda_framework_allocated_output(m):
    out = m.torch.torch_empty_cuda(16)
    t, stream = out["tensor"], out["stream"]
    assert t.is_cuda and t.shape == (16,) and t.dtype == torch.float32
    assert stream == torch.cuda.current_stream().cuda_stream


def test_empty_like_answers_on_the_arguments_cuda_device(m):
    """`empty_like(x, shape)` of a CUDA tensor: a PyTorch tensor on that device (tests/test_types.cpp)."""
    out = m.types.empty_like_of(torch.ones(3, device="cuda"), 4)
    assert isinstance(out, torch.Tensor) and out.device.type == "cuda" and out.shape == (4,)
    assert out.dtype == torch.float32
