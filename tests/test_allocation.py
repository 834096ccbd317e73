"""`Out::empty()` and `Out::copy_of()` give the annotated order for every framework: a `py::f_contig`
result is column-major whatever the framework's own allocator does (PyTorch's and Paddle's allocate
row-major: their F results are transposed views of a row-major allocation), `copy_of` reads its data in
that order, and C++ that fills an `empty()` result through `data()` in the annotated order finds the
elements where Python reads them. Every framework x order x element size (1, 2, 4, 8, 16 bytes) x shape,
checked by value; PaddlePaddle's rows are in tests/paddle_cases.py (a process of its own). Shapes are
given as braced lists, containers of integers (signed or not) and (ndim, pointer); negative extents are
a clear error."""
import math

import numpy as np
import pytest

from returns_matrix import to_numpy_by_framework

FRAMEWORKS = ["numpy", "pytorch", "jax", "tensorflow", "memview", "none"]
DTYPES = {"i1": np.int8, "f2": np.float16, "f4": np.float32, "f8": np.float64, "c16": np.complex128}
SHAPES = [(5,), (2, 3), (2, 3, 4), (0, 3), (1, 4)]


def expected(shape, order, dtype):
    """Elements 0, 1, ... (imaginary part -k) laid out in `order` over `shape`."""
    k = np.arange(math.prod(shape), dtype=np.float64)
    values = k - 1j * k if np.issubdtype(dtype, np.complexfloating) else k
    return values.astype(dtype).reshape(shape, order=order)


def check(out, framework, shape, order, dtype):
    arr = to_numpy_by_framework(framework, out)
    assert arr.dtype == dtype and arr.shape == shape
    np.testing.assert_array_equal(arr, expected(shape, order, dtype))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_copy_of_reads_its_data_in_the_annotated_order(backend_module, framework, order, dt, shape):
    if framework == "pytorch":
        pytest.importorskip("torch")
    elif framework in ("jax", "tensorflow"):
        pytest.importorskip(framework)
    out = getattr(backend_module.allocation, f"copy_of_{framework}_{order}_{dt}")(list(shape))
    check(out, framework, shape, order, DTYPES[dt])


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_empty_filled_through_data_in_the_annotated_order_reads_back_in_that_order(backend_module, framework,
                                                                                    order, dt, shape):
    if framework == "pytorch":
        pytest.importorskip("torch")
    elif framework in ("jax", "tensorflow"):
        pytest.importorskip(framework)
    out = getattr(backend_module.allocation, f"empty_{framework}_{order}_{dt}")(list(shape))
    check(out, framework, shape, order, DTYPES[dt])


def element_strides(shape, order):
    strides, step = [0] * len(shape), 1
    for i in (range(len(shape)) if order == "F" else reversed(range(len(shape)))):
        strides[i] = step
        step *= shape[i]
    return tuple(strides)


@pytest.mark.parametrize("order", ["C", "F"])
def test_pytorch_results_have_the_annotated_strides(backend_module, order):
    pytest.importorskip("torch")
    for fn in ("empty", "copy_of"):
        out = getattr(backend_module.allocation, f"{fn}_pytorch_{order}_f4")([2, 3, 4])
        assert out.stride() == element_strides((2, 3, 4), order), (fn, out.stride())


@pytest.mark.parametrize("order", ["C", "F"])
def test_numpy_results_have_the_annotated_strides(backend_module, order):
    for fn in ("empty", "copy_of"):
        out = getattr(backend_module.allocation, f"{fn}_numpy_{order}_f8")([2, 3, 4])
        assert out.strides == tuple(8 * s for s in element_strides((2, 3, 4), order)), (fn, out.strides)


def test_every_spelling_of_a_shape_allocates_that_shape(backend_module):
    # a braced list, std::vector<size_t>, std::vector<py::ssize_t>, std::array, a C array, (ndim, pointer)
    outs = backend_module.allocation.empty_shape_forms()
    assert [o.shape for o in outs] == [(2, 3)] * 6
    copies = backend_module.allocation.copy_of_shape_forms()
    assert len(copies) == 5
    for c in copies:
        np.testing.assert_array_equal(c, np.arange(6, dtype=np.float32).reshape(2, 3))


@pytest.mark.parametrize("rank", [0, 1, 3, 5])
def test_a_shape_known_only_at_run_time_gives_that_rank(backend_module, rank):
    shape = list(range(1, rank + 1))
    assert backend_module.allocation.empty_signed(shape).shape == tuple(shape)
    out = backend_module.allocation.copy_of_signed(shape)
    assert out.shape == tuple(shape) and not out.any()


@pytest.mark.parametrize("fn", ["empty_signed", "copy_of_signed"])
def test_a_negative_extent_is_a_clear_error(backend_module, fn):
    with pytest.raises(ValueError, match=r"extent -2 of dimension 1 is negative"):
        getattr(backend_module.allocation, fn)([3, -2])


def test_a_run_time_shape_of_another_rank_than_annotated_is_refused(backend_module):
    with pytest.raises(ValueError, match="does not match the annotated ndim"):
        backend_module.allocation.empty_rank_mismatch([2, 3, 4])


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape, strides, capacity", [
    ((2, 3), (4, 1), 8),           # rows padded
    ((2, 3), (1, 2), 6),           # the other order
    ((2, 3, 2), (1, 2, 6), 12),    # F strides
    ((3, 1, 2), (2, 7, 1), 6),     # a size-1 dimension's stride is never stepped
    ((2, 2), (1, 2), 4),
])
def test_copy_into_another_layout_places_every_element_by_its_strides(backend_module, order, shape, strides,
                                                                      capacity):
    n = math.prod(shape)
    src = [float(k) for k in range(n)]
    got = backend_module.allocation.copy_dense_into(src, order, list(shape), list(strides), capacity)
    want = [-1.0] * capacity
    for k, index in enumerate(np.ndindex(*(shape if order == "C" else shape[::-1]))):
        index = index if order == "C" else index[::-1]
        want[sum(i * s for i, s in zip(index, strides))] = float(k)
    assert got == want


# ---- leading(rows): array_t's resize() to fewer rows ------------------------------------------------------

def test_leading_rows_are_a_view_of_the_full_allocation(backend_module):
    out = backend_module.allocation.shrunk_numpy(8, 3)
    np.testing.assert_array_equal(out, [[0, 1], [10, 11], [20, 21]])
    assert not out.flags.owndata and out.base is not None
    base = out.base
    while getattr(base, "base", None) is not None and not isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base, np.ndarray) and base.shape == (8, 2), type(base)
    assert out.flags.c_contiguous and out.flags.writeable


def test_leading_rows_of_a_pytorch_result(backend_module):
    torch = pytest.importorskip("torch")
    out = backend_module.allocation.shrunk_pytorch(5, 2)
    assert isinstance(out, torch.Tensor) and out.shape == (2, 2)
    assert out.tolist() == [[0, 1], [10, 11]]


def test_leading_rows_keep_the_owner_until_the_view_goes(backend_module):
    import gc
    before = backend_module.common.owner_frees()
    out = backend_module.allocation.shrunk_owned(6, 4)
    np.testing.assert_array_equal(out, [0, 1, 2, 3])
    gc.collect()
    assert backend_module.common.owner_frees() == before
    del out
    gc.collect()
    assert backend_module.common.owner_frees() == before + 1


def test_leading_rows_without_a_framework_and_all_or_none_of_them(backend_module):
    assert np.from_dlpack(backend_module.allocation.shrunk_none(4, 4)).tolist() == [1, 1, 1, 1]
    assert np.from_dlpack(backend_module.allocation.shrunk_none(4, 0)).shape == (0,)


def test_more_leading_rows_than_allocated_or_of_a_0d_tensor_is_an_error(backend_module):
    with pytest.raises(IndexError, match="5 rows of a tensor of 4"):
        backend_module.allocation.shrunk_none(4, 5)
    with pytest.raises(ValueError, match="has no dimensions"):
        backend_module.allocation.shrunk_scalar()
