"""Ownership: tensors kept by C++ keep their producer alive; every deleter and owner runs exactly once,
with the GIL, also when C++ drops its last reference without the GIL (repeated calls: test_leaks.py)."""
import gc
import sys
import weakref

import numpy as np
import pytest

from producer import Exporter, capsule

torch = pytest.importorskip("torch")
jnp = pytest.importorskip("jax.numpy")


def test_kept_tensor_keeps_the_producer_alive(m):
    a = np.arange(4.0)
    w = weakref.ref(a)
    m.common.keep(a)
    del a
    gc.collect()
    assert w() is not None
    assert m.common.kept_values(0) == [0, 1, 2, 3]
    m.common.release_kept()
    gc.collect()
    assert w() is None


def test_deleter_runs_once_when_cpp_releases_without_the_gil(m):
    storage = np.arange(3, dtype=np.float32)
    before, before_nogil = m.common.deleter_calls(), m.common.deleter_calls_without_gil()
    for i in range(5):
        m.common.keep(capsule(m, storage, shape=(3,), versioned=bool(i % 2)))
    m.common.keep(Exporter(m, storage, shape=(3,)))
    gc.collect()
    assert m.common.deleter_calls() == before
    m.ownership.release_kept_without_gil()
    assert m.common.deleter_calls() == before + 6
    assert m.common.deleter_calls_without_gil() == before_nogil
    gc.collect()
    assert m.common.deleter_calls() == before + 6


def test_tensor_is_read_copied_and_dropped_without_the_gil(m):
    a, t = np.arange(10.0), torch.arange(4, dtype=torch.float64)
    before = sys.getrefcount(a)
    assert m.ownership.sum_without_gil(a) == {"sum": 45.0, "gil_held": False}
    assert m.ownership.sum_without_gil(t) == {"sum": 6.0, "gil_held": False}
    assert m.ownership.sum_without_gil(a[::-2]) == {"sum": 25.0, "gil_held": False}
    assert sys.getrefcount(a) == before  # the copy left no reference behind


def test_capsule_with_null_deleter_is_accepted(m):
    storage = np.arange(2, dtype=np.float32)
    assert m.common.values(capsule(m, storage, shape=(2,), null_deleter=True)) == [0, 1]
