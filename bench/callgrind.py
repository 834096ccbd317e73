"""Instructions per call, counted by valgrind's callgrind (repeatable where wall-clock timings wobble):
each bench function is called N1 and N2 times in two processes over the same argument, and the
difference of the two totals divided by N2 - N1 is its cost per call (imports and set-up cancel out).

    python bench/callgrind.py            # prints the table and writes bench/results/callgrind.md
    python bench/callgrind.py return     # only the rows whose text contains "return" (prints only)
    python bench/callgrind.py --write converted   # those rows counted again and replaced in
                                         # bench/results/callgrind.md (the other rows stay as recorded)
    python bench/callgrind.py --steps    # where one argument's instructions go, step by step: writes
                                         # bench/results/callgrind_steps.md
    python bench/callgrind.py --copy-of  # where a returned copy_of() spends them, stage by stage, on both
                                         # backends beside array_t's and nb::ndarray's copies: writes
                                         # bench/results/callgrind_copy_of.md

Needs valgrind and the bench modules (python bench/run.py builds them into bench/.build; --steps builds
a copy with symbols, -O3 -g, into bench/.build-symbols).
"""
import os
import re
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
    ("pytorch, return 16 floats", "dltensor_bench", "nb::ndarray", "nanobind_ret_pytorch", "dltensor_ret_pytorch", "16"),
    ("numpy, return 16 floats (pybind11 backend)", "dltensor_bench_pybind11", "py::array_t", "array_t_ret_numpy",
     "dltensor_ret_numpy", "16"),
    ("numpy, copy_of 16 floats", "dltensor_bench", "nb::ndarray", "nanobind_copy_of", "dltensor_copy_of", "16"),
    ("numpy, copy_of 16 floats (pybind11 backend)", "dltensor_bench_pybind11", "py::array_t", "array_t_copy_of",
     "dltensor_copy_of", "16"),
    ("numpy, adopt 16 floats (pybind11 backend)", "dltensor_bench_pybind11", "py::array_t", "array_t_copy_of",
     "dltensor_adopt", "16"),
    ("numpy, empty() + fill 16 floats (pybind11 backend)", "dltensor_bench_pybind11", "py::array_t",
     "array_t_empty_fill", "dltensor_empty_fill", "16"),
    ("numpy, float64 argument converted (pybind11 backend)", "dltensor_bench_pybind11", "py::array_t",
     "array_t_converted", "dltensor_converted", "np.ones(16)"),
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


def callgrind(module, function, arg, n, build, inclusive_by_function=False):
    """Runs `function(arg)` n times under callgrind: the total instruction count, and with
    `inclusive_by_function` also {"file:function [object]": inclusive instructions}."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "call.py"
        imports = "import torch" if "torch." in arg else ""  # PyTorch's import is slow under valgrind
        script.write_text(SCRIPT.format(build=str(build), imports=imports, module=module,
                                        function=function, arg=arg, n=n))
        # The same dict layouts in every process, and no BLAS worker threads (their spinning counts too).
        env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out", sys.executable,
                               str(script)], capture_output=True, text=True, env=env)
        total = next((int(line.split()[-1]) for line in proc.stderr.splitlines() if "Collected :" in line), None)
        if total is None:
            raise RuntimeError(proc.stderr[-2000:])
        if not inclusive_by_function:
            return total, {}
        text = subprocess.run(["callgrind_annotate", "--auto=no", "--inclusive=yes", "--threshold=100",
                               f"{tmp}/out"], capture_output=True, text=True, check=True).stdout
    functions = {}
    for line in text.split("file:function", 1)[1].splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if m:
            functions[m.group(2)] = functions.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return total, functions


def instructions(module, function, arg, n):
    return callgrind(module, function, arg, n, HERE / ".build")[0]


def per_call(module, function, arg):
    return (instructions(module, function, arg, N2) - instructions(module, function, arg, N1)) / (N2 - N1)


# One argument's path, step by step: (step, how it is found). A step is a function's inclusive count
# (the largest over callgrind's entries naming it: inlined parts appear under their own source files), or a
# difference of two steps; every figure is per call, from the difference of an N1- and an N2-call run.
STEP_FUNCTIONS = {
    "call": ["nanobind::detail::nb_func_vectorcall", "pybind11::cpp_function::dispatcher("],
    "caster": ["::from_python(", "::load(pybind11::handle, bool)"],
    "import": ["dlt::import_tensor("],
    "view": ["TorchDLPackExchangeAPI::DLTensorFromPyObjectNoSync", "dlt::numpy_arrays::view("],
    "pytorch checks": ["dlt::torch_precheck("],
    "annotation checks": ["dlt::detail::check_and_record(", "dlt::validate("],
}
STEP_CASES = [
    ("pytorch, 1 argument", "dltensor_bench", "torch.ones(16)"),
    ("pytorch, 1 argument", "dltensor_bench_pybind11", "torch.ones(16)"),
    ("numpy, 1 argument", "dltensor_bench", "np.ones(16, np.float32)"),
    ("numpy, 1 argument", "dltensor_bench_pybind11", "np.ones(16, np.float32)"),
]


def step_costs(module, arg, build):
    (t1, f1), (t2, f2) = (callgrind(module, "dltensor_1", arg, n, build, True) for n in (N1, N2))
    per_call = {k: (f2.get(k, 0) - f1.get(k, 0)) / (N2 - N1) for k in f2}

    def cost(step):
        if step == "annotation checks":  # two functions, neither calls the other
            return sum(max((v for k, v in per_call.items() if p in k), default=0) for p in STEP_FUNCTIONS[step])
        # "caster" and "call" are the py::dltensor caster's and the dispatcher of our module only.
        return max((v for k, v in per_call.items() if any(p in k for p in STEP_FUNCTIONS[step])
                    and (step not in ("caster", "call") or ("dltensor" in k and "libtorch" not in k))), default=0)
    c = {step: cost(step) for step in STEP_FUNCTIONS}
    c["total"] = (t2 - t1) / (N2 - N1)
    return c


def steps():
    import importlib
    build = HERE / ".build-symbols"
    sys.path.insert(0, str(HERE.parent / "tests"))
    from cmake_build import cmake_build
    cmake_build(HERE, build, ["-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O3 -g -DNDEBUG"])
    lines = ["Where one argument's instructions go (callgrind; `python bench/callgrind.py --steps`): "
             "`dltensor_1(x)` (a `py::dltensor<const float, py::ndim<1>, py::c_contig>` parameter, the first "
             "element returned as a float) built with symbols (-O3 -g). Each figure is instructions per call: "
             "a function's inclusive count from the difference of a "
             f"{N1}- and a {N2}-call run, or a difference of two rows (marked). *view*: PyTorch's exchange API "
             "(`DLTensorFromPyObjectNoSync`, PyTorch's own cost) or dltensor's NumPy view (0 where inlined "
             "into the route); *checks*: PyTorch's negative/conjugate bits and requires_grad (torch.h, "
             "torch_key_set.h) and the annotations' dtype/shape/order/device checks; *handle*: what the "
             "backend builds around the view (nanobind: `nb::ndarray`'s handle; pybind11: dltensor's "
             "`tensor_handle`); *after the caster*: the function body, dropping the tensor (release) and "
             "returning the float.", "",
             "| step | " + " | ".join(f"{row} ({'nanobind' if module == 'dltensor_bench' else 'pybind11'})"
                                   for row, module, _ in STEP_CASES) + " |",
             "|---|" + "---:|" * len(STEP_CASES)]
    cols = []
    for row, module, arg in STEP_CASES:
        print(f"[callgrind] {row}, {module} ...", file=sys.stderr, flush=True)
        cols.append(step_costs(module, arg, build))
    rows = [
        ("whole loop iteration (interpreter + call)", lambda c: c["total"]),
        ("binding's call (dispatcher)", lambda c: c["call"]),
        ("- caster: import + handle", lambda c: c["caster"]),
        ("-- import (dltensor)", lambda c: c["import"]),
        ("--- view", lambda c: c["view"]),
        ("--- checks: PyTorch's bits, requires_grad", lambda c: c["pytorch checks"]),
        ("--- checks: annotations", lambda c: c["annotation checks"]),
        ("--- route: producer lookup, owner (import - view - checks)",
         lambda c: c["import"] - c["view"] - c["pytorch checks"] - c["annotation checks"]),
        ("-- handle (caster - import)", lambda c: c["caster"] - c["import"]),
        ("- after the caster: body, release, return (call - caster)", lambda c: c["call"] - c["caster"]),
    ]
    for name, f in rows:
        cells = []
        for (case, _, _), c in zip(STEP_CASES, cols):
            if "PyTorch" in name and not case.startswith("pytorch"):
                cells.append("n/a")  # only PyTorch tensors are asked
            else:
                cells.append(f"{f(c):,.0f}" if f(c) else "inlined (in the route)")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    (HERE / "results" / "callgrind_steps.md").write_text(text)
    print(text)


# copy_of's stages (`--copy-of`): per column (module, the idiom's function, {stage: function}); each stage
# function does one step more than the one before it (bench_pybind11.cpp, bench_module.cpp) and returns
# a float, so that each stage's cost is a difference of two functions' instructions per call.
COPY_OF_COLUMNS = [
    ("py::array_t (pybind11)", "dltensor_bench_pybind11", "array_t_copy_of",
     {"alloc": "array_t_copy_stage_alloc", "copy": "array_t_copy_stage_copy"}),
    ("py::dltensor (pybind11)", "dltensor_bench_pybind11", "dltensor_copy_of",
     {"alloc": "dltensor_copy_stage_alloc", "copy": "dltensor_copy_stage_copy"}),
    ("nb::ndarray (nanobind)", "dltensor_bench", "nanobind_copy_of", {"view": "nanobind_copy_stage_view"}),
    ("py::dltensor (nanobind)", "dltensor_bench", "dltensor_copy_of",
     {"alloc": "dltensor_copy_stage_alloc", "copy": "dltensor_copy_stage_copy"}),
]


def copy_of_breakdown():
    """Where `copy_of` of 16 floats spends its instructions, stage by stage, on both backends beside the
    originals' idioms (`py::array_t<float>(n, data)`; nb::ndarray cast with rv_policy::copy): writes
    bench/results/callgrind_copy_of.md."""
    lines = ["Where a returned copy of 16 floats spends its instructions (callgrind; `python bench/callgrind.py "
             "--copy-of`): `Out::copy_of(v.data(), {n})` returned by a function whose body fills a "
             "`std::vector<float> v(n)`, beside what the originals write (`py::array_t<float>(n, v.data())`; "
             "nanobind: a view of `v` cast with `rv_policy::copy`). Each stage is the difference of two bench "
             "functions' instructions per call, each doing one stage more than the other and returning a float "
             "(bench_pybind11.cpp, bench_module.cpp: `*_copy_stage_*`): *allocate* makes the empty array "
             "(and drops it), *copy* copies the floats into it, *return* hands it to Python instead of "
             "dropping it. `-`: the idiom has no such stage of its own (nb::ndarray allocates and copies in "
             "its return). The call floor is the same call into a function that takes the count and returns "
             "a float.", ""]
    stages = [("call floor (the binding's call of a function returning a float)", lambda c: c["floor"]),
              ("the body: reading the count, filling the vector", lambda c: c["body"] - c["floor"]),
              ("view of the vector", lambda c: c["view"] - c["body"] if "view" in c else None),
              ("allocate (empty array, dropped)", lambda c: c["alloc"] - c["body"] if "alloc" in c else None),
              ("copy the 16 floats into it", lambda c: c["copy"] - c["alloc"] if "copy" in c else None),
              ("return (instead of dropping)",
               lambda c: c["full"] - (c["copy"] if "copy" in c else c["view"])),
              ("whole call", lambda c: c["full"]),
              ("the idiom, over the body (whole call - body)", lambda c: c["full"] - c["body"])]
    cols = []
    for name, module, full, stage_functions in COPY_OF_COLUMNS:
        print(f"[callgrind] copy_of stages, {name} ...", file=sys.stderr, flush=True)
        functions = {"floor": "floor_1", "body": "copy_stage_body", **stage_functions, "full": full}
        cols.append({k: per_call(module, f, "16") for k, f in functions.items()})
    lines += ["| stage | " + " | ".join(name for name, _, _, _ in COPY_OF_COLUMNS) + " |",
              "|---|" + "---:|" * len(COPY_OF_COLUMNS)]
    for stage, f in stages:
        cells = [f(c) for c in cols]
        if all(v is None for v in cells):
            continue
        lines.append(f"| {stage} | " + " | ".join("-" if v is None else f"{v:,.0f}" for v in cells) + " |")
    text = "\n".join(lines) + "\n"
    (HERE / "results" / "callgrind_copy_of.md").write_text(text)
    print(text)


def main():
    if sys.argv[1:] == ["--steps"]:
        return steps()
    if sys.argv[1:] == ["--copy-of"]:
        return copy_of_breakdown()
    args = sys.argv[1:]
    write_rows = "--write" in args  # replace the selected rows in the recorded table
    only = [a for a in args if a != "--write"]  # rows whose text contains one of these words (default: all)
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
    recorded = HERE / "results" / "callgrind.md"
    if not only:
        recorded.write_text(text)
    elif write_rows:
        fresh = {line.split(" | ")[0]: line for line in lines if line.startswith("| ")}
        old_lines = recorded.read_text().splitlines()
        missing = set(fresh) - {line.split(" | ")[0] for line in old_lines}
        if missing:
            sys.exit(f"rows not in {recorded}: {sorted(missing)}; run without a selection to rewrite it")
        recorded.write_text("\n".join(fresh.get(line.split(" | ")[0], line) for line in old_lines) + "\n")
    print(text)


if __name__ == "__main__":
    main()
