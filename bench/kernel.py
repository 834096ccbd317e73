"""Does the binding slow the user's kernel down? A compute-bound kernel (bench/kernel/kernel.h: sparse CSR
times dense, 2000 x 3000 with 30 entries a row, times 3000 x 64 float64) is called from one binding per
library, where the compiler inlines it beside the caster's code: nb::ndarray and py::dltensor (nanobind),
py::array_t and py::dltensor (pybind11), each module built as its binding library builds for release (-O3,
link-time optimization). Two measures, side by side in one process each:

- instructions per call, counted by valgrind's callgrind (repeatable; spills and reloads are instructions);
- wall time per call: the median of interleaved rounds (indicative on a busy machine).

    python bench/kernel.py            # prints the table
    python bench/kernel.py --write    # also writes bench/results/kernel.md and the kernel table of docs/benchmarks.md
    python bench/kernel.py --quick    # a smoke run: few rounds, no callgrind (CI)
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from cmake_build import cmake_build  # noqa: E402
sys.path.insert(0, str(HERE.parent / "tools"))
from generated_blocks import write_block  # noqa: E402

PAIRS = [("nanobind", "kernel_nanobind", "nb::ndarray", "ndarray"),
         ("pybind11", "kernel_pybind11", "py::array_t", "array_t")]

SETUP = """
import sys
sys.path.insert(0, {build!r})
import numpy as np
import {module} as mod
rng = np.random.default_rng(0)
rows, inner, cols, per_row = 2000, 3000, 64, 30
indptr = np.arange(0, (rows + 1) * per_row, per_row, dtype=np.int64)
indices = rng.integers(0, inner, rows * per_row).astype(np.int32)
data = rng.standard_normal(rows * per_row)
b = rng.standard_normal((inner, cols))
c = np.zeros((rows, cols))
f = getattr(mod, {function!r})
"""


# The function whose instructions callgrind counts (inclusively): the one the kernel is inlined into, the
# binding's call with its argument casters (pybind11: the function_ref callback that calls the lambda with
# the loaded arguments; nanobind: the function func_create() makes, which loads the arguments and calls it).
TOGGLE = {"kernel_pybind11": "*callback_fn*", "kernel_nanobind": "*func_create*::_FUN*"}
CALLS = 3


def build() -> Path:
    # not stripped, so that callgrind finds the binding's function by name (stripping changes no code)
    return cmake_build(HERE / "kernel", HERE / ".build-kernel", ["-DCMAKE_STRIP=/bin/true"], steps=False)


def per_call_instructions(build_dir: Path, module: str, function: str) -> int:
    """Instructions (Ir) inside the binding's function per call, over CALLS calls."""
    script = SETUP.format(build=str(build_dir), module=module, function=function) + \
        f"for _ in range({CALLS}):\n    f(indptr, indices, data, b, c)\n"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
                        f"--toggle-collect={TOGGLE[module]}", sys.executable, "-c", script],
                       check=True, capture_output=True)
        for line in out.read_text().splitlines():
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1]) // CALLS
    raise RuntimeError("no callgrind totals")


def wall_times(build_dir, module, anchor, ours, rounds, calls):
    """Median seconds per call of each, over `rounds` interleaved rounds of `calls` calls."""
    ns = {}
    exec(SETUP.format(build=str(build_dir), module=module, function=anchor), ns)
    args = (ns["indptr"], ns["indices"], ns["data"], ns["b"], ns["c"])
    mod = ns["mod"]
    fa, fo = getattr(mod, anchor), getattr(mod, ours)
    ta, to = [], []
    for r in range(rounds):
        for f, out in ((fa, ta), (fo, to)) if r % 2 == 0 else ((fo, to), (fa, ta)):
            start = time.perf_counter()
            for _ in range(calls):
                f(*args)
            out.append((time.perf_counter() - start) / calls)
    return statistics.median(ta), statistics.median(to)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--quick", action="store_true")
    opts = ap.parse_args()
    build_dir = build()
    rows = []
    for backend, module, anchor_name, anchor in PAIRS:
        t_anchor, t_ours = wall_times(build_dir, module, anchor, "dltensor", 3 if opts.quick else 41,
                                      1 if opts.quick else 5)
        row = [f"{backend}: {anchor_name} vs py::dltensor", f"{t_anchor * 1e6:,.0f} µs", f"{t_ours * 1e6:,.0f} µs",
               f"{t_ours / t_anchor:.3f}"]
        if not opts.quick and shutil.which("valgrind"):
            i_anchor = per_call_instructions(build_dir, module, anchor)
            i_ours = per_call_instructions(build_dir, module, "dltensor")
            row += [f"{i_anchor:,}", f"{i_ours:,}", f"{i_ours / i_anchor:.4f}"]
        rows.append(row)
        print(" | ".join(row), file=sys.stderr, flush=True)
    table = ["| binding | anchor, time per call | py::dltensor | ratio | anchor, instructions per call | "
             "py::dltensor | ratio |", "|---|---|---|---|---|---|---|"]
    table += ["| " + " | ".join(r + [""] * (7 - len(r))) + " |" for r in rows]
    text = "\n".join(table)
    print(text)
    if opts.write:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        (HERE / "results" / "kernel.md").write_text(
            f"<!-- generated by python bench/kernel.py --write (load average {load}) -->\n{text}\n")
        write_block(HERE.parent / "docs" / "benchmarks.md", "kernel", text)


if __name__ == "__main__":
    main()
