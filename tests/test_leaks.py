"""Leaks: 100,000-call loops over every import and export path, with tracemalloc (Python allocations)
and the resident set size (everything else) measured after a warm-up. The file takes minutes: each case
prints a line when it starts and when it ends, to the terminal, also under pytest's capture."""
import array
import gc
import time
import tracemalloc

import numpy as np
import pytest

from cmake_build import _progress
from conftest import SANITIZE
from producer import Exporter, capsule

torch = pytest.importorskip("torch")
jnp = pytest.importorskip("jax.numpy")
tf = pytest.importorskip("tensorflow")

# Per path. Under the sanitizers (tools/sanitize.sh: memory errors, not growth, are what is looked for)
# a tenth as many calls run every path just as well in a tenth of the time.
CALLS = 10_000 if SANITIZE else 100_000
# slow producers, and a refusal (pybind11 formats every overload's signature into its TypeError, about a
# millisecond a call): a tenth of the calls
SLOW_PATHS = ("return jax", "tensorflow", "exporter", "rejected")
SLOW_CALLS = CALLS // 10
WARMUP = 2000  # calls before measuring
COUNTED_DELETERS = ("capsule", "exporter")  # paths whose producer deleters the module counts
TRACED_LIMIT = 64 * 1024  # bytes of Python memory (tracemalloc) a path may retain over its calls
RSS_LIMIT = 8 * 1024 * 1024  # bytes of resident set growth a path may cause (not under the sanitizers)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _reject(m, x):
    try:
        m.common.take_f32(x)
    except TypeError:
        pass


STORAGE = np.zeros(4, np.float32)
NP, T, J, TF = np.arange(4.0), torch.arange(4.0), jnp.arange(4.0), tf.range(4.0)
PATHS = {
    "numpy": lambda m: m.common.values(NP),
    "torch": lambda m: m.common.values(T),
    "torch neg view": lambda m: m.common.values(torch._neg_view(T)),
    "jax": lambda m: m.common.values(J),
    "tensorflow": lambda m: m.common.values(TF),
    "buffer": lambda m: m.common.values(b"abcd"),
    "capsule": lambda m: m.common.values(capsule(m, STORAGE, shape=(4,))),
    "exporter": lambda m: m.common.values(Exporter(m, STORAGE, shape=(4,))),
    "conversion": lambda m: m.conversion.ro_f64(T.to(torch.int32)),
    "rejected": lambda m: _reject(m, NP),
    "return numpy": lambda m: m.export.arange_numpy(4),
    "return pytorch": lambda m: m.export.arange_pytorch(4),
    "return jax": lambda m: m.export.arange_jax(4),
    "return none": lambda m: m.export.arange_none(4),
    "framework allocation": lambda m: m.torch.torch_empty(4),
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_100k_calls_do_not_leak(m, path, request):
    fn = PATHS[path]
    calls = SLOW_CALLS if path in SLOW_PATHS else CALLS
    start = time.monotonic()
    _progress(f"[dltensor] test_leaks [{request.node.callspec.id}]: {WARMUP} + {calls} calls ...")
    for _ in range(WARMUP):
        fn(m)
    gc.collect()
    rss0 = rss_bytes()
    frees0, deleters0 = m.common.owner_frees(), m.common.deleter_calls()
    tracemalloc.start()
    try:
        traced0 = tracemalloc.get_traced_memory()[0]
        for _ in range(calls):
            fn(m)
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] - traced0
    finally:
        tracemalloc.stop()
    rss = rss_bytes() - rss0
    if path.startswith("return"):  # every returned tensor's owner released exactly once
        assert m.common.owner_frees() - frees0 == calls
    if path in COUNTED_DELETERS:  # every producer deleter run exactly once
        assert m.common.deleter_calls() - deleters0 == calls
    print(f"\n{path}: {calls} calls, traced {traced} B, rss {rss / 1024:.0f} KiB")
    _progress(f"[dltensor] test_leaks [{request.node.callspec.id}]: {time.monotonic() - start:.0f} s, "
              f"traced {traced} B, rss {rss / 1024:.0f} KiB")
    assert traced < TRACED_LIMIT, f"{path}: {traced} B of Python memory retained"
    if not SANITIZE:  # AddressSanitizer's quarantine holds freed memory by design
        assert rss < RSS_LIMIT, f"{path}: RSS grew by {rss} B"
