"""The signature text of py::dltensor parameters and returns turns into valid, informative type stubs
through ``python -m nanobind.stubgen``."""
import ast
import os
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def stub(backend_module, tmp_path_factory):
    m = backend_module
    out = tmp_path_factory.mktemp("stubs") / f"{m.__name__}.pyi"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(m.__file__), *sys.path]))
    proc = subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-m", m.__name__, "-o", str(out)],
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out.read_text()


def signature(stub, name):
    return next(line for line in stub.splitlines() if line.startswith(f"def {name}("))


def test_stub_is_valid_python(stub):
    tree = ast.parse(stub)
    compile(tree, "stub.pyi", "exec")
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert {"norms", "arange_numpy", "arange_pytorch", "arange_tensorflow", "which"} <= names


def test_parameter_stub_names_every_annotation(stub):
    line = signature(stub, "norms")
    assert ("pts: Annotated[Any, dict(dtype='float32', shape=(None, 3), order='C', device='cpu', "
            "writable=False)]") in line


@pytest.mark.parametrize("name, expected", [
    ("arange_numpy", "-> Annotated[NDArray[numpy.float32], dict(shape=(None,))]"),
    ("arange_pytorch", "-> Annotated[torch.Tensor, dict(dtype='float32', shape=(None,))]"),
    ("arange_jax", "-> Annotated[jax.Array, dict(dtype='float32', shape=(None,))]"),
    ("arange_tensorflow", "-> Annotated[tensorflow.Tensor, dict(dtype='float32', shape=(None,))]"),
    ("arange_none", "-> Annotated[Any, dict(dtype='float32', shape=(None,))]"),
    ("arange_const_numpy", "writable=False)]"),
    ("half_sum", "dict(dtype='float16', shape=(None,), writable=False)"),
    ("double_bfloat16", "dict(dtype='bfloat16', shape=(None,))"),
])
def test_return_and_dtype_stubs(stub, name, expected):
    assert expected in signature(stub, name)


def test_overloads_are_stubbed_separately(stub):
    assert stub.count("def which(") == 5 and "@overload" in stub
