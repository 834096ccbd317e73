"""Many threads through every route of tests/free_threaded/free_threaded.cpp at once, on a free-threaded
CPython (tests/test_free_threaded.py runs it in a subprocess):

    python3.13t stress.py <build dir> <module> <threads> <seconds>

Each thread loops over the cases below until `seconds` have passed (and at most 100,000 rounds), checking
every value; new NumPy subclasses appear while others run (the per-type cache fills concurrently), tensors
kept by C++ in one thread are released by another, and refusals are explained in several threads at once.
Prints one line per stage and `ok <rounds> rounds, rss +<MiB>`; exits non-zero on the first wrong value
or exception (the traceback says which case), a crash shows as a signal.
"""
import array
import gc
import resource
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # this checkout's dltensor package

import importlib  # noqa: E402

import numpy as np  # noqa: E402

import dltensor  # noqa: E402

m = importlib.import_module(sys.argv[2])
THREADS, SECONDS = int(sys.argv[3]), float(sys.argv[4])
print("gil enabled:", sys._is_gil_enabled(), flush=True)

base = np.arange(12, dtype=np.float32)
matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
weights = np.arange(1, 13, dtype=np.float64)
want_c = float((matrix.ravel() * weights).sum())
read_only = base.copy()
read_only.flags.writeable = False


def check(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: {got!r} != {want!r}")


def one_round(i, t, scratch):
    # arguments of every kind: C, F (converted for sum_c), strided, read-only, subclass, buffers, capsules, lists
    check(m.sum(base), 66.0, "C array")
    check(m.sum(base[::3]), 18.0, "strided view")
    check(m.sum(read_only), 66.0, "read-only array")
    check(m.sum_c(matrix), want_c, "C matrix")
    check(m.sum_c(np.asfortranarray(matrix)), want_c, "F matrix converted")
    check(m.sum_c(matrix.T.copy().T), want_c, "transposed copy converted")
    if i % 50 == 0:  # a new producer type now and then, while other threads use theirs (not every round:
        # types made concurrently in many threads grow CPython 3.13t's memory by ~2 KiB each, with or
        # without dltensor, which would hide a leak of dltensor's own)
        subclasses[t] = type(f"Sub{t}_{i}", (np.ndarray,), {})
    check(m.sum(base.view(subclasses[t])), 66.0, "ndarray subclass")
    check(m.sum(array.array("f", range(4))), 6.0, "array.array (buffer protocol)")
    check(m.sum(memoryview(np.ones(3, np.float32))), 3.0, "memoryview")
    check(m.sum(base.__dlpack__()), 66.0, "raw capsule")
    check(m.sum([1.0, 2.0, 3.5]), 6.5, "list converted")
    m.fill(scratch, float(t))
    check(float(scratch[0]) + float(scratch[-1]), 2.0 * t, "writable argument")
    if m.same(scratch) is not scratch:
        raise AssertionError("identity return")
    # returns
    a = m.arange(5)
    check(a.tolist(), [0.0, 1.0, 2.0, 3.0, 4.0], "owned C++ buffer to NumPy")
    check(m.empty(4).tolist(), [0.0, 2.0, 4.0, 6.0], "empty()")
    check(np.from_dlpack(m.copy_of_none(3)).tolist(), [0.0, 3.0, 6.0], "copy_of() without framework")
    # kept by C++, released by whichever thread drops them
    m.keep(np.full(8, t, np.float32))
    if i % 7 == 0:
        m.drop_kept()
    # a view of a C++ member that keeps its holder alive
    h = m.Holder(6)
    v = h.view()
    del h
    check(v.tolist(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], "reference_internal view")
    # refusals, explained in several threads at once
    try:
        m.only_int32(base)
        raise AssertionError("float32 bound to int32")
    except TypeError:
        pass
    if i % 5 == 0:
        try:
            dltensor.explain(m.only_int32, base)
            raise AssertionError("explain: float32 bound to int32")
        except TypeError as e:
            notes = "\n".join(getattr(e, "__notes__", []))
            if "dtype float32, expected int32" not in notes:
                raise AssertionError("explain gave no note of this thread's refusal: " + notes) from e
        if not any("int32" in r.explanation for r in dltensor.refusals()):
            raise AssertionError("refusals(): no record of this thread's refusal")
        dltensor.refusals(clear=True)


rounds = [0] * THREADS
subclasses = [None] * THREADS
errors = []
start_barrier = threading.Barrier(THREADS)


def worker(t):
    scratch = np.zeros(16, np.float32)
    try:
        start_barrier.wait()
        deadline = time.monotonic() + SECONDS
        i = 0
        while time.monotonic() < deadline and i < 100_000:
            one_round(i, t, scratch)
            i += 1
        rounds[t] = i
    except BaseException as e:  # reported below, with the case that failed
        import traceback
        errors.append(f"thread {t}: {traceback.format_exc()}")
        raise SystemExit(1) from e


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# a warm-up round first (every type's first use), then the RSS baseline
one_round(0, 0, np.zeros(16, np.float32))
m.drop_kept()
gc.collect()
rss0 = rss_mib()
threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
for th in threads:
    th.start()
for th in threads:
    th.join(SECONDS + 120)
    if th.is_alive():
        print("a thread did not finish in time", flush=True)
        sys.exit(3)
# One raw capsule passed by every thread at once: exactly one call consumes it, the others are refused.
RACES = 200
race_barrier = threading.Barrier(THREADS)
capsules = [np.arange(4, dtype=np.float32).__dlpack__() for _ in range(RACES)]
wins = [0] * RACES
wins_lock = threading.Lock()


def racer():
    try:
        for k in range(RACES):
            race_barrier.wait(60)
            try:
                if m.sum(capsules[k]) == 6.0:
                    with wins_lock:
                        wins[k] += 1
            except TypeError:
                pass
    except BaseException:
        import traceback
        errors.append("racer: " + traceback.format_exc())


racers = [threading.Thread(target=racer) for _ in range(THREADS)]
for th in racers:
    th.start()
for th in racers:
    th.join(300)
m.drop_kept()
gc.collect()
if any(w != 1 for w in wins):
    errors.append(f"a raw capsule passed by {THREADS} threads at once bound {sorted(set(wins))} times (1 expected)")
if errors:
    print("\n".join(errors), flush=True)
    sys.exit(1)
print("gil enabled:", sys._is_gil_enabled(), flush=True)
# every owner of a returned C++ buffer released exactly once: one arange() per round, and the warm-up's
if m.owner_frees() != sum(rounds) + 1:
    print(f"owners released {m.owner_frees()} times for {sum(rounds) + 1} returns", flush=True)
    sys.exit(1)
print(f"ok {sum(rounds)} rounds, rss +{rss_mib() - rss0:.0f} MiB", flush=True)
