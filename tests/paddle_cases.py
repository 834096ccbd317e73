"""PaddlePaddle as a framework: `paddle.Tensor` arguments on every import path (the exchange API with the
fast paths on, `__dlpack__` off), Paddle's own rules for writable parameters (a leaf that does not stop
gradient is written only under `paddle.no_grad()`; C++ writes bump the in-place version, as an in-place op
does), conversions through Paddle's `astype`, `py::paddle` returns of every dtype and layout and with a
byte_offset, `empty()` through Paddle's allocator, the float8 formats Paddle has, and lifecycles: one
tensor returned twice, views of Paddle tensors dropped (in a subprocess: a hang fails). Skipped where PaddlePaddle is
not installed (the test extras install it). Run by tests/test_paddle.py in a process of its own (PaddlePaddle
crashes when imported after TensorFlow); directly: `python -m pytest tests/paddle_cases.py`."""
import gc
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

paddle = pytest.importorskip("paddle")
ml_dtypes = pytest.importorskip("ml_dtypes")

from returns_matrix import (DTYPES, LAYOUTS, expected_2x3, matrix_case_ids, matrix_cases,  # noqa: E402
                            matrix_values, to_numpy_by_framework)  # (one matrix for every framework)

INCOMPATIBLE = "incompatible function arguments"
VALUES = [1.0, 2.0, 3.0]

_spec = importlib.util.spec_from_file_location(
    "dltensor_explain_paddle", Path(__file__).resolve().parent.parent / "python" / "dltensor" / "explain.py")
_explain_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_explain_module)
explain = _explain_module.explain


def values(t):
    return t.numpy().tolist()


def parameter():
    w = paddle.create_parameter([3], "float32")
    with paddle.no_grad():
        paddle.assign(paddle.to_tensor(VALUES), output=w)
    return w


# ---- the producer matrix: every kind of paddle.Tensor, read-only and writable --------------------------

PRODUCERS = {
    # name: (make, writable: a writable parameter takes it under grad mode, direct: bound without conversion)
    "tensor": (lambda: paddle.to_tensor(VALUES), True, True),
    "strided view": (lambda: paddle.to_tensor([1.0, 0.0, 2.0, 0.0, 3.0])[::2], True, True),
    "parameter": (parameter, False, True),
    "non-leaf": (lambda: parameter() * 1, True, True),
    "detached parameter": (lambda: parameter().detach(), True, True),
    "float64": (lambda: paddle.to_tensor(VALUES, dtype="float64"), False, False),
    "int32": (lambda: paddle.to_tensor([1, 2, 3], dtype="int32"), False, False),
}


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_read_only_parameter_reads_every_paddle_tensor(m, name):
    make, _, _ = PRODUCERS[name]
    assert m.producers.read_f32(make()) == VALUES


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_noconvert_parameter_binds_only_float32_tensors(m, name):
    make, _, direct = PRODUCERS[name]
    if direct:
        assert m.producers.read_f32_noconvert(make()) == VALUES
    else:
        with pytest.raises(TypeError, match=INCOMPATIBLE):
            m.producers.read_f32_noconvert(make())


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_writable_parameter_writes_in_place_or_refuses(m, name):
    make, writable, _ = PRODUCERS[name]
    t = make()
    if writable:
        m.producers.write_f32(t, 7.0)
        assert values(t) == [7.0] * 3
    else:
        with pytest.raises(TypeError, match=INCOMPATIBLE):
            m.producers.write_f32(t, 7.0)
        assert values(t) == VALUES  # nothing was written


def test_strided_view_writes_reach_the_base(m):
    base = paddle.to_tensor([1.0, 0.0, 2.0, 0.0, 3.0])
    m.producers.write_f32(base[::2], 5.0)  # Paddle's slice is a view: C++ writes through its strides
    assert values(base) == [5.0, 0.0, 5.0, 0.0, 5.0]


def test_leaf_that_does_not_stop_gradient_is_writable_under_no_grad_only(m):
    w = parameter()
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.write_f32(w, 2.0)
    with paddle.no_grad():
        m.producers.write_f32(w, 2.0)
    assert values(w) == [2.0] * 3


def test_refusal_of_a_parameter_names_paddles_rule(m):
    with pytest.raises(TypeError) as info:
        explain(m.producers.write_f32, parameter(), 2.0)
    text = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
    assert "stop_gradient=False" in text and "paddle.no_grad()" in text, text


def test_writes_bump_the_inplace_version(m):
    t = paddle.to_tensor(VALUES)
    before = t.inplace_version
    m.producers.write_f32(t, 1.0)
    assert t.inplace_version == before + 1
    m.producers.read_f32(t)  # a read-only parameter writes nothing
    assert t.inplace_version == before + 1


def test_a_write_after_use_in_autograd_is_caught_by_paddle(m):
    w = parameter()
    y = w * 1  # a non-leaf: writable, and its version is saved by the multiplication below
    z = (y * y).sum()
    m.producers.write_f32(y, 3.0)
    with pytest.raises(Exception, match="(?i)inplace|version"):
        z.backward()


def test_converted_tensor_is_a_copy_with_the_parameter_dtype(m):
    t = paddle.to_tensor([1, 2, 3], dtype="int64")
    assert m.producers.read_f32(t) == VALUES
    assert t.dtype == paddle.int64  # the caller's tensor is unchanged


# ---- returns --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_return_has_paddles_dtype_and_values(backend_module, dtype, layout):
    ret = backend_module.producers.ret_paddle
    if dtype == "uint16":  # Paddle has no uint16: its DLPack import would read it as bfloat16
        with pytest.raises(TypeError, match="no uint16"):
            ret(dtype, layout)
        return
    out = ret(dtype, layout)
    assert isinstance(out, paddle.Tensor)
    assert out.dtype == getattr(paddle, dtype), out.dtype
    if dtype == "bfloat16":
        got = out.astype("float32").numpy().tolist()
    elif dtype.startswith("complex"):
        got = out.numpy().astype(np.complex128).tolist()
    elif dtype == "bool":
        got = out.numpy().tolist()
    else:
        got = out.numpy().astype(np.float64).tolist()
    assert got == expected_2x3(dtype, layout)


@pytest.mark.parametrize("layout", ["C", "F", "s"])
@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "bfloat16", "float16", "float32", "complex64"])
def test_constructed_return_matrix_holds_its_values_and_releases_its_owner_once(backend_module, dtype, layout):
    # tests/test_return_matrix.py's matrix for Paddle: every byte offset (none, misaligned, aligned) and
    # one tensor returned twice, which is one paddle.Tensor (Paddle keeps one import per address).
    m = backend_module
    for offset, twice in matrix_cases(dtype):
        case = matrix_case_ids(offset, twice)
        gc.collect()
        before = m.common.owner_frees()
        out = getattr(m.return_matrix, f"{'twice' if twice else 'once'}_paddle_{dtype}")(layout, offset)
        results = list(out) if twice else [out]
        del out
        if twice:
            assert results[0] is results[1], case
        for r in results:
            assert isinstance(r, paddle.Tensor) and r.dtype == getattr(paddle, dtype), (case, r.dtype)
            wide = "complex128" if dtype.startswith("complex") else "float64"
            wider = r if dtype.startswith("complex") else r.astype("float32")
            np.testing.assert_array_equal(wider.numpy().astype(wide), matrix_values(dtype), err_msg=case)
        del r, wider  # the loop's names hold the last tensor too
        results.clear()
        gc.collect()
        assert m.common.owner_frees() == before + 1, case
    assert m.common.owner_frees_without_gil() == 0


@pytest.mark.parametrize("offset", [4, 16], ids=["misaligned", "aligned"])
def test_return_with_a_byte_offset_holds_the_offset_elements(m, offset):
    # Paddle ignores DLPack's byte_offset: dltensor folds it into data (the C++ functions of
    # tests/test_export.cpp, which the other frameworks' tests share).
    gc.collect()
    before = m.common.owner_frees()
    t = m.export.offset_paddle(offset, 8)
    assert isinstance(t, paddle.Tensor) and values(t) == [float(offset + i) for i in range(8)]
    del t
    gc.collect()
    assert m.common.owner_frees() == before + 1


def test_one_tensor_returned_twice_is_one_paddle_tensor_released_once(m):
    # Paddle keeps one import per address (a second import loses a deleter): the second result is the first.
    gc.collect()
    before = m.common.owner_frees()
    a, b = m.export.twice_paddle(16)
    assert a is b and values(a) == list(range(16))
    del a, b
    gc.collect()
    assert m.common.owner_frees() == before + 1
    assert m.common.owner_frees_without_gil() == 0


@pytest.mark.parametrize("first, second", [("nanobind", "pybind11"), ("pybind11", "nanobind")])
def test_one_view_returned_by_two_modules_is_one_paddle_tensor(first, second):
    # Two extension modules (here the two backends) return one view: Paddle keeps one import per address,
    # so the second must get the first's tensor, or one reference to the array would never be released.
    from conftest import BACKENDS, load_backend
    if not {first, second} <= set(BACKENDS):
        pytest.skip("DLTENSOR_BACKENDS leaves a backend out")
    a, b = load_backend(first), load_backend(second)
    x = np.arange(4, dtype=np.float32)
    gc.collect()
    before = sys.getrefcount(x)
    p1 = a.paddle.view_of(x)
    p2 = b.paddle.view_of(x)
    assert p2 is p1 and values(p2) == [0.0, 1.0, 2.0, 3.0]
    assert sys.getrefcount(x) > before
    del p1, p2
    gc.collect()
    assert sys.getrefcount(x) == before


DROP_VIEWS = """
import gc, importlib, sys
sys.path.insert(0, sys.argv[1])
import paddle
m = importlib.import_module(sys.argv[2])
m.common.set_fast_paths(sys.argv[3] != "dlpack")
for make in ("view_of", "same_view_of", "tail_view_of"):
    t = m.paddle.arange(4)  # C++ memory, a DLPack import of Paddle's
    y = getattr(m.paddle, make)(t)
    assert y.numpy().tolist() == ([1.0, 2.0, 3.0] if make == "tail_view_of" else [0.0, 1.0, 2.0, 3.0])
    del t
    gc.collect()
    del y  # Paddle's deleter of y releases what keeps t's memory: not from inside that deleter
    gc.collect()
print("owners freed", m.common.owner_frees())
"""


@pytest.mark.parametrize("path", ["exchange", "dlpack"])
def test_dropping_a_view_of_a_paddle_tensor_returns(backend_module, path):
    # Paddle's DLPack deleter hangs when it runs inside another of its deleters: dltensor releases what a
    # returned tensor holds after Paddle's deleter returned. A hang fails here (timeout), in a process of its own.
    build = os.path.dirname(backend_module.__file__)
    proc = subprocess.run([sys.executable, "-c", DROP_VIEWS, build, backend_module.__name__, path],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "owners freed 3" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def test_return_of_cpp_memory_shares_it_and_frees_it_once(m):
    gc.collect()
    before = m.common.owner_frees()
    t = m.paddle.arange(4)
    assert isinstance(t, paddle.Tensor) and values(t) == [0, 1, 2, 3]
    view = t[1:]
    del t
    gc.collect()
    assert m.common.owner_frees() == before  # the view still uses the memory
    assert values(view) == [1, 2, 3]
    del view
    gc.collect()
    assert m.common.owner_frees() == before + 1
    assert m.common.owner_frees_without_gil() == 0


def test_returned_input_is_the_callers_object(m):
    t = paddle.to_tensor(VALUES)
    assert m.paddle.identity(t) is t
    assert m.paddle.identity_ro(t) is t


def test_writable_numpy_memory_returns_as_a_view(m):
    a = np.array(VALUES, np.float32)
    t = m.paddle.view_of(a)
    assert isinstance(t, paddle.Tensor) and values(t) == VALUES
    a[0] = 9.0
    assert values(t)[0] == 9.0


def test_read_only_memory_returns_as_a_copy(m):
    a = np.array(VALUES, np.float32)
    a.setflags(write=False)
    t = m.paddle.const_view_of(a)
    assert isinstance(t, paddle.Tensor) and values(t) == VALUES
    t[0] = 5.0  # Paddle has no read-only tensors: the write lands in the copy, never in `a`
    assert a.tolist() == VALUES


def test_empty_allocates_through_paddle(m):
    out = m.paddle.empty_f32(2, 3)
    assert isinstance(out, paddle.Tensor) and out.dtype == paddle.float32 and out.shape == [2, 3]
    assert values(out) == [[0, 1, 2], [3, 4, 5]]
    const = m.paddle.empty_const_f64(3)
    assert const.dtype == paddle.float64 and values(const) == [0.0, 0.5, 1.0]
    with pytest.raises(TypeError, match="no uint16"):
        m.paddle.empty_uint16(2)


def test_empty_like_and_return_like_answer_with_paddle_tensors(m):
    """Results in the caller's framework (tests/test_types.cpp): a paddle.Tensor in, a paddle.Tensor out,
    allocated by Paddle; memory C++ made, returned like a paddle.Tensor, is one too; the argument itself
    comes back as itself; and overloads by framework send a paddle.Tensor to the first overload that
    converts it (neither NumPy nor PyTorch)."""
    x = paddle.to_tensor(VALUES)
    out = m.types.doubled(x)
    assert isinstance(out, paddle.Tensor) and values(out) == [2.0, 4.0, 6.0]
    empty = m.types.empty_like_of(x, 4)
    assert isinstance(empty, paddle.Tensor) and empty.shape == [4] and empty.dtype == paddle.float32
    copied = m.types.copy_like(x)
    assert isinstance(copied, paddle.Tensor) and values(copied) == [1.0, 2.0, 3.0]
    assert m.types.view_like(x) is x
    assert m.types.which(x) == "numpy"


def test_empty_of_the_shared_matrix(backend_module):
    out = backend_module.producers.empty_paddle()
    assert isinstance(out, paddle.Tensor) and values(out) == [[0, 1, 2], [3, 4, 5]]


# ---- float8 -----------------------------------------------------------------------------------------------

FLOAT8 = ["float8_e4m3fn", "float8_e5m2"]  # the formats Paddle 3.3 has


ALLOCATION_DTYPES = {"i1": np.int8, "f2": np.float16, "f4": np.float32, "f8": np.float64, "c16": np.complex128}


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 3, 4), (0, 3)], ids=str)
@pytest.mark.parametrize("dt", ALLOCATION_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("fn", ["copy_of", "empty"])
def test_empty_and_copy_of_give_the_annotated_order(backend_module, fn, order, dt, shape):
    # tests/test_allocation.py's matrix for Paddle, whose allocator is row-major: an F result is the
    # transposed view of a row-major allocation; copy_of reads and empty()'s data() is filled in that order.
    out = getattr(backend_module.allocation, f"{fn}_paddle_{order}_{dt}")(list(shape))
    arr = to_numpy_by_framework("paddle", out)
    k = np.arange(int(np.prod(shape)), dtype=np.float64)
    values = k - 1j * k if dt == "c16" else k
    assert arr.dtype == ALLOCATION_DTYPES[dt] and arr.shape == shape
    np.testing.assert_array_equal(arr, values.astype(ALLOCATION_DTYPES[dt]).reshape(shape, order=order))
    if len(shape) == 3 and order == "F":
        assert list(out.strides) == [1, 2, 6], out.strides


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_tensors_bind_and_write_in_place(m, name):
    bits = np.arange(0, 64, dtype=np.uint8)
    src = paddle.to_tensor(bits.view(getattr(ml_dtypes, name)).astype(np.float32)).astype(name)
    assert getattr(m.paddle, "bits_" + name)(src) == bits.tolist()
    getattr(m.paddle, "scale_" + name)(src, 2.0)
    doubled = bits.view(getattr(ml_dtypes, name)).astype(np.float32) * 2
    assert src.astype("float32").numpy().tolist() == doubled.astype(getattr(ml_dtypes, name)).astype(np.float32).tolist()


@pytest.mark.parametrize("name", FLOAT8)
def test_the_other_float8_format_never_binds(m, name):
    other = FLOAT8[1 - FLOAT8.index(name)]
    src = paddle.to_tensor([1.0, 2.0]).astype(other)
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        getattr(m.paddle, "scale_" + name)(src, 2.0)


@pytest.mark.parametrize("how", ["return", "empty"])
@pytest.mark.parametrize("name", FLOAT8)
def test_float8_returns_are_paddles_float8(m, name, how):
    out = getattr(m.paddle, f"{how}_{name}")(64)
    assert isinstance(out, paddle.Tensor) and out.dtype == getattr(paddle, name)
    want = np.arange(64, dtype=np.uint8).view(getattr(ml_dtypes, name)).astype(np.float32)
    got = out.astype("float32").numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])


# ---- capsules and lifecycles ---------------------------------------------------------------------------

def test_paddle_capsule_is_consumed_once(m):
    t = paddle.to_tensor(VALUES)
    cap = paddle.utils.dlpack.to_dlpack(t)
    assert m.producers.read_f32(cap) == VALUES
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.producers.read_f32(cap)


def test_argument_outlives_the_callers_reference(m):
    n = m.common.keep(paddle.to_tensor(VALUES))  # C++ keeps the tensor beyond the call
    gc.collect()
    assert m.common.kept_values(n - 1) == VALUES
    m.common.release_kept()


def test_paddle_and_torch_in_one_process(m):
    torch = pytest.importorskip("torch")
    t = paddle.to_tensor(VALUES)
    assert m.producers.read_f32(torch.from_dlpack(t)) == VALUES
    assert m.producers.read_f32(paddle.from_dlpack(torch.tensor(VALUES))) == VALUES


def test_kept_tensor_released_without_the_gil_keeps_paddles_tensor_valid(m):
    t = paddle.to_tensor(VALUES)
    m.common.keep(t)
    m.common.keep(t[1:])  # a view too
    m.ownership.release_kept_without_gil()  # C++ drops its references from a thread without the GIL
    gc.collect()
    assert values(t) == VALUES


def test_returned_tensor_outlives_the_module_function_and_gc(m):
    out = m.paddle.empty_f32(2, 2)
    gc.collect()
    doubled = out * 2  # Paddle computes on the memory dltensor allocated through it
    assert values(doubled) == [[0, 2], [4, 6]]


@pytest.mark.parametrize("dtype", ["float32", "float64"], ids=["order only", "order and dtype"])
def test_order_conversions_copy_paddle_tensors(m, dtype):
    # astype keeps the layout (and is the tensor itself for its own dtype): the C-order copy is Paddle's
    # contiguous(), the F-order one NumPy's.
    x = paddle.to_tensor(np.arange(6, dtype=dtype).reshape(2, 3))
    got = m.conversion.ro_c_f32(x.t())  # strides (1, 3)
    assert got["values"] == [0, 3, 1, 4, 2, 5] and got["strides"] == (2, 1)
    got = m.conversion.ro_f_f32(x)
    assert got["values"] == [0, 1, 2, 3, 4, 5] and got["strides"] == (1, 2)
    got = m.conversion.ro_f_f32(x.t())  # F order already: float32 binds as it is
    assert got["values"] == [0, 3, 1, 4, 2, 5] and got["strides"] == (1, 3)
