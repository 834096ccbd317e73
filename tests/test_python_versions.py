"""The supported-version claims (README: Supported versions), proven: tests/versions (import, export,
ownership with stdlib-only producers, tensors held in C++ statics to interpreter exit) built and run on
the oldest and the newest supported Python, and against the oldest supported nanobind and pybind11;
the headers' version guards name the minimum when compiled against older ones.

Other interpreters come from pyenv (``$PYENV_ROOT``, default ``~/.pyenv``) or PATH (``python3.X``);
a test skips only when its interpreter is not installed, and fails instead under
``DLTENSOR_REQUIRE_PYTHONS=1`` (.ci/run sets it: CI proves the claims, never skips them). Old nanobind
and pybind11 releases are installed from PyPI (``pip install --no-deps --target``) into
``tests/.build/old-bindings`` on first use. Builds go to
``tests/.build/versions/<python>-<backend>[-<library version>]`` and are incremental.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from cmake_build import REPO, cmake_build

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "versions"
BUILD_ROOT = HERE / ".build" / "versions"
OLD_BINDINGS = HERE / ".build" / "old-bindings"

# The minimums README.md states and the headers' guards enforce (cpp/include/dltensor/nanobind.h,
# pybind11.h). The library minimums are tested at their first release.
OLDEST_PYTHON = "3.9"
NEWEST_PYTHON = "3.13"
OLDEST = {"nanobind": "2.13.0", "pybind11": "2.13.0"}
# Releases just below the minimums, which the guards must name.
TOO_OLD = {"nanobind": "2.12.0", "pybind11": "2.12.0"}
BACKENDS = ["nanobind", "pybind11"]

EXPECTED = ["ok import", "ok write", "ok export", "ok ownership", "holding 4 tensors until exit"]


def _version(text: str):
    return tuple(int(part) for part in text.split("."))


def find_python(version: str):
    """An interpreter `version` ("3.9") with its development headers, from pyenv or PATH; None if absent."""
    candidates = []
    if sys.version_info[:2] == _version(version):
        candidates.append(sys.executable)
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if root.is_dir():
        found = [p for p in root.iterdir() if re.fullmatch(re.escape(version) + r"\.\d+", p.name)]
        for p in sorted(found, key=lambda p: int(p.name.rsplit(".", 1)[1]), reverse=True):
            candidates.append(str(p / "bin" / f"python{version}"))
    if shutil.which(f"python{version}"):
        candidates.append(shutil.which(f"python{version}"))
    for exe in candidates:
        try:
            include = include_dir(exe)
        except OSError:
            continue
        if include and (Path(include) / "Python.h").is_file():
            return exe
    return None


def include_dir(python: str) -> str:
    """The C headers' directory of the interpreter `python`."""
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                          capture_output=True, text=True, timeout=60, env=_clean_env()).stdout.strip()


def skip_missing(version: str):
    reason = f"Python {version} (with its development headers) is not installed"
    if os.environ.get("DLTENSOR_REQUIRE_PYTHONS") == "1":
        pytest.fail(reason + " (DLTENSOR_REQUIRE_PYTHONS=1)")
    pytest.skip(reason)


def _clean_env():
    """The environment for another interpreter: without this one's module search path."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def old_binding(library: str, version: str) -> Path:
    """`library`==`version` from PyPI, installed under tests/.build/old-bindings once; returns its CMake
    directory."""
    target = OLD_BINDINGS / f"{library}-{version}"
    if not (target / library).is_dir():
        OLD_BINDINGS.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=OLD_BINDINGS, prefix=f".{library}-{version}-"))
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                               "--disable-pip-version-check", "--target", str(tmp), f"{library}=={version}"],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"pip could not install {library}=={version}:\n{proc.stdout}{proc.stderr}")
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
    if library == "nanobind":
        return target / "nanobind" / "cmake"
    return target / "pybind11" / "share" / "cmake" / "pybind11"


def _installed_nanobind_major() -> int:
    import nanobind
    return int(nanobind.__version__.split(".")[0])


def build_and_run(python: str, backend: str, name: str, binding_dir=None):
    """Builds tests/versions for `python` and `backend` (optionally against the binding library's CMake dir
    `binding_dir`) into tests/.build/versions/`name`, runs exercise.py there with `python`, and checks
    that it exits normally after the expected stages, with tensors still held in C++ statics."""
    defs = [f"-DDLTENSOR_VERSIONS_BACKEND={backend}"]
    if binding_dir is not None:
        defs.append(f"-D{backend}_DIR={binding_dir}")
    build = cmake_build(SOURCE, BUILD_ROOT / name, defs, python=python)
    # -X dev: the debug hooks of the memory allocators, so that a release without the GIL or on a freed
    # object shows as a crash rather than passing by luck.
    proc = subprocess.run([python, "-X", "dev", str(SOURCE / "exercise.py"), str(build),
                           f"dltensor_versions_{backend}"],
                          capture_output=True, text=True, timeout=300, env=_clean_env())
    out = proc.stdout.splitlines()
    assert proc.returncode == 0 and out[1:] == EXPECTED, (
        f"exit status {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    assert out[0].startswith("python ") and out[0].endswith(" " + backend), out[0]
    return out[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("version", [OLDEST_PYTHON, NEWEST_PYTHON])
def test_python_version(version, backend):
    python = find_python(version)
    if python is None:
        skip_missing(version)
    binding_dir = None
    if backend == "nanobind" and _installed_nanobind_major() >= 3 and _version(version) < (3, 10):
        # nanobind 3 needs Python >= 3.10 (its CMake refuses older ones): on 3.9 the nanobind backend
        # is built with the oldest supported nanobind, the release line a 3.9 user gets.
        binding_dir = old_binding("nanobind", OLDEST["nanobind"])
    line = build_and_run(python, backend, f"{version}-{backend}", binding_dir)
    assert line == f"python {version} {backend}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_oldest_binding_library(backend):
    version = OLDEST[backend]
    binding_dir = old_binding(backend, version)
    pyver = f"{sys.version_info[0]}.{sys.version_info[1]}"
    build_and_run(sys.executable, backend, f"{pyver}-{backend}-{version}", binding_dir)


def _compile_header(header: str, includes):
    """Compiles `#include <dltensor/header>` alone (syntax only); returns (exit status, compiler output)."""
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler on PATH")
    cmd = [cxx, "-std=c++17", "-fsyntax-only", "-x", "c++", "-", f"-I{REPO / 'cpp' / 'include'}",
           *(f"-I{i}" for i in includes)]
    proc = subprocess.run(cmd, input=f"#include <dltensor/{header}>\n", capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def _binding_include(library: str, cmake_dir: Path) -> Path:
    root = cmake_dir.parent if library == "nanobind" else cmake_dir.parent.parent.parent
    return root / "include"


@pytest.mark.parametrize("backend", BACKENDS)
def test_guard_names_the_minimum_binding_library(backend):
    too_old = TOO_OLD[backend]
    include = _binding_include(backend, old_binding(backend, too_old))
    status, out = _compile_header(f"{backend}.h", [include, sysconfig.get_paths()["include"]])
    minimum = ".".join(OLDEST[backend].split(".")[:2])
    assert status != 0, out
    assert f"dltensor needs {backend} >= {minimum}" in out, out
    assert f"found {backend} {'.'.join(too_old.split('.')[:2])}" in out, out
    # The guard's error comes first, before anything the old library's API would break.
    first_error = next(line for line in out.splitlines() if "error" in line)
    assert f"dltensor needs {backend} >= {minimum}" in first_error, out


@pytest.mark.parametrize("backend", BACKENDS)
def test_guard_names_the_minimum_python(backend):
    python = find_python("3.8")
    if python is None:
        # Python 3.8 is only the guard's test case (not a claim): skipped when absent, even in CI.
        pytest.skip("Python 3.8 (with its development headers) is not installed")
    binding = _binding_include(backend, old_binding(backend, OLDEST[backend]))
    status, out = _compile_header(f"{backend}.h", [binding, include_dir(python)])
    assert status != 0, out
    assert f"dltensor needs Python >= {OLDEST_PYTHON}" in out and "found Python 3.8" in out, out


# A binding of each kind that instantiates the importer, the exporter and empty() (process_state.h and
# the per-type cache in producer.h have a branch for free-threaded builds).
FREE_THREADED_SOURCE = {
    "nanobind": "#include <dltensor/nanobind.h>\nnamespace py = nanobind;\n#define MODULE NB_MODULE\n",
    "pybind11": "#include <dltensor/pybind11.h>\nnamespace py = pybind11;\n#define MODULE PYBIND11_MODULE\n",
}
FREE_THREADED_BODY = """
#ifndef Py_GIL_DISABLED
#error "not compiled as a free-threaded build"
#endif
MODULE(ft, m) {
    m.def("sum", [](py::dltensor<const float, py::ndim<1>> x) {
        float s = 0;
        for (size_t i = 0; i < x.shape(0); ++i) s += x(i);
        return s;
    });
    m.def("fill", [](py::dltensor<float, py::ndim<1>> x) { for (size_t i = 0; i < x.shape(0); ++i) x(i) = 1; });
    m.def("make", [](size_t n) { return py::dltensor<py::numpy, float, py::ndim<1>>::empty({n}); });
    m.def("same", [](py::dltensor<> x) { return x; });
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_headers_compile_for_free_threaded_python(backend):
    # No free-threaded interpreter is installed on these machines: the headers are compiled as a
    # free-threaded build compiles them (the newest supported Python's headers with Py_GIL_DISABLED, and
    # nanobind's NB_FREE_THREADED), warnings as errors. Running such a build is not tested here.
    python = find_python(NEWEST_PYTHON)
    if python is None:
        skip_missing(NEWEST_PYTHON)
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler on PATH")
    if backend == "nanobind":
        import nanobind
        binding = [nanobind.include_dir(), str(Path(nanobind.__file__).parent / "ext" / "robin_map" / "include")]
        defines = ["-DNB_FREE_THREADED"]
    else:
        import pybind11
        binding, defines = [pybind11.get_include()], []
    cmd = [cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-DPy_GIL_DISABLED=1", *defines,
           "-x", "c++", "-", f"-I{REPO / 'cpp' / 'include'}", *(f"-I{i}" for i in binding), f"-I{include_dir(python)}"]
    proc = subprocess.run(cmd, input=FREE_THREADED_SOURCE[backend] + FREE_THREADED_BODY, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_states_the_minimums_this_file_proves():
    # README's table of supported versions names what this file builds and runs, and no other minimum.
    readme = (HERE.parent / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| Python |"))
    assert f">= {OLDEST_PYTHON}:" in row and f"{OLDEST_PYTHON} and {NEWEST_PYTHON}" in row, row
    row = next(line for line in readme.splitlines() if line.startswith("| binding libraries |"))
    for lib, version in OLDEST.items():
        assert f"{lib} >= {version.rsplit('.', 1)[0]}" in row, (lib, row)
