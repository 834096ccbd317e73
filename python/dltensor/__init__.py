"""dltensor: zero-copy DLPack tensors for nanobind and pybind11 extensions.

This package ships the C++ headers and a CMake package; it has no compiled code of its own.
``dltensor.explain(f, *args)`` says why a dltensor parameter refused an argument (see explain.py).
"""
from pathlib import Path

from .explain import explain, refusals

# The one place the version is written: pyproject.toml and CMakeLists.txt read this line (tests/test_release.py).
__version__ = "0.1.0"
__all__ = ["include_dir", "cmake_dir", "explain", "refusals", "__version__"]

_HERE = Path(__file__).resolve().parent


def include_dir() -> str:
    """Directory to add to the include path: it holds ``dltensor/nanobind.h`` and friends."""
    return str(_HERE / "include")


def cmake_dir() -> str:
    """Directory holding ``dltensorConfig.cmake``: pass it as ``dltensor_DIR`` to CMake."""
    return str(_HERE / "cmake")
