"""PyTorch through the DLPack C exchange API (and, for comparison, __dlpack__; the `m` fixture runs every
test both ways): the special tensors that the C API does not flag, the producer's stream, and tensors
allocated by PyTorch for C++ to fill."""
import gc
import importlib.util
import threading
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

INCOMPATIBLE = "incompatible function arguments"

# The checkout's `dltensor.explain` (the tests test the checkout, not an installed copy).
_spec = importlib.util.spec_from_file_location(
    "dltensor_explain_torch", Path(__file__).resolve().parent.parent / "python" / "dltensor" / "explain.py")
_explain_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_explain_module)
explain = _explain_module.explain


def refusal_text(function, *args) -> str:
    """The TypeError of a call whose tensor arguments were refused, with dltensor's notes."""
    with pytest.raises(TypeError, match=INCOMPATIBLE) as refused:
        explain(function, *args)
    return "\n".join([str(refused.value), *getattr(refused.value, "__notes__", [])])


def test_switch_routes_through_the_chosen_path(m):
    # torch.Tensor's own __dlpack__, counted (a subclass's own __dlpack__ would be read on every path)
    calls = []
    original = torch.Tensor.__dlpack__

    def counting(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    torch.Tensor.__dlpack__ = counting
    try:
        assert m.common.values(torch.arange(3.0)) == [0, 1, 2]
    finally:
        torch.Tensor.__dlpack__ = original
    assert calls == ([] if m.common.fast_paths_enabled() else [1])


def test_conjugate_view_is_materialized_for_read_only_parameters(m):
    a = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
    c = a.conj()
    assert c.is_conj()
    assert m.common.values(c) == [1 - 2j, 3 + 1j]
    assert m.torch.values_complex64(c) == [1 - 2j, 3 + 1j]


COMPLEX_TO_REAL = "dtype complex64, expected float32 (complex -> real would drop the imaginary part"
LAZY_VIEWS = {
    "conj": lambda t: t.conj(),
    "neg": lambda t: torch._neg_view(t),
    "conj and neg": lambda t: torch._neg_view(t.conj()),
}


@pytest.mark.parametrize("view", sorted(LAZY_VIEWS))
def test_lazy_view_of_a_complex_tensor_never_binds_a_real_parameter(m, view):
    # The dtype rules apply to what the tensor is (complex64), before the view is materialized: a
    # materialized copy converted to float32 would silently drop the imaginary part.
    t = torch.tensor([1 + 2j, 3 + 4j], dtype=torch.complex64)
    v = LAZY_VIEWS[view](t)
    assert v.is_conj() or v.is_neg()
    assert COMPLEX_TO_REAL in refusal_text(m.torch.values_f32, t)
    assert COMPLEX_TO_REAL in refusal_text(m.torch.values_f32, v)
    assert "expected float32, and conversion is off" in refusal_text(m.torch.values_f32_noconvert, v)
    assert "expected float32; a writable parameter never converts" in refusal_text(m.torch.add_one_f32, v)
    assert t.tolist() == [1 + 2j, 3 + 4j]  # the writable parameter wrote nothing


@pytest.mark.parametrize("view", sorted(LAZY_VIEWS))
def test_lazy_view_of_a_complex_tensor_is_materialized_for_complex_parameters(m, view):
    t = torch.tensor([1 + 2j, 3 + 4j], dtype=torch.complex128)
    v = LAZY_VIEWS[view](t)
    expected = v.resolve_conj().resolve_neg().tolist()
    assert m.torch.values_complex64(v) == expected  # materialized, then complex128 -> complex64
    assert m.common.values(v) == expected  # any dtype: materialized as it is


def test_negative_view_of_a_real_tensor_still_converts_to_a_real_parameter(m):
    n = torch._neg_view(torch.tensor([1.5, -2.0], dtype=torch.float64))
    assert m.torch.values_f32(n) == [-1.5, 2.0]
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.torch.values_f32_noconvert(n)


def test_conjugate_view_is_refused_by_writable_parameters(m):
    c = torch.tensor([1 + 2j], dtype=torch.complex64).conj()
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.common.fill(c, 0)


@pytest.mark.parametrize("make", [
    lambda: torch.tensor([1 + 2j, -3 + 0.5j]).conj().imag,
    lambda: torch._neg_view(torch.tensor([2.0, -0.5])),
    lambda: torch.tensor([1 + 2j, -3 + 0.5j]).conj().imag.detach(),
])
def test_negative_view_is_read_with_its_sign(m, make):
    n = make()
    assert n.is_neg()
    expected = n.resolve_neg().tolist()
    assert m.common.values(n) == expected
    assert m.torch.values_f64(n) == expected
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.common.fill(n, 0)  # writable: the memory holds the negated values


def test_negative_view_is_refused_without_conversion(m):
    n = torch._neg_view(torch.tensor([1.0, 2.0], dtype=torch.float64))
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.torch.values_f64_noconvert(n)


def test_requires_grad_reads_but_never_writes(m):
    t = torch.arange(3.0, requires_grad=True)
    assert m.common.values(t) == [0, 1, 2]  # read-only: the data is read, autograd does not see C++
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.torch.add_one_f32(t)  # writable: C++ writes would bypass autograd
    p = torch.nn.Parameter(torch.ones(2))
    assert m.common.values(p) == [1, 1]
    assert m.torch.values_f64(torch.ones(2, dtype=torch.float32, requires_grad=True)) == [1, 1]
    d = t.detach()
    m.torch.add_one_f32(d)
    assert t.tolist() == [1, 2, 3]


@pytest.mark.parametrize("make", [
    lambda: torch.empty(3, device="meta"),
    lambda: torch.eye(3).to_sparse(),
    lambda: torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8),
])
def test_tensors_dlpack_cannot_describe_are_rejected(m, make):
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.common.values(make())


def test_cpu_tensors_have_no_stream(m):
    assert m.torch.stream_of(torch.zeros(2)) == 0
    assert m.torch.stream_of(np.zeros(2)) == 0


def test_framework_allocated_output(m):
    t = m.torch.torch_empty(5)
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
    assert t.tolist() == [0, 0.5, 1.0, 1.5, 2.0]
    t2 = m.torch.torch_empty_2d(2, 3)
    assert t2.dtype == torch.int64 and t2.tolist() == [[0, 1, 2], [100, 101, 102]]
    assert t2.is_contiguous()
    t2 += 1  # an ordinary, writable torch tensor
    assert t2[1, 2].item() == 103


def test_framework_allocated_output_checks_its_rank(m):
    with pytest.raises(ValueError):
        m.torch.torch_empty_bad_rank()


def test_framework_allocated_output_has_no_owner_capsule(m):
    before = m.common.owner_frees()
    t = m.torch.torch_empty(3)
    del t
    gc.collect()
    assert m.common.owner_frees() == before


def test_returned_torch_tensor_releases_its_owner_once_from_any_thread(m):
    before = m.common.owner_frees()
    t = m.torch.arange(8)
    views = [t[1:], t[::2]]
    del t
    gc.collect()
    assert m.common.owner_frees() == before
    holder = {"views": views}
    del views

    def drop():
        holder.clear()
        gc.collect()

    th = threading.Thread(target=drop)
    th.start()
    th.join()
    gc.collect()
    assert m.common.owner_frees() == before + 1
    assert m.common.owner_frees_without_gil() == 0


def test_exchange_and_dlpack_paths_agree(backend_module):
    common = backend_module.common
    cases = [
        torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, 1::2],
        torch.arange(6, dtype=torch.int16).reshape(2, 3).T,
        torch.zeros(0, 3),
        torch.tensor(2.5),
        torch.arange(4.0).expand(3, 4),
        torch.tensor([True, False]),
    ]
    try:
        for t in cases:
            common.set_fast_paths(True)
            fast = (common.describe(t), common.values(t))
            common.set_fast_paths(False)
            slow = (common.describe(t), common.values(t))
            assert fast == slow
    finally:
        common.set_fast_paths(True)


@pytest.mark.parametrize("lib", ["torch", "numpy"])
def test_overlapping_writable_views_see_each_others_writes(m, lib):
    t = torch.arange(6.0) if lib == "torch" else np.arange(6.0, dtype=np.float32)
    m.torch.add_into(t[0:4], t[2:6])  # b[i] is t[i + 2]: read before a[i + 2] overwrites it
    assert list(map(float, t)) == [2.0, 4.0, 6.0, 8.0, 4.0, 5.0]
    s = torch.ones(3) if lib == "torch" else np.ones(3, np.float32)
    m.torch.add_into(s, s)  # the same tensor twice
    assert list(map(float, s)) == [2.0, 2.0, 2.0]


def _counting_subclass(capsule):
    """A torch.Tensor subclass publishing `capsule` as its exchange API, counting __dlpack__ calls."""
    calls = []

    class Published(torch.Tensor):
        def __dlpack__(self, *args, **kwargs):
            calls.append(1)
            return super().__dlpack__(*args, **kwargs)

    Published.__dlpack_c_exchange_api__ = capsule
    return Published, calls


def test_exchange_api_of_another_major_version_alone_is_not_used(m):
    cls, calls = _counting_subclass(m.torch.exchange_api_capsule(2, False))
    before = m.torch.foreign_table_calls()
    assert m.common.values(torch.arange(3.0).as_subclass(cls)) == [0, 1, 2]
    assert m.torch.foreign_table_calls() == before  # the v2 table was never called
    assert calls == [1]  # no table of a readable version: __dlpack__ (on both import paths)


def test_exchange_api_walks_prev_api_to_a_readable_version(m):
    cls, calls = _counting_subclass(m.torch.exchange_api_capsule(2, True))
    before = m.torch.foreign_table_calls()
    assert m.common.values(torch.arange(3.0).as_subclass(cls)) == [0, 1, 2]
    assert m.torch.foreign_table_calls() == before
    assert calls == ([] if m.common.fast_paths_enabled() else [1])  # the chained v1 table: no __dlpack__


def test_exchange_api_missing_an_entry_is_not_used(m):
    # A table of the readable major version without a mandatory entry (here the allocator) is not used.
    cls, calls = _counting_subclass(m.torch.exchange_api_capsule(1, False, allocator=False))
    before = m.torch.foreign_table_calls()
    assert m.common.values(torch.arange(3.0).as_subclass(cls)) == [0, 1, 2]
    assert m.torch.foreign_table_calls() == before  # the incomplete table was never called
    assert calls == [1]  # __dlpack__ (on both import paths)
