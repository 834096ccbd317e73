"""The calibrated read of PyTorch's negative and conjugate bits (torch_key_set.h): the layout is found at
first use against PyTorch's own answers, every read is guarded, and whatever is uncertain asks
`is_neg()` / `is_conj()`. The rest of the suite runs every PyTorch test with the read on and off
(conftest.py's `exchange-queries` path); these tests pin the read itself."""
import os
import subprocess
import sys
import textwrap
import threading

import pytest

torch = pytest.importorskip("torch")

if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
    pytest.skip("this PyTorch has no DLPack C exchange API", allow_module_level=True)


@pytest.fixture
def k(backend_module):
    s = backend_module.torch_key_set
    s.set_enabled(True)
    yield s
    s.set_enabled(True)


class Sub(torch.Tensor):
    pass


class Dispatching(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


def _flip(t, neg=None, conj=None):
    if neg is not None:
        torch._C._set_neg(t, neg)
    if conj is not None:
        torch._C._set_conj(t, conj)
    return t


def _assigned(src):
    t = torch.zeros_like(src)
    t.data = src
    return t


def _swapped(a, b):
    torch.utils.swap_tensors(a, b)
    return a


def _inference():
    with torch.inference_mode():
        return torch.ones(3)


# Tensors users bring, several unlike any probe (other dtypes, shapes, 6 dimensions, slices, leaves
# that require grad, results of ops), with the bits PyTorch reports.
TENSORS = {
    "plain": lambda: torch.ones(4),
    "negative": lambda: torch._neg_view(torch.ones(4)),
    "conjugate": lambda: torch.ones(3, dtype=torch.complex128).conj(),
    "negative conjugate": lambda: torch._neg_view(torch.ones(2, 2, dtype=torch.complex64).conj()),
    "conj of real is no view": lambda: torch.ones(3).conj(),
    "conj resolved": lambda: torch.ones(3, dtype=torch.complex64).conj().resolve_conj(),
    "negative detached": lambda: torch._neg_view(torch.ones(3)).detach(),
    "requires grad": lambda: torch.ones(3, requires_grad=True),
    "negative of requires grad": lambda: torch._neg_view(torch.ones(3, requires_grad=True)),
    "inference": _inference,
    "flipped negative in place": lambda: _flip(torch.ones(5), neg=True),
    "flipped conjugate in place": lambda: _flip(torch.ones(5, dtype=torch.complex64), conj=True),
    "flipped back": lambda: _flip(_flip(torch.ones(5), neg=True), neg=False),
    "data assigned a negative view": lambda: _assigned(torch._neg_view(torch.ones(2))),
    "swapped with a negative view": lambda: _swapped(torch.ones(2), torch._neg_view(torch.ones(2))),
    "subclass": lambda: torch.ones(3).as_subclass(Sub),
    "negative subclass": lambda: torch._neg_view(torch.ones(3)).as_subclass(Sub),
    "conjugate subclass with __torch_function__":
        lambda: torch.ones(3, dtype=torch.complex64).conj().as_subclass(Dispatching),
    "0-d negative": lambda: torch._neg_view(torch.tensor(2.0)),
    "5-d negative": lambda: torch._neg_view(torch.ones(1, 1, 2, 1, 2)),
    "6-d negative (sizes on the heap)": lambda: torch._neg_view(torch.ones(1, 1, 2, 1, 2, 1)),
    "6-d plain (sizes on the heap)": lambda: torch.ones(1, 1, 2, 1, 2, 1),
    "negative slice": lambda: torch._neg_view(torch.arange(10.0))[2:7:2],
    "transposed conjugate": lambda: torch.ones(2, 3, dtype=torch.complex64).conj().t(),
    "int64": lambda: torch.arange(4),
    "bool": lambda: torch.ones(3, dtype=torch.bool),
    "bfloat16 negative": lambda: torch._neg_view(torch.ones(3, dtype=torch.bfloat16)),
    "result of an op on a negative view": lambda: torch._neg_view(torch.ones(3)) + 1,
    "expanded": lambda: torch.ones(1, 3).expand(4, 3),
}


def _expected(t):
    return {"negative": bool(t.is_neg()), "conjugate": bool(t.is_conj())}


def test_layout_is_calibrated_against_pytorch(k):
    layout = k.layout()
    assert layout["calibrated"], layout["failure"]
    assert layout["failure"] == ""
    assert layout["probes"] >= 20
    # The bits are PyTorch's own DispatchKey bits, and the offsets lie inside the object and the impl.
    assert layout["negative"] == torch._C.DispatchKeySet(torch._C.DispatchKey.Negative).raw_repr()
    assert layout["conjugate"] == torch._C.DispatchKeySet(torch._C.DispatchKey.Conjugate).raw_repr()
    assert 16 <= layout["impl_in_object"] < torch._C.TensorBase.__basicsize__
    assert 0 < layout["shape_in_impl"] < 1024 and 0 <= layout["keys_in_impl"] < 1024
    assert layout["keys_in_impl"] % 8 == 0 and layout["keys_in_impl"] != layout["shape_in_impl"]


@pytest.mark.parametrize("name", list(TENSORS))
def test_key_set_read_agrees_with_is_neg_and_is_conj(k, name):
    t = TENSORS[name]()
    got = k.bits(t)
    assert {"negative": got["negative"], "conjugate": got["conjugate"]} == _expected(t)
    # The read answers wherever the sizes live in the TensorImpl; 6 dimensions fail the guard.
    assert got["route"] == ("query" if t.dim() > 5 else "key_set")
    k.set_enabled(False)
    off = k.bits(t)
    assert off == {**got, "route": "query"}


def test_read_follows_in_place_flips_between_calls(k):
    t = torch.ones(4)
    x = torch.ones(3, dtype=torch.complex64)
    for neg, conj in [(True, False), (False, False), (True, True), (False, True), (False, False)]:
        _flip(t, neg=neg)
        _flip(x, neg=neg, conj=conj)
        assert k.bits(t) == {"negative": neg, "conjugate": False, "route": "key_set"}
        assert k.bits(x) == {"negative": neg, "conjugate": conj, "route": "key_set"}
    a = torch.ones(2)
    a.data = torch._neg_view(torch.ones(2))
    assert k.bits(a)["negative"] is True
    b, c = torch.ones(2), torch._neg_view(torch.ones(2))
    torch.utils.swap_tensors(b, c)
    assert (k.bits(b)["negative"], k.bits(c)["negative"]) == (True, False)


def test_imports_take_the_sign_through_either_route(k):
    # An import reads the sign through the key set or the query; both read -x as negative values.
    t = torch._neg_view(torch.arange(1.0, 5.0))
    for on in (True, False):
        k.set_enabled(on)
        assert k.sum(t) == pytest.approx(-10.0)
        _flip(t, neg=False)
        assert k.sum(t) == pytest.approx(10.0)
        _flip(t, neg=True)


def test_switch_is_per_process_and_reported(k):
    assert k.enabled()
    k.set_enabled(False)
    assert not k.enabled()
    assert k.bits(torch._neg_view(torch.ones(2))) == {"negative": True, "conjugate": False, "route": "query"}


def test_environment_variable_turns_the_read_off(backend_module):
    script = textwrap.dedent(f"""
        import sys, torch
        sys.path.insert(0, {os.path.dirname(backend_module.__file__)!r})
        import {backend_module.__name__} as mod
        k = mod.torch_key_set
        print(k.enabled(), k.bits(torch._neg_view(torch.ones(2)))["route"])
    """)
    out = {}
    for value in ("0", "1", None):
        env = {key: v for key, v in os.environ.items() if key != "DLTENSOR_TORCH_KEY_SET"}
        if value is not None:
            env["DLTENSOR_TORCH_KEY_SET"] = value
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        out[value] = proc.stdout.split()
    assert out == {"0": ["False", "query"], "1": ["True", "key_set"], None: ["True", "key_set"]}


def test_calibration_in_a_fresh_process_happens_on_the_first_tensor_from_threads(backend_module):
    # The first imports race from 8 threads: one calibrates, the others ask the queries meanwhile; all
    # answer right, and the layout ends up calibrated.
    script = textwrap.dedent(f"""
        import sys, threading, torch
        sys.path.insert(0, {os.path.dirname(backend_module.__file__)!r})
        import {backend_module.__name__} as mod
        k = mod.torch_key_set
        t = torch._neg_view(torch.arange(1.0, 5.0))
        wrong = []
        def run():
            for _ in range(50):
                if k.bits(t)["negative"] is not True or k.sum(t) != -10.0:
                    wrong.append(1)
        threads = [threading.Thread(target=run) for _ in range(8)]
        [th.start() for th in threads]
        [th.join() for th in threads]
        print(len(wrong), k.layout()["calibrated"], k.bits(t)["route"])
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "True", "key_set"]


def test_guard_refuses_a_view_of_another_tensor(k):
    # The guard compares the view's shape with the object's own TensorImpl: a view made from another
    # tensor (as a wrapper's unwrapped view would be) is not read from this object's key set.
    a, b = torch._neg_view(torch.ones(3)), torch.ones(3)
    assert k.bits_with_view_of(b, a) == {"negative": False, "conjugate": False, "route": "query"}
    assert k.bits_with_view_of(a, a)["route"] == "key_set"
