"""What a binding returns for a tensor (tests/test_identity.cpp), on both backends and both import paths:
an imported tensor is the caller's own object unless the policy copies or the annotation names another
framework; copy policies copy into the annotated framework, else the source's; reference_internal keeps
the parent alive, also for a tensor with an owner of its own; members read back as the stored object;
view<...>() restates annotations."""
import gc
import weakref

import numpy as np
import pytest

from producer import FLOAT64, Exporter

torch = pytest.importorskip("torch")
jnp = pytest.importorskip("jax.numpy")

SOURCES = {
    "numpy": lambda: np.arange(3.0),
    "numpy subclass": lambda: np.matrix([[1.0, 2.0, 3.0]]),
    "torch": lambda: torch.arange(3.0),
    "jax": lambda: jnp.arange(3.0),
    "array.array": lambda: __import__("array").array("d", [1.0, 2.0]),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("fn", ["passthrough_ro", "passthrough_assigned", "passthrough_reference", "passthrough_automatic_reference",
                                "passthrough_c"])
def test_returned_input_is_the_callers_object(m, source, fn):
    x = SOURCES[source]()
    assert getattr(m.identity, fn)(x) is x


def test_writable_returned_input_is_the_callers_object(m):
    x = np.zeros(3)
    out = m.identity.passthrough(x)
    assert out is x and out.flags.writeable and out.dtype == np.float64


def test_converted_input_returns_the_converted_array(m):
    x = np.arange(3.0)  # float64: converted to float32 for a `const float` parameter
    out = m.identity.passthrough_f32(x)
    assert out is not x and isinstance(out, np.ndarray) and out.dtype == np.float32 and out.tolist() == [0, 1, 2]


def test_annotation_naming_the_source_framework_returns_the_object(m):
    x, t = np.arange(3.0), torch.arange(3.0)
    assert m.identity.passthrough_numpy(x) is x
    assert m.identity.passthrough_pytorch(t) is t


def test_annotation_naming_another_framework_makes_that_frameworks_tensor(m):
    t = torch.arange(3.0)
    out = m.identity.passthrough_numpy(t)
    assert isinstance(out, np.ndarray) and out.tolist() == [0, 1, 2]
    assert out.__array_interface__["data"][0] == t.data_ptr()  # a view of the same memory
    x = np.arange(3.0)
    assert isinstance(m.identity.passthrough_pytorch(x), torch.Tensor)


@pytest.mark.parametrize("fn", ["passthrough_copy", "passthrough_move"])
@pytest.mark.parametrize("source", ["numpy", "torch", "jax"])
def test_copy_policies_copy_into_the_source_framework(m, fn, source):
    x = SOURCES[source]()
    out = getattr(m.identity, fn)(x)
    assert out is not x and type(out) is type(x) and out.tolist() == x.tolist()
    if source != "jax":
        out[0] = 42
        assert x[0] == 0  # a copy: writes do not reach the source


def test_copy_policy_with_annotated_framework_copies_into_it(m):
    t = torch.arange(3.0)
    out = m.identity.passthrough_copy_numpy(t)
    assert isinstance(out, np.ndarray) and out.tolist() == [0, 1, 2]
    out[0] = 9
    assert t[0] == 0


def test_copy_without_any_framework_says_what_to_do(m):
    with pytest.raises(RuntimeError, match="not supported for this framework"):
        m.identity.ownerless_copy()


def test_member_reads_back_as_the_stored_object(m):
    model = m.identity.Model()
    for x in (np.arange(3.0), torch.arange(3.0), jnp.arange(3.0)):
        model.weights = x
        assert model.weights is x
        assert model.weights is x  # every read


def test_stored_source_outlives_the_callers_reference(m):
    # A kept tensor holds the object it came from, which reads of the member return: here a producer whose
    # capsule does not reference it, so only the tensor's owner keeps it alive.
    model = m.identity.Model()
    x = Exporter(m, np.arange(3.0), shape=(3,), dtype=FLOAT64)
    alive = weakref.ref(x)
    model.weights = x
    del x
    gc.collect()
    assert alive() is not None and model.weights is alive()
    model.weights = np.zeros(1)
    gc.collect()
    assert alive() is None  # released with the tensor


def test_kept_tensor_returned_while_cpp_keeps_it(m):
    # A getter returning the kept tensor by value hands back the stored object; the model's own reference
    # stays, and still keeps the object alive after every Python reference is gone.
    model = m.identity.Model()
    for make in (lambda: np.arange(3.0), lambda: torch.arange(3.0)):
        x = make()
        alive = weakref.ref(x)
        model.weights = x
        for _ in range(3):
            assert model.weights_copy() is x
        del x
        gc.collect()
        assert alive() is not None and model.weights_copy() is alive()
        assert model.weights_copy().tolist() == [0.0, 1.0, 2.0]
        model.weights = np.zeros(1)
        gc.collect()
        assert alive() is None  # released once, with the model's reference


def test_reference_internal_view_with_an_owner_keeps_the_parent_alive(m):
    model = m.identity.Model()
    alive = weakref.ref(model)
    view = model.buffer()  # owned by its capsule, returned with reference_internal
    del model
    gc.collect()
    assert alive() is not None  # the view keeps its parent
    assert view.tolist() == [1, 2, 3]
    del view
    gc.collect()
    assert alive() is None


def test_view_restating_annotations(m):
    assert m.identity.first_restated(np.array([2.5, 1.0])) == 2.5
    assert m.identity.first_restated_const(np.array([3.5])) == 3.5
    assert m.identity.first_added(np.array([4.5])) == 4.5


@pytest.mark.parametrize("fw", ["numpy", "pytorch", "jax", "tensorflow"])
def test_copy_policy_copies_cpp_memory_into_every_framework(backend_module, fw):
    m = backend_module
    if fw == "tensorflow":
        pytest.importorskip("tensorflow")
    out = getattr(m.identity, "copy_" + fw)()
    assert np.asarray(out).tolist() == [1, 2, 3]
    if fw == "pytorch":
        address = out.data_ptr()
    elif fw == "jax":
        address = out.unsafe_buffer_pointer()
    elif fw == "numpy":
        address = out.__array_interface__["data"][0]
    else:
        address = None  # TensorFlow hides its buffer; its tensors are immutable
    if address is not None:
        assert address != m.identity.copy_source_address()
