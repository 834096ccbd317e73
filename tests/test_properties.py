"""Property tests (hypothesis): random shapes (0- and 1-extents, up to 8 dimensions), dtypes, views with
random slices (negative steps), transposes and broadcasts from NumPy and PyTorch; C++ reads every element
back and the test compares with the framework's own values. Writes and returns likewise."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

EXAMPLES = 500  # per property and parametrization
MAX_DIMS = 8
MAX_EXTENT = 4  # extents drawn from 0..MAX_EXTENT
MAX_ELEMENTS = 4096
STEPS = [1, 1, 2, -1, -2, 3]  # slice steps (1 drawn twice as often)
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
TORCH_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32",
                "float64", "complex64", "complex128"]

shapes = st.lists(st.integers(0, MAX_EXTENT), min_size=0, max_size=MAX_DIMS).filter(
    lambda s: int(np.prod(s)) <= MAX_ELEMENTS)


@st.composite
def views(draw, dtypes):
    """(base shape, dtype, per-axis slices, axis permutation, broadcast extra dims)."""
    shape = draw(shapes)
    dtype = draw(st.sampled_from(dtypes))
    slices = []
    for n in shape:
        step = draw(st.sampled_from(STEPS))
        start = draw(st.integers(0, max(n - 1, 0)))
        slices.append(slice(start if step > 0 else None, None, step) if n else slice(None))
    perm = draw(st.permutations(range(len(shape))))
    broadcast = draw(st.lists(st.integers(1, 3), max_size=2)) if len(shape) < 7 else []
    return shape, dtype, tuple(slices), tuple(perm), tuple(broadcast)


def numpy_view(spec):
    shape, dtype, slices, perm, broadcast = spec
    size = int(np.prod(shape))
    base = (np.arange(size) % 97).astype(dtype).reshape(shape)
    v = base[slices + (Ellipsis,)].transpose(perm)
    if broadcast:
        v = np.broadcast_to(v, tuple(broadcast) + v.shape)
    return base, v


def torch_view(spec):
    shape, dtype, slices, perm, broadcast = spec
    size = int(np.prod(shape))
    base = (torch.arange(size) % 97).to(getattr(torch, dtype)).reshape(shape)
    # torch has no negative steps: flip the axes that asked for one, then slice with the positive step
    flips = [i for i, s in enumerate(slices) if s.step and s.step < 0]
    v = base.flip(flips) if flips else base
    v = v[tuple(slice(s.start, None, abs(s.step)) if s.step else s for s in slices)]
    v = v.permute(perm)
    if broadcast:
        v = v.expand(tuple(broadcast) + tuple(v.shape))
    return base, v


def as_python(values, dtype):
    if dtype == "bfloat16":
        return [float(v) for v in values]
    return values


@PROPERTY
@given(spec=views(DTYPES))
def test_numpy_views_read_back_exactly(m, spec):
    _, v = numpy_view(spec)
    assert m.common.values(v) == v.ravel().tolist()
    info = m.common.describe(v)
    assert info["shape"] == v.shape
    if v.size > 1:
        assert all(s * v.itemsize == b for s, b, n in zip(info["strides"], v.strides, v.shape) if n > 1)


@PROPERTY
@given(spec=views(TORCH_DTYPES))
def test_torch_views_read_back_exactly(m, spec):
    _, v = torch_view(spec)
    expected = v.flatten().tolist()
    assert m.common.values(v) == expected
    info = m.common.describe(v)
    assert info["shape"] == tuple(v.shape)
    assert info["data"] == v.data_ptr()


@PROPERTY
@given(spec=views(["int32", "float64", "uint8", "complex64"]))
def test_writes_through_numpy_views_land_in_place(m, spec):
    shape, dtype, slices, perm, _ = spec
    base, v = numpy_view(spec[:4] + ((),))
    expected = base.copy()
    expected_view = expected[slices + (Ellipsis,)].transpose(perm)
    expected_view[...] = (np.arange(expected_view.size) % 100).reshape(expected_view.shape)
    m.properties.write_index(v)
    assert np.array_equal(base, expected)


@PROPERTY
@given(spec=views(["int32", "float32", "int64"]))
def test_writes_through_torch_views_land_in_place(m, spec):
    shape, dtype, slices, perm, _ = spec
    positive = tuple(slice(s.start, None, abs(s.step)) if s.step else s for s in slices)  # torch: no flips
    base = (torch.arange(int(np.prod(shape))) % 97).to(getattr(torch, dtype)).reshape(shape)
    expected = base.clone()
    v = base[positive + (Ellipsis,)].permute(perm)
    ev = expected[positive + (Ellipsis,)].permute(perm)
    ev.copy_((torch.arange(ev.numel()) % 100).reshape(ev.shape))
    m.properties.write_index(v)
    assert torch.equal(base, expected)


@PROPERTY
@given(shape=shapes, fortran=st.booleans(), fw=st.sampled_from(["numpy", "pytorch", "jax", "none"]))
def test_returned_tensors_hold_the_cpp_pattern(m, shape, fortran, fw):
    r = getattr(m.properties, "pattern_" + fw)(shape, fortran)
    a = np.from_dlpack(r) if fw == "none" else np.asarray(r)
    assert a.shape == tuple(shape)
    assert np.array_equal(a, np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape))
