"""What a tensor's types mean at run time (tests/test_types.cpp): a framework annotation on a parameter
binds, without conversion, only that framework's tensors, so that overloads tell frameworks apart (NumPy,
PyTorch, JAX, a list, on both backends and every import path), while a single annotated function keeps
taking every producer; and results answer in the caller's framework (`empty_like(x, shape)`,
`return_like(x)`), on its device. The stubs that say the same to a type checker: tests/test_stubgen.py."""
import array
import gc

import numpy as np
import pytest

import dltensor

VALUES = [1.0, 2.0, 3.0]


def producers():
    """(name, make(values) -> a float32 1-D tensor of `values`) for every framework installed here."""
    out = [("numpy", lambda v: np.array(v, np.float32))]
    try:
        import torch
        out.append(("pytorch", lambda v: torch.tensor(v, dtype=torch.float32)))
    except ImportError:
        pass
    try:
        import jax.numpy as jnp
        out.append(("jax", lambda v: jnp.array(v, jnp.float32)))
    except ImportError:
        pass
    try:
        import tensorflow as tf
        out.append(("tensorflow", lambda v: tf.constant(v, tf.float32)))
    except ImportError:
        pass
    try:  # not in the test extras: runs where MLX is installed (`pip install "mlx[cpu]"` on Linux)
        import mlx.core as mx
        out.append(("mlx", lambda v: mx.array(v, dtype=mx.float32)))
    except ImportError:
        pass
    return out


PRODUCERS = dict(producers())


def framework_of(obj):
    """The framework an object belongs to, by its class's top-level package (None: a dltensor.Tensor)."""
    if isinstance(obj, dltensor.Tensor):
        return None
    top = type(obj).__module__.split(".")[0]
    return {"numpy": "numpy", "torch": "pytorch", "jax": "jax", "jaxlib": "jax", "tensorflow": "tensorflow"}.get(top, top)


def as_list(obj):
    return np.from_dlpack(obj).tolist() if hasattr(obj, "__dlpack__") else np.asarray(obj).tolist()


# --- framework annotations on parameters ----------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_overload_pair_by_framework_binds_each_framework_to_its_own_overload(m, name):
    """The user's pair: `which(py::dltensor<py::numpy, const float>)` then `which(py::dltensor<py::pytorch,
    const float>)`. NumPy goes to the first, PyTorch to the second; JAX, TensorFlow and lists, which neither
    exact pass binds, go to the first overload of the converting pass."""
    x = PRODUCERS[name](VALUES)
    expected = {"numpy": "numpy", "pytorch": "pytorch"}.get(name, "numpy")
    assert m.types.which(x) == expected


def test_overload_pair_by_framework_takes_a_list_in_the_converting_pass(m):
    assert m.types.which(VALUES) == "numpy"


# JAX, TensorFlow and MLX arrays bind no writable parameter (immutable, or read-only exports).
@pytest.mark.parametrize("name", [n for n in sorted(PRODUCERS) if n not in ("jax", "tensorflow", "mlx")])
def test_writable_overload_pair_by_framework_binds_each_framework_to_its_own_overload(m, name):
    x = PRODUCERS[name](VALUES)
    assert m.types.which_writable(x) == name


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_three_overloads_jax_then_numpy_then_any_producer(m, name):
    """JAX and NumPy to their overloads, any other producer's float32 tensor to the third (which binds it
    in the exact pass: no framework annotation), and a list, which no exact pass binds, to the first
    overload that converts it."""
    x = PRODUCERS[name](VALUES)
    assert m.types.which_of_three(x) == {"jax": "jax", "numpy": "numpy"}.get(name, "any")
    assert m.types.which_of_three(VALUES) == "jax"


def test_a_framework_overload_of_another_dtype_still_converts_in_the_second_pass(m):
    """NumPy float64 is not the NumPy overload's exact match (float64 is, float32 not): ... a NumPy float32
    array matches neither exact pass (the NumPy overload wants float64, the PyTorch one PyTorch) and
    converts to the first overload, the NumPy float64 one."""
    assert m.types.which_dtype(np.zeros(2, np.float64)) == "numpy float64"
    assert m.types.which_dtype(np.zeros(2, np.float32)) == "numpy float64"
    torch = pytest.importorskip("torch")
    assert m.types.which_dtype(torch.zeros(2)) == "pytorch float32"
    # a PyTorch float64 tensor: neither exact pass; the first converting overload (NumPy float64) takes it
    assert m.types.which_dtype(torch.zeros(2, dtype=torch.float64)) == "numpy float64"


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_single_framework_annotated_function_still_takes_every_producer(m, name):
    assert m.types.numpy_size(PRODUCERS[name](VALUES)) == 3


def test_single_framework_annotated_function_still_takes_lists_and_buffers(m):
    assert m.types.numpy_size(VALUES) == 3
    assert m.types.numpy_size(array.array("f", VALUES)) == 3


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_noconvert_framework_parameter_binds_only_its_framework(m, name):
    x = PRODUCERS[name](VALUES)
    if name == "numpy":
        assert m.types.numpy_size_noconvert(x) == 3
        return
    with pytest.raises(TypeError):
        m.types.numpy_size_noconvert(x)


def test_noconvert_framework_refusal_names_the_annotated_framework(m):
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError) as e:
        dltensor.explain(m.types.numpy_size_noconvert, torch.ones(3))
    why = "\n".join([str(e.value), *getattr(e.value, "__notes__", [])])
    assert "(torch.Tensor): a torch.Tensor for a parameter annotated with the framework NumPy" in why, why
    with pytest.raises(TypeError) as e:
        dltensor.explain(m.types.pytorch_size_noconvert, np.ones(3, np.float32))
    why = "\n".join([str(e.value), *getattr(e.value, "__notes__", [])])
    assert "(numpy.ndarray): a numpy.ndarray for a parameter annotated with the framework PyTorch" in why, why


def test_noconvert_framework_parameter_binds_its_frameworks_subclasses(m):
    torch = pytest.importorskip("torch")
    assert m.types.pytorch_size_noconvert(torch.nn.Parameter(torch.ones(3), requires_grad=False)) == 3

    class Sub(np.ndarray):
        pass

    assert m.types.numpy_size_noconvert(np.ones(3, np.float32).view(Sub)) == 3


def test_noconvert_framework_parameter_refuses_raw_capsules_buffers_and_lists(m):
    for x in (np.ones(3, np.float32).__dlpack__(), array.array("f", VALUES), bytearray(12), VALUES):
        with pytest.raises(TypeError):
            m.types.numpy_size_noconvert(x)


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_array_api_parameter_binds_every_producer_without_conversion(m, name):
    """`py::array_api` names what a return becomes (a dltensor.Tensor); on a parameter it restricts nothing."""
    assert m.types.array_api_size_noconvert(PRODUCERS[name](VALUES)) == 3


# --- results in the caller's framework ------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_empty_like_answers_in_the_callers_framework(m, name):
    x = PRODUCERS[name](VALUES)
    out = m.types.doubled(x)
    assert framework_of(out) == name, type(out)
    assert as_list(out) == [2.0, 4.0, 6.0]


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_empty_like_follows_the_argument_it_is_given(m, name):
    """The framework to follow comes from the argument `empty_like` is given, not from the first one."""
    out = m.types.doubled_like(np.array(VALUES, np.float32), PRODUCERS[name]([0.0]))
    assert framework_of(out) == name, type(out)
    assert as_list(out) == [2.0, 4.0, 6.0]


def test_empty_like_of_a_numpy_argument_is_a_new_writable_array(m):
    x = np.array(VALUES, np.float32)
    out = m.types.doubled(x)
    assert type(out) is np.ndarray and out.flags.writeable and out.flags.owndata is not None
    assert not np.shares_memory(out, x)


def test_empty_like_of_a_jax_argument_is_a_new_jax_array(m):
    jnp = pytest.importorskip("jax.numpy")
    import jax
    x = jnp.array(VALUES, jnp.float32)
    out = m.types.doubled(x)
    assert isinstance(out, jax.Array) and out is not x
    assert out.tolist() == [2.0, 4.0, 6.0] and x.tolist() == VALUES


def test_empty_like_of_a_list_answers_with_numpy(m):
    """A list converts to a NumPy array: that is the argument's framework."""
    out = m.types.doubled(VALUES)
    assert type(out) is np.ndarray and out.tolist() == [2.0, 4.0, 6.0]


def test_empty_like_of_an_unknown_producer_answers_with_a_dltensor_tensor(m):
    """A buffer-protocol object, of no known framework, gets what a plain empty() gives: a dltensor.Tensor."""
    for x in (array.array("f", VALUES), memoryview(np.array(VALUES, np.float32))):
        out = m.types.doubled(x)
        assert isinstance(out, dltensor.Tensor), type(out)
        assert as_list(out) == [2.0, 4.0, 6.0]


def test_empty_like_in_f_order_with_a_shape_container(m):
    for name in ("numpy", "pytorch"):
        if name not in PRODUCERS:
            continue
        make = {"numpy": lambda a: a, "pytorch": lambda a: __import__("torch").from_numpy(a)}[name]
        x = make(np.arange(6, dtype=np.float32).reshape(2, 3))
        out = m.types.transposed_like(x)
        assert framework_of(out) == name
        arr = np.from_dlpack(out)
        assert arr.shape == (3, 2) and arr.flags.f_contiguous
        assert arr.tolist() == np.arange(6, dtype=np.float32).reshape(2, 3).T.tolist()


def test_empty_like_on_a_pytorch_argument_keeps_its_device_and_dtype(m):
    torch = pytest.importorskip("torch")
    out = m.types.doubled(torch.tensor(VALUES))
    assert isinstance(out, torch.Tensor) and out.device.type == "cpu" and out.dtype == torch.float32
    assert out.tolist() == [2.0, 4.0, 6.0]


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_return_like_exports_cpp_memory_in_the_callers_framework(m, name):
    out = m.types.copy_like(PRODUCERS[name]([0.0]))
    assert framework_of(out) == name, type(out)
    assert as_list(out) == [1.0, 2.0, 3.0]


def test_return_like_copy_following_an_unknown_producer_is_refused_with_what_to_do(m):
    """A dltensor.Tensor cannot own a copy: owner-less memory that follows a buffer argument is refused,
    and the message says how to return it."""
    with pytest.raises(RuntimeError, match="return_like.*reference policy"):
        m.types.copy_like(array.array("f", [0.0]))


@pytest.mark.parametrize("name", [*sorted(PRODUCERS), "array.array", "memoryview"])
def test_return_like_of_the_argument_itself_is_the_argument(m, name):
    """Following its own source, a tensor returns as that object, of a known framework or not."""
    make = {"array.array": lambda v: array.array("f", v),
            "memoryview": lambda v: memoryview(array.array("f", v))}.get(name) or PRODUCERS[name]
    x = make(VALUES)
    assert m.types.view_like(x) is x


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_empty_like_result_survives_assignment(m, name):
    """Copied, assigned and converted to another annotation set, the result still answers in the caller's
    framework."""
    out = m.types.doubled_assigned(PRODUCERS[name](VALUES))
    assert framework_of(out) == name, type(out)
    assert as_list(out) == [2.0, 4.0, 6.0]


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_empty_like_allocates_the_annotated_dtype_and_shape_whatever_the_argument(m, name):
    out = m.types.empty_like_of(PRODUCERS[name]([0.0, 1.0]), 5)
    assert framework_of(out) == name, type(out)
    arr = np.from_dlpack(out)
    assert arr.shape == (5,) and arr.dtype == np.float32


def test_plain_empty_still_answers_with_a_dltensor_tensor(m):
    out = m.types.doubled_plain(np.array(VALUES, np.float32))
    assert isinstance(out, dltensor.Tensor) and as_list(out) == [2.0, 4.0, 6.0]


def test_empty_like_result_releases_its_memory(m):
    """A result in the caller's framework owns its memory alone: dropping it frees it (weakref on the
    NumPy base where there is one)."""
    import weakref
    out = m.types.doubled(np.array(VALUES, np.float32))
    ref = weakref.ref(out)
    del out
    gc.collect()
    assert ref() is None


def test_dltensor_tensor_isinstance_knows_returned_tensors(m):
    out = m.types.doubled_plain(np.array(VALUES, np.float32))
    assert isinstance(out, dltensor.Tensor)
    assert not isinstance(np.ones(1), dltensor.Tensor) and not isinstance("x", dltensor.Tensor)
    with pytest.raises(TypeError):
        dltensor.Tensor()
