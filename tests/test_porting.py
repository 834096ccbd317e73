"""Code ported from pybind11's `py::array_t`, in its dltensor spelling, on both backends: results of
local containers copied now (`copy_of`) or handed over (`adopt`), never read after the container is
gone; lists, tuples and scalars as read-only input (as `numpy.asarray` reads them), refused by writable
and `.noconvert()` parameters; conversion inside a function body with an explanation on failure; JAX
float32 input for a float64 parameter with JAX's 64-bit mode off; array_t's element-access members;
`py::cast` of a tensor giving back the caller's object (writes made afterwards reach Python); array_t's
converting constructor from a Python object; nested containers and lists to 2-D tensors; the exception
types of junk input; a callback's None as `std::optional`; overloads tried in their order when converting."""
import gc
import warnings

import numpy as np
import pytest

N_LARGE = 100_000  # large enough that reading a freed vector's memory shows (or crashes) without sanitizers


@pytest.fixture
def p(backend_module):
    return backend_module.porting


@pytest.fixture
def pm(m):
    """The `porting` submodule, through one import path (for tests that pass tensors in)."""
    return m.porting


# ---- results of a local container ---------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, N_LARGE])
@pytest.mark.parametrize("how", ["copy_of", "adopt"])
@pytest.mark.parametrize("framework", ["numpy", "pytorch", "jax"])
def test_local_container_result_holds_the_values_after_the_function_returned(p, how, framework, n):
    if framework != "numpy":
        pytest.importorskip({"pytorch": "torch", "jax": "jax"}[framework])
    out = getattr(p, f"{how}_local_{framework}")(n)
    gc.collect()
    junk = [np.full(n, 0xDEAD, dtype=np.uint32) for _ in range(4)]  # reuse freed memory, if any
    values = np.asarray(out)
    assert values.dtype == np.uint32 and values.shape == (n,)
    assert np.array_equal(values, np.arange(1, n + 1, dtype=np.uint32))
    del junk


def test_local_results_have_the_annotated_framework(p):
    torch = pytest.importorskip("torch")
    assert type(p.copy_of_local_numpy(2)) is np.ndarray and type(p.adopt_local_numpy(2)) is np.ndarray
    assert isinstance(p.copy_of_local_pytorch(2), torch.Tensor) and isinstance(p.adopt_local_pytorch(2), torch.Tensor)


def test_copy_of_copies_in_the_annotated_order(p):
    assert np.array_equal(p.copy_of_matrix(2, 3), np.arange(6, dtype=np.float32).reshape(2, 3))
    f = p.copy_of_fortran()
    assert f.flags.f_contiguous and np.array_equal(f, np.array([[0, 2, 4], [1, 3, 5]], dtype=np.float32))


def test_const_results_filled_by_cpp_are_read_only_numpy_arrays(p):
    # copy_of() and empty() of a `const` py::numpy tensor return the NumPy array C++ filled, read-only for
    # Python, as every read-only return is; a non-const one stays writable.
    c = p.copy_of_const(4)
    assert type(c) is np.ndarray and c.tolist() == [0.0, 0.5, 1.0, 1.5] and not c.flags.writeable
    e = p.empty_const(3)
    assert e.dtype == np.int32 and e.tolist() == [0, 1, 2] and not e.flags.writeable
    with pytest.raises(ValueError):
        e[0] = 5
    assert p.copy_of_matrix(2, 3).flags.writeable


def test_adopt_takes_the_shape_and_any_container(p):
    assert np.array_equal(p.adopt_matrix(2, 3), np.arange(6, dtype=np.float32).reshape(2, 3))
    a = p.adopt_array()
    assert a.dtype == np.int16 and a.tolist() == [4, 5, 6]


@pytest.mark.parametrize("maker", ["adopt_counted", "adopt_counted_as_none"])
def test_adopted_container_is_freed_once_with_its_last_reference(p, maker):
    before = p.destroyed_counted()
    a = getattr(p, maker)(5)
    view = np.from_dlpack(a) if maker.endswith("none") else a[1:]
    assert p.destroyed_counted() == before
    del a
    gc.collect()
    assert p.destroyed_counted() == before  # the view keeps it
    assert np.asarray(view).tolist() == ([0.0, 1.0, 2.0, 3.0, 4.0] if maker.endswith("none") else [1.0, 2.0, 3.0, 4.0])
    del view
    gc.collect()
    assert p.destroyed_counted() == before + 1


def test_factory_shape_mistakes_raise(p):
    with pytest.raises(ValueError, match="the shape holds 6 elements, the container 5"):
        p.adopt_wrong_size()
    with pytest.raises(ValueError, match="the shape holds 4 elements, the container 5"):
        p.adopt_shape_too_small()  # never a tensor over part of the container
    with pytest.raises(ValueError, match="does not match the annotated ndim"):
        p.copy_of_wrong_ndim()


def test_element_strides_view_every_other_column(pm):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = pm.column_view(a)
    assert np.array_equal(v, a[:, ::2]) and np.shares_memory(v, a)


# ---- lists, tuples, scalars ---------------------------------------------------------------------------


def test_read_only_parameter_reads_a_list_of_python_ints_as_uint32(pm):
    assert pm.index_sum([0, 1, 2, 40]) == 43
    assert pm.index_sum((5, 6)) == 11
    assert pm.index_sum([]) == 0


def test_read_only_parameter_reads_nested_lists_and_scalars(pm):
    assert pm.matrix_sum([[1, 2, 3], [4, 5, 6.5]]) == {"rows": 2, "cols": 3, "sum": 21.5}
    assert pm.scalar_value(7) == 7
    assert pm.any_sum(2.5) == {"ndim": 0, "sum": 2.5}
    assert pm.any_sum([True, False, True]) == {"ndim": 1, "sum": 2.0}


def test_list_input_returns_as_the_numpy_array_it_became(pm):
    out = pm.identity_ro([1.0, 2.0])
    assert type(out) is np.ndarray and out.tolist() == [1.0, 2.0]


def test_objects_with_array_interface_are_read(pm):
    class Legacy:
        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None, copy=None):
            return self.a

    assert pm.index_sum(Legacy(np.array([1, 2, 3]))) == 6


@pytest.mark.parametrize("value", [[[1, 2], [3]], ["a", "b"], [1j], {"a": 1}, "text", None, object()])
def test_what_numpy_cannot_read_is_refused(pm, value):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        pm.any_sum(value)


def test_out_of_range_python_ints_are_refused_not_wrapped(pm):
    # NumPy checks Python ints against the parameter's dtype, as array_t's forcecast does
    with pytest.raises(TypeError, match="incompatible function arguments"):
        pm.index_sum([1, -1])
    assert pm.index_sum(np.array([1, 2], np.int64)) == 3  # arrays convert as the producer casts


def test_lists_wrong_for_the_parameter_are_refused(pm):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        pm.index_sum([[1, 2]])  # ndim 2
    with pytest.raises(TypeError, match="incompatible function arguments"):
        pm.matrix_sum([1.0, 2.0])


@pytest.mark.parametrize("value", [[1.0, 2.0], (1.0,), 3.0])
def test_writable_and_noconvert_parameters_refuse_lists_and_scalars(pm, value):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        pm.writable_fill(value)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        pm.strict_sum(value)


# ---- conversion inside a function body ----------------------------------------------------------------

# Both backends raise the explanation as TypeError (pybind11: py::dltensor_cast_error, a cast_error for C++).
CAST_ERRORS = TypeError


def test_cast_in_body_follows_the_parameter_rules(pm):
    assert pm.cast_in_body([3, 4]) == {"size": 2, "first": 3.0}
    assert pm.cast_in_body(np.array([1.5], dtype=np.float64)) == {"size": 1, "first": 1.5}


@pytest.mark.parametrize("value, why", [
    (np.zeros((2, 2), np.float32), "ndim 2, expected 1"),
    ([[1.0]], "ndim 2, expected 1"),
    ("text", "str is not a tensor: it has no __dlpack__ and no buffer, and is not what is read through "
             "numpy.asarray()"),
    (np.zeros(2, np.complex64), "complex -> real would drop the imaginary part"),
])
def test_cast_in_body_failure_says_why(pm, value, why):
    with pytest.raises(CAST_ERRORS) as info:
        pm.cast_in_body(value)
    text = str(info.value)
    assert "cannot convert" in text and why in text, text
    assert "'?'" not in text and "bad_cast" not in text


@pytest.mark.parametrize("value, why", [
    ([1.0], "list is not a tensor (a writable parameter takes no lists or scalars"),
    (np.zeros(2, np.float64), "dtype float64, expected float32; a writable parameter never converts"),
    (np.zeros(2, np.float32)[::-1].copy().setflags(write=False) or None, None),
])
def test_cast_to_writable_in_body_failure_says_why(pm, value, why):
    if value is None:
        value = np.zeros(2, np.float32)
        value.setflags(write=False)
        why = "read-only source (numpy.ndarray) for a writable parameter"
    with pytest.raises(CAST_ERRORS) as info:
        pm.cast_writable_in_body(value)
    assert why in str(info.value), str(info.value)


# What try_cast reports (try_cast_report in test_porting.cpp): refused, or bound to a 1-d tensor whose first
# element is `first`; either way no Python error left set.
REFUSED = {"bound": False, "ndim": 0, "first": None, "error_left": False}


def bound_1d(first):
    return {"bound": True, "ndim": 1, "first": first, "error_left": False}


def test_try_cast_binds_with_the_parameter_rules_and_leaves_no_error(pm):
    assert pm.try_cast_ro([2.0, 3.0], True) == bound_1d(2.0)
    assert pm.try_cast_ro(np.array([4.0], np.float32), False) == bound_1d(4.0)
    # refused: wrong ndim; a list without conversion; not a tensor; a read-only array for a writable tensor
    assert pm.try_cast_ro(np.zeros((1, 1), np.float32), True) == REFUSED
    assert pm.try_cast_ro([2.0], False) == REFUSED
    assert pm.try_cast_ro("text", True) == REFUSED
    ro = np.zeros(1, np.float32)
    ro.setflags(write=False)
    assert pm.try_cast_writable(ro) == REFUSED
    assert pm.try_cast_writable(np.ones(1, np.float32)) == bound_1d(1.0)


# ---- JAX float32 for a float64 parameter with 64-bit mode off ------------------------------------------


def test_jax_float32_reaches_a_float64_parameter_with_x64_off(pm):
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        x = jax.numpy.arange(6, dtype=jax.numpy.float32).reshape(2, 3) / 4
        assert x.dtype == jax.numpy.float32
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # JAX's truncation warning would mean the wrong route
            assert pm.matrix_sum(x) == {"rows": 2, "cols": 3, "sum": 3.75}
            assert pm.index_sum(jax.numpy.array([1, 2], dtype=jax.numpy.int32)) == 3
    finally:
        jax.config.update("jax_enable_x64", previous)


# ---- array_t's element-access members -----------------------------------------------------------------


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_element_pointers_follow_the_strides(pm, layout):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    a = {"C": base[:3, :4].copy(), "F": np.asfortranarray(base[:3, :4]), "strided": base[::-1, ::2][:3, :]}[layout]
    for i, j in [(0, 0), (1, 2), (2, 1)]:
        got = pm.element_pointers(a, i, j)
        assert got["value"] == a[i, j] == got["at"] and got["row_first"] == a[i, 0]
        assert got["offset"] == (i * a.strides[0] + j * a.strides[1]) // a.itemsize


def test_element_access_out_of_range_raises_index_error(pm):
    a = np.zeros((2, 3))
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        pm.at_out_of_range(a)
    with pytest.raises(IndexError, match="1 index for a tensor of 2 dimensions"):
        pm.at_wrong_count(a)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        pm.data_out_of_range(a)


def test_mutable_members_write_through(pm):
    a = np.zeros((2, 2))
    pm.mutable_members_write(a)
    assert a.tolist() == [[0, 10], [20, 30]]


def test_unchecked_views_read(pm):
    a = np.arange(6, dtype=np.float64).reshape(2, 3)[:, ::-1]
    assert pm.unchecked_sum(a) == 15
    assert pm.unchecked_annotated_ndim(np.array([2.5, 1.0])) == 2.5


def test_view_element_pointers_follow_the_strides_and_write(pm):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    for a in (base[:3, :4].copy(), np.asfortranarray(base[:3, :4]), base[::-1, ::2][:3, :]):
        for i, j in [(0, 0), (1, 2), (2, 1)]:
            expected = float(a[i, j])
            got = pm.view_element_pointers(a, i, j)
            assert got["value"] == expected and a[i, j] == -expected  # read through data(), written through mutable_data()
            assert got["offset"] == (i * a.strides[0] + j * a.strides[1]) // a.itemsize
            assert got["size"] == a.size and got["first"]
            a[i, j] = expected


# ---- py::cast of a tensor ----------------------------------------------------------------------------

CAST_WAYS = ["lvalue", "rvalue", "list_append", "list_append_rvalue", "list_item", "dict_item", "make_tuple",
             "member_cast"]


def producers_for_identity():
    out = [("numpy", lambda: np.zeros(3, np.float32))]
    try:
        import torch
        out.append(("torch", lambda: torch.zeros(3, dtype=torch.float32)))
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("how", CAST_WAYS)
@pytest.mark.parametrize("source", [name for name, _ in producers_for_identity()])
def test_cast_of_a_parameter_gives_back_the_callers_object_and_later_writes_reach_it(pm, how, source):
    x = dict(producers_for_identity())[source]()
    out = pm.cast_then_write(x, how)
    assert out is x
    assert float(x[0]) == 42.0


def test_cast_of_a_const_reference_parameter_gives_back_the_callers_object(pm):
    x = np.zeros(3, np.float32)
    assert pm.cast_const_ref_then_write(x) is x and x[0] == 42


def test_cast_with_an_explicit_copy_policy_still_copies(pm):
    x = np.zeros(3, np.float32)
    out = pm.cast_with_copy_policy_then_write(x)
    assert out is not x and type(out) is np.ndarray
    assert x[0] == 42 and out[0] == 0  # the write reached the caller's array, not the copy


# ---- array_t's converting constructor ------------------------------------------------------------------


def test_constructor_from_object_converts_as_a_read_only_parameter(pm):
    assert pm.construct_from_object([[1, 2], [3, 4.5]]) == {"rows": 2, "cols": 2, "sum": 10.5}
    assert pm.construct_from_object(np.ones((2, 3), np.float32)) == {"rows": 2, "cols": 3, "sum": 6.0}
    assert pm.construct_from_item({"items": [[1.0], [2.0], [3.0]]}) == 3


def test_writable_constructor_from_object_writes_through_and_refuses_lists(pm):
    a = np.zeros(2, np.float32)
    assert pm.construct_writable_from_object(a) == 2 and a[0] == 5
    with pytest.raises(TypeError, match="a writable parameter takes no lists"):
        pm.construct_writable_from_object([1.0, 2.0])
    with pytest.raises(TypeError, match="dtype float64, expected float32"):
        pm.construct_writable_from_object(np.zeros(2))


@pytest.mark.parametrize("value, why", [
    ([1.0, 2.0], "ndim 1, expected 2"),
    ("text", "str is not a tensor"),
    ([[1, 2], [3]], "inhomogeneous"),
])
def test_constructor_from_object_failure_raises_type_error_saying_why(pm, value, why):
    with pytest.raises(TypeError, match="cannot convert") as info:
        pm.construct_from_object(value)
    assert why in str(info.value)
    assert why in pm.construct_error_caught_in_cpp(value)  # what C++ catches says the same
    assert pm.construct_error_caught_in_cpp([[1.0]]) == "bound"


# ---- nested containers and lists to a 2-D tensor -------------------------------------------------------


def test_copy_of_rows_makes_a_matrix_and_an_empty_one(pm):
    out = pm.rows_to_matrix(2, 3, False)
    assert type(out) is np.ndarray and out.tolist() == [[0, 1, 2], [10, 11, 12]]
    empty = pm.rows_to_matrix(0, 3, False)
    assert empty.shape == (0, 0) and empty.dtype == np.float64
    f = pm.rows_to_f_matrix()
    assert f.flags.f_contiguous and f.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert pm.container_to_vector(3).tolist() == [1, 2, 3]


def test_copy_of_ragged_rows_raises_value_error(pm):
    with pytest.raises(ValueError, match="row 1 holds 2 elements, row 0 3"):
        pm.rows_to_matrix(2, 3, True)


def test_nested_list_in_body_reads_a_matrix_and_refuses_ragged_and_empty_lists(pm):
    assert pm.nested_list_in_body([[1, 2, 3], [4, 5, 6]]) == (2, 3)
    assert pm.nested_list_in_body([[]]) == (1, 0)
    with pytest.raises(TypeError, match=r"ndim 1, expected 2 \(shape \(0,\)\)"):
        pm.nested_list_in_body([])  # NumPy reads [] as shape (0,)
    with pytest.raises(TypeError, match="inhomogeneous"):
        pm.nested_list_in_body([[1, 2], [3]])


# ---- exception types of junk input ---------------------------------------------------------------------


@pytest.mark.parametrize("value, why", [
    ([1, -1], "out of bounds for uint32"),   # array_t(obj) raised OverflowError
    ([[1, 2], [3]], "inhomogeneous"),        # array_t(obj) raised ValueError
    ("text", "str is not a tensor"),
])
def test_junk_input_raises_type_error_as_argument_and_in_body(pm, value, why):
    # snippet: junk_input
    with pytest.raises(TypeError, match="incompatible function arguments"):
        pm.index_sum(value)  # a refused argument
    with pytest.raises(TypeError, match="cannot convert") as info:
        pm.cast_in_body_uint32(value)  # a conversion in the body: TypeError on both backends, saying why
    assert why in str(info.value)  # NumPy's reason: "out of bounds for uint32", "inhomogeneous shape", ...
    # end snippet


# ---- a Python callback that returns a tensor, or None ----------------------------------------------------


def test_callback_returning_none_gives_nullopt_and_a_tensor_its_values(pm):
    # array_t with forcecast made a 0-d array (a NaN) of None; a std::optional tensor is std::nullopt
    # snippet: optional_callback
    assert pm.sum_of_produced(lambda: None) is None
    assert pm.sum_of_produced(lambda: np.array([1, 2, 3], np.float32)) == 6.0
    # end snippet
    assert pm.sum_of_produced(lambda: np.array([1.0, 2.0])) == 3.0  # converted: a read-only tensor
    torch = pytest.importorskip("torch")
    assert pm.sum_of_produced(lambda: torch.tensor([0.5, 1.0])) == 1.5


def test_callback_returning_none_for_a_tensor_raises_type_error(pm):
    with pytest.raises(TypeError):
        pm.size_of_produced(lambda: None)
    assert pm.size_of_produced(lambda: np.zeros(4, np.float32)) == 4


# ---- overloads: any mismatch reaches the converting pass, where the first overload that converts wins --


def test_first_overload_that_converts_wins_also_for_an_order_mismatch(pm):
    # snippet: overload_order
    a = np.array([2**40 + 1, 0, 3, 0], np.int64)
    assert pm.first_value(a) == ("int64", 2**40 + 1)  # exact: the first pass binds the int64 overload
    assert pm.first_value(a[::2]) == ("float32", 1099511627776.0)  # strided: float32 converts first, rounding
    assert pm.first_value_int64_first(a[::2]) == ("int64", 2**40 + 1)  # lossless overload first: exact
    # end snippet
    assert float(np.float32(2**40 + 1)) == 1099511627776.0


# --- mixing: an array_t overload kept for a dtype DLPack lacks (pybind11) ----------------------------------

@pytest.mark.only_backend("pybind11")  # array_t
@pytest.mark.parametrize("fixed", [False, True], ids=["trap", "noconvert"])
def test_kept_array_t_overload_takes_only_its_dtype_with_noconvert(p, fixed):
    f = p.fill_seven if fixed else p.fill_seven_trap
    out = np.zeros(3, np.float32)
    assert f(out) == "dltensor" and out.tolist() == [7.0] * 3
    wide = np.zeros(3, np.longdouble)
    assert f(wide) == "array_t" and wide.tolist() == [7.0] * 3
    for refused in (np.zeros(3, np.float64), np.zeros((1, 3), np.float32)):  # another dtype, another rank
        before = refused.copy()
        if fixed:  # refused, as dltensor refused it: no silent copy
            with pytest.raises(TypeError, match="incompatible function arguments"):
                f(refused)
        else:  # the trap: converted to a long double copy, which array_t fills and drops
            try:
                f(refused)
            except (TypeError, ValueError):
                pass
            assert (refused == before).all()  # no error needed for the writes to be lost
    read_only = np.zeros(3, np.float32)
    read_only.setflags(write=False)
    if fixed:
        with pytest.raises(TypeError, match="incompatible function arguments"):
            f(read_only)
    else:
        assert f(read_only) == "array_t" and read_only.tolist() == [0.0] * 3  # silently not written


# --- a framework tag on a .noconvert() parameter (a port from nb::ndarray, which ignores the tag) ----------

def test_a_tagged_noconvert_parameter_takes_only_its_framework_and_the_untagged_port_takes_all(pm):
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    for f in (pm.tagged_total, pm.untagged_total):  # NumPy: by dtype, either spelling
        assert f(np.zeros(3, np.float32)) == 32 and f(np.zeros(3, np.float64)) == 64
    others = [torch.zeros(3, dtype=torch.float64), jax.numpy.zeros(3, jax.numpy.float32)]
    for x in others:  # the tag restricts every attempt without conversion: refused (reference §3)
        with pytest.raises(TypeError, match="incompatible function arguments"):
            pm.tagged_total(x)
    # with the tag dropped, as the guide says, both frameworks bind by dtype, as nb::ndarray took them
    assert [pm.untagged_total(x) for x in others] == [64, 32]
