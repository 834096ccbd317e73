"""Calls per second with 1 and 2 threads, on a free-threaded CPython 3.13t against CPython 3.13 with the GIL,
for a NumPy argument (`sum(x)`) and a NumPy return (`empty(16)`), on both backends: the module of
tests/free_threaded, built for each interpreter, each thread with its own array. Without a GIL two threads
should make about twice the calls of one on a machine with two idle cores; what they lose below that is
contention (in dltensor's own state, NumPy's or the interpreter's). Two control rows tell them apart: the
binding library's call of a function that takes the array as a plain object (`noop`), the same sum through
nanobind's own `nb::ndarray` (nanobind backend), and NumPy's own `numpy.empty`: dltensor's rows scaling like those means no contention of dltensor's own. With the GIL two
threads make at most the calls of one. Writes
bench/results/free_threaded.md (with the load average, since this is a timing on a shared machine).

    python bench/free_threaded.py            # needs tools/build_free_threaded_python.sh's 3.13t and pyenv's 3.13
    python bench/free_threaded.py --quick    # fewer calls; writes bench/results/free_threaded-quick.md
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from cmake_build import cmake_build  # noqa: E402
from test_free_threaded import SOURCE, free_threaded_python  # noqa: E402
from test_python_versions import find_python  # noqa: E402

CHILD = r"""
import sys, threading, time
sys.path[:0] = [sys.argv[1]] + sys.argv[4:]
import importlib, numpy as np
m = importlib.import_module(sys.argv[2])
calls = int(sys.argv[3])
# Each thread passes its own array: one array shared by every thread measures CPython's reference-count
# contention on that object (measured on 3.13t: numpy.ndim(shared) 0.65x with 2 threads, distinct 0.94x).
routes = {
    "numpy argument": lambda x: m.sum(x),
    "binding floor (no tensor)": lambda x: m.noop(x),
    "nb::ndarray argument": lambda x: m.sum_ndarray(x),
    "numpy return": lambda x: m.empty(16),
    "numpy.empty (no dltensor)": lambda x: np.empty(16, np.float32),
}
for name, f in routes.items():
    if name == "nb::ndarray argument" and not hasattr(m, "sum_ndarray"):
        continue  # nanobind's own, on the nanobind backend only
    for n in (1, 2):
        barrier = threading.Barrier(n + 1)
        def run(x):
            barrier.wait()
            for _ in range(calls):
                f(x)
        ts = [threading.Thread(target=run, args=(np.ones(16, np.float32),)) for _ in range(n)]
        for t in ts: t.start()
        barrier.wait()
        t0 = time.perf_counter()
        for t in ts: t.join()
        print(f"{name}\t{n}\t{n * calls / (time.perf_counter() - t0):.0f}", flush=True)
"""


def numpy_path(python: str, build: Path):
    """Where `python` finds NumPy: its own site-packages, else a --target folder installed once."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    if subprocess.run([python, "-c", "import numpy"], env=env, capture_output=True).returncode == 0:
        return []
    target = build / "site"
    if not (target / "numpy").is_dir():
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--only-binary",
                        ":all:", "--target", str(target), "numpy"], check=True, env=env)
    return [str(target)]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    calls = 20_000 if args.quick else 300_000
    pythons = {"3.13t (no GIL)": free_threaded_python(), "3.13 (GIL)": find_python("3.13")}
    missing = [k for k, v in pythons.items() if v is None]
    if missing:
        print(f"free_threaded.py: no interpreter for {missing}", file=sys.stderr)
        return 1
    rows = []
    for label, python in pythons.items():
        for backend in ("nanobind", "pybind11"):
            build = HERE / ".build-free-threaded" / f"{label.split()[0]}-{backend}"
            cmake_build(SOURCE, build, [f"-DDLTENSOR_FT_BACKEND={backend}"], python=python, steps=False)
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHON_GIL")}
            out = subprocess.run([python, "-c", CHILD, str(build), f"ft_{backend}", str(calls),
                                  *numpy_path(python, build)],
                                 capture_output=True, text=True, check=True, env=env).stdout
            rates = {}
            for line in out.splitlines():
                route, n, rate = line.split("\t")
                rates[(route, int(n))] = float(rate)
            for route in ("numpy argument", "binding floor (no tensor)", "nb::ndarray argument", "numpy return",
                          "numpy.empty (no dltensor)"):
                if (route, 1) not in rates:
                    continue
                one, two = rates[(route, 1)], rates[(route, 2)]
                rows.append((label, backend, route, one, two, two / one))
                print(f"{label:15} {backend:9} {route:15} 1 thread {one:>10,.0f}/s  2 threads {two:>10,.0f}/s  "
                      f"x{two / one:.2f}", flush=True)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"
    lines = ["# Free-threaded CPython: calls per second with 1 and 2 threads", "",
             f"Written by `python bench/free_threaded.py{' --quick' if args.quick else ''}` ({calls:,} calls per "
             f"thread per row, {os.cpu_count()} cores, load average {load} at the end). Two threads without "
             "a GIL should reach about 2x one thread's rate on two idle cores; with the GIL at most 1x. Each thread passes "
             "its own array. The control rows (`binding floor`: the binding library's call with the array as a plain "
             "object; `nb::ndarray argument`: the same sum through nanobind's own `nb::ndarray`; `numpy.empty`: "
             "NumPy alone) show what the interpreter, the binding library and NumPy lose "
             "to contention without dltensor; a dltensor row scaling worse than its control would be dltensor's "
             "own contention.", "",
             "| interpreter | backend | route | 1 thread (calls/s) | 2 threads (calls/s) | 2 threads / 1 |",
             "|---|---|---|---:|---:|---:|"]
    lines += [f"| {a} | {b} | {r} | {one:,.0f} | {two:,.0f} | {ratio:.2f} |" for a, b, r, one, two, ratio in rows]
    out = HERE / "results" / ("free_threaded-quick.md" if args.quick else "free_threaded.md")
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
