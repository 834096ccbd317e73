"""Benchmark: per-call cost of passing tensors into, and returning them from, a C++ function bound with
py::dltensor, nanobind's nb::ndarray, pybind11's py::array_t (NumPy only) and apache-tvm-ffi (where
installed), with bare calls as the floors, all measured side by side in one process; and the migration
guide's stencil example (cpp/examples/stencil: a 3x3 box blur of a 64x64 float32 image) bound each way.
Prints a markdown table of medians and saves it, with a PNG plot, under bench/results/.

    python bench/run.py                   # full run: bench/results/run.{md,png} (not tracked by git)
    python bench/run.py --quick           # smoke run (CI): few repeats, numbers are indicative only;
                                          # bench/results/quick.{md,png} (not tracked)
    python bench/run.py --record          # full run, recorded: rewrites the tracked bench/results/latest.*
    python bench/run.py --update-docs     # --record, and the table in docs/benchmarks.md

The floor of a row is the same call into an empty function of the same binding library that takes the
same arguments as plain objects (returns: no argument, returning a float): what the call costs before
any tensor work. Progress (builds, one line per row) goes to stderr; the table to stdout.
"""
import argparse
import json
import importlib
import os
import statistics
import sys
import time
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from cmake_build import cmake_build  # noqa: E402
sys.path.insert(0, str(HERE.parent / "tools"))
from generated_blocks import write_block  # noqa: E402

TVM_SOURCE = r"""
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
using tvm::ffi::TensorView;
float tvm_floor_0() { return 0.f; }
float tvm_1(TensorView a) { return a.numel() ? static_cast<const float *>(a.data_ptr())[0] : 0.f; }
float tvm_3(TensorView a, TensorView b, TensorView c) { return tvm_1(a) + tvm_1(b) + tvm_1(c); }
float tvm_imag0(TensorView a) { return a.numel() ? static_cast<const float *>(a.data_ptr())[1] : 0.f; }
"""


STENCIL_FLAVORS = {"nb::ndarray": "stencil_ndarray", "py::dltensor": "stencil_dltensor_nanobind",
                   "py::array_t": "stencil_array_t", "py::dltensor (pybind11)": "stencil_dltensor_pybind11"}


def progress(line):
    print(line, file=sys.stderr, flush=True)


def load_modules():
    build = cmake_build(HERE, HERE / ".build")
    sys.path.insert(0, str(build))
    # The tests' build of the examples (same configuration): after a test run nothing is left to build.
    examples = cmake_build(HERE.parent / "cpp" / "examples", HERE.parent / "tests" / ".build" / "examples",
                           targets=list(STENCIL_FLAVORS.values()))
    sys.path.insert(0, str(examples))
    nb = importlib.import_module("dltensor_bench")
    try:
        pb = importlib.import_module("dltensor_bench_pybind11")
    except ImportError:
        pb = None
    try:
        import tvm_ffi.cpp
        start = time.monotonic()
        progress("[bench] building the apache-tvm-ffi module (cached after the first run) ...")
        tvm = tvm_ffi.cpp.load_inline("dltensor_bench_tvm", cpp_sources=TVM_SOURCE,
                                      functions=["tvm_floor_0", "tvm_1", "tvm_3", "tvm_imag0"],
                                      build_directory=str(HERE / ".build" / "tvm"))
        progress(f"[bench] built in {time.monotonic() - start:.0f} s")
    except Exception as e:  # not installed, or it cannot build here
        print(f"apache-tvm-ffi rows skipped: {e!r}"[:200])
        tvm = None
    return nb, pb, tvm


def per_call_ns(stmt, env, number, repeat):
    t = timeit.Timer(stmt, globals=env)
    return statistics.median(t.repeat(repeat=repeat, number=number)) / number * 1e9


def frameworks():
    import numpy as np
    out = {"numpy": lambda: np.zeros(16, np.float32)}
    try:
        import torch
        out["pytorch"] = lambda: torch.zeros(16)
        if torch.cuda.is_available():
            out["pytorch cuda"] = lambda: torch.zeros(16, device="cuda")
    except ImportError:
        pass
    try:
        import jax.numpy as jnp
        out["jax"] = lambda: jnp.zeros(16, jnp.float32)
    except ImportError:
        pass
    if paddle_module() is not None:
        out["paddle"] = lambda: paddle_module().zeros([16], "float32")
    return out


def paddle_module():
    """PaddlePaddle, imported before TensorFlow can be (it crashes when imported after it), or None."""
    try:
        import paddle
        return paddle
    except ImportError:
        return None


COLUMNS = ["floor", "nb::ndarray", "Paddle's DLPack + nb::ndarray", "py::dltensor", "py::dltensor, key set off", "pybind11 floor", "py::array_t", "pybind11 __dlpack__",
           "py::dltensor (pybind11)", "tvm-ffi floor", "tvm-ffi", "PyTorch alone", "dltensor.Tensor + from_dlpack"]


class Rows(list):
    """The table's rows, printing a counter line as each one is measured."""

    def __init__(self, total):
        super().__init__()
        self.total, self.start = total, time.monotonic()

    def append(self, row):
        super().append(row)
        progress(f"[bench] {len(self)}/{self.total} {row[0]} ({time.monotonic() - self.start:.0f} s)")


def row_count():
    """How many rows measure() produces: two per framework, the overload row, a return row for each of
    NumPy, PyTorch, JAX and Paddle present, the float8 row (PyTorch), the port idioms, and a stencil row for
    NumPy and one for PyTorch (when present)."""
    fws = frameworks()
    return (2 * len(fws) + sum(fw in fws for fw in RETURN_FRAMEWORKS) + 1 + 2 * ("pytorch" in fws) + 1
            + len(PORT_IDIOMS) + 1 + ("pytorch" in fws))


RETURN_FRAMEWORKS = ("numpy", "pytorch", "jax", "paddle")


def measure_stencil(nb, number, repeat, rows):
    """Rows for the stencil example: box_blur_into(src, dst) on a (1, 64, 64) float32 image."""
    import numpy as np
    mods = {col: importlib.import_module(name) for col, name in STENCIL_FLAVORS.items()}
    src = np.random.default_rng(0).standard_normal((1, 64, 64)).astype(np.float32)
    inputs = {"numpy": (src, np.empty_like(src))}
    if "pytorch" in frameworks():
        import torch
        inputs["pytorch"] = (torch.from_numpy(src.copy()), torch.empty(1, 64, 64))
    for fw, (x, y) in inputs.items():
        env = {"nb": nb, "x": x, "y": y, **{f"m{i}": m for i, m in enumerate(mods.values())}}
        row = {"floor": per_call_ns("nb.floor_2(x, y)", env, number, repeat)}
        for i, col in enumerate(mods):
            if col == "py::array_t" and fw != "numpy":
                continue  # NumPy arrays only
            row[col] = per_call_ns(f"m{i}.box_blur_into(x, y)", env, number, repeat)
        rows.append((f"stencil 64x64, {fw}", row))
    return rows


def measure(nb, pb, tvm, number, repeat):
    """Rows of (case, {column: ns}); a column missing from a row does not apply to it."""
    rows = Rows(row_count())
    for fw, make in frameworks().items():
        x, y, z = make(), make(), make()
        env = {"nb": nb, "pb": pb, "tvm": tvm, "x": x, "y": y, "z": z}
        cuda = "cuda" in fw
        for n, call in ((1, "x"), (3, "x, y, z")):
            row = {"floor": per_call_ns(f"nb.floor_{n}({call})", env, number, repeat)}
            if not cuda:  # the nanobind/pybind11 bench functions read the first element on the CPU
                row["nb::ndarray"] = per_call_ns(f"nb.nanobind_{n}({call})", env, number, repeat)
                if fw == "paddle":  # what a Paddle user does without dltensor: a capsule per argument
                    env["to_dlpack"] = paddle_module().utils.dlpack.to_dlpack
                    caps = ", ".join(f"to_dlpack({v})" for v in call.split(", "))
                    row["Paddle's DLPack + nb::ndarray"] = per_call_ns(f"nb.nanobind_{n}({caps})", env, number, repeat)
                row["py::dltensor"] = per_call_ns(f"nb.dltensor_{n}({call})", env, number, repeat)
                if fw == "pytorch":  # the negative bit asked of is_neg() (torch_key_set.h off)
                    nb.set_torch_key_set(False)
                    row["py::dltensor, key set off"] = per_call_ns(f"nb.dltensor_{n}({call})", env, number, repeat)
                    nb.set_torch_key_set(True)
            else:
                row["nb::ndarray"] = per_call_ns(f"nb.nanobind_any_{n}({call})", env, number, repeat)
                row["py::dltensor"] = per_call_ns(f"nb.dltensor_any_{n}({call})", env, number, repeat)
            if pb is not None and not cuda:
                row["pybind11 floor"] = per_call_ns(f"pb.floor_{n}({call})", env, number, repeat)
                if fw == "numpy":
                    row["py::array_t"] = per_call_ns(f"pb.array_t_{n}({call})", env, number, repeat)
                row["pybind11 __dlpack__"] = per_call_ns(f"pb.dlpack_{n}({call})", env, number, repeat)
                row["py::dltensor (pybind11)"] = per_call_ns(f"pb.dltensor_{n}({call})", env, number, repeat)
            if tvm is not None and fw in ("numpy", "pytorch"):
                row["tvm-ffi floor"] = per_call_ns("tvm.tvm_floor_0()", env, number, repeat)
                row["tvm-ffi"] = per_call_ns(f"tvm.tvm_{n}({call})", env, number, repeat)
            rows.append((f"{fw}: {n} argument{'s' if n > 1 else ''}", row))
    # Overload resolution: the float64 overload refuses a float32 array (dltensor records why, for
    # dltensor.explain()), the float32 overload binds it.
    import numpy as np
    env = {"nb": nb, "pb": pb, "x": np.ones(16, np.float32)}
    row = {"floor": per_call_ns("nb.floor_1(x)", env, number, repeat),
           "nb::ndarray": per_call_ns("nb.nanobind_overloaded(x)", env, number, repeat),
           "py::dltensor": per_call_ns("nb.dltensor_overloaded(x)", env, number, repeat)}
    if pb is not None:
        row["pybind11 floor"] = per_call_ns("pb.floor_1(x)", env, number, repeat)
        row["py::array_t"] = per_call_ns("pb.array_t_overloaded(x)", env, number, repeat)
        row["py::dltensor (pybind11)"] = per_call_ns("pb.dltensor_overloaded(x)", env, number, repeat)
    rows.append(("numpy: 2nd of 2 overloads binds", row))
    env = {"nb": nb, "pb": pb}
    floor0 = per_call_ns("nb.floor_0()", env, number, repeat)
    for fw in RETURN_FRAMEWORKS:
        if fw not in frameworks():
            continue
        row = {"floor": floor0, "py::dltensor": per_call_ns(f"nb.dltensor_ret_{fw}(16)", env, number // 4, repeat)}
        if fw == "paddle":  # nanobind has no Paddle tag: a capsule, handed to paddle.utils.dlpack.from_dlpack
            env["from_dlpack"] = paddle_module().utils.dlpack.from_dlpack
            row["Paddle's DLPack + nb::ndarray"] = per_call_ns("from_dlpack(nb.nanobind_ret_capsule(16))", env,
                                                              number // 4, repeat)
        else:
            row["nb::ndarray"] = per_call_ns(f"nb.nanobind_ret_{fw}(16)", env, number // 4, repeat)
        if pb is not None:
            row["pybind11 floor"] = per_call_ns("pb.floor_0()", env, number, repeat)
            if fw == "numpy":
                row["py::array_t"] = per_call_ns("pb.array_t_ret_numpy(16)", env, number // 4, repeat)
            row["py::dltensor (pybind11)"] = per_call_ns(f"pb.dltensor_ret_{fw}(16)", env, number // 4, repeat)
        if fw == "pytorch":  # PyTorch's own share: the same tensor handed straight to its exchange API
            row["PyTorch alone"] = per_call_ns("nb.pytorch_return_floor(16)", env, number // 4, repeat)
        rows.append((f"{fw}: return", row))
    if "pytorch" in frameworks():  # float8 (nanobind and pybind11 have no float8 dtype: no anchor)
        import torch
        env = {"nb": nb, "pb": pb, "x": torch.zeros(16).to(torch.float8_e4m3fn)}
        row = {"floor": per_call_ns("nb.floor_1(x)", env, number, repeat),
               "py::dltensor": per_call_ns("nb.dltensor_f8_1(x)", env, number, repeat)}
        if pb is not None:
            row["pybind11 floor"] = per_call_ns("pb.floor_1(x)", env, number, repeat)
            row["py::dltensor (pybind11)"] = per_call_ns("pb.dltensor_f8_1(x)", env, number, repeat)
        rows.append(("pytorch float8_e4m3fn: 1 argument", row))
    measure_port_idioms(nb, pb, number, repeat, rows)
    measure_caller_framework(nb, pb, number, repeat, rows)
    return measure_stencil(nb, max(number // 20, 100), repeat, rows)


# Returns and arguments as ports write them (16 floats): (row, nanobind function or None, py::array_t
# function or None, py::dltensor function, argument expression).
PORT_IDIOMS = [
    ("numpy: copy_of(data, {n})", "nanobind_copy_of", "array_t_copy_of", "dltensor_copy_of", "16"),
    ("numpy: adopt(std::move(vector))", "nanobind_adopt", "array_t_copy_of", "dltensor_adopt", "16"),
    ("numpy: empty({n}) then fill", None, "array_t_empty_fill", "dltensor_empty_fill", "16"),
    ("numpy: float64 argument converted", "nanobind_converted", "array_t_converted", "dltensor_converted",
     "np.ones(16)"),
]


# Answering in the caller's framework (bench/caller_framework.h): `empty_like(x)` filled and returned in x's
# framework, against a dltensor.Tensor result that Python converts with the framework's from_dlpack.
# (row, framework module's name, the argument, the caller's conversion).
CALLER_FRAMEWORK = [
    ("numpy: empty_like(x) answer", "numpy", "np.ones(16, np.float32)", "np.from_dlpack"),
    ("pytorch: empty_like(x) answer", "torch", "torch.ones(16)", "torch.from_dlpack"),
]


def measure_caller_framework(nb, pb, number, repeat, rows):
    """Rows for CALLER_FRAMEWORK whose framework is installed."""
    import numpy as np
    for name, module, arg, from_dlpack in CALLER_FRAMEWORK:
        try:
            env = {"nb": nb, "pb": pb, "np": np, module: importlib.import_module(module), "x": None}
        except ImportError:
            continue
        env["x"] = eval(arg, env)
        row = {"floor": per_call_ns("nb.floor_1(x)", env, number, repeat),
               "py::dltensor": per_call_ns("nb.dltensor_empty_like_fill(x)", env, number // 4, repeat),
               "dltensor.Tensor + from_dlpack": per_call_ns(f"{from_dlpack}(nb.dltensor_tensor_fill(x))", env,
                                                            number // 4, repeat)}
        if pb is not None:
            row["pybind11 floor"] = per_call_ns("pb.floor_1(x)", env, number, repeat)
            row["py::dltensor (pybind11)"] = per_call_ns("pb.dltensor_empty_like_fill(x)", env, number // 4, repeat)
        rows.append((name, row))
    return rows


def measure_port_idioms(nb, pb, number, repeat, rows):
    """Rows for the idioms of ported extensions (PORT_IDIOMS): each against what the original wrote (the
    py::array_t column for pybind11 ports, the nb::ndarray column for nanobind ports)."""
    import numpy as np
    env = {"nb": nb, "pb": pb, "np": np}
    for name, nb_fn, array_t_fn, dlt_fn, arg in PORT_IDIOMS:
        floor = "nb.floor_1(1)" if arg == "16" else f"nb.floor_1({arg})"
        row = {"floor": per_call_ns(floor, env, number, repeat)}
        if nb_fn:
            row["nb::ndarray"] = per_call_ns(f"nb.{nb_fn}({arg})", env, number // 4, repeat)
        row["py::dltensor"] = per_call_ns(f"nb.{dlt_fn}({arg})", env, number // 4, repeat)
        if pb is not None:
            row["pybind11 floor"] = per_call_ns(floor.replace("nb.", "pb."), env, number, repeat)
            row["py::array_t"] = per_call_ns(f"pb.{array_t_fn}({arg})", env, number // 4, repeat)
            row["py::dltensor (pybind11)"] = per_call_ns(f"pb.{dlt_fn}({arg})", env, number // 4, repeat)
        rows.append((name, row))
    return rows


# Ratios a user compares, first: (column, other binding, the py::dltensor flavour on the same library).
RATIOS = [("vs nb::ndarray", "nb::ndarray", "py::dltensor"),
          ("vs py::array_t", "py::array_t", "py::dltensor (pybind11)"),
          ("vs tvm-ffi", "tvm-ffi", "py::dltensor"),
          ("vs Paddle's DLPack", "Paddle's DLPack + nb::ndarray", "py::dltensor"),
          ("vs dltensor.Tensor + from_dlpack", "dltensor.Tensor + from_dlpack", "py::dltensor")]

LEGEND = ("*vs X*: X's time divided by py::dltensor's (above 1x: py::dltensor is faster); against "
          "`py::array_t` the pybind11 backend is compared, the others against the nanobind backend. "
          "*floor*: the same call into an empty function of the same binding library that takes the "
          "arguments as plain objects (returns: no argument, returning a float), i.e. the cost of the "
          "call before any tensor work; *py::dltensor / floor* is the whole call in units of that. "
          "*py::dltensor, key set off*: the same call with PyTorch's negative bit asked of `is_neg()` "
          "instead of read from the tensor's calibrated key set (`DLTENSOR_TORCH_KEY_SET=0`). "
          "*PyTorch alone*: the returned tensor's 16 floats handed straight to PyTorch's exchange API, "
          "with a deleter that needs no Python (no owner object): what a PyTorch return costs any binding, "
          "call included. *Paddle's DLPack + nb::ndarray*: what a Paddle user writes without dltensor "
          "(nanobind has no Paddle tag): `paddle.utils.dlpack.to_dlpack(x)` passed to the nb::ndarray "
          "function, and an nb::ndarray capsule handed to `paddle.utils.dlpack.from_dlpack`. The float8 row "
          "has no anchor: neither nanobind nor pybind11 has a float8 dtype. *dltensor.Tensor + from_dlpack*: "
          "the `empty_like(x) answer` rows' alternative, a framework-less result (`empty()`) that the caller "
          "converts with its framework's `from_dlpack`.")


# The project's speed goals, each a ratio of two cells of one row, in the direction of the *vs X* columns:
# (case, row, X's column, the py::dltensor column it is compared with, target). The ratio is X's time
# divided by py::dltensor's (above 1x: py::dltensor is faster); a goal is met when it is at least the
# target. A goal stated as "at most k times X's time" has the target 1 / k.
GOALS = [
    ("PyTorch, 1 argument", "pytorch: 1 argument", "nb::ndarray", "py::dltensor", 12.0),
    ("PyTorch, 3 arguments", "pytorch: 3 arguments", "nb::ndarray", "py::dltensor", 12.0),
    ("PyTorch, 3 arguments (at most 1.1x tvm-ffi's time)", "pytorch: 3 arguments", "tvm-ffi", "py::dltensor",
     1 / 1.1),
    ("PyTorch, 3 arguments, pybind11 backend (at most 0.8x tvm-ffi's time)", "pytorch: 3 arguments", "tvm-ffi",
     "py::dltensor (pybind11)", 1 / 0.8),
    ("NumPy, 1 argument", "numpy: 1 argument", "nb::ndarray", "py::dltensor", 1.0),
    ("NumPy, 3 arguments", "numpy: 3 arguments", "nb::ndarray", "py::dltensor", 1.0),
    ("NumPy return", "numpy: return", "nb::ndarray", "py::dltensor", 2.0),
    ("NumPy return, pybind11 backend (at most 1.1x py::array_t's time)", "numpy: return", "py::array_t",
     "py::dltensor (pybind11)", 1 / 1.1),
    ("PyTorch return", "pytorch: return", "nb::ndarray", "py::dltensor", 3.0),
    ("JAX, 1 argument", "jax: 1 argument", "nb::ndarray", "py::dltensor", 4.0),
    ("JAX, 3 arguments", "jax: 3 arguments", "nb::ndarray", "py::dltensor", 4.0),
    ("Paddle, 1 argument (at most the time of Paddle's to_dlpack + nb::ndarray)", "paddle: 1 argument",
     "Paddle's DLPack + nb::ndarray", "py::dltensor", 1.0),
    ("Paddle return (at most the time of nb::ndarray + paddle.utils.dlpack.from_dlpack)", "paddle: return",
     "Paddle's DLPack + nb::ndarray", "py::dltensor", 1.0),
    # Ports' idioms (PORT_IDIOMS): never slower than what the original wrote.
    ("copy_of, pybind11 backend (at most 1.1x py::array_t(n, data)'s time)", "numpy: copy_of(data, {n})",
     "py::array_t", "py::dltensor (pybind11)", 1 / 1.1),
    ("adopt, pybind11 backend (at most 1.1x py::array_t(n, data)'s time)", "numpy: adopt(std::move(vector))",
     "py::array_t", "py::dltensor (pybind11)", 1 / 1.1),
    ("empty() then fill, pybind11 backend (at most py::array_t(n)'s time)", "numpy: empty({n}) then fill",
     "py::array_t", "py::dltensor (pybind11)", 1.0),
    ("converted argument, pybind11 backend (at most forcecast's time)", "numpy: float64 argument converted",
     "py::array_t", "py::dltensor (pybind11)", 1.0),
    ("copy_of, nanobind backend", "numpy: copy_of(data, {n})", "nb::ndarray", "py::dltensor", 1.0),
    ("adopt, nanobind backend", "numpy: adopt(std::move(vector))", "nb::ndarray", "py::dltensor", 1.0),
]

GOALS_HEADER = ("Speed goals, measured in this run. Each is a ratio in the direction of the *vs X* columns: X's "
                "time divided by py::dltensor's (above 1x: py::dltensor is faster), met when it is at least "
                "the target:")


def goal_row(goal, r) -> str:
    """One line of the goals table: the goal, X, the target, the measured ratio (from row cells `r`), met."""
    case, _, other, ours, target = goal
    head = f"| {case} | {other} | >= {f'{target:.2f}'.rstrip('0').rstrip('.')}x |"
    if other not in r or ours not in r:
        return f"{head} not measured here | |"
    ratio = r[other] / r[ours]
    return f"{head} {ratio:.2f}x | {'yes' if ratio >= target else 'no'} |"


def goals_markdown(rows):
    """The goals table: each goal's measured ratio from this run's rows, and whether it is met."""
    by_case = dict(rows)
    lines = [GOALS_HEADER, "", "| goal | X | target: X's time / py::dltensor's | measured | met |",
             "|---|---|---:|---:|---|"]
    lines += [goal_row(goal, by_case.get(goal[1], {})) for goal in GOALS]
    return "\n".join(lines)


def conjugate_note(nb, tvm):
    """What each binding reads from a conjugate view: PyTorch's answer, py::dltensor's, apache-tvm-ffi's."""
    try:
        import torch
    except ImportError:
        return ""
    x = torch.tensor([1 + 2j], dtype=torch.complex64).conj()
    ours = nb.dltensor_imag0(x)
    theirs = f"{tvm.tvm_imag0(x):+.1f}" if tvm is not None else "not measured (not installed)"
    return (f"Correctness differs where time is compared: the imaginary part of `torch.tensor([1+2j]).conj()` "
            f"is {x.imag.item():+.1f} in PyTorch; py::dltensor reads {ours:+.1f} (it asks for the conjugate "
            f"and negative bits of every PyTorch argument); apache-tvm-ffi reads {theirs} (it reads the memory "
            f"without checking the bits).")


def load_text():
    """The machine's 1, 5 and 15-minute load averages now: under what load a time was taken."""
    return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


# Command 1 installs the bench extra, which has no paddlepaddle: its table has no paddle rows.
PADDLE_NOTE = ("The `paddle:` rows are measured only where PaddlePaddle is installed: the bench extra "
               "(README's command 1) does not install it, so command 1's table has no paddle rows "
               "(`pip install paddlepaddle` adds them; the test extra has it).")


def markdown(rows, header):
    cols = [c for c in COLUMNS if any(c in r for _, r in rows)]
    ratios = [(name, other, ours) for name, other, ours in RATIOS if any(other in r for _, r in rows)]
    paddle = [PADDLE_NOTE, ""] if any(case.startswith("paddle:") for case, _ in rows) else []
    lines = [header, "", LEGEND, "", *paddle,
             "| case | " + " | ".join(name for name, _, _ in ratios) + " | " + " | ".join(cols) +
             " | py::dltensor / floor |",
             "|---|" + "---:|" * (len(ratios) + len(cols) + 1)]
    for case, r in rows:
        speedups = [f"{r[other] / r[ours]:.2f}x" if other in r and ours in r else ""
                    for _, other, ours in ratios]
        cells = [f"{r[c]:.0f}" if c in r else "" for c in cols]
        lines.append(f"| {case} | " + " | ".join(speedups) + " | " + " | ".join(cells) +
                     f" | {r['py::dltensor'] / r['floor']:.2f}x |")
    return "\n".join(lines)


def plot(rows, path, run):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return
    cols = [c for c in COLUMNS if "floor" not in c and any(c in r for _, r in rows)]
    fig, ax = plt.subplots(figsize=(11, 5))
    width = 0.8 / (len(cols) + 1)
    for i, c in enumerate(["floor"] + cols):
        xs = [k + i * width for k, (_, r) in enumerate(rows) if c in r]
        ys = [r[c] for _, r in rows if c in r]
        ax.bar(xs, ys, width, label=c)
    ax.set_yscale("log")
    ax.set_ylabel("ns per call (log scale)")
    ax.set_xticks([k + width * len(cols) / 2 for k in range(len(rows))])
    ax.set_xticklabels([case for case, _ in rows], rotation=30, ha="right")
    ax.set_title(f"Per-call cost, one process, {run} (lower is better)")
    # Right of the axes, outside them: inside, the legend would cover the bars of a group.
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    print(f"saved {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few repeats: a smoke run (bench/results/quick.*)")
    ap.add_argument("--record", action="store_true",
                    help="write the tracked bench/results/latest.* instead of the untracked run.*")
    ap.add_argument("--update-docs", action="store_true", help="--record, and write the table into docs/benchmarks.md")
    ap.add_argument("--out", default=str(HERE / "results"), help="directory for the table and plot")
    args = ap.parse_args(argv)
    record = args.record or args.update_docs
    if record and args.quick:
        ap.error("--record and --update-docs need a full run (drop --quick)")
    number, repeat = (2000, 3) if args.quick else (20000, 15)
    run = "quick run, indicative only" if args.quick else "full run"

    started = time.monotonic()
    load_started = load_text()
    nb, pb, tvm = load_modules()
    progress(f"[bench] measuring {row_count()} rows ({run}: median of {repeat} x {number} calls per cell)")
    rows = measure(nb, pb, tvm, number, repeat)
    table = markdown(rows, f"Per-call cost in ns, median of {repeat} x {number} calls "
                           f"({'quick' if args.quick else 'full'} run; {load_started} at the start, "
                           f"{load_text()} at the end).")
    table += "\n\n" + goals_markdown(rows)
    note = conjugate_note(nb, tvm)
    if note:
        table += "\n\n" + note
    print(table)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "quick" if args.quick else "latest" if record else "run"
    (out / f"{stem}.md").write_text(table + "\n\nRecorded " + time.strftime("%Y-%m-%d %H:%M:%S") + "\n")
    print(f"\nsaved {out / (stem + '.md')}")
    plot(rows, out / f"{stem}.png", run)
    if record:  # the main job's own time, for docs/contributing.md's table of how long things take (tools/setup_times.py)
        # with the 1, 5 and 15-minute load averages at its end: under what load the time was taken
        times = {"python bench/run.py": round(time.monotonic() - started), "recorded": time.strftime("%Y-%m-%d"),
                 "load": [round(x, 2) for x in os.getloadavg()]}
        (HERE / "results" / "bench_time.json").write_text(json.dumps(times, indent=1) + "\n")
    if args.update_docs:
        page = HERE.parent / "docs" / "benchmarks.md"
        write_block(page, "bench", table)
        print(f"updated {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
