"""How much of a pybind11-backend ratio is code layout: the pybind11 bench module (bench_pybind11.cpp) built
several times, identical but for an unused function of another size placed before its code
(`-DDLTENSOR_BENCH_PAD=<bytes>`), so that the same functions sit at other addresses; every build loaded into
one process and each row's two functions (py::array_t's idiom, py::dltensor's) timed side by side in every
layout. Prints, per row, the ratio py::dltensor's time / py::array_t's in each layout and their median,
and writes the table to bench/results/layouts.md (`--quick`: two layouts, few repeats, to
bench/results/layouts-quick.md, which git ignores).

    python bench/layouts.py                 # 6 layouts: bench/results/layouts.md
    python bench/layouts.py --quick         # smoke run (CI): 2 layouts
    python bench/layouts.py --cachegrind    # also each layout's simulated instruction-cache misses per
                                            # call of the NumPy return (valgrind's cachegrind)

A ratio that moves by more than its run-to-run noise from one layout to the next is decided by where the
linker put the code (instruction-cache sets, branch-predictor slots), not by the work the code does: the
instruction counts of bench/results/callgrind.md do not move with layout.
"""
import argparse
import glob
import importlib.machinery
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from cmake_build import cmake_build  # noqa: E402

# (row, py::array_t's function, py::dltensor's function, argument expression)
ROWS = [
    ("numpy: 1 argument", "array_t_1", "dltensor_1", "np.ones(16, np.float32)"),
    ("numpy: return (owned buffer)", "array_t_ret_numpy", "dltensor_ret_numpy", "16"),
    ("numpy: copy_of(data, {n})", "array_t_copy_of", "dltensor_copy_of", "16"),
    ("numpy: adopt(std::move(vector))", "array_t_copy_of", "dltensor_adopt", "16"),
    ("numpy: empty({n}) then fill", "array_t_empty_fill", "dltensor_empty_fill", "16"),
    ("numpy: float64 argument converted", "array_t_converted", "dltensor_converted", "np.ones(16)"),
]
PADS = [0, 640, 1344, 2112, 2880, 3648]  # bytes: not multiples of 4096, so each moves the code's cache sets
MODULE = "dltensor_bench_pybind11"


def progress(line):
    print(line, file=sys.stderr, flush=True)


def build(pads):
    """One build of the pybind11 bench module per padding; their directories."""
    dirs = []
    for pad in pads:
        d = cmake_build(HERE, HERE / ".build-layouts" / f"pad{pad}", [f"-DCMAKE_CXX_FLAGS=-DDLTENSOR_BENCH_PAD={pad}"],
                        targets=[MODULE], steps=False)
        dirs.append(d)
    return dirs


def load(directory):
    """The module built in `directory`, loaded under its own name beside the others (each build is a file
    of its own, so each load is a separate copy of the code)."""
    path = glob.glob(str(directory / f"{MODULE}.*"))[0]
    loader = importlib.machinery.ExtensionFileLoader(MODULE, path)
    spec = importlib.util.spec_from_file_location(MODULE, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def measure(modules, number, repeat):
    """{row: [ratio per layout]}: each ratio py::dltensor's median time / py::array_t's, the two timed in
    turn, `repeat` times `number` calls each."""
    import numpy as np
    out = {}
    for row, anchor, ours, arg in ROWS:
        x = eval(arg, {"np": np})
        ratios = []
        for m in modules:
            ta, to = [], []
            for _ in range(repeat):
                ta.append(timeit.timeit("f(x)", globals={"f": getattr(m, anchor), "x": x}, number=number))
                to.append(timeit.timeit("f(x)", globals={"f": getattr(m, ours), "x": x}, number=number))
            ratios.append(statistics.median(to) / statistics.median(ta))
        out[row] = ratios
        progress(f"[layouts] {row}: " + " ".join(f"{r:.2f}" for r in ratios))
    return out


CACHEGRIND_SCRIPT = """
import sys, importlib.machinery, importlib.util
loader = importlib.machinery.ExtensionFileLoader({module!r}, {path!r})
spec = importlib.util.spec_from_file_location({module!r}, {path!r}, loader=loader)
m = importlib.util.module_from_spec(spec); loader.exec_module(m)
import numpy as np
f = getattr(m, {function!r})
for _ in range({n}):
    f(16)
"""


def icache_misses(directory, function):
    """Simulated first-level instruction-cache misses per call of `function(16)` (cachegrind: the difference
    of a 2,000- and a 12,000-call run over 10,000)."""
    path = glob.glob(str(directory / f"{MODULE}.*"))[0]
    counts = []
    for n in (2000, 12000):
        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "call.py"
            script.write_text(CACHEGRIND_SCRIPT.format(module=MODULE, path=path, function=function, n=n))
            env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
            subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", f"--cachegrind-out-file={tmp}/out",
                            sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
            text = subprocess.run(["cg_annotate", "--auto=no", "--show=I1mr", f"{tmp}/out"], capture_output=True,
                                  text=True, check=True).stdout
            total = next(line for line in text.splitlines() if "PROGRAM TOTALS" in line)
            counts.append(int(total.split()[0].replace(",", "")))
    return (counts[1] - counts[0]) / 10000


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two layouts, few repeats (bench/results/layouts-quick.md)")
    ap.add_argument("--cachegrind", action="store_true", help="also the NumPy return's I-cache misses per layout")
    args = ap.parse_args(argv)
    pads = PADS[:2] if args.quick else PADS
    number, repeat = (1000, 3) if args.quick else (4000, 15)
    started = time.monotonic()
    dirs = build(pads)
    modules = [load(d) for d in dirs]
    progress(f"[layouts] {len(modules)} layouts built and loaded in {time.monotonic() - started:.0f} s; measuring")
    ratios = measure(modules, number, repeat)
    lines = [f"Code layout and the pybind11 backend's ratios (`python bench/layouts.py{' --quick' if args.quick else ''}`, "
             f"{time.strftime('%Y-%m-%d %H:%M:%S')}): the pybind11 bench module built {len(pads)} times, each "
             "with an unused function of another size before its code (the padding, in bytes), all loaded into "
             "one process. Each cell is py::dltensor's time divided by py::array_t's for the same row in that "
             f"build (median of {repeat} x {number} calls each, the two functions timed in turn; below 1: "
             "py::dltensor is faster). The code and the instructions executed are the same in every column.",
             "", "| row | " + " | ".join(f"padding {p}" for p in pads) + " | median | spread (max - min) |",
             "|---|" + "---:|" * (len(pads) + 2)]
    for row, values in ratios.items():
        lines.append(f"| {row} | " + " | ".join(f"{v:.2f}" for v in values) +
                     f" | {statistics.median(values):.2f} | {max(values) - min(values):.2f} |")
    if args.cachegrind:
        lines += ["", "Simulated first-level instruction-cache misses per call of the NumPy return (valgrind's "
                  "cachegrind, 32 KB, 8-way): the same code, other addresses.", "",
                  "| function | " + " | ".join(f"padding {p}" for p in pads) + " |", "|---|" + "---:|" * len(pads)]
        for function in ("array_t_ret_numpy", "dltensor_ret_numpy"):
            progress(f"[layouts] cachegrind: {function} ...")
            lines.append(f"| `{function}` | " + " | ".join(f"{icache_misses(d, function):.1f}" for d in dirs) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = HERE / "results" / ("layouts-quick.md" if args.quick else "layouts.md")
    out.write_text(text)
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
