"""The migration guide's examples (cpp/examples): every task written with pybind11's py::array_t, nanobind's
nb::ndarray and py::dltensor (one source, both backends), built with CMake against the installed package
and run on NumPy, PyTorch and JAX. The `# snippet:` blocks below are quoted by docs/migration.md
(test_guide.py checks the quotes)."""
import gc
import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import toolchains
from cmake_build import cmake_build
from conftest import BUILD_ROOT, HERE

torch = pytest.importorskip("torch")
jnp = pytest.importorskip("jax.numpy")

EXAMPLES = HERE.parent / "cpp" / "examples"
# The dltensor modules are built three times where the compilers exist: by the default compiler, by the newest
# Clang in C++20 (suffix _clang) and as CUDA by nvcc (suffix _nvcc); every dltensor test runs on each. Clang
# uses libstdc++ here, as the frameworks loaded into this process do: a libc++ module's exceptions can bind to
# libstdc++'s runtime where a framework loaded it globally (test_compilers.py runs a libc++ build in a
# process of its own).
# Those two builds are unoptimized (-O0, no debug information): they prove that the compilers take the
# code and that it behaves; the optimized build is the default compiler's (a third of the build time).
UNOPTIMIZED = ["-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS_DEBUG=-O0", "-DCMAKE_CUDA_FLAGS_DEBUG=-O0"]
# nvcc builds the tasks that an extension's .cu file is most like (inputs, writes, returns, a CUDA stream,
# half precision): an nvcc compile of a task took 20 s against GCC's 7 s, and tests/test_compilers.py
# compiles every test source through nvcc's front end and builds and loads the containers' module with it.
NVCC_TASKS = ["read_matrix", "update_in_place", "return_new", "cuda_stream", "half_precision"]
# suffix: (CMake arguments, whether the toolchain is installed, the tasks it builds (None: every task))
TOOLCHAINS = {
    "_clang": ([f"-DCMAKE_CXX_COMPILER={toolchains.CLANG_NEWEST}", "-DCMAKE_CXX_STANDARD=20", *UNOPTIMIZED],
               toolchains.have(toolchains.CLANG_NEWEST), None),
    "_nvcc": (["-DDLTENSOR_EXAMPLES_CUDA=ON", f"-DDLTENSOR_EXAMPLES_TASKS={';'.join(NVCC_TASKS)}", *UNOPTIMIZED],
              toolchains.have(toolchains.NVCC), NVCC_TASKS),
}
DLTENSOR = [f"dltensor_{backend}{suffix}" for suffix in ["", *(s for s, (_, ok, _) in TOOLCHAINS.items() if ok)]
            for backend in ("nanobind", "pybind11")]
FLAVORS = ["array_t", "ndarray", *DLTENSOR]
ON_DLPACK = ["ndarray", *DLTENSOR]  # the flavors that take any DLPack producer, not only NumPy


def on(task: str, flavors: list) -> list:
    """`flavors` less those of a toolchain that does not build `task`."""
    return [f for f in flavors if not any(f.endswith(s) and tasks is not None and task not in tasks
                                          for s, (_, _, tasks) in TOOLCHAINS.items())]


@pytest.fixture(scope="session")
def build() -> Path:
    return cmake_build(EXAMPLES, BUILD_ROOT / "examples")


def toolchain_build(suffix: str) -> Path:
    """The examples' dltensor modules built by another toolchain (TOOLCHAINS), made at the first use."""
    if suffix not in _toolchain_builds:
        _toolchain_builds[suffix] = cmake_build(EXAMPLES, BUILD_ROOT / f"examples{suffix}",
                                                [f"-DDLTENSOR_EXAMPLES_SUFFIX={suffix}", *TOOLCHAINS[suffix][0]])
    return _toolchain_builds[suffix]


_toolchain_builds = {}


def build_of(build: Path, flavor: str) -> Path:
    """The build that holds `flavor`'s modules: a toolchain's for its flavors, else `build`."""
    suffix = next((s for s in TOOLCHAINS if flavor and flavor.endswith(s)), None)
    return toolchain_build(suffix) if suffix else build


def load(build, task, flavor):
    """The extension module `<task>_<flavor>` of the examples build (of a toolchain's build, for its flavors)."""
    build = build_of(build, flavor)
    if str(build) not in sys.path:
        sys.path.insert(0, str(build))
    return importlib.import_module(f"{task}_{flavor}" if flavor else task)


def in_framework(fw, a: np.ndarray):
    """`a` as an array of the framework `fw` (a copy for JAX, whose arrays are immutable)."""
    return {"numpy": lambda: a, "torch": lambda: torch.from_numpy(a), "jax": lambda: jnp.asarray(a)}[fw]()


def as_numpy(x):
    return np.asarray(x.detach() if isinstance(x, torch.Tensor) else x)


# --- README's quickstart ----------------------------------------------------------------------------

@pytest.mark.parametrize("fw", ["numpy", "torch", "jax"])
def test_quickstart_norms_of_points_from_any_framework(build, fw):
    ext = load(build, "quickstart", "")
    pts = np.array([[1, 2, 2], [0, 3, 4], [0, 0, 0]], np.float32)
    r = ext.norms(in_framework(fw, pts))
    assert isinstance(r, np.ndarray) and r.tolist() == [3.0, 5.0, 0.0]  # the length of each row
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.norms(np.ones((2, 4), np.float32))  # shape<-1, 3>


def test_quickstart_unnamed_parameter_is_arg_in_explanations(build):
    # docs/reference.md (errors): without py::arg, nanobind calls a function's one parameter `arg`
    import dltensor

    ext = load(build, "quickstart", "")
    with pytest.raises(TypeError) as e:
        dltensor.explain(ext.norms, np.ones((2, 4), np.float32))
    assert len(e.value.__notes__) == 1 and e.value.__notes__[0].startswith("dltensor: argument `arg` (numpy.ndarray): ")


# --- read a C-contiguous float matrix ---------------------------------------------------------------

@pytest.mark.parametrize("flavor", on("read_matrix", FLAVORS))
@pytest.mark.parametrize("fw", ["numpy", "torch", "jax"])
def test_frobenius_reads_every_element(build, flavor, fw):
    ext = load(build, "read_matrix", flavor)
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    assert ext.frobenius(in_framework(fw, a)) == pytest.approx(np.linalg.norm(a), rel=1e-6)


@pytest.mark.parametrize("flavor", on("read_matrix", FLAVORS))
def test_frobenius_converts_read_only_inputs_of_other_dtype_or_order(build, flavor):
    ext = load(build, "read_matrix", flavor)
    a = np.arange(12.0).reshape(3, 4)
    for x in (a, a.T, a[::-1, ::2], a.astype(np.int32), np.asfortranarray(a, np.float32)):
        assert ext.frobenius(x) == pytest.approx(np.linalg.norm(x), rel=1e-6)


@pytest.mark.parametrize("flavor", on("read_matrix", ON_DLPACK))
def test_frobenius_rejects_non_matrices_with_a_type_error_naming_the_annotations(build, flavor):
    ext = load(build, "read_matrix", flavor)
    # snippet: errors
    with pytest.raises(TypeError, match="incompatible function arguments") as e:
        ext.frobenius(np.ones(3, np.float32))  # 1-D: the annotation asks for ndim 2
    # the signature text names the annotations (nb::ndarray's spelling, then py::dltensor's on both backends)
    assert ("dtype=float32, shape=(*, *), order='C', device='cpu', writable=False" in str(e.value) or
            "ArrayLike, dict(dtype='float32', shape=(None, None), order='C', device='cpu')" in str(e.value))
    # end snippet
    for bad in (torch.ones(2, 2, dtype=torch.complex64),  # complex -> float would drop the imaginary part
                "not a tensor", None, [1.0, 2.0], [[1.0], [2.0, 3.0]], object()):
        with pytest.raises(TypeError, match="incompatible function arguments"):
            ext.frobenius(bad)
    if flavor == "ndarray":  # nb::ndarray takes no lists
        with pytest.raises(TypeError, match="incompatible function arguments"):
            ext.frobenius([[3.0, 0.0], [0.0, 4.0]])
    else:  # a read-only dltensor reads a nested list as NumPy does
        assert ext.frobenius([[3.0, 0.0], [0.0, 4.0]]) == 5.0


@pytest.mark.parametrize("flavor", on("read_matrix", ON_DLPACK))
def test_a_raw_capsule_is_consumed_once(build, flavor):
    ext = load(build, "read_matrix", flavor)
    # snippet: capsule
    capsule = np.full((2, 2), 2.0, np.float32).__dlpack__()
    assert ext.frobenius(capsule) == 4.0  # takes the capsule (renamed "used_dltensor")
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.frobenius(capsule)  # a second use is refused, never a double free
    # end snippet


def test_array_t_checks_ndim_at_run_time_and_casts_complex_to_real(build):
    ext = load(build, "read_matrix", "array_t")
    # snippet: array_t_errors
    with pytest.raises(ValueError, match="expected a 2-D array"):  # the check the function body makes
        ext.frobenius(np.ones(3, np.float32))
    with pytest.warns(np.exceptions.ComplexWarning):  # forcecast drops the imaginary part, and goes on
        assert ext.frobenius(np.full((1, 1), 3 + 4j)) == 3.0
    # end snippet


# --- update a tensor in place -----------------------------------------------------------------------

@pytest.mark.parametrize("flavor", on("update_in_place", FLAVORS))
def test_scale_writes_through_transposed_and_sliced_views(build, flavor):
    ext = load(build, "update_in_place", flavor)
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    expected = a.copy()
    ext.scale(a.T, 2.0)
    expected *= 2
    ext.scale(a[::-2, 1::2], 10.0)
    expected[::-2, 1::2] *= 10
    assert np.array_equal(a, expected)


@pytest.mark.parametrize("flavor", on("update_in_place", DLTENSOR))
def test_scale_refusals_are_explained(build, flavor):
    ext = load(build, "update_in_place", flavor)
    # snippet: explain
    import dltensor

    a = np.ones((2, 2))  # float64; `scale` takes a writable float32 matrix
    with pytest.raises(TypeError, match="incompatible function arguments") as e:
        dltensor.explain(ext.scale, a, 2.0)  # calls ext.scale(a, 2.0), adding why to its TypeError
    assert e.value.__notes__ == [
        "dltensor: argument `a` (numpy.ndarray): dtype float64, expected float32; a writable parameter "
        "never converts (float64 -> float32 would be a copy): declare it const to allow the conversion"]
    # end snippet
    b = np.ones((2, 2), np.float32)
    b.setflags(write=False)
    with pytest.raises(TypeError) as e:
        dltensor.explain(ext.scale, b, 2.0)
    assert e.value.__notes__ == [
        "dltensor: argument `a` (numpy.ndarray): read-only source (numpy.ndarray) for a writable parameter: "
        "declare the dtype const (or add py::ro) if the function only reads it"]


@pytest.mark.parametrize("flavor", on("update_in_place", ON_DLPACK))
def test_scale_writes_into_torch_tensors(build, flavor):
    ext = load(build, "update_in_place", flavor)
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    ext.scale(t.t(), 3.0)
    assert t.tolist() == [[0, 3, 6], [9, 12, 15]]


@pytest.mark.parametrize("flavor", on("update_in_place", FLAVORS))
def test_scale_refuses_inputs_it_would_have_to_copy(build, flavor):
    ext = load(build, "update_in_place", flavor)
    bad = [np.ones((2, 2)), np.ones((2, 2), np.int32)]  # other dtypes: a copy would lose the writes
    if flavor != "array_t":
        bad.append(torch.ones(2, 2, dtype=torch.float64))
    for x in bad:
        with pytest.raises(TypeError, match="incompatible function arguments"):
            ext.scale(x, 2.0)
        assert (as_numpy(x) == 1).all()


@pytest.mark.parametrize("flavor", on("update_in_place", FLAVORS))
def test_scale_refuses_read_only_arrays(build, flavor):
    ext = load(build, "update_in_place", flavor)
    a = np.ones((2, 2), np.float32)
    a.flags.writeable = False
    # py::array_t: mutable_unchecked() throws; nb::ndarray and py::dltensor: the argument does not load
    with pytest.raises(ValueError if flavor == "array_t" else TypeError):
        ext.scale(a, 2.0)
    assert (a == 1).all()


@pytest.mark.parametrize("flavor", on("update_in_place", DLTENSOR))
def test_dltensor_scale_refuses_immutable_jax_arrays(build, flavor):
    ext = load(build, "update_in_place", flavor)
    # snippet: jax_is_immutable
    x = jnp.ones((2, 2), jnp.float32)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.scale(x, 2.0)  # JAX arrays are immutable: a writable parameter never binds to one
    assert (x == 1).all()
    # end snippet


def test_trap_ndarray_writes_into_an_immutable_jax_array(build):
    ext = load(build, "update_in_place", "ndarray")
    x = jnp.ones((2, 2), jnp.float32) + 0  # a fresh buffer: the write below must not touch JAX's caches
    ext.scale(x, 2.0)  # nb::ndarray<float> takes it, and writes into an array JAX considers immutable
    assert (np.asarray(x) == 2).all()


@pytest.mark.parametrize("flavor", on("update_in_place", ["array_t", "ndarray"]))
def test_trap_implicit_conversion_loses_the_writes(build, flavor):
    ext = load(build, "update_in_place", flavor)
    # snippet: lossy
    a = np.ones((2, 2))  # float64, the parameter is float32
    ext.scale_lossy(a, 2.0)  # converted to a temporary float32 copy; the copy is scaled, then dropped
    assert (a == 1).all()  # no error, and no change
    # end snippet


# --- return a new tensor that C++ allocated ---------------------------------------------------------

FRAMEWORK_TYPES = {"numpy": np.ndarray, "torch": torch.Tensor, "jax": type(jnp.zeros(1))}


@pytest.mark.parametrize("flavor", on("return_new", ["ndarray", *DLTENSOR]))
@pytest.mark.parametrize("fw", ["numpy", "torch", "jax"])
def test_squares_returns_the_framework_the_tag_names(build, flavor, fw):
    ext = load(build, "return_new", flavor)
    x = getattr(ext, f"squares_{fw}")(5)
    assert isinstance(x, FRAMEWORK_TYPES[fw])
    assert as_numpy(x).tolist() == [0, 1, 4, 9, 16] and as_numpy(x).dtype == np.float32


@pytest.mark.parametrize("flavor", on("return_new", FLAVORS))
def test_squares_memory_lives_as_long_as_any_view(build, flavor):
    ext = load(build, "return_new", flavor)
    make = ext.squares if flavor == "array_t" else ext.squares_numpy
    x = make(1000)
    tail = x[990:]
    del x
    gc.collect()
    for _ in range(50):  # reuse the heap: freed memory would not keep its values
        make(1000)
    assert tail.tolist() == [float(i * i) for i in range(990, 1000)]
    assert tail.flags.writeable
    assert make(0).shape == (0,)


@pytest.mark.parametrize("flavor", on("return_new", DLTENSOR))
def test_squares_any_is_adopted_by_any_framework_without_a_copy(build, flavor):
    ext = load(build, "return_new", flavor)
    # snippet: squares_any
    y = ext.squares_any(4)  # no framework tag: any DLPack consumer adopts it
    t, a = torch.from_dlpack(y), np.from_dlpack(y)
    t[1] = 42.0  # one buffer: the write shows through every consumer
    assert a.tolist() == [0, 42, 4, 9] and jnp.from_dlpack(y).tolist() == [0, 42, 4, 9]
    # end snippet


# --- return a view into a C++ object's member -------------------------------------------------------

def check_member_view(module_name):
    """Run in a subprocess per flavor: the four modules bind the same C++ class, and both nanobind and
    pybind11 refuse to register one C++ type twice in a process."""
    ext = importlib.import_module(module_name)
    # snippet: counts
    h = ext.Histogram(4, 0.0, 4.0)
    counts = h.counts()  # a view of the C++ vector, not a copy
    h.add(1.5)
    assert counts.tolist() == [0, 1, 0, 0]  # C++ writes show in the view
    counts[3] = 2  # view writes reach C++
    assert h.total() == 3
    del h  # the view keeps the Histogram alive
    # end snippet
    gc.collect()
    for _ in range(50):  # reuse the heap: a freed vector would not keep its values
        ext.Histogram(4, 0.0, 4.0).add(0.5)
    assert counts.tolist() == [0, 1, 0, 2]
    assert isinstance(counts, np.ndarray) and counts.dtype == np.float32


@pytest.mark.parametrize("flavor", on("member_view", FLAVORS))
def test_counts_is_a_view_that_keeps_its_object_alive(build, flavor):
    code = (f"import sys; sys.path[:0] = [{str(build_of(build, flavor))!r}, {str(HERE)!r}]; import test_examples; "
            f"test_examples.check_member_view('member_view_{flavor}')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --- accept a CUDA tensor and work on the producer's stream -----------------------------------------

CUDA_FLAVORS = ["ndarray", *DLTENSOR]


@pytest.mark.parametrize("flavor", on("cuda_stream", CUDA_FLAVORS))
def test_fill_refuses_cpu_tensors(build, flavor):
    ext = load(build, "cuda_stream", flavor)
    args = (torch.zeros(3), 1.0) + ((0,) if flavor == "ndarray" else ())
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.fill(*args)


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@needs_cuda
@pytest.mark.parametrize("flavor", on("cuda_stream", CUDA_FLAVORS))
def test_fill_runs_on_the_producers_stream(build, flavor):
    ext = load(build, "cuda_stream", flavor)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.zeros(1 << 22, device="cuda")
        torch.cuda._sleep(1 << 24)  # keep the stream busy: work on any other stream would run first
        # snippet: fill_python
        if flavor == "ndarray":
            ext.fill(x, 3.0, torch.cuda.current_stream().cuda_stream)  # nanobind: pass the stream
        else:
            ext.fill(x, 3.0)  # py::dltensor: x.stream() is torch's current stream
        # end snippet
        y = x * 2  # stream order: runs after the fill
    side.synchronize()
    assert bool((y == 6).all())


@needs_cuda
@pytest.mark.parametrize("flavor", on("cuda_stream", DLTENSOR))
def test_fill_honours_the_byte_offset(build, flavor):
    ext = load(build, "cuda_stream", flavor)
    x = torch.zeros(1000, device="cuda")
    ext.fill(x[100:], 5.0)  # byte offset into the allocation
    torch.cuda.synchronize()
    assert x[:100].sum().item() == 0 and bool((x[100:] == 5).all())


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the failure without a CUDA device")
@pytest.mark.parametrize("flavor", on("cuda_stream", DLTENSOR))
def test_filled_without_a_cuda_device_raises_torchs_error(build, flavor):
    ext = load(build, "cuda_stream", flavor)
    with pytest.raises(Exception, match="CUDA") as e:  # PyTorch reports its allocator's failure as MemoryError
        ext.filled(16, 1.0)
    assert isinstance(e.value, (MemoryError, RuntimeError))


@needs_cuda
@pytest.mark.parametrize("flavor", on("cuda_stream", DLTENSOR))
def test_filled_allocates_through_torch_and_fills_on_its_stream(build, flavor):
    ext = load(build, "cuda_stream", flavor)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(1 << 24)
        x = ext.filled(1 << 20, 7.0)
        y = x + 1
    side.synchronize()
    assert isinstance(x, torch.Tensor) and x.is_cuda and x.dtype == torch.float32
    assert bool((y == 8).all())


# --- overload by dtype -------------------------------------------------------------------------------

@pytest.mark.parametrize("flavor", on("overload_dtype", FLAVORS))
def test_total_dispatches_on_dtype(build, flavor):
    ext = load(build, "overload_dtype", flavor)
    # snippet: total_python
    assert type(ext.total(np.arange(4, dtype=np.int64))) is int  # the int64 overload
    assert type(ext.total(np.arange(4, dtype=np.float64))) is float  # the double overload
    assert ext.total(np.array([0.5, 0.25], np.float32)) == 0.75  # the float overload
    assert ext.total(np.arange(4, dtype=np.int32)) == 6.0  # no exact match: converted to float32
    # end snippet


@pytest.mark.parametrize("flavor", on("overload_dtype", ON_DLPACK))
@pytest.mark.parametrize("fw", ["torch", "jax"])
def test_total_dispatches_on_dtype_for_any_framework(build, flavor, fw):
    ext = load(build, "overload_dtype", flavor)
    assert type(ext.total(in_framework(fw, np.arange(5, dtype=np.int64)))) is int
    assert ext.total(in_framework(fw, np.arange(5, dtype=np.float64))) == 10.0


# --- answer in the caller's framework; overload by framework -------------------------------------------

@pytest.mark.parametrize("flavor", on("caller_framework", DLTENSOR))
def test_doubled_answers_in_the_callers_framework(build, flavor):
    ext = load(build, "caller_framework", flavor)
    # snippet: doubled_python
    assert type(ext.doubled(np.ones(3, np.float32))) is np.ndarray
    assert isinstance(ext.doubled(torch.ones(3)), torch.Tensor)
    assert isinstance(ext.doubled(jnp.ones(3, jnp.float32)), type(jnp.ones(1)))
    assert ext.doubled([1.0, 2.0]).tolist() == [2.0, 4.0]  # a list converts to NumPy: NumPy out
    # end snippet


def test_ndarray_doubled_answers_in_its_tags_framework(build):
    ext = load(build, "caller_framework", "ndarray")
    assert type(ext.doubled(torch.ones(3))) is np.ndarray and ext.doubled(torch.ones(3)).tolist() == [2.0] * 3


@pytest.mark.parametrize("flavor", on("caller_framework", ["ndarray", *DLTENSOR]))
def test_which_overloads_by_framework(build, flavor):
    ext = load(build, "caller_framework", flavor)
    assert ext.which(np.ones(3, np.float32)) == "numpy"
    # nb::ndarray ignores the tag on parameters: its first overload takes PyTorch's tensor too
    assert ext.which(torch.ones(3)) == ("numpy" if flavor == "ndarray" else "pytorch")
    assert ext.which(jnp.ones(3, jnp.float32)) == "numpy"  # neither framework: the first overload


# --- float16 and bfloat16 ----------------------------------------------------------------------------

@pytest.mark.parametrize("flavor", on("half_precision", FLAVORS))
def test_mean_of_float16(build, flavor):
    ext = load(build, "half_precision", flavor)
    assert ext.mean(np.array([1.0, 2.0, 4.5], np.float16)) == pytest.approx(2.5)
    assert ext.mean(np.array([1.0, 2.0, 4.5, 8.0], np.float16)[::2]) == pytest.approx(2.75)  # strided


@pytest.mark.parametrize("flavor", on("half_precision", ON_DLPACK))
def test_mean_of_float16_and_bfloat16_from_torch_and_jax(build, flavor):
    ext = load(build, "half_precision", flavor)
    # snippet: half_python
    assert ext.mean(torch.tensor([1.0, 2.0], dtype=torch.bfloat16)) == 1.5
    assert ext.mean(jnp.array([1.0, 2.0], jnp.bfloat16)) == 1.5
    assert ext.mean(torch.tensor([1.0, 4.0], dtype=torch.float16)) == 2.5
    # end snippet
    assert ext.mean(jnp.array([1.0, 4.0], jnp.float16)) == 2.5


@pytest.mark.parametrize("flavor", on("half_precision", FLAVORS))
def test_to_float16_rounds_to_nearest_even(build, flavor):
    ext = load(build, "half_precision", flavor)
    x = np.array([1.0, 1 + 2**-11, 1 + 3 * 2**-11, 70000.0, -0.0, 2**-24], np.float32)
    h = ext.to_float16(x)
    assert isinstance(h, np.ndarray) and h.dtype == np.float16
    with np.errstate(over="ignore"):  # 70000 is past float16's range: infinity
        assert np.array_equal(h, x.astype(np.float16)) and np.signbit(h[4])


# --- the stencil: a 3x3 box blur over float32 image batches -----------------------------------------

def box_blur_reference(a: np.ndarray) -> np.ndarray:
    if a.size == 0:
        return np.zeros(a.shape)
    p = np.pad(a.astype(np.float64), ((0, 0), (1, 1), (1, 1)), mode="edge")
    h, w = a.shape[1:]
    return sum(p[:, i:i + h, j:j + w] for i in range(3) for j in range(3)) / 9


def images(n=2, h=7, w=9, seed=0):
    return np.random.default_rng(seed).standard_normal((n, h, w)).astype(np.float32)


@pytest.mark.parametrize("flavor", on("stencil", FLAVORS))
def test_box_blur_into_matches_the_reference_for_any_strides(build, flavor):
    ext = load(build, "stencil", flavor)
    src = images()
    for view in (src, src[:, ::-1, :], src.transpose(0, 2, 1), src[:, 1:, ::2], src[:, :1, :1], src[:, :0]):
        dst = np.full(view.shape[::-1], np.nan, np.float32).T  # a strided destination as well
        ext.box_blur_into(view, dst)
        np.testing.assert_allclose(dst, box_blur_reference(view), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("flavor", on("stencil", ON_DLPACK))
def test_box_blur_into_torch_tensors(build, flavor):
    ext = load(build, "stencil", flavor)
    src = torch.from_numpy(images())
    dst = torch.empty_like(src)
    ext.box_blur_into(src, dst)
    np.testing.assert_allclose(dst.numpy(), box_blur_reference(src.numpy()), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("flavor", on("stencil", FLAVORS))
def test_box_blur_into_refuses_overlap_and_shape_mismatch(build, flavor):
    ext = load(build, "stencil", flavor)
    src = images()
    with pytest.raises(ValueError, match="overlaps"):
        ext.box_blur_into(src, src)
    with pytest.raises(ValueError, match="overlaps"):
        ext.box_blur_into(src[:, :3], src[:, 3:6])  # interleaved: the check compares address ranges
    with pytest.raises(ValueError, match="shape"):
        ext.box_blur_into(src, np.empty((2, 7, 8), np.float32))
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.box_blur_into(src, np.empty((2, 7, 9)))  # float64 output: it would be a lost copy
    ext.box_blur_into(src[:1], src[1:])  # separate ranges of one buffer: fine
    np.testing.assert_allclose(src[1:], box_blur_reference(src[:1]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("flavor", on("stencil", DLTENSOR))
@pytest.mark.parametrize("fw", ["numpy", "torch", "jax"])
def test_box_blur_returns_a_result_any_framework_adopts(build, flavor, fw):
    ext = load(build, "stencil", flavor)
    src = images(3, 16, 16)
    # snippet: stencil_python
    x = in_framework(fw, src)  # a NumPy array, a PyTorch tensor or a JAX array: read in place
    y = ext.box_blur(x)
    out = {"numpy": np.from_dlpack, "torch": torch.from_dlpack, "jax": jnp.from_dlpack}[fw](y)  # no copy
    # end snippet
    np.testing.assert_allclose(as_numpy(out), box_blur_reference(src), rtol=1e-5, atol=1e-6)
    np.from_dlpack(y)[0, 0, 0] = 123.0  # one buffer behind every consumer (JAX's copy aside: immutable)
    if fw != "jax":
        assert float(out[0, 0, 0]) == 123.0


# --- the rename from nb::ndarray: writable-declared parameters that relied on conversion -------------

@pytest.mark.parametrize("fw", ["numpy", "torch", "jax"])
def test_gather_renamed_refuses_int64_indices_and_const_fixes_it(build, fw):
    values = in_framework(fw, np.array([10, 20, 30, 40], np.float32))
    index = in_framework(fw, np.array([3, 0, 3], np.int64))  # NumPy's default integer
    assert load(build, "gather", "ndarray").gather_sum(values, index) == 90.0  # nanobind: a silent copy
    for flavor in on("gather", DLTENSOR):
        ext = load(build, "gather", flavor)
        with pytest.raises(TypeError, match="incompatible function arguments"):
            ext.gather_sum_renamed(values, index)  # writable: never a silent copy
        assert ext.gather_sum(values, index) == 90.0  # `const uint32_t`: converted, as nanobind did
        if fw != "jax":  # JAX arrays are immutable: never bound to a writable parameter
            exact = np.array([3, 0, 3], np.uint32) if fw == "numpy" else torch.tensor([3, 0, 3], dtype=torch.uint32)
            assert ext.gather_sum_renamed(values, exact) == 90.0


# --- a realistic port from array_t: segments (index arrays, allocation by shape, local results, lists) ------

SEGMENT_VALUES = np.arange(12, dtype=np.float32).reshape(6, 2)
SEGMENT_LABELS = np.array([0, 2, 2, 0, 2, 4])  # int64, NumPy's default: read as uint32 (a conversion)
SEGMENT_MEANS = [[3.0, 4.0], [0.0, 0.0], [14 / 3, 17 / 3], [0.0, 0.0], [10.0, 11.0]]


@pytest.mark.parametrize("flavor", on("segments", FLAVORS))
def test_segments_every_spelling_agrees_on_numpy(build, flavor):
    ext = load(build, "segments", flavor)
    means = ext.segment_mean(SEGMENT_VALUES, SEGMENT_LABELS, 5)
    assert type(means) is np.ndarray and means.dtype == np.float32
    assert np.allclose(means, SEGMENT_MEANS)
    ids = ext.nonempty_segments(SEGMENT_LABELS)
    assert type(ids) is np.ndarray and ids.dtype == np.uint32 and ids.tolist() == [0, 2, 4]
    assert ext.count_labels(SEGMENT_LABELS.astype(np.uint32)) == 6
    with pytest.raises(IndexError):
        ext.segment_mean(SEGMENT_VALUES, SEGMENT_LABELS, 3)


@pytest.mark.parametrize("flavor", on("segments", ["array_t", *DLTENSOR]))
def test_segments_lists_as_input(build, flavor):
    # array_t's forcecast reads lists; so do dltensor's read-only parameters (nb::ndarray does not)
    ext = load(build, "segments", flavor)
    assert np.allclose(ext.segment_mean(SEGMENT_VALUES.tolist(), SEGMENT_LABELS.tolist(), 5), SEGMENT_MEANS)
    assert ext.nonempty_segments([3, 1, 3]).tolist() == [1, 3]
    assert ext.count_labels([1, 2, 3]) == 3


@pytest.mark.parametrize("fw", ["torch", "jax"])
@pytest.mark.parametrize("flavor", on("segments", ON_DLPACK))
def test_segments_take_torch_and_jax(build, flavor, fw):
    ext = load(build, "segments", flavor)
    means = ext.segment_mean(in_framework(fw, SEGMENT_VALUES), in_framework(fw, SEGMENT_LABELS.astype(np.int32)), 5)
    assert np.allclose(means, SEGMENT_MEANS)
    assert ext.nonempty_segments(in_framework(fw, SEGMENT_LABELS.astype(np.int32))).tolist() == [0, 2, 4]


@pytest.mark.parametrize("flavor", on("segments", DLTENSOR))
def test_segments_results_outlive_the_local_vector(build, flavor):
    ext = load(build, "segments", flavor)
    labels = np.arange(100_000) % 50_000
    ids = ext.nonempty_segments(labels)
    junk = [np.full(50_000, 7, np.uint32) for _ in range(4)]  # reuse the freed vector's memory, if any
    assert np.array_equal(ids, np.arange(50_000, dtype=np.uint32))
    del junk


@pytest.mark.parametrize("flavor", on("segments", FLAVORS))
def test_segments_column_is_a_view_of_the_input(build, flavor):
    ext = load(build, "segments", flavor)
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    col = ext.column(a, 1)
    assert col.tolist() == [1, 4, 7, 10] and np.shares_memory(col, a)
    col[0] = 100  # writes reach the caller's array
    assert a[0, 1] == 100
    del a
    gc.collect()
    assert col.tolist() == [100, 4, 7, 10]  # the view keeps the input alive
    with pytest.raises(IndexError):
        ext.column(np.zeros((2, 2), np.float32), 2)


@pytest.mark.parametrize("flavor", on("segments", DLTENSOR))
def test_segments_refused_labels_say_so(build, flavor):
    ext = load(build, "segments", flavor)
    with pytest.raises(TypeError, match="labels: an integer array or a list"):
        ext.count_labels(np.zeros((2, 2), np.uint32))
