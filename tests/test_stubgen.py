"""The signature text of py::dltensor parameters and returns turns into valid, informative type stubs:
through ``python -m nanobind.stubgen`` on the nanobind backend, through ``pybind11-stubgen`` on the
pybind11 backend; one stub per submodule of the test module (one per topic, and `common`)."""
import ast
import os
import re
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def stub(backend_module, tmp_path_factory):
    """{submodule: its stub's text}; both generators write the module, which has submodules, as a package
    (``__init__.pyi`` for the root, keyed "")."""
    m = backend_module
    out_dir = tmp_path_factory.mktemp("stubs")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(m.__file__), *sys.path]))
    if "nanobind" in m.__name__:
        cmd = [sys.executable, "-m", "nanobind.stubgen", "-m", m.__name__, "-r", "-O", str(out_dir)]
    else:
        # pybind11-stubgen imports the modules the signatures name (tensorflow, paddle, ...); PaddlePaddle
        # crashes when imported after TensorFlow (tests/test_paddle.py), so it is imported first.
        run = ("import sys, runpy\ntry:\n    import paddle\nexcept ImportError:\n    pass\n"
               "sys.argv = ['pybind11-stubgen'] + sys.argv[1:]\nrunpy.run_module('pybind11_stubgen', run_name='__main__')")
        cmd = [sys.executable, "-c", run, m.__name__, "-o", str(out_dir)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "ERROR" not in proc.stderr, proc.stderr
    # Compare the two stub generators' spellings in one form: no "typing." prefixes.
    return {("" if f.stem == "__init__" else f.stem): f.read_text().replace("typing.", "")
            for f in sorted((out_dir / m.__name__).glob("*.pyi"))}


def signature(stub, name):
    """The first stub line of function `name`, in whichever submodule defines it."""
    return next(line for text in stub.values() for line in text.splitlines() if line.startswith(f"def {name}("))


def test_stub_is_valid_python(stub):
    names = {}
    for submodule, text in stub.items():
        tree = ast.parse(text)
        compile(tree, f"{submodule or '__init__'}.pyi", "exec")
        names[submodule] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert {"common", "constraints", "export", "dtypes", "torch", "imports"} <= set(stub)
    assert {"squared_norms", "take_f32"} <= names["common"] and "which" in names["constraints"]
    assert {"arange_numpy", "arange_pytorch", "arange_tensorflow"} <= names["export"]


def test_parameter_stub_names_every_annotation(stub):
    line = signature(stub, "squared_norms")
    assert ("pts: Annotated[Any, dict(dtype='float32', shape=(None, 3), order='C', device='cpu', "
            "writable=False)]") in line


@pytest.mark.parametrize("name, expected", [
    ("arange_numpy", r"-> Annotated\[(NDArray\[numpy\.float32\], dict\(|numpy\.ndarray, dict\(dtype='float32', )shape=\(None,\), writable=True\)\]"),
    ("arange_pytorch", r"-> Annotated\[torch\.Tensor, dict\(dtype='float32', shape=\(None,\), writable=True\)\]"),
    ("arange_jax", r"-> Annotated\[jax\.Array, dict\(dtype='float32', shape=\(None,\), writable=True\)\]"),
    ("arange_tensorflow", r"-> Annotated\[tensorflow\.Tensor, dict\(dtype='float32', shape=\(None,\), writable=True\)\]"),
    ("arange_none", r"-> Annotated\[Any, dict\(dtype='float32', shape=\(None,\), writable=True\)\]"),
    ("arange_const_numpy", r"writable=False\)\]"),
    ("half_sum", r"dict\(dtype='float16', shape=\(None,\), writable=False\)"),
    ("double_bfloat16", r"dict\(dtype='bfloat16', shape=\(None,\), writable=True\)"),
    # a writable parameter says so (the TypeError's signature text tells it from a const one)
    ("take_f32", r"Annotated\[Any, dict\(dtype='float32', writable=True\)\]"),
])
def test_return_and_dtype_stubs(stub, name, expected):
    assert re.search(expected, signature(stub, name)), signature(stub, name)


def test_overloads_are_stubbed_separately(stub):
    assert stub["constraints"].count("def which(") == 5 and "@overload" in stub["constraints"]


def test_float8_stubs_name_the_format(stub):
    """The 8-bit floats keep their names in stubs (`dtype='float8_e4m3fn'`), on both generators."""
    assert "dict(dtype='float8_e4m3fn', writable=False)" in signature(stub, "read_float8_e4m3fn")
    assert re.search(r"dict\(dtype='float8_e5m2', shape=\(None,\), writable=True\)", signature(stub, "scale_float8_e5m2"))


def test_paddle_return_stub_is_valid_and_names_paddle_where_the_generator_can(stub, backend_module):
    """pybind11-stubgen writes `paddle.Tensor`; nanobind's stubgen knows no Paddle type, so nanobind's
    signature names `py::paddle` tensors `ArrayLike` (typing.Any): a valid stub either way."""
    line = next(x for x in stub["paddle"].splitlines() if x.startswith("def arange("))
    expected = r"Any" if "nanobind" in backend_module.__name__ else r"paddle\.Tensor"
    assert re.search(rf"-> Annotated\[{expected}, dict\(dtype='float32', shape=\(None,\), writable=True\)\]", line), line
