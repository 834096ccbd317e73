"""Configures and builds a CMake project against the installed dltensor and nanobind packages.

Shared by the tests (the C++ test module, the downstream project) and the benchmark runner.
"""
import os
import subprocess
import sys
from pathlib import Path


def cmake_build(source: Path, build: Path, extra_defs=(), targets=()) -> Path:
    """Configures and builds a CMake project (all of it, or `targets`) against the installed dltensor;
    returns the build dir."""
    import dltensor
    import nanobind

    build.mkdir(parents=True, exist_ok=True)
    defs = [
        f"-Ddltensor_DIR={dltensor.cmake_dir()}",
        f"-Dnanobind_DIR={nanobind.cmake_dir()}",
        *_pybind11_dir(),
        f"-DPython_EXECUTABLE={sys.executable}",
        "-DCMAKE_BUILD_TYPE=Release",
        *extra_defs,
    ]
    gen = ["-G", "Ninja"] if _has_ninja() else []
    run([sys.executable, "-m", "cmake", "-S", str(source), "-B", str(build), *gen, *defs])
    run([sys.executable, "-m", "cmake", "--build", str(build), "--parallel", str(os.cpu_count() or 2),
         *(["--target", *targets] if targets else [])])
    return build


def _pybind11_dir():
    try:
        import pybind11
    except ImportError:
        return []
    return [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]


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
