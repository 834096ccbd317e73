"""Instructions per call, counted by valgrind's callgrind (repeatable where wall-clock timings wobble):
each bench function is called N1 and N2 times in two processes over the same argument, and the
difference of the two totals divided by N2 - N1 is its cost per call (imports and set-up cancel out).

    python bench/callgrind.py            # prints the table and writes bench/results/callgrind.md
    python bench/callgrind.py return     # only the rows whose text contains "return" (prints only)

Needs valgrind and the bench modules (python bench/run.py builds them into bench/.build).
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
N1, N2 = 1000, 11000

# (row, module, anchor's name, anchor's function, py::dltensor's function, argument expression); returns
# are called with the element count.
CASES = [
    ("numpy, 1 argument", "dltensor_bench", "nb::ndarray", "nanobind_1", "dltensor_1", "np.ones(16, np.float32)"),
    ("numpy, 2nd of 2 overloads binds", "dltensor_bench", "nb::ndarray", "nanobind_overloaded",
     "dltensor_overloaded", "np.ones(16, np.float32)"),
    ("pytorch, 1 argument", "dltensor_bench", "nb::ndarray", "nanobind_1", "dltensor_1", "torch.ones(16)"),
    ("numpy, return 16 floats", "dltensor_bench", "nb::ndarray", "nanobind_ret_numpy", "dltensor_ret_numpy", "16"),
    ("numpy, return 16 floats (pybind11 backend)", "dltensor_bench_pybind11", "py::array_t", "array_t_ret_numpy",
     "dltensor_ret_numpy", "16"),
]

SCRIPT = """
import sys
sys.path.insert(0, {build!r})
import numpy as np
{imports}
import {module} as mod
x = {arg}
f = getattr(mod, {function!r})
for _ in range({n}):
    f(x)
"""


def instructions(module, function, arg, n):
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "call.py"
        imports = "import torch" if "torch." in arg else ""  # PyTorch's import is slow under valgrind
        script.write_text(SCRIPT.format(build=str(HERE / ".build"), imports=imports, module=module,
                                        function=function, arg=arg, n=n))
        # The same dict layouts in every process, and no BLAS worker threads (their spinning counts too).
        env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out", sys.executable,
                               str(script)], capture_output=True, text=True, env=env)
    for line in proc.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split()[-1])
    raise RuntimeError(proc.stderr[-2000:])


def per_call(module, function, arg):
    return (instructions(module, function, arg, N2) - instructions(module, function, arg, N1)) / (N2 - N1)


def main():
    only = sys.argv[1:]  # rows whose text contains one of these words (default: all)
    lines = ["Instructions per call (callgrind; `python bench/callgrind.py`): py::dltensor against the anchor "
             "(`nb::ndarray` or `py::array_t`) built into the same module. Lower is better.", "",
             "| case | anchor | anchor's instructions | py::dltensor's | py::dltensor / anchor |",
             "|---|---|---:|---:|---:|"]
    for row, module, anchor, theirs, ours, arg in CASES:
        if only and not any(w in row for w in only):
            continue
        a, b = per_call(module, theirs, arg), per_call(module, ours, arg)
        lines.append(f"| {row} | {anchor} | {a:,.0f} | {b:,.0f} | {b / a:.2f} |")
        print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    if not only:
        (HERE / "results" / "callgrind.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
