"""The signature text of py::dltensor parameters and returns turns into valid, informative type stubs:
through ``python -m nanobind.stubgen`` on the nanobind backend, through ``pybind11-stubgen`` on the
pybind11 backend; one stub per submodule of the test module (one per topic, and `common`). Type checkers
(mypy and pyright) then accept NumPy, PyTorch, JAX, list and buffer arguments, flag `str` and `int`
arguments, pick overloads by framework, and see each return's declared type."""
import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def stub_dir(backend_module, tmp_path_factory):
    """The folder the stub generator of `backend_module`'s backend wrote its stubs to (a package named as the
    module: ``__init__.pyi`` for the root, one ``<submodule>.pyi`` per topic)."""
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
    return out_dir


@pytest.fixture(scope="module")
def stub(stub_dir, backend_module):
    """{submodule: its stub's text}, keyed "" for the root. The two stub generators' spellings compared in
    one form: no prefix "typing." (`numpy.typing.` and `dltensor.typing.` kept)."""
    return {("" if f.stem == "__init__" else f.stem):
            re.sub(r"(?<![\w.])typing\.", "", f.read_text())
            for f in sorted((stub_dir / backend_module.__name__).glob("*.pyi"))}


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
    assert ("pts: Annotated[dltensor.typing.ArrayLike, dict(dtype='float32', shape=(None, 3), order='C', "
            "device='cpu', writable=False)]") in line


@pytest.mark.parametrize("name, expected", [
    ("arange_numpy", r"-> Annotated\[numpy\.typing\.NDArray\[numpy\.float32\], dict\(dtype='float32', shape=\(None,\), writable=True\)\]"),
    ("arange_pytorch", r"-> Annotated\[torch\.Tensor, dict\(dtype='float32', shape=\(None,\), writable=True\)\]"),
    ("arange_jax", r"-> Annotated\[jax\.Array, dict\(dtype='float32', shape=\(None,\), writable=True\)\]"),
    ("arange_tensorflow", r"-> Annotated\[tensorflow\.Tensor, dict\(dtype='float32', shape=\(None,\), writable=True\)\]"),
    # no framework: a new dltensor.Tensor, the argument itself, or the caller's framework (empty_like)
    ("arange_none", r"-> Annotated\[dltensor\.typing\.DLPackArray, dict\(dtype='float32', shape=\(None,\), writable=True\)\]"),
    ("arange_const_numpy", r"writable=False\)\]"),
    ("half_sum", r"dict\(dtype='float16', shape=\(None,\), writable=False\)"),
    ("double_bfloat16", r"dict\(dtype='bfloat16', shape=\(None,\), writable=True\)"),
    # a writable parameter without a framework takes any DLPack or buffer object, and says it is writable
    ("take_f32", r"Annotated\[dltensor\.typing\.Array, dict\(dtype='float32', writable=True\)\]"),
    # a framework annotation on a parameter: that framework's type
    ("which_dtype", r"Annotated\[numpy\.typing\.NDArray\[numpy\.float64\], dict\(dtype='float64', writable=False\)\]"),
    ("pytorch_size_noconvert", r"Annotated\[torch\.Tensor, dict\(dtype='float32', writable=False\)\]"),
])
def test_return_and_dtype_stubs(stub, name, expected):
    assert re.search(expected, signature(stub, name)), signature(stub, name)


def test_overloads_are_stubbed_separately(stub):
    assert stub["constraints"].count("def which(") == 5 and "@overload" in stub["constraints"]


def test_float8_stubs_name_the_format(stub):
    """The 8-bit floats keep their names in stubs (`dtype='float8_e4m3fn'`), on both generators."""
    assert "dict(dtype='float8_e4m3fn', writable=False)" in signature(stub, "read_float8_e4m3fn")
    assert re.search(r"dict\(dtype='float8_e5m2', shape=\(None,\), writable=True\)", signature(stub, "scale_float8_e5m2"))


def test_paddle_stub_names_paddle_on_both_generators(stub):
    """`paddle.Tensor` on both backends: the signature text is a valid annotation, which neither generator
    has to rewrite."""
    line = next(x for x in stub["paddle"].splitlines() if x.startswith("def arange("))
    assert re.search(r"-> Annotated\[paddle\.Tensor, dict\(dtype='float32', shape=\(None,\), writable=True\)\]", line), line


# --- type checkers over the stubs -------------------------------------------------------------------------

# A user's code against the test module's stubs; `# E` marks each line a type checker must flag, and
# `reveal_type` lines the types it must see (checked per line below).
USER_CODE = """\
import array
import numpy as np
import torch
import jax.numpy as jnp
from MODULE import common, export, types

a = np.ones(3, np.float32)
types.doubled(a)
types.doubled(torch.ones(3))
types.doubled(jnp.ones(3))
types.doubled([1.0, 2.0])
types.doubled([[1.0], [2.0]])
types.doubled(array.array("f", [1.0]))
types.doubled(export.arange_none(3))
common.take_f32(a)
common.take_f32(torch.ones(3))
common.take_f32(bytearray(4))
types.doubled("abc")  # E
types.doubled(3)  # E
common.take_f32([1.0])  # E
types.numpy_size_noconvert(torch.ones(3))  # E
types.pytorch_size_noconvert(a)  # E
reveal_type(types.which(a))  # str
reveal_type(types.which(torch.ones(3)))  # str
reveal_type(export.arange_pytorch(3))  # Tensor
reveal_type(export.arange_numpy(3))  # ndarray
reveal_type(export.arange_jax(3))  # Array
reveal_type(export.arange_none(3))  # DLPackArray
"""


def checked_lines(output: str, filename: str, kind: str):
    """{line number: the checker's text} of the `kind` ("error", "note", ...) messages about `filename`."""
    found = {}
    for line in output.splitlines():
        match = re.search(rf"{re.escape(filename)}:(\d+):(?:\d+:? -|) ?({kind}):? ?(.*)", line)
        if match:
            found.setdefault(int(match.group(1)), []).append(match.group(3))
    return found


def expectations():
    lines = USER_CODE.splitlines()
    flagged = {i + 1 for i, line in enumerate(lines) if line.endswith("# E")}
    revealed = {i + 1: line.rsplit("# ", 1)[1] for i, line in enumerate(lines) if line.startswith("reveal_type")}
    return flagged, revealed


def run_checker(kind, stub_dir, backend_module, tmp_path):
    """Runs mypy or pyright over USER_CODE against `stub_dir` and the checkout's `dltensor` package;
    returns ({line: errors}, {line: revealed-type texts})."""
    code = tmp_path / "user_code.py"
    code.write_text(USER_CODE.replace("MODULE", backend_module.__name__))
    package = str(Path(__file__).resolve().parent.parent / "python")
    if kind == "mypy":
        env = dict(os.environ, MYPYPATH=os.pathsep.join([str(stub_dir), package]))
        cmd = [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental", str(code)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path)
        out = proc.stdout + proc.stderr
        return checked_lines(out, "user_code.py", "error"), checked_lines(out, "user_code.py", "note"), out
    config = {"extraPaths": [str(stub_dir), package], "typeCheckingMode": "basic",
              "pythonVersion": f"{sys.version_info.major}.{sys.version_info.minor}",
              "pythonPath": sys.executable, "reportMissingModuleSource": False}
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    proc = subprocess.run([sys.executable, "-m", "pyright", str(code)], capture_output=True, text=True, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    return checked_lines(out, "user_code.py", "error"), checked_lines(out, "user_code.py", "information"), out


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_type_checker_accepts_tensors_flags_non_tensors_and_sees_declared_returns(checker, stub_dir, backend_module,
                                                                                  tmp_path):
    pytest.importorskip(checker)
    for framework in ("numpy", "torch", "jax"):
        pytest.importorskip(framework)
    errors, notes, out = run_checker(checker, stub_dir, backend_module, tmp_path)
    flagged, revealed = expectations()
    assert set(errors) == flagged, out
    for line, type_name in revealed.items():
        assert any(re.search(rf"\b{type_name}\b", n) for n in notes.get(line, [])), (line, type_name, out)


def test_package_ships_py_typed_and_its_typing_module():
    import dltensor
    import dltensor.typing as t
    assert (Path(dltensor.__file__).parent / "py.typed").is_file()
    assert {"DLPackArray", "Array", "ArrayLike"} <= set(t.__all__)
    np = pytest.importorskip("numpy")
    assert isinstance(np.ones(1), t.DLPackArray) and not isinstance("x", t.DLPackArray)
