"""Why was my tensor refused: `dltensor.explain(f, *args)` re-raises the binding library's TypeError with
one note per refused tensor argument, naming the argument and the first requirement it failed, on both
backends and both import paths; one text per mismatch kind. The TypeError's own signature text tells
read-only parameters from writable ones (dltensor.typing.ArrayLike / Array)."""
import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from producer import capsule

# The checkout's Python package (the tests test the checkout, not an installed copy).
_spec = importlib.util.spec_from_file_location(
    "dltensor_explain_checkout", Path(__file__).resolve().parent.parent / "python" / "dltensor" / "explain.py")
explain_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(explain_module)
explain = explain_module.explain


@pytest.fixture
def e(m):
    return m.explain


def notes(error) -> str:
    return "\n".join([str(error), *getattr(error, "__notes__", [])])


def refused(function, *args, **kwargs) -> str:
    with pytest.raises(TypeError, match="incompatible function arguments") as info:
        explain(function, *args, **kwargs)
    return notes(info.value)


def read_only(a):
    a.setflags(write=False)
    return a


def misaligned_f32(n=4):
    """A writable float32 array whose first element is one byte past an aligned address."""
    return np.frombuffer(bytearray(n * 4 + 1), np.uint8)[1:].view(np.float32)


# (function, argument, expected text); every mismatch kind the importer knows
NUMPY_CASES = {
    "dtype, writable": ("scale", lambda: np.zeros(3), "argument `x` (numpy.ndarray): dtype float64, expected "
                        "float32; a writable parameter never converts (float64 -> float32 would be a copy): "
                        "declare it const to allow the conversion"),
    "dtype, noconvert": ("total_strict", lambda: np.zeros(3), "dtype float64, expected float32, and conversion "
                         "is off (.noconvert())"),
    "complex to real": ("total", lambda: np.zeros(3, np.complex64), "dtype complex64, expected float32 (complex -> "
                        "real would drop the imaginary part; never converted)"),
    "ndim": ("scale", lambda: np.zeros((2, 2), np.float32), "ndim 2, expected 1 (shape (2, 2))"),
    "extent": ("block", lambda: np.zeros((2, 4), np.float32), "shape (2, 4), expected (2, 3)"),
    "device": ("on_cuda", lambda: np.zeros(3, np.float32), "device cpu, expected cuda"),
    "read-only": ("scale", lambda: read_only(np.zeros(3, np.float32)), "read-only source (numpy.ndarray) for a "
                  "writable parameter: declare the dtype const (or add py::ro) if the function only reads it"),
    "order, writable": ("fill_c", lambda: np.zeros(6, np.float32)[::2], "order: strides (2,) in elements ((8,) in "
                        "bytes) are not C-contiguous; a writable parameter never converts (a contiguous copy)"),
    "order, noconvert": ("total_strict", lambda: np.zeros(6, np.float32)[::2], "order: strides (2,) in elements "
                         "((8,) in bytes) are not C-contiguous, and conversion is off (.noconvert())"),
    "strides not whole elements": ("scale", lambda: np.lib.stride_tricks.as_strided(
        np.zeros(8, np.float32), shape=(3,), strides=(6,)), "order: a byte stride of 6 is no whole number of its "
        "4-byte elements; a writable parameter never converts (a contiguous copy)"),
    "misaligned": ("scale", misaligned_f32, "the first element's address is not a multiple of 4 bytes "
                   "(misaligned for float32); a writable parameter never gets an aligned copy"),
    "list, writable": ("scale", lambda: [1.0, 2.0], "list is not a tensor (a writable parameter takes no lists or "
                       "scalars: their conversion would be a copy that C++ writes are lost in)"),
    "list, noconvert": ("total_strict", lambda: [1.0], "list is not a tensor, and conversion is off (.noconvert())"),
    "not a tensor": ("total", lambda: "text", "str is not a tensor: it has no __dlpack__ and no "
                     "buffer, and is not what is read through numpy.asarray() (a list, tuple, number or object with "
                     "__array__)"),
    "ragged list": ("total", lambda: [[1.0], [2.0, 3.0]], "list is not a tensor, and numpy.asarray() could not "
                    "convert it (setting an array element with a sequence."),
    "out-of-range list": ("index_total", lambda: [1, -1], "list is not a tensor, and numpy.asarray() could not "
                          "convert it (Python integer -1 out of bounds for uint32)"),
    "malformed capsule": ("total", None, "PyCapsule: not a usable DLPack tensor"),
    "byte order, writable": ("scale", lambda: np.zeros(3, ">f4"), "dtype differs from float32: its byte order is "
                             "not the machine's (buffer format '>f')"),
    "capsule of another dtype": ("total", lambda: np.zeros(3, np.int32).__dlpack__(), "dtype int32, expected "
                                 "float32 (a raw DLPack capsule is never converted: there is no producer to ask)"),
}


@pytest.mark.parametrize("case", sorted(NUMPY_CASES))
def test_refusal_is_explained(m, e, case):
    function, make, expected = NUMPY_CASES[case]
    storage = np.zeros(4, np.float32)
    x = capsule(m, storage, shape=(4,), ndim=-1) if make is None else make()
    text = refused(getattr(e, function), x, *([2.0] if function == "scale" else []))
    assert expected in text, text


@pytest.mark.parametrize("versioned", [False, True], ids=["legacy", "versioned"])
def test_a_consumed_capsule_is_explained_as_consumed(m, e, versioned):
    x = np.zeros(3, np.float32).__dlpack__(**({"max_version": (1, 0)} if versioned else {}))
    assert e.total(x) == 3  # imported, so renamed "used_dltensor[_versioned]"
    text = refused(e.total, x)
    assert "PyCapsule: not a usable DLPack tensor: the capsule was consumed already: a capsule is imported once " \
           "(pass the array itself, or a new __dlpack__())" in text, text


def test_a_reason_that_names_the_type_is_not_preceded_by_the_type_in_the_type_error(m):
    x = np.zeros(3, np.float32).__dlpack__()
    m.reasons.scale(x, 2.0)
    text = type_error(m.reasons.scale, x, 2.0)
    assert text.endswith(f"{REASONS}\n  argument 1: PyCapsule: not a usable DLPack tensor: the capsule was consumed "
                         "already: a capsule is imported once (pass the array itself, or a new __dlpack__())"), text
    text = type_error(m.reasons.scale, [1.0, 2.0], 2.0)
    assert f"{REASONS}\n  argument 1: list is not a tensor (a writable parameter takes no lists" in text, text


def test_a_capsule_of_another_name_is_explained_by_its_name(m, e):
    x = capsule(m, np.zeros(4, np.float32), shape=(4,), name="not_dltensor")
    text = refused(e.total, x)
    assert "PyCapsule: not a usable DLPack tensor: the capsule's name is not \"dltensor\" or " \
           "\"dltensor_versioned\"" in text, text


TORCH_CASES = {
    "requires_grad": ("scale", lambda t: t.zeros(3, requires_grad=True), "a tensor that requires grad for a "
                      "writable parameter while grad mode is on (write under torch.no_grad(), or declare the dtype "
                      "const)"),
    "inference": ("scale", None, "an inference tensor for a writable parameter outside torch.inference_mode()"),
    "negative view, writable": ("scale", lambda t: t._neg_view(t.zeros(3)), "a PyTorch negative or conjugate view "
                                "for a writable parameter (its memory does not hold the values)"),
    "negative view, noconvert": ("total_strict", lambda t: t._neg_view(t.zeros(3)), "a PyTorch negative or "
                                 "conjugate view, and conversion is off (.noconvert())"),
    "dtype": ("scale", lambda t: t.zeros(3, dtype=t.float64), "dtype float64, expected float32; a writable "
              "parameter never converts"),
}


@pytest.mark.parametrize("case", sorted(TORCH_CASES))
def test_pytorch_refusal_is_explained(e, case):
    torch = pytest.importorskip("torch")
    function, make, expected = TORCH_CASES[case]
    if make is None:
        with torch.inference_mode():
            x = torch.zeros(3)
    else:
        x = make(torch)
    text = refused(getattr(e, function), x, *([2.0] if function == "scale" else []))
    assert "argument `x` (" in text and expected in text, text


def test_jax_array_for_a_writable_parameter_is_explained(e):
    jnp = pytest.importorskip("jax.numpy")
    text = refused(e.scale, jnp.zeros(3, jnp.float32), 2.0)
    assert "a jax.Array for a writable parameter: JAX arrays are immutable" in text, text


def test_each_refused_argument_is_named(e):
    text = refused(e.two, np.zeros((2, 2), np.float32), read_only(np.zeros(2)))
    assert "argument `a` (numpy.ndarray): ndim 2, expected 1" in text, text
    # b is checked only when a binds: one note, for a
    text = refused(e.two, np.zeros(2, np.float32), read_only(np.zeros(2)))
    assert "argument `b` (numpy.ndarray): read-only source" in text and "argument `a`" not in text, text


def test_keyword_arguments_are_named(e):
    text = refused(e.scale, x=np.zeros(3), factor=2.0)
    assert "argument `x` (numpy.ndarray): dtype float64" in text, text


def test_every_overload_is_explained(e):
    text = refused(e.overloaded, np.zeros(3, np.int8))
    assert "argument `x` of overload 1 (numpy.ndarray): dtype int8, expected float64" in text, text
    assert "argument `x` of overload 2 (numpy.ndarray): dtype int8, expected float32" in text, text


def test_a_later_overload_that_matches_is_not_disturbed(e):
    assert explain(e.overloaded, np.zeros(3, np.float32)) == 32
    assert explain(e.overloaded, np.zeros(3, np.float64)) == 64


def test_explain_returns_the_result_and_passes_other_errors_through(e):
    x = np.ones(3, np.float32)
    assert explain(e.scale, x, 2.0) is None and x.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError) as info:
        explain(e.scale, x, "not a float")
    assert not getattr(info.value, "__notes__", None)  # the tensor bound: nothing to explain


def test_refusals_are_recorded_per_thread_and_cleared(e):
    import threading
    explain_module.refusals(clear=True)
    with pytest.raises(TypeError):
        e.total("text")
    seen = {}
    t = threading.Thread(target=lambda: seen.setdefault("other", explain_module.refusals()))
    t.start()
    t.join()
    mine = explain_module.refusals(clear=True)
    assert [r.kind for r in mine][-1:] == ["invalid"] and mine[-1].type == "str"
    assert all(r.type != "str" for r in seen["other"])
    assert explain_module.refusals() == []


def test_converted_argument_is_explained_by_the_converted_tensors_failed_check(m, e):
    refused(e.total, "text")  # leaves a record of another kind behind on this thread
    text = refused(e.total, [[1.0, 2.0]])  # numpy.asarray converts it; the 2-D result is refused
    assert "ndim 2, expected 1" in text


def test_refusal_log_keeps_the_most_recent_refusals_oldest_first(e):
    # More refusals than the per-thread ring holds (32): the oldest are overwritten, the rest read in order.
    explain_module.refusals(clear=True)
    objects = [f"text {k}" for k in range(45)]
    for obj in objects:
        with pytest.raises(TypeError):
            e.total(obj)
    ids = {id(obj): k for k, obj in enumerate(objects)}
    seen = [ids[r.object] for r in explain_module.refusals(clear=True) if r.object in ids]
    assert seen == list(range(45 - 32, 45))


def test_signature_text_marks_read_only_parameters_and_explain_names_a_read_only_source(e):
    # An unannotated parameter's type says it: `Array` (writable), `ArrayLike` (read-only), no writable= key;
    # a framework-annotated one says writable=False (as nanobind), nothing when writable. A read-only array
    # refused by a writable parameter is named by explain().
    with pytest.raises(TypeError) as info:
        e.scale(np.zeros(3), 1.0)
    assert "writable" not in str(info.value) and "dltensor.typing.Array, dict(" in str(info.value), str(info.value)
    with pytest.raises(TypeError) as info:
        e.total("text")
    assert "writable" not in str(info.value) and "dltensor.typing.ArrayLike, dict(" in str(info.value), str(info.value)
    text = refused(e.scale, read_only(np.zeros(3, np.float32)), 1.0)
    assert "read-only source (numpy.ndarray) for a writable parameter" in text, text


def test_a_non_ascii_type_name_cut_to_the_record_stays_valid_text(e):
    # The record keeps 63 bytes of a type's name: cut inside a two-byte character, it was no valid UTF-8,
    # and every explanation failed (SystemError) until 32 later refusals had overwritten it.
    obj = type("A" + "\u0422" * 40, (), {})()
    text = refused(e.total, obj)
    assert "A\u0422" in text
    assert "total" in refused(e.total, "text")  # the next explanation works too


def test_overlapping_memory_for_a_writable_parameter_is_explained(e):
    import torch
    text = refused(e.scale, torch.zeros(1).expand(4), 2.0)
    assert "elements that share memory (strides (0,) in elements ((0,) in bytes) over shape (4,))" in text


def test_a_producers_copy_for_a_writable_parameter_is_explained(m, e):
    storage = np.zeros(3, np.float32)
    text = refused(e.scale, capsule(m, storage, shape=(3,), versioned=True, flags=2), 2.0)
    assert "a copy its producer made for this call (DLPack's IS_COPIED flag)" in text


@pytest.mark.parametrize("make, cause", [
    (lambda: __import__("array").array("u", "ab"), "its buffer format has no DLPack dtype"),
    (lambda: __import__("torch").zeros(1).expand(2**31, 2**31), "its element count or byte size does not fit in 64 bits"),
], ids=["character buffer", "byte size past int64"])
def test_a_malformed_or_undescribable_tensor_is_explained_by_its_cause(e, make, cause):
    assert cause in refused(e.total, make())


def test_a_refusal_of_the_exact_pass_alone_does_not_claim_noconvert(e):
    # The converting pass binds x (int64 -> float32) and fails on n: x's only record is the exact pass's.
    text = refused(e.first_pass, np.zeros(3, np.int64), "not an int")
    assert ("argument `x` of overload 1 (numpy.ndarray): dtype int64, expected float32 in the exact first "
            "pass of overloads only (the converting pass bound this argument or did not try it)") in text, text
    assert ".noconvert()" not in text, text


def test_exact_pass_refusals_by_several_overloads_do_not_claim_noconvert(e):
    # Both overloads refuse x in the exact pass (two records of one parameter text); the converting pass
    # binds it in both and fails on n.
    text = refused(e.shared_first_pass, np.zeros(3, np.int64), object())
    assert ("argument `x` of overload 1, argument `x` of overload 2 (numpy.ndarray): dtype int64, expected "
            "float32 in the exact first pass of overloads only") in text, text
    assert ".noconvert()" not in text, text


def test_a_noconvert_tensor_refused_by_both_passes_names_noconvert(e):
    text = refused(e.strict_pair, np.zeros(3, np.int64), 2.0)
    assert ("argument `x` of overload 1 (numpy.ndarray): dtype int64, expected float32, and conversion is off "
            "(.noconvert())") in text, text


def test_an_explanation_read_without_explain_names_both_causes(e):
    explain_module.refusals(clear=True)
    with pytest.raises(TypeError):
        e.total_strict(np.zeros(3))
    (record,) = explain_module.refusals(clear=True)
    assert record.explanation.endswith(explain_module._NO_CONVERSION) and record.convert is False
    assert record.writable is False and record.when > 0


@pytest.mark.parametrize("container", ["list", "tuple"])
def test_a_refused_element_of_a_list_is_named_by_its_index(e, container):
    xs = [np.zeros(3, np.float32), np.zeros((2, 2), np.float32)]
    text = refused(e.sum_sizes, xs if container == "list" else tuple(xs))
    assert "element [1] of argument `xs` (numpy.ndarray): ndim 2, expected 1" in text, text


def test_a_refused_value_of_a_dict_is_named_by_its_key(e):
    text = refused(e.sum_named, {"a": np.zeros(3, np.float32), "b": np.zeros(3, np.complex64)})
    assert "element ['b'] of argument `xs` (numpy.ndarray): dtype complex64, expected float32" in text, text


def test_a_refusal_inside_a_wrapper_is_explained_and_is_the_last_refusal(e):
    def wrapper(values):  # hands the binding an object of its own, not the caller's
        return e.scale(np.asarray(values, np.float64), 2.0)

    text = refused(wrapper, [1.0, 2.0])
    assert "an argument of a call inside this one (numpy.ndarray): dtype float64, expected float32" in text, text
    with pytest.raises(TypeError):
        wrapper([1.0])
    last = explain_module.last_refusal()
    assert last.kind == "dtype" and "dtype float64, expected float32" in last.explanation
    with pytest.raises(TypeError):
        e.total("text")
    assert explain_module.last_refusal().kind == "invalid"  # the newest, from whichever module
    explain_module.refusals(clear=True)
    assert explain_module.last_refusal() is None


@pytest.mark.only_backend("pybind11")  # a kept array_t overload (docs/migration.md: Dtypes DLPack lacks)
def test_an_argument_refused_as_writable_then_converted_by_another_overload_warns(m):
    read_only_out = read_only(np.zeros(3, np.float32))
    with pytest.warns(explain_module.BoundElsewhereWarning, match="read-only source .* its writes went to a copy"):
        assert explain(m.porting.fill_seven_trap, read_only_out) == "array_t"
    assert read_only_out.tolist() == [0.0] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = np.zeros(3, np.float32)
        assert explain(m.porting.fill_seven_trap, out) == "dltensor"  # nothing refused: no warning
        wide = np.zeros(3, np.longdouble)
        assert explain(m.porting.fill_seven_trap, wide) == "array_t"  # refused in the exact pass only
    with pytest.raises(TypeError, match="incompatible function arguments"):  # the fix: .noconvert()
        explain(m.porting.fill_seven, read_only_out)


# --- py::explain_refusals(m): the reasons in the TypeError itself (tests/test_explain.cpp: `reasons`) --------

REASONS = "Why py::dltensor parameters refused the arguments:"


def type_error(function, *args, **kwargs) -> str:
    with pytest.raises(TypeError) as info:
        function(*args, **kwargs)
    return str(info.value)


def test_opted_in_function_names_the_refused_argument_in_its_type_error(m):
    text = type_error(m.reasons.scale, np.zeros(3), 2.0)
    assert "incompatible function arguments" in text and text.count(REASONS) == 1, text
    assert text.endswith(f"{REASONS}\n  argument 1, a numpy.ndarray: dtype float64, expected float32; a writable "
                         "parameter never converts (float64 -> float32 would be a copy): declare it const to "
                         "allow the conversion"), text


def test_a_keyword_argument_is_named_by_its_keyword(m):
    text = type_error(m.reasons.scale, x=read_only(np.zeros(3, np.float32)), factor=2.0)
    assert "\n  argument `x`, a numpy.ndarray: read-only source (numpy.ndarray) for a writable parameter" in text, text


def test_each_overloads_refusal_is_named_once(m):
    text = type_error(m.reasons.overloaded, np.zeros(3, np.int32))
    reasons = [line.strip() for line in text.split(REASONS)[1].strip().splitlines()]
    assert reasons == ["argument 1, a numpy.ndarray: dtype int32, expected float64; a writable parameter never "
                       "converts (int32 -> float64 would be a copy): declare it const to allow the conversion",
                       "argument 1, a numpy.ndarray: dtype int32, expected float32; a writable parameter never "
                       "converts (int32 -> float32 would be a copy): declare it const to allow the conversion"], text


def test_methods_and_static_methods_of_the_modules_classes_name_the_refusal(m):
    assert "argument 2, a numpy.ndarray: dtype float64" in type_error(m.reasons.Scaler().apply, np.zeros(3))
    assert "argument 1, a numpy.ndarray: dtype float64" in type_error(m.reasons.Scaler.make_one, np.zeros(3))
    a = np.ones(3, np.float32)
    m.reasons.Scaler().apply(a)
    assert a.tolist() == [2.0, 2.0, 2.0]  # a call that binds runs as before


@pytest.mark.parametrize("container", [list, tuple])
def test_an_element_of_a_sequence_is_named_by_its_index(m, container):
    text = type_error(m.reasons.sum_sizes, container([np.zeros(3, np.float32), np.zeros((2, 2), np.float32)]))
    assert "\n  element [1] of argument 1, a numpy.ndarray: ndim 2, expected 1 (shape (2, 2))" in text, text


def test_an_element_of_a_keyword_sequence_is_named_by_its_index_and_keyword(m):
    text = type_error(m.reasons.sum_sizes, xs=[np.zeros((2, 2), np.float32), np.zeros(3, np.float32)])
    assert "\n  element [0] of argument `xs`, a numpy.ndarray: ndim 2, expected 1 (shape (2, 2))" in text, text


def test_an_element_of_a_dict_is_named_by_its_key(m):
    text = type_error(m.reasons.sum_named, {"a": np.zeros(3, np.float32), "b": np.zeros((2, 2), np.float32)})
    assert "\n  element ['b'] of argument 1, a numpy.ndarray: ndim 2, expected 1 (shape (2, 2))" in text, text


def test_errors_without_a_refusal_are_left_as_they_are(m):
    assert REASONS not in type_error(m.reasons.no_tensor, "x")
    assert REASONS not in type_error(m.reasons.scale, np.zeros(3, np.float32), "two")  # `factor` refused, not x
    assert type_error(m.reasons.raises, np.zeros(3, np.float32)) == "raised by the body"  # the body's own error


def test_modules_and_functions_that_did_not_opt_in_are_left_as_they_are(m):
    assert REASONS not in type_error(m.explain.scale, np.zeros(3), 2.0)
    assert REASONS not in type_error(m.reasons.added_later, np.zeros(3))


def test_opted_in_functions_keep_their_signature_and_dltensor_explain(m):
    assert type(m.reasons.scale) is type(m.explain.scale)
    assert m.reasons.scale.__doc__.replace("reasons", "explain") == m.explain.scale.__doc__
    text = refused(m.reasons.scale, np.zeros(3), 2.0)
    assert REASONS in text and "argument `x` (numpy.ndarray): dtype float64, expected float32" in text, text
