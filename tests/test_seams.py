"""Where dltensor meets the binding libraries and the interpreter (tests/test_seams.cpp): the framework-less
`dltensor.Tensor` type, capsules consumed by an overload pass whose call did not go ahead, read-only
sources returned to PyTorch, lazy PyTorch parameters, exceptions raised in producer code (in subprocesses),
explanations, and conversions of producers that cannot convert themselves. Both backends, every import
path."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dltensor
from conftest import HERE, load_backend
from producer import FLOAT32, capsule

torch = pytest.importorskip("torch")


# --- dltensor.Tensor --------------------------------------------------------------------------------------

def test_tensor_type_cannot_be_instantiated_from_python(m):
    T = type(m.seams.ret_none(3))
    assert T.__name__ == "Tensor" and T.__module__ == "dltensor"
    with pytest.raises(TypeError):
        T()
    with pytest.raises(TypeError):
        T.__new__(T)
    with pytest.raises(TypeError):
        object.__new__(T)


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_tensor_type_instantiation_attempts_never_crash(backend):
    """Every way a user might try to make an empty `dltensor.Tensor` and use it, in a fresh process."""
    out = run_script(backend, """
        import numpy as np
        T = type(m.seams.ret_none(3))
        for make in (lambda: T(), lambda: T.__new__(T), lambda: object.__new__(T)):
            try:
                o = make()
            except TypeError:
                continue
            for use in (lambda: o.__dlpack__(), lambda: o.__dlpack_device__(), lambda: memoryview(o),
                        lambda: np.from_dlpack(o), lambda: m.seams.ro_f64(o)):
                try:
                    use()
                except (TypeError, BufferError):
                    pass
        print("SURVIVED")
    """)
    assert out.returncode == 0 and "SURVIVED" in out.stdout, out.stdout + out.stderr


def test_dlpack_refuses_positional_arguments(m):
    with pytest.raises(TypeError, match="does not accept positional arguments"):
        m.seams.ret_none(3).__dlpack__(None)


@pytest.mark.parametrize("kwargs, match", [
    ({"max_version": [1, 3]}, "max_version must be None or a tuple of two integers, not \\[1, 3\\]"),
    ({"max_version": (1,)}, "max_version must be None or a tuple of two integers"),
    ({"max_version": ("1", "0")}, "max_version must be None or a tuple of two integers"),
    ({"dl_device": "cpu"}, "dl_device must be None or a tuple of two integers, not 'cpu'"),
    ({"dl_device": (1,)}, "dl_device must be None or a tuple of two integers"),
    ({"copy": 1}, "copy must be None or a bool"),
    ({"unknown": 1}, "unknown"),
], ids=["max_version list", "max_version short", "max_version str", "dl_device str", "dl_device short",
        "copy int", "unknown keyword"])
def test_dlpack_argument_of_wrong_type_raises_type_error(m, kwargs, match):
    with pytest.raises(TypeError, match=match):
        m.seams.ret_none(3).__dlpack__(**kwargs)


def test_dlpack_valid_arguments_export(m):
    t = m.seams.ret_none(3)
    assert np.from_dlpack(t).tolist() == [0.0, 1.0, 2.0]
    cap = t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False, stream=None)
    assert "dltensor_versioned" in repr(cap)
    with pytest.raises(BufferError, match="another device"):
        t.__dlpack__(dl_device=(2, 0))
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(np.int64(1), np.int32(0)),
                                                     dl_device=(np.int32(1), np.uint8(0))))  # any __index__
    with pytest.raises(ValueError, match="dl_device \\(1, 1267650600228229401496703205376\\) is out of range"):
        t.__dlpack__(dl_device=(1, 2**100))


@pytest.mark.parametrize("consumer", ["numpy", "torch"])
def test_dlpack_copy_true_exports_an_independent_copy_flagged_as_one(m, consumer):
    import torch
    t = m.seams.ret_none(3)
    from_dlpack = np.from_dlpack if consumer == "numpy" else torch.from_dlpack
    a = from_dlpack(t, copy=True)
    a[0] = 100
    assert np.from_dlpack(t).tolist() == [0.0, 1.0, 2.0]  # the tensor's memory is untouched
    b = from_dlpack(t, copy=True, device="cpu")  # dl_device=(1, 0): the copy stays on the CPU
    assert b.tolist() == [0.0, 1.0, 2.0]
    # the export says it is a copy (DLPack 1.1's IS_COPIED): a writable parameter refuses it
    t = m.return_matrix.once_none_float32("C", 0)  # float32
    with pytest.raises(TypeError, match="incompatible function arguments"):
        m.producers.write_f32(t.__dlpack__(max_version=(1, 3), copy=True), 1.0)
    assert m.producers.read_f32_noconvert(t.__dlpack__(max_version=(1, 3), copy=True)) == [0, 1, 2, 3, 4, 5]
    m.producers.write_f32(t.__dlpack__(max_version=(1, 3)), 1.0)  # not a copy: bound and written
    assert np.from_dlpack(t).tolist() == [[1.0] * 3] * 2


def test_dlpack_copy_true_of_a_strided_tensor_is_c_ordered_and_writable(m):
    t = m.return_matrix.once_none_float32("s", 0)  # strides (6, 2) elements
    a = np.from_dlpack(t, copy=True)
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and a.flags.c_contiguous and a.flags.writeable


# --- the buffer protocol of dltensor.Tensor ---------------------------------------------------------------

def test_buffer_protocol_reads_without_dlpack(m):
    t = m.seams.ret_none(4)
    assert memoryview(t).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.asarray(t).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not memoryview(t).readonly
    assert memoryview(m.seams.ret_none_read_only(2)).readonly


@pytest.mark.parametrize("request_, c_order, f_order", [
    ("simple", True, False), ("nd", True, False), ("strided", True, True), ("c", True, False),
    ("f", False, True), ("any", True, True),
])
def test_buffer_requests_are_honoured_for_each_order(m, request_, c_order, f_order):
    for tensor, ok in ((m.seams.ret_none_c(), c_order), (m.seams.ret_none_f(), f_order)):
        if ok:
            got = m.seams.get_buffer(tensor, request_)
            assert got["len"] == 8 * 12
            assert got["strides"] == (request_ not in ("simple", "nd"))
            assert got["shape"] == (request_ != "simple")
        else:
            with pytest.raises(BufferError):
                m.seams.get_buffer(tensor, request_)


def test_buffer_of_f_ordered_tensor_reads_right(m):
    t = m.seams.ret_none_f()
    assert np.asarray(t).tolist() == np.arange(12.0).reshape(3, 4).tolist()
    view = memoryview(t)
    assert view.f_contiguous and not view.c_contiguous and view.strides == (8, 24)
    import struct
    assert struct.unpack_from("6d", m.seams.ret_none(6)) == (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)


def test_buffer_of_read_only_tensor_refuses_writable_requests(m):
    with pytest.raises(BufferError, match="read-only"):
        m.seams.get_buffer(m.seams.ret_none_read_only(3), "writable")
    assert m.seams.get_buffer(m.seams.ret_none(3), "writable")["len"] == 24


def test_memview_return_is_a_memoryview_over_the_tensor(m):
    v = m.seams.ret_memview(3)
    assert isinstance(v, memoryview) and v.tolist() == [0.0, 1.0, 2.0]
    assert type(v.obj).__name__ == "Tensor"
    assert np.asarray(v.obj).tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("fn", ["ret_ownerless_none", "ret_ownerless_memview", "ret_ownerless_array_api"])
def test_ownerless_return_that_must_copy_is_refused_for_frameworks_without_copies(m, fn):
    with pytest.raises(RuntimeError, match="not supported for this framework"):
        getattr(m.seams, fn)()


def test_none_passes_through_a_none_parameter_as_none(m):
    assert m.seams.passthrough_none(None) is None
    a = np.ones(2)
    assert m.seams.passthrough_none(a) is a
    with pytest.raises(TypeError):  # what the parameter refuses is no None: the call does not go ahead
        m.seams.passthrough_none("not a tensor")
    if hasattr(m.seams, "passthrough_none_policy_none"):  # nanobind's rv_policy::none: None still returns None
        assert m.seams.passthrough_none_policy_none(None) is None
        assert m.seams.passthrough_none_policy_none(a) is a

def test_none_entry_of_a_none_list_is_an_empty_tensor(m):
    if not hasattr(m.seams, "ndims_of_entries"):
        pytest.skip("nanobind's .none(); pybind11 spells an optional tensor std::optional")
    assert m.seams.ndims_of_entries([np.ones((2, 3)), None, np.ones(4)]) == [2, 0, 1]


# --- capsules and overload passes -------------------------------------------------------------------------

CAPSULES = {
    "torch": lambda: (lambda t: (torch.utils.dlpack.to_dlpack(t), t))(torch.zeros(3)),
    "numpy": lambda: (lambda a: (a.__dlpack__(), a))(np.zeros(3, np.float32)),
    "numpy versioned": lambda: (lambda a: (a.__dlpack__(max_version=(1, 0)), a))(np.zeros(3, np.float32)),
}


@pytest.mark.parametrize("kind", CAPSULES)
def test_capsule_consumed_by_a_failed_pass_binds_in_the_next(m, kind):
    cap, target = CAPSULES[kind]()
    # The exact pass binds `dst`, then refuses the float64 `src`; the converting pass must get the capsule.
    assert m.seams.copy_into(cap, np.arange(3.0)) == 3
    assert np.asarray(target).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError):  # consumed by the call that went ahead: never twice
        m.seams.wr_f32(cap)


@pytest.mark.parametrize("kind", CAPSULES)
def test_capsule_left_usable_when_the_call_does_not_go_ahead(m, kind):
    cap, target = CAPSULES[kind]()
    with pytest.raises(TypeError):
        m.seams.tensor_then_int(cap, "not an int")
    assert "used" not in repr(cap)
    assert m.seams.wr_f32(cap) == 3
    assert "used" in repr(cap)


@pytest.mark.parametrize("kind", CAPSULES)
@pytest.mark.parametrize("fn", ["wr_f32", "wr_f32_ref"])
def test_capsule_bound_by_a_call_that_went_ahead_stays_consumed(m, kind, fn):
    cap, target = CAPSULES[kind]()
    assert getattr(m.seams, fn)(cap) == 3
    assert "used" in repr(cap)
    with pytest.raises(TypeError):
        getattr(m.seams, fn)(cap)


def test_capsule_handed_back_is_freed_exactly_once(m):
    before = m.common.deleter_calls()
    storage = bytearray(12)
    cap = capsule(m, storage, shape=(3,), dtype=FLOAT32)
    with pytest.raises(TypeError):
        m.seams.tensor_then_int(cap, "not an int")
    assert m.common.deleter_calls() == before  # handed back, not freed
    del cap
    assert m.common.deleter_calls() == before + 1


CONTAINERS = {
    "vector": lambda cap: [cap],
    "vector_ref": lambda cap: [cap],
    "list": lambda cap: [cap],
    "array": lambda cap: [cap],
    "optional": lambda cap: cap,
    "map": lambda cap: {"a": cap},
    "unordered_map": lambda cap: {"a": cap},
}
CONTAINER_CASES = [*CONTAINERS, pytest.param("deque", marks=pytest.mark.only_backend("pybind11"))]
CONTAINERS["deque"] = lambda cap: [cap]  # nanobind has no std::deque caster


@pytest.mark.parametrize("kind", CAPSULES)
@pytest.mark.parametrize("container", CONTAINER_CASES)
def test_capsule_in_a_container_left_usable_when_the_call_does_not_go_ahead(m, kind, container):
    fn = getattr(m.seams, f"{container}_then_int")
    cap, target = CAPSULES[kind]()
    with pytest.raises(TypeError):
        fn(CONTAINERS[container](cap), "not an int")
    assert "used" not in repr(cap)  # handed back
    assert m.seams.wr_f32(cap) == 3
    assert "used" in repr(cap)


@pytest.mark.parametrize("container", CONTAINER_CASES)
def test_capsule_in_a_container_whose_call_went_ahead_stays_consumed(m, container):
    fn = getattr(m.seams, f"{container}_then_int")
    cap, target = CAPSULES["torch"]()
    assert fn(CONTAINERS[container](cap), 1) == 1
    assert "used" in repr(cap)
    with pytest.raises(TypeError):
        m.seams.wr_f32(cap)


@pytest.mark.parametrize("kind", CAPSULES)
def test_capsule_in_a_vector_binds_in_the_next_overload(m, kind):
    cap, target = CAPSULES[kind]()
    # The first overload binds the vector, then refuses the str; the second must get the capsule.
    assert m.seams.fill_vector([cap], "four") == "str"
    assert np.asarray(target).tolist() == [4.0, 4.0, 4.0]
    assert "used" in repr(cap)


def test_capsule_consumed_by_a_call_made_while_a_container_loads_stays_consumed(m):
    # A sequence whose __getitem__ calls the extension: that call goes ahead with `inner`, so `inner` stays
    # consumed when the outer call does not go ahead (and `outer`, which the container consumed, is back).
    outer, _ = CAPSULES["torch"]()
    inner, _ = CAPSULES["torch"]()

    class Calls:
        def __len__(self):
            return 1

        def __getitem__(self, i):
            if i >= 1:
                raise IndexError(i)
            assert m.seams.wr_f32(inner) == 3
            return outer

    with pytest.raises(TypeError):
        m.seams.vector_then_int(Calls(), "not an int")
    assert "used" in repr(inner)
    assert "used" not in repr(outer)


def test_capsule_in_a_container_handed_back_is_freed_exactly_once(m):
    before = m.common.deleter_calls()
    storage = bytearray(12)
    cap = capsule(m, storage, shape=(3,), dtype=FLOAT32)
    with pytest.raises(TypeError):
        m.seams.vector_then_int([cap], "not an int")
    assert m.common.deleter_calls() == before  # handed back, not freed
    del cap
    assert m.common.deleter_calls() == before + 1


def test_capsule_with_one_overload_binds(m):
    t = torch.zeros(3)
    assert m.seams.copy_into_one(torch.utils.dlpack.to_dlpack(t), np.arange(3.0)) == 3
    assert t.tolist() == [0.0, 1.0, 2.0]


# --- read-only sources returned to PyTorch ----------------------------------------------------------------

def read_only_numpy():
    a = np.ones(3, np.float32)
    a.flags.writeable = False
    return a


def jax_array():
    jnp = pytest.importorskip("jax.numpy")
    return jnp.ones(3, dtype="float32")


@pytest.mark.parametrize("make", [read_only_numpy, jax_array], ids=["read-only numpy", "jax"])
def test_read_only_source_returned_to_pytorch_is_a_copy(m, make):
    x = make()
    out = m.seams.ident_torch(x)
    assert isinstance(out, torch.Tensor)
    out.add_(1)
    assert out.tolist() == [2.0, 2.0, 2.0]
    assert np.asarray(x).tolist() == [1.0, 1.0, 1.0]


def test_writable_source_returned_to_pytorch_is_a_view(m):
    a = np.ones(3, np.float32)
    m.seams.ident_torch_writable(a).add_(1)
    assert a.tolist() == [2.0, 2.0, 2.0]


def test_pytorch_source_returned_to_pytorch_is_itself(m):
    t = torch.ones(3)
    assert m.seams.ident_torch(t) is t


# --- lazy PyTorch parameters ------------------------------------------------------------------------------

LAZY = {
    "LazyLinear weight": lambda: torch.nn.LazyLinear(3).weight,
    "UninitializedParameter": lambda: torch.nn.parameter.UninitializedParameter(),
    "UninitializedBuffer": lambda: torch.nn.parameter.UninitializedBuffer(),
}


@pytest.mark.parametrize("kind", LAZY)
@pytest.mark.parametrize("fn", ["ro_f32", "wr_f32"])
def test_lazy_parameters_are_refused_with_pytorch_reason(m, kind, fn):
    x = LAZY[kind]()
    with torch.no_grad():
        with pytest.raises(TypeError) as info:
            dltensor.explain(getattr(m.seams, fn), x)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "uninitialized parameter" in notes


def test_initialized_lazy_parameter_binds(m):
    layer = torch.nn.LazyLinear(3)
    layer(torch.ones(1, 2))
    assert m.seams.ro_f32(layer.bias.detach()) == pytest.approx(float(layer.bias.detach().double().sum()))


# --- exceptions raised in producer code -------------------------------------------------------------------

def run_script(backend, body, path="exchange", timeout=300):
    build = os.path.dirname(load_backend(backend).__file__)
    # Python's own SIGINT handler, whatever the suite inherited (a shell's background job starts with SIGINT
    # ignored, and Python then installs none): the cases that want another one set it themselves.
    prelude = textwrap.dedent(f"""
        import os, signal, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.path[:0] = [{build!r}, {str(HERE)!r}]
        import importlib
        m = importlib.import_module("dltensor_test_{backend}")
        m.common.set_fast_paths({path == "exchange"})
    """)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(body)], capture_output=True,
                          text=True, timeout=timeout)


RAISERS = {
    "__dlpack__": "class P:\n    def __dlpack__(self, **kw): {raise_}\n    def __dlpack_device__(self): return (1, 0)",
    "__array__": "class P:\n    def __array__(self, *a, **k): {raise_}",
    "real SIGINT": ("import os, signal, time\nclass P:\n    def __dlpack__(self, **kw):\n"
                    "        os.kill(os.getpid(), signal.SIGINT)\n        time.sleep(1)\n"
                    "    def __dlpack_device__(self): return (1, 0)"),
}
FATAL = {"KeyboardInterrupt": "raise KeyboardInterrupt", "SystemExit": "raise SystemExit(3)",
         "MemoryError": "raise MemoryError", "RecursionError": "raise RecursionError"}


# Every raising site x exception x binding, except what never runs producer code: a real signal is a
# KeyboardInterrupt, and with a catch-all overload `__array__` is never called (the object overload binds
# in the exact pass, before any conversion: see the test after this one).
CASES = [(site, kind, fn) for site in RAISERS for kind in FATAL for fn in ("tensor_or_object", "tensor_only")
         if not (site == "real SIGINT" and kind != "KeyboardInterrupt")
         and not (site == "__array__" and fn == "tensor_or_object")]


def interrupt_script(site, kind, fn, setup=""):
    """A script that runs `setup`, calls `m.seams.<fn>` with `site`'s producer raising `kind`, and prints
    RAISED (the exception reached the caller) or DROPPED, with what the call returned."""
    return RAISERS[site].format(raise_=FATAL[kind]) + textwrap.dedent(f"""
        {setup}
        result = None
        try:
            try:
                result = m.seams.{fn}(P())
            except TypeError:
                pass
            for _ in range(3):  # the interpreter's next check (nanobind raises it there)
                pass
        except {kind}:
            print("RAISED", result)
        else:
            print("DROPPED", result)
    """)


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
@pytest.mark.parametrize("site, kind, fn", CASES)
def test_interrupt_in_producer_code_reaches_the_caller(backend, site, kind, fn):
    out = run_script(backend, interrupt_script(site, kind, fn))
    assert "RAISED" in out.stdout, out.stdout + out.stderr
    if backend == "pybind11":  # pybind11 stops overload resolution: the catch-all overload never ran
        assert "RAISED None" in out.stdout


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
@pytest.mark.parametrize("handler", ["SIG_IGN", "SIG_DFL"])
@pytest.mark.parametrize("fn", ["tensor_or_object", "tensor_only"])
def test_interrupt_in_producer_code_reaches_the_caller_when_python_does_not_handle_sigint(backend, handler, fn):
    # A process that ignores SIGINT (a shell's background job starts so) or leaves it to the system: re-arming
    # SIGINT would drop the KeyboardInterrupt, so the nanobind backend raises it as a pending call.
    out = run_script(backend, interrupt_script("__dlpack__", "KeyboardInterrupt", fn,
                                               f"signal.signal(signal.SIGINT, signal.{handler})"))
    assert "RAISED" in out.stdout, out.stdout + out.stderr


def test_catch_all_overload_binds_before_conversion_runs_producer_code(m):
    calls = []

    class P:
        def __array__(self, *a, **k):
            calls.append(1)
            raise KeyboardInterrupt

    assert m.seams.tensor_or_object(P()) == "object" and calls == []


def test_ordinary_exception_in_producer_code_is_a_refusal(m):
    class P:
        def __dlpack__(self, **kw):
            raise ValueError("no export today")

        def __dlpack_device__(self):
            return (1, 0)

    assert m.seams.tensor_or_object(P()) == "object"
    with pytest.raises(TypeError) as info:
        dltensor.explain(m.seams.tensor_only, P())
    assert "its producer said: ValueError: no export today" in "\n".join(info.value.__notes__)


def test_long_producer_reason_is_cut_to_the_records_capacity(m):
    # The record keeps 159 characters of the producer's reason (refusal::set_detail): the start of a long
    # message, whole, then nothing of what did not fit (no overrun into the next field, no stale tail).
    words = "".join(f"w{i:03d} " for i in range(200))  # 1,000 characters, each position distinct

    class P:
        def __init__(self, text):
            self.text = text

        def __dlpack__(self, **kw):
            raise ValueError(self.text)

        def __dlpack_device__(self):
            return (1, 0)

    for text in (words, "short"):  # the short reason after the long one: nothing of the long one's tail
        with pytest.raises(TypeError) as info:
            dltensor.explain(m.seams.tensor_only, P(text))
        notes = "\n".join(info.value.__notes__)
        said = notes.split("its producer said: ", 1)[1].split("\n", 1)[0]
        assert said == ("ValueError: " + text)[:159], said[:300]


# --- explanations -----------------------------------------------------------------------------------------

def notes_of(fn, *args):
    with pytest.raises(TypeError) as info:
        dltensor.explain(fn, *args)
    return "\n".join(getattr(info.value, "__notes__", []))


def test_explain_leaves_a_type_error_of_the_function_body_alone(m):
    with pytest.raises(TypeError, match="raised by the function body") as info:
        dltensor.explain(m.seams.refuse_then_raise, np.ones(2))
    assert not getattr(info.value, "__notes__", None)


def test_refusals_stay_readable_after_explain(m):
    with pytest.raises(TypeError):
        dltensor.explain(m.seams.wr_f32, np.ones(2))
    assert any("float64" in r.explanation for r in dltensor.refusals())


def test_explain_names_an_optional_parameter(m):
    assert "argument `x`" in notes_of(m.seams.optional_f32, np.ones(2))


@pytest.mark.parametrize("make, reason", [
    (lambda: np.array([1, 2], dtype=np.longdouble), "its producer said: BufferError"),
    (lambda: np.array(["a", "b"]), "its producer said: BufferError"),
    (lambda: np.array(["2020-01-01"], dtype="datetime64[D]"), "its producer said: BufferError"),
    (lambda: np.array([object(), object()]), "its producer said: BufferError"),
], ids=["longdouble", "str", "datetime64", "object"])
def test_refusal_note_keeps_the_producers_reason(m, make, reason):
    assert reason in notes_of(m.seams.ro_f32, make())


@pytest.mark.parametrize("fn", ["ro_f32", "ro_f32_noconvert", "wr_f32"])
def test_refusal_note_keeps_pyarrow_reason_for_nulls(m, fn):
    pa = pytest.importorskip("pyarrow")
    assert "its producer said:" in notes_of(getattr(m.seams, fn), pa.array([1.0, None, 2.0], type=pa.float32()))


def test_jax_array_into_writable_parameter_says_jax_arrays_are_immutable(m):
    notes = notes_of(m.seams.wr_f32, jax_array())
    assert "(jax.Array)" in notes and "JAX arrays are immutable" in notes


def test_notes_name_types_by_public_module_qualified_names(m):
    assert "(torch.Tensor)" in notes_of(m.seams.wr_f32, torch.ones(2, dtype=torch.float64))
    assert "(numpy.ndarray)" in notes_of(m.seams.wr_f32, np.ones(2))
    assert "(dltensor.Tensor)" in notes_of(m.seams.wr_f32, m.seams.ret_none(2))


# --- conversions of producers that cannot convert themselves ----------------------------------------------

def test_framework_less_return_converts_for_a_read_only_parameter(m):
    assert m.seams.ro_f32(m.seams.ret_none(4)) == 6.0
    assert m.seams.ro_f64(m.seams.ret_none(4)) == 6.0


def test_pyarrow_arrays_convert_for_a_read_only_parameter(m):
    pa = pytest.importorskip("pyarrow")
    assert m.seams.ro_f32(pa.array([1, 2, 3])) == 6.0
    assert m.seams.ro_f64(pa.array([1.5, 2.5])) == 4.0
    with pytest.raises(TypeError):  # a writable parameter never converts
        m.seams.wr_f32(pa.array([1, 2, 3]))


# --- views ------------------------------------------------------------------------------------------------

def test_view_gives_contiguous_memory_another_fixed_shape(m):
    x = np.array([[1 + 2j, 3], [4, 5 - 1j]], dtype=np.complex64)
    m.seams.negate_2x2_as_4(x)
    assert x.tolist() == [[-1 - 2j, -3], [-4, -5 + 1j]]


def test_view_with_another_ndim_than_the_tensor_raises(m):
    assert m.seams.view_as_matrix(np.ones((3, 2))) == 3
    with pytest.raises(ValueError, match="ndim differs"):
        m.seams.view_as_matrix(np.ones(3))


# --- thread pools -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
@pytest.mark.parametrize("producer", ["numpy", "torch"])
def test_thread_pool_with_the_gil_released_drops_the_last_reference_on_a_worker(backend, producer):
    """The rule of docs/reference.md §14 (import in the calling thread, release the GIL around the pool):
    the workers drop the last references, and each release waits for the GIL the caller gave up. In a
    subprocess with a timeout: a deadlock fails the test instead of hanging the suite."""
    make = ("__import__('numpy').arange(60, dtype='float32').reshape(12, 5)" if producer == "numpy"
            else "__import__('torch').arange(60, dtype=__import__('torch').float32).reshape(12, 5)")
    out = run_script(backend, f"""
        for workers in (1, 4, 8):
            x = {make}
            assert m.seams.pool_sum(x, workers) == sum(range(60)), workers
            del x
        print("POOL OK")
    """, timeout=120)
    assert "POOL OK" in out.stdout, out.stdout + out.stderr


# --- PyTorch tensors no parameter can bind ----------------------------------------------------------------

def _fake_tensor():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        return torch.ones(3)


def _two_tensor():
    from torch.testing._internal.two_tensor import TwoTensor  # a dispatch (wrapper) subclass: no storage
    return TwoTensor(torch.ones(3), torch.ones(3))


UNBINDABLE = {  # kind: (make, whether PyTorch itself gives a reason to keep)
    "nested": (lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]), True),
    "sparse": (lambda: torch.eye(3).to_sparse(), True),
    "meta": (lambda: torch.ones(3, device="meta"), True),
    "fake": (_fake_tensor, False),
    "zero tensor": (lambda: torch._efficientzerotensor(3), False),
    "lazy parameter": (lambda: torch.nn.parameter.UninitializedParameter(), True),
    "dispatch wrapper": (_two_tensor, False),
}


PARAMETER_KINDS = ["ro_f32", "ro_f32_noconvert", "wr_f32"]  # read-only, read-only without conversion, writable


@pytest.mark.parametrize("kind", UNBINDABLE)
@pytest.mark.parametrize("fn", PARAMETER_KINDS)
def test_unbindable_pytorch_tensors_are_refused_with_pytorch_reason(m, kind, fn):
    make, has_reason = UNBINDABLE[kind]
    with torch.no_grad():
        x = make()
        with pytest.raises(TypeError) as info:
            dltensor.explain(getattr(m.seams, fn), x)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert notes, "a refusal note"
    if has_reason:
        assert "its producer said:" in notes, notes


FUNCTORCH = {  # transform: runs `body` on the wrapper the transform passes it
    "vmap": lambda body: torch.func.vmap(body)(torch.ones(2, 3)),
    "grad": lambda body: torch.func.grad(lambda x: (body(x), x.sum())[1])(torch.ones(3)),
}


@pytest.mark.parametrize("transform", FUNCTORCH)
@pytest.mark.parametrize("fn", PARAMETER_KINDS)
def test_functorch_wrappers_are_refused_inside_transforms(m, transform, fn):
    seen = []

    def body(x):
        with pytest.raises(TypeError) as info:
            dltensor.explain(getattr(m.seams, fn), x)
        seen.append("\n".join(getattr(info.value, "__notes__", [])))
        return x

    FUNCTORCH[transform](body)
    assert len(seen) == 1 and seen[0], "refused, with a note"
