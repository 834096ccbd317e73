"""Mistakes that must not compile, on both backends, each with a message that says what is wrong:
`view<...>()` contradicting the tensor's annotations (dtype, shape) and an annotation given twice."""
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
nanobind = pytest.importorskip("nanobind")
pybind11 = pytest.importorskip("pybind11")

PRELUDE = {
    "nanobind": "#include <dltensor/nanobind.h>\nnamespace py = nanobind;\n",
    "pybind11": "#include <dltensor/pybind11.h>\nnamespace py = pybind11;\n",
}
CASES = {
    "view dtype contradicts": ("double f(py::dltensor<double, py::ndim<1>> a) { return a.view<float>()(0); }",
                               "the dtype contradicts"),
    "view shape contradicts": ("double f(py::dltensor<double, py::shape<2, 2>> a) { return a.view<py::shape<4>>()(0); }",
                               "the shape contradicts"),
    "annotation twice": ("void f(py::dltensor<float, double> a) { (void) a; }", "at most once"),
}


SANITIZER_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-g"]


def compile_snippet(backend, code, flags=()):
    include = [REPO / "cpp" / "include", Path(sysconfig.get_paths()["include"])]
    if backend == "nanobind":
        include += [Path(nanobind.include_dir()), Path(nanobind.include_dir()).parent / "ext" / "robin_map" / "include"]
    else:
        include += [Path(pybind11.get_include())]
    cmd = ["c++", "-std=c++17", "-fsyntax-only", *flags, "-x", "c++", "-", *[f"-I{p}" for p in include]]
    return subprocess.run(cmd, input=PRELUDE[backend] + code, capture_output=True, text=True)


@pytest.mark.parametrize("flags", [(), SANITIZER_FLAGS], ids=["plain", "sanitizers"])
@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_restated_view_compiles(backend, flags):
    # Also with the sanitizers' flags, under which GCC folds fewer pointer comparisons in constant
    # expressions (the annotation checks must not need any).
    proc = compile_snippet(backend, "double ok(py::dltensor<const double, py::ndim<1>> a) "
                                    "{ return a.view<double, py::ndim<1>>()(0); }", flags)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_mistake_fails_to_compile_with_its_message(backend, case):
    code, message = CASES[case]
    proc = compile_snippet(backend, code)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr[-3000:]
