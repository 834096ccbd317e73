"""Types that stubs of dltensor extensions name (docs/reference.md §18), for type checkers.

A ``py::dltensor<...>`` parameter's stub type says what the parameter binds:

- ``Array``: what a writable parameter without a framework annotation binds, zero-copy: any object with
  ``__dlpack__`` and ``__dlpack_device__`` (``DLPackArray``: NumPy, PyTorch, JAX, CuPy, PaddlePaddle, MLX,
  array-API libraries, ``dltensor.Tensor``) or the buffer protocol (``Buffer``: ``bytearray``,
  ``memoryview``, ``array.array``).
- ``ArrayLike``: what a read-only parameter (const dtype or ``py::ro``) without a framework annotation
  binds: an ``Array``, an object with ``__array__`` (``SupportsArray``: TensorFlow, pandas, NumPy
  scalars), or nested sequences of numbers (lists, tuples), which it converts. Strings and bare numbers
  are not ``ArrayLike``.
- a framework annotation (``py::numpy``, ``py::pytorch``, ...): that framework's type, the tensors its
  exact pass binds (overloads by framework).

A return names its framework's type, ``memoryview`` (``py::memview``) or ``dltensor.Tensor``
(``py::array_api``); without a framework annotation ``DLPackArray``: a new ``dltensor.Tensor``, the
argument the tensor was imported from (``f(x) is x``), or a tensor in the caller's framework
(``empty_like(x, shape)``, ``return_like(x)``).
dtype, shape, order, device and writability stay in ``typing.Annotated[..., dict(...)]``.
"""
from typing import Any, Protocol, Sequence, Tuple, Union, runtime_checkable

__all__ = ["DLPackArray", "Buffer", "SupportsArray", "Array", "ArrayLike"]


@runtime_checkable
class DLPackArray(Protocol):
    """An object that exports a DLPack tensor (the array API's ``__dlpack__`` and ``__dlpack_device__``)."""

    def __dlpack__(self, *, stream: Any = None) -> Any: ...

    def __dlpack_device__(self) -> Tuple[Any, int]: ...


@runtime_checkable
class Buffer(Protocol):
    """An object with the buffer protocol (PEP 688's ``collections.abc.Buffer``, which needs Python 3.12)."""

    def __buffer__(self, flags: int, /) -> memoryview: ...


@runtime_checkable
class SupportsArray(Protocol):
    """An object that NumPy converts with ``__array__`` (TensorFlow tensors, NumPy scalars, pandas)."""

    def __array__(self) -> Any: ...


_Element = Union[complex, SupportsArray, DLPackArray]
#: Nested sequences of numbers or arrays, up to 4 levels (a ``str`` is a sequence of ``str``: not one).
NestedSequence = Union[
    Sequence[_Element],
    Sequence[Sequence[_Element]],
    Sequence[Sequence[Sequence[_Element]]],
    Sequence[Sequence[Sequence[Sequence[_Element]]]],
]

#: What a writable parameter without a framework annotation binds (zero-copy).
Array = Union[DLPackArray, Buffer]
#: What a read-only parameter without a framework annotation binds (converting what is no tensor).
ArrayLike = Union[DLPackArray, Buffer, SupportsArray, NestedSequence]
