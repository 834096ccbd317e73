"""Constraints (dtype, ndim, extents, device, order, writability) make an argument fail to load so that
overload resolution goes on; with no match, the TypeError's signature names every annotation."""
import re

import numpy as np
import pytest

from producer import capsule

torch = pytest.importorskip("torch")
jnp = pytest.importorskip("jax.numpy")
tf = pytest.importorskip("tensorflow")

INCOMPATIBLE = "incompatible function arguments"


def test_documented_example_computes_row_norms(m):
    pts = [[1, 2, 2], [0, 3, 4]]
    for x in (np.array(pts, np.float32), torch.tensor(pts, dtype=torch.float32), jnp.array(pts, jnp.float32)):
        assert m.common.squared_norms(x) == [9.0, 25.0]


def test_error_signature_names_every_annotation(m):
    with pytest.raises(TypeError, match=INCOMPATIBLE) as e:
        m.common.squared_norms(np.zeros((2, 4), np.float32))
    msg = str(e.value)
    # Both backends: a Python annotation, dtype='float32' and shape=(None, 3); read-only-ness is the type's
    # (dltensor.typing.ArrayLike, an unannotated read-only parameter).
    for part in (r"dtype='float32'", r"shape=\(None, 3\)", "order='C'", "device='cpu'", r"ArrayLike, dict\("):
        assert re.search(part, msg), (part, msg)


@pytest.mark.parametrize("make", [
    lambda: np.zeros(3, np.float64),
    lambda: torch.zeros(3, dtype=torch.int32),
    lambda: np.zeros(3, np.float16),
])
def test_wrong_dtype_is_rejected(m, make):
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.common.take_f32(make())


def test_ndim_and_fixed_extents(m):
    assert m.constraints.take_ndim2(np.zeros((2, 7))) == 27
    assert m.constraints.take_ndim2(torch.zeros(3, 1)) == 31
    with pytest.raises(TypeError):
        m.constraints.take_ndim2(np.zeros(3))
    with pytest.raises(TypeError):
        m.constraints.take_ndim2(np.zeros((1, 2, 3)))
    assert m.constraints.take_2x3(jnp.zeros((2, 3))) == 6
    for bad in (np.zeros((3, 2)), np.zeros((2, 4)), np.zeros(6)):
        with pytest.raises(TypeError):
            m.constraints.take_2x3(bad)
    with pytest.raises(TypeError):
        m.constraints.take_0d(np.zeros(1))


def test_device_constraint(m):
    storage = np.zeros(4, np.float32)
    assert m.constraints.take_cpu(np.zeros(2)) == 1
    with pytest.raises(TypeError):
        m.constraints.take_cuda(np.zeros(2))
    # A tensor that claims to live on CUDA device 0 (never dereferenced by these functions).
    assert m.constraints.take_cuda(capsule(m, storage, shape=(4,), device=(2, 0))) == 2
    with pytest.raises(TypeError):
        m.constraints.take_cpu(capsule(m, storage, shape=(4,), device=(2, 0)))


def test_c_and_f_order(m):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = np.asfortranarray(a)
    assert m.constraints.take_c_rw(a) == a.ravel().tolist()
    with pytest.raises(TypeError):
        m.constraints.take_c_rw(f)  # writable: no copy, so no match
    with pytest.raises(TypeError):
        m.constraints.take_c_rw(a[:, ::2])
    assert m.constraints.take_f(f) == a.ravel().tolist()
    assert m.constraints.take_any_contig(f) == a.ravel().tolist()
    assert m.constraints.take_any_contig(a) == a.ravel().tolist()


def test_size_one_and_zero_size_dimensions_place_no_constraint_on_strides(m):
    storage = np.arange(8, dtype=np.float32)
    # shape (3, 1) with a nonsense stride on the size-1 axis is still C- and F-contiguous
    assert m.constraints.take_c_rw(capsule(m, storage, shape=(3, 1), strides=(1, 99))) == [0, 1, 2]
    assert m.constraints.take_f(capsule(m, storage, shape=(3, 1), strides=(1, 99))) == [0, 1, 2]
    # zero-size: any strides
    assert m.constraints.take_c_rw(capsule(m, storage, shape=(0, 5), strides=(7, 3))) == []
    # one element: any strides
    assert m.constraints.take_c_rw(capsule(m, storage, shape=(1, 1), strides=(5, 9))) == [0]
    # torch's own (1, n) tensors with odd strides
    assert m.constraints.take_c_rw(torch.zeros(4, 1).T.contiguous().T) == [0, 0, 0, 0]


def test_read_only_sources_never_bind_to_writable_parameters(m):
    ro = np.arange(3, dtype=np.float32)
    ro.flags.writeable = False
    storage = np.zeros(3, np.float32)
    sources = [
        ro,
        capsule(m, storage, shape=(3,), flags=1),  # DLPack read-only flag
        jnp.zeros(3, jnp.float32),                  # immutable by design
        tf.zeros(3),                                # immutable by design
        memoryview(np.zeros(3, np.float32).tobytes()).cast("f"),
    ]
    for src in sources:
        with pytest.raises(TypeError, match=INCOMPATIBLE):
            m.constraints.take_writable(src)
    for src in sources[:1] + [capsule(m, storage, shape=(3,), flags=1)] + sources[2:]:
        assert m.constraints.take_const(src) is True


def test_read_only_accessor(m):
    assert m.constraints.take_writable(np.zeros(2, np.float32)) is False
    assert m.constraints.take_const(np.zeros(2, np.float32)) is True
    assert m.constraints.take_ro(np.zeros(2)) is True


def test_overloads_by_dtype_and_shape(m):
    assert m.constraints.which(np.zeros(2, np.float32)) == "float32 1d"
    assert m.constraints.which(np.zeros((2, 2), np.float32)) == "float32 2d"
    assert m.constraints.which(torch.zeros(2, dtype=torch.float64)) == "float64"
    assert m.constraints.which(np.zeros(2, np.int32)) == "int32"
    assert m.constraints.which(torch.zeros(2, dtype=torch.uint8)) == "uint8"
    with pytest.raises(TypeError, match=INCOMPATIBLE):
        m.constraints.which(np.zeros(2, np.int16))


def test_read_only_overloads_prefer_the_exact_dtype(m):
    assert m.constraints.which_ro(np.zeros(2, np.float64)) == "float64"
    assert m.constraints.which_ro(np.zeros(2, np.float32)) == "float32"
    assert m.constraints.which_ro(np.zeros(2, np.int32)) == "float32"  # second pass: first overload converts


def test_writable_overload_is_chosen_only_for_writable_sources(m):
    assert m.constraints.which_rw(np.zeros(2, np.float32)) == "writable"
    assert m.constraints.which_rw(jnp.zeros(2, jnp.float32)) == "read-only"
    ro = np.zeros(2, np.float32)
    ro.flags.writeable = False
    assert m.constraints.which_rw(ro) == "read-only"


def _compile(backend, snippet, tmp_path):
    import shutil
    import subprocess
    import sysconfig

    import dltensor
    import nanobind
    import pybind11

    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    src = tmp_path / "snippet.cpp"
    src.write_text(f"#include <dltensor/{backend}.h>\nnamespace py = {backend};\n" + snippet + "\n")
    return subprocess.run([cxx, "-std=c++17", "-fsyntax-only", f"-I{dltensor.include_dir()}",
                           f"-I{nanobind.include_dir()}", f"-I{pybind11.get_include()}",
                           f"-I{sysconfig.get_paths()['include']}", str(src)], capture_output=True, text=True)


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
@pytest.mark.parametrize("args", ["float, double", "py::shape<2>, py::ndim<2>", "py::c_contig, py::f_contig",
                                  "py::device::cpu, py::device::cuda", "py::numpy, py::pytorch",
                                  "py::ro, py::ro"])
def test_each_annotation_kind_at_most_once(backend, args, tmp_path):
    bad = _compile(backend, f"static_assert(sizeof(py::dltensor<{args}>) > 0);", tmp_path)
    assert bad.returncode != 0 and "at most once" in bad.stderr
    good = _compile(backend, "static_assert(sizeof(py::dltensor<py::ro, float, py::shape<2>, py::c_contig, "
                             "py::device::cpu, py::numpy>) > 0);", tmp_path)
    assert good.returncode == 0, good.stderr


@pytest.mark.parametrize("make", [lambda: np.arange(6, dtype=np.float32)[::2],
                                  lambda: np.arange(12, dtype=np.float32).reshape(4, 3)[::2],
                                  lambda: torch.arange(6.0)[::2]], ids=["1-D strided", "rows strided", "torch 1-D"])
def test_c_contig_refuses_strided_dimension_zero(m, make):
    # Strides in dimension 0 count too: a 1-D (or row-sliced) strided tensor is not C-contiguous.
    x = make()
    with pytest.raises(TypeError, match="incompatible function arguments"):
        m.constraints.take_c_rw(x)  # writable: never converted
    assert m.constraints.take_c(x) == np.asarray(x).ravel().tolist()  # read-only: a C-ordered copy


@pytest.mark.parametrize("make", [lambda: np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))[:, ::2],
                                  lambda: torch.arange(12.0).reshape(4, 3).T[:, ::2]], ids=["numpy", "torch"])
def test_f_contig_refuses_a_strided_last_dimension(m, make):
    # The F-order check covers the last dimension too: columns taken with a step are not F-contiguous, so a
    # read-only f_contig parameter gets an F-ordered copy (strides (1, 3)), not the (1, 6) view.
    x = make()
    got = m.constraints.take_f_contents(x)
    assert got["values"] == np.asarray(x).ravel().tolist() and got["strides"] == (1, 3)


def test_const_return_is_read_only_for_dlpack_consumers(m):
    # A const tensor returned without a framework annotation carries DLPack's read-only flag: NumPy makes a
    # read-only array of it.
    a = np.from_dlpack(m.constraints.const_view_without_framework())
    assert a.tolist() == [1, 2, 3] and not a.flags.writeable
