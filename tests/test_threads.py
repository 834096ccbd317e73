"""Threads: many Python threads call bound functions with shared and distinct tensors, bindings release
the GIL, C++ keeps tensors and drops them from other threads; nothing crashes, every owner and deleter
runs exactly once, with the GIL."""
import gc
import threading

import numpy as np
import pytest

from producer import capsule

torch = pytest.importorskip("torch")
jnp = pytest.importorskip("jax.numpy")

THREADS = 8
ROUNDS = 300


def run_threads(target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


def test_shared_and_distinct_tensors_from_many_threads(m):
    shared_np = np.arange(64.0)
    shared_t = torch.arange(64.0, dtype=torch.float64)
    expected = float(np.arange(64.0).sum())

    def work(i):
        own = np.full(32, float(i))
        for _ in range(ROUNDS):
            assert m.ownership.sum_without_gil(shared_np) == {"sum": expected, "gil_held": False}
            assert m.ownership.sum_without_gil(shared_t) == {"sum": expected, "gil_held": False}
            assert m.ownership.sum_without_gil(own) == {"sum": 32.0 * i, "gil_held": False}
            assert m.common.values(jnp.arange(3.0)) == [0.0, 1.0, 2.0]

    run_threads(work)


def test_returns_and_capsules_from_many_threads(m):
    gc.collect()
    frees0, deleters0 = m.common.owner_frees(), m.common.deleter_calls()

    def work(i):
        storage = np.arange(8, dtype=np.float32)
        for _ in range(ROUNDS):
            r = m.export.arange_pytorch(8)
            assert r[7].item() == 7.0
            n = m.export.arange_numpy(4)
            assert n[3] == 3.0
            assert m.common.values(capsule(m, storage, shape=(8,)))[-1] == 7.0

    run_threads(work)
    gc.collect()
    assert m.common.owner_frees() - frees0 == THREADS * ROUNDS * 2
    assert m.common.deleter_calls() - deleters0 == THREADS * ROUNDS
    assert m.common.owner_frees_without_gil() == 0
    assert m.common.deleter_calls_without_gil() == 0


def test_tensors_kept_by_cpp_and_released_elsewhere(m):
    gc.collect()
    deleters0 = m.common.deleter_calls()
    storage = np.arange(4, dtype=np.float32)
    lock = threading.Lock()

    def work(i):
        for k in range(50):
            with lock:  # the kept list itself is not thread-safe C++; the tensors are what is tested
                m.common.keep(capsule(m, storage, shape=(4,)))
                m.common.keep(torch.arange(3.0))
                if k % 10 == 9:
                    m.ownership.release_kept_without_gil()

    run_threads(work)
    m.ownership.release_kept_without_gil()
    gc.collect()
    assert m.common.deleter_calls() - deleters0 == THREADS * 50
    assert m.common.deleter_calls_without_gil() == 0


def test_owners_dropped_from_other_threads(m):
    gc.collect()
    frees0 = m.common.owner_frees()
    results = ([m.export.arange_numpy(16) for _ in range(64)]
               + [m.export.arange_pytorch(16) for _ in range(64)])
    chunks = [results[i::THREADS] for i in range(THREADS)]
    del results

    def drop(i):
        chunks[i].clear()

    run_threads(drop)
    gc.collect()
    assert m.common.owner_frees() - frees0 == 128
    assert m.common.owner_frees_without_gil() == 0
