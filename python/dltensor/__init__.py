"""dltensor: zero-copy DLPack tensors for nanobind and pybind11 extensions.

This package ships the C++ headers and a CMake package; it has no compiled code of its own.
``dltensor.explain(f, *args)`` says why a dltensor parameter refused an argument (see explain.py).
``dltensor.Tensor`` is the type of a tensor returned without a framework annotation, and
``dltensor.typing`` holds the types that extensions' stubs name for parameters (typing.py).
"""
from pathlib import Path

from .explain import BoundElsewhereWarning, explain, last_refusal, refusals

# The one place the version is written: pyproject.toml and CMakeLists.txt read this line (tests/test_release.py).
__version__ = "0.1.0"
__all__ = ["include_dir", "cmake_dir", "explain", "refusals", "last_refusal", "BoundElsewhereWarning", "Tensor", "__version__"]

_HERE = Path(__file__).resolve().parent


class _TensorType(type):
    """``isinstance(x, dltensor.Tensor)``: whether `x` is a tensor some dltensor extension returned (each
    extension module, in each interpreter, makes its own class named ``dltensor.Tensor``)."""

    def __instancecheck__(cls, obj) -> bool:
        return cls.__subclasscheck__(type(obj))

    def __subclasscheck__(cls, sub) -> bool:
        return cls in sub.__mro__ or (sub.__module__ == "dltensor" and sub.__qualname__ == "Tensor")


class Tensor(metaclass=_TensorType):
    """What a dltensor extension returns for a tensor without a framework annotation: a DLPack producer
    (``numpy.from_dlpack(t)``, ``torch.from_dlpack(t)``, ...) and, on the CPU, a buffer
    (``memoryview(t)``). Not instantiable: only extensions make them (docs/reference.md §13)."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("dltensor.Tensor cannot be instantiated: dltensor extensions return them")

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the tensor (versioned when `max_version` allows it)."""
        raise NotImplementedError

    def __dlpack_device__(self):
        """(device type, device id), DLPack's numbers."""
        raise NotImplementedError

    def __buffer__(self, flags: int, /) -> memoryview:
        """The buffer protocol (CPU tensors of a dtype it has a format for)."""
        raise NotImplementedError


def include_dir() -> str:
    """Directory to add to the include path: it holds ``dltensor/nanobind.h`` and friends."""
    return str(_HERE / "include")


def cmake_dir() -> str:
    """Directory holding ``dltensorConfig.cmake``: pass it as ``dltensor_DIR`` to CMake."""
    return str(_HERE / "cmake")
