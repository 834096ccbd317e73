"""On the nanobind backend py::dltensor is a drop-in for nb::ndarray: code written for nb::ndarray
(view(), operator(), cast(), ReadOnly, ndarray_check, converting constructors) keeps working."""
import numpy as np
import pytest

from conftest import PATHS, load_backend, route

torch = pytest.importorskip("torch")


@pytest.fixture(params=PATHS)
def m(request):
    """The nanobind test module only: this promise is the nanobind backend's (there, py::dltensor is an
    nb::ndarray); pybind11 has no ndarray type to be compatible with."""
    mod = load_backend("nanobind")
    route(mod, request.param)
    yield mod
    route(mod, None)


def test_view_reads_strided_data(m):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert m.ndarray_compat.sum_view(a[::2, 1::2]) == a[::2, 1::2].sum()
    assert m.ndarray_compat.sum_view(torch.arange(6, dtype=torch.float32).reshape(2, 3).T) == 15


def test_view_with_added_dtype(m):
    assert m.ndarray_compat.view_as_double(np.array([2.5, 1.0])) == 2.5


def test_operator_call_writes_in_place(m):
    a = np.ones((3, 2), np.float32)
    m.ndarray_compat.scale_in_place(a, 3.0)
    assert (a == 3).all()


def test_cast_returns_the_framework_object(m):
    r = m.ndarray_compat.cast_to_object(np.arange(3, dtype=np.float32))
    assert isinstance(r, np.ndarray) and r.tolist() == [0, 1, 2]


def test_ndarray_check_accepts_tensors_and_buffers_only(m):
    # nanobind backend: nanobind's own nb::ndarray_check; pybind11 backend: dltensor's py::ndarray_check.
    is_array_like = m.ndarray_compat.is_array_like
    assert is_array_like(np.zeros(1)) and is_array_like(torch.zeros(1)) and is_array_like(b"x")
    assert not is_array_like(3) and not is_array_like([1.0])


def test_converting_constructor_shares_the_tensor(m):
    a = np.arange(4.0)
    r = m.ndarray_compat.roundtrip_through_ndarray(a)
    assert isinstance(r, np.ndarray) and np.shares_memory(a, r)


def test_converted_ndarray_without_an_owner_is_copied(m):
    assert m.ndarray_compat.ownerless_ndarray_converted().tolist() == [7, 8, 9]


@pytest.mark.parametrize("fw", ["numpy", "pytorch"])
def test_view_of_an_adopted_ndarray_keeps_its_owner_until_released(m, fw):
    before = m.common.owner_frees()
    r = getattr(m.ndarray_compat, "adopted_ndarray_viewed" + ("_pytorch" if fw == "pytorch" else ""))()
    assert r.tolist() == [4, 5, 6] and m.common.owner_frees() == before  # the view still uses the memory
    del r
    assert m.common.owner_frees() == before + 1 and m.common.owner_frees_without_gil() == 0


# nanobind's own ways of asking for an imported tensor's object (tests/test_ndarray_compat.cpp): the
# `none` policy (pybind11 has none) and nb::find in a class's tp_traverse (pybind11 has no such hook).

def test_none_policy_returns_the_callers_object(m):
    x = np.arange(3.0)
    assert m.ndarray_compat.passthrough_none_policy(x) is x


def test_none_policy_creates_no_object_for_a_tensor_cpp_made(m):
    with pytest.raises(TypeError):  # nanobind: nothing to return, "Unable to convert function return value"
        m.ndarray_compat.made_none_policy()


def test_cycle_through_a_member_is_collected(m):
    import gc
    import weakref

    # model -> weights (a tensor carrying an attribute) -> holder -> model: collected only when the class
    # reports its member to the garbage collector, which nb::find makes possible.

    class Holder:
        pass

    class Tied(__import__("array").array):  # a buffer that can carry an attribute
        pass

    model, holder = m.ndarray_compat.Model(), Holder()
    holder.model = model
    t = Tied("d", [0.0, 0.0])
    t.back = holder
    model.weights = t
    alive = weakref.ref(holder)
    del holder, model, t
    gc.collect()
    assert alive() is None
