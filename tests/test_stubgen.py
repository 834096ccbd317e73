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

from conftest import names_dltensor


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
            "device='cpu')]") in line


@pytest.mark.parametrize("name, expected", [
    # NumPy's type names the dtype, which the dict then leaves out (as nanobind's stubs do)
    ("arange_numpy", r"-> Annotated\[numpy\.typing\.NDArray\[numpy\.float32\], dict\(shape=\(None,\)\)\]"),
    ("arange_pytorch", r"-> Annotated\[torch\.Tensor, dict\(dtype='float32', shape=\(None,\)\)\]"),
    ("arange_jax", r"-> Annotated\[jax\.Array, dict\(dtype='float32', shape=\(None,\)\)\]"),
    ("arange_tensorflow", r"-> Annotated\[tensorflow\.Tensor, dict\(dtype='float32', shape=\(None,\)\)\]"),
    # no framework: a new dltensor.Tensor, the argument itself, or the caller's framework (empty_like)
    ("arange_none", r"-> Annotated\[dltensor\.typing\.DLPackArray, dict\(dtype='float32', shape=\(None,\)\)\]"),
    ("arange_const_numpy", r"writable=False\)\]"),
    # an unannotated read-only parameter: ArrayLike says it, no writable=False
    ("half_sum", r"ArrayLike, dict\(dtype='float16', shape=\(None,\)\)"),
    ("double_bfloat16", r"dict\(dtype='bfloat16', shape=\(None,\)\)"),
    # a writable parameter without a framework takes any DLPack or buffer object (writable: no writable=False)
    ("take_f32", r"Annotated\[dltensor\.typing\.Array, dict\(dtype='float32'\)\]"),
    # a framework annotation on a parameter: that framework's type
    ("which_dtype", r"Annotated\[numpy\.typing\.NDArray\[numpy\.float64\], dict\(writable=False\)\]"),
    ("pytorch_size_noconvert", r"Annotated\[torch\.Tensor, dict\(dtype='float32', writable=False\)\]"),
    # nothing annotated: the type alone, no Annotated[...] around it
    ("passthrough", r"\(\w+: dltensor\.typing\.Array(, /)?\) -> dltensor\.typing\.DLPackArray:"),
])
def test_return_and_dtype_stubs(stub, name, expected):
    assert re.search(expected, signature(stub, name)), signature(stub, name)


def test_overloads_are_stubbed_separately(stub):
    assert stub["constraints"].count("def which(") == 5 and "@overload" in stub["constraints"]


def test_float8_stubs_name_the_format(stub):
    """The 8-bit floats keep their names in stubs (`dtype='float8_e4m3fn'`), on both generators."""
    assert "ArrayLike, dict(dtype='float8_e4m3fn')]" in signature(stub, "read_float8_e4m3fn")
    assert re.search(r"dict\(dtype='float8_e5m2', shape=\(None,\)\)", signature(stub, "scale_float8_e5m2"))


def test_paddle_stub_names_paddle_on_both_generators(stub):
    """`paddle.Tensor` on both backends: the signature text is a valid annotation, which neither generator
    has to rewrite."""
    line = next(x for x in stub["paddle"].splitlines() if x.startswith("def arange("))
    assert re.search(r"-> Annotated\[paddle\.Tensor, dict\(dtype='float32', shape=\(None,\)\)\]", line), line


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
reveal_type(export.arange_none(3))  # _dlt_DLPackArray
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


@pytest.fixture(scope="module")
def self_contained_stub_dir(stub_dir, tmp_path_factory):
    """`stub_dir`'s stubs rewritten by `python -m dltensor.stubs`, as dltensor_add_stub ships them: with no
    dltensor name left outside comments."""
    import shutil
    out = tmp_path_factory.mktemp("self-contained") / "stubs"
    shutil.copytree(stub_dir, out)
    subprocess.run([sys.executable, "-m", "dltensor.stubs", str(out)], check=True, capture_output=True)
    for f in out.rglob("*.pyi"):
        assert not names_dltensor(f.read_text()), f
    return out


def run_checker(kind, stub_dir, backend_module, tmp_path):
    """Runs mypy or pyright over USER_CODE and over the stubs in `stub_dir` themselves (self-contained: no
    dltensor package on the path; mypy with --warn-unused-ignores, so that each of dltensor.stubs' ignore
    comments must silence something); returns ({line: errors}, {line: revealed-type texts}, the errors
    about the stubs, the output)."""
    code = tmp_path / "user_code.py"
    name = backend_module.__name__
    code.write_text(USER_CODE.replace("MODULE", name))
    if kind == "mypy":
        env = dict(os.environ, MYPYPATH=str(stub_dir))
        # the frameworks' own stubs are incomplete (TensorFlow has none): not the stubs' errors
        cmd = [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental", "--warn-unused-ignores",
               "--disable-error-code=import-untyped", "--disable-error-code=import-not-found", str(code),
               *map(str, sorted((stub_dir / name).glob("*.pyi")))]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path)
        out = proc.stdout + proc.stderr
        kind_of_note = "note"
    else:
        config = {"extraPaths": [str(stub_dir)], "typeCheckingMode": "basic",
                  "pythonVersion": f"{sys.version_info.major}.{sys.version_info.minor}",
                  "reportMissingModuleSource": False}
        (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
        # --pythonpath: this interpreter's packages also where its venv is not activated (pyright asks `python`)
        proc = subprocess.run([sys.executable, "-m", "pyright", "--pythonpath", sys.executable, str(code),
                               str(stub_dir / name)], capture_output=True, text=True, cwd=tmp_path)
        out = proc.stdout + proc.stderr
        kind_of_note = "information"
    stub_errors = [line for line in out.splitlines() if re.search(r"\.pyi:\d+:(?:\d+ -)? ?error", line)]
    return (checked_lines(out, "user_code.py", "error"), checked_lines(out, "user_code.py", kind_of_note),
            stub_errors, out)


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_type_checker_accepts_tensors_flags_non_tensors_and_sees_declared_returns(checker, self_contained_stub_dir,
                                                                                  backend_module, tmp_path):
    pytest.importorskip(checker)
    for framework in ("numpy", "torch", "jax"):
        pytest.importorskip(framework)
    errors, notes, stub_errors, out = run_checker(checker, self_contained_stub_dir, backend_module, tmp_path)
    flagged, revealed = expectations()
    assert set(errors) == flagged, out
    assert not stub_errors, out  # the stubs pass as they stand: overloads by dtype, shape, framework included
    for line, type_name in revealed.items():
        assert any(re.search(rf"\b{type_name}\b", n) for n in notes.get(line, [])), (line, type_name, out)


def test_package_ships_py_typed_and_its_typing_module():
    import dltensor
    import dltensor.typing as t
    assert (Path(dltensor.__file__).parent / "py.typed").is_file()
    assert {"DLPackArray", "Array", "ArrayLike"} <= set(t.__all__)
    np = pytest.importorskip("numpy")
    assert isinstance(np.ones(1), t.DLPackArray) and not isinstance("x", t.DLPackArray)


# --- python -m dltensor.stubs, on texts ------------------------------------------------------------------

RAW_STUB = '''"""A module."""
from typing import Annotated, overload
import dltensor.typing
import numpy
import numpy.typing

@overload
def total(x: Annotated[dltensor.typing.ArrayLike, dict(dtype='float32', shape=(None,))]) -> float: ...
@overload
def total(x: Annotated[dltensor.typing.ArrayLike, dict(dtype='float64', shape=(None,))]) -> int: ...
@overload
def sized(x: Annotated[numpy.typing.NDArray[numpy.float32], dict(dtype='float32')]) -> str: ...
@overload
def sized(x: Annotated[numpy.typing.NDArray[numpy.float64], dict(dtype='float64')]) -> int: ...
@overload
def kept(out: Annotated[dltensor.typing.Array, dict(dtype='float32')]) -> None: ...
@overload
def kept(out: numpy.typing.NDArray[numpy.longdouble]) -> None: ...
def made() -> dltensor.Tensor: ...
'''


def test_self_contained_stub_defines_dltensors_types_and_imports_no_dltensor():
    from dltensor.stubs import self_contained
    text = self_contained(RAW_STUB)
    assert text.startswith('"""A module."""\n') and "import dltensor" not in text
    assert not names_dltensor(text), text
    tree = ast.parse(text)
    defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef)} | {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets}
    assert {"_dlt_DLPackArray", "_dlt_Buffer", "_dlt_SupportsArray", "_dlt_Array", "_dlt_ArrayLike",
            "_dlt_Tensor"} <= defined
    assert "def made() -> _dlt_Tensor: ..." in text
    assert self_contained(text) == text  # a second rewrite changes nothing


def test_self_contained_stub_silences_only_overloads_no_type_tells_apart():
    from dltensor.stubs import self_contained
    lines = {line.split("(")[0] + ("/2" if "float64" in line or "longdouble" in line else ""): line
             for line in self_contained(RAW_STUB).splitlines() if line.startswith("def ")}
    assert lines["def total"].endswith("# pyright: ignore[reportOverlappingOverload]")  # returns differ
    assert lines["def total/2"].endswith("# type: ignore[overload-cannot-match]")
    assert lines["def sized"].endswith("# type: ignore[overload-overlap]") and "#" not in lines["def sized/2"]
    assert "#" not in lines["def kept"] and lines["def kept/2"].endswith("# pyright: ignore[reportOverlappingOverload]")
    assert "#" not in lines["def made"]


def test_stubs_command_rewrites_in_place_and_refuses_a_missing_path(tmp_path):
    stub = tmp_path / "m.pyi"
    stub.write_text(RAW_STUB)
    run = [sys.executable, "-m", "dltensor.stubs"]
    assert subprocess.run([*run, str(tmp_path)], capture_output=True).returncode == 0
    assert "import dltensor" not in stub.read_text()
    proc = subprocess.run([*run, str(tmp_path / "none.pyi")], capture_output=True, text=True)
    assert proc.returncode == 1 and "none.pyi" in proc.stderr
