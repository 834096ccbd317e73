"""Builds the C++ test module against the installed dltensor package and hands it to the tests.

The module is built with CMake (``find_package(dltensor CONFIG REQUIRED)``, as an extension author
would) into ``tests/.build/<backend>``; rebuilds are incremental. Every test takes the module from the
``m`` fixture, parametrized by backend, so the same tests run once per backend.
"""
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

# JAX truncates 64-bit dtypes unless asked; the dtype tests need int64/float64/complex128 arrays.
os.environ.setdefault("JAX_ENABLE_X64", "1")

HERE = Path(__file__).resolve().parent
BUILD_ROOT = HERE / ".build"
BACKENDS = ["nanobind"]


def cmake_build(source: Path, build: Path, extra_defs=()) -> Path:
    """Configures and builds a CMake project against the installed dltensor; returns the build dir."""
    import dltensor
    import nanobind

    build.mkdir(parents=True, exist_ok=True)
    defs = [
        f"-Ddltensor_DIR={dltensor.cmake_dir()}",
        f"-Dnanobind_DIR={nanobind.cmake_dir()}",
        f"-DPython_EXECUTABLE={sys.executable}",
        "-DCMAKE_BUILD_TYPE=Release",
        *extra_defs,
    ]
    gen = ["-G", "Ninja"] if _has_ninja() else []
    run([sys.executable, "-m", "cmake", "-S", str(source), "-B", str(build), *gen, *defs])
    run([sys.executable, "-m", "cmake", "--build", str(build), "--parallel", str(os.cpu_count() or 2)])
    return build


def _has_ninja() -> bool:
    try:
        import ninja  # noqa: F401
        return True
    except ImportError:
        return False


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"command failed: {' '.join(cmd)}\n{proc.stdout[-20000:]}")
    return proc.stdout


_modules = {}


def load_backend(backend: str):
    if backend not in _modules:
        build = cmake_build(HERE, BUILD_ROOT / "tests")
        sys.path.insert(0, str(build))
        _modules[backend] = importlib.import_module(f"dltensor_test_{backend}")
    return _modules[backend]


@pytest.fixture(scope="session", params=BACKENDS)
def m(request):
    """The C++ test module for one backend."""
    return load_backend(request.param)
