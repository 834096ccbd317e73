"""Benchmark: per-call cost of passing tensors into, and returning them from, a C++ function bound with
py::dltensor, nanobind's nb::ndarray, and a bare object parameter (the floor), measured side by side in
one process. Prints a markdown table (median over repeats) and saves it under bench/results/.

    python bench/run.py            # full run
    python bench/run.py --quick    # smoke run (CI): few repeats, numbers are indicative only
"""
import argparse
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


def load_module():
    build = cmake_build(HERE, HERE / ".build")
    sys.path.insert(0, str(build))
    return importlib.import_module("dltensor_bench")


def per_call_ns(stmt, env, number, repeat):
    t = timeit.Timer(stmt, globals=env)
    return statistics.median(t.repeat(repeat=repeat, number=number)) / number * 1e9


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few repeats: a smoke run")
    ap.add_argument("--out", default=str(HERE / "results"), help="directory for the markdown table")
    ap.add_argument("--update-readme", action="store_true", help="also write the table into README.md")
    args = ap.parse_args(argv)
    number, repeat = (2000, 3) if args.quick else (20000, 15)

    b = load_module()
    import numpy as np

    inputs = {"numpy": lambda: np.zeros(16, np.float32)}
    try:
        import torch
        inputs["pytorch"] = lambda: torch.zeros(16)
    except ImportError:
        torch = None
    try:
        import jax.numpy as jnp
        inputs["jax"] = lambda: jnp.zeros(16, jnp.float32)
    except ImportError:
        jnp = None

    rows = []  # (case, floor_ns, nanobind_ns, dltensor_ns)
    floor0 = per_call_ns("b.floor_0()", {"b": b}, number, repeat)
    for fw, make in inputs.items():
        x, y, z = make(), make(), make()
        env = {"b": b, "x": x, "y": y, "z": z}
        for n, call in ((1, "x"), (3, "x, y, z")):
            floor = per_call_ns(f"b.floor_{n}({call})", env, number, repeat)
            nb_ns = per_call_ns(f"b.nanobind_{n}({call})", env, number, repeat)
            dl_ns = per_call_ns(f"b.dltensor_{n}({call})", env, number, repeat)
            rows.append((f"{fw}: {n} argument{'s' if n > 1 else ''}", floor, nb_ns, dl_ns))
    for fw in inputs:
        env = {"b": b}
        nb_ns = per_call_ns(f"b.nanobind_ret_{fw}(16)", env, number // 4, repeat)
        dl_ns = per_call_ns(f"b.dltensor_ret_{fw}(16)", env, number // 4, repeat)
        rows.append((f"{fw}: return", floor0, nb_ns, dl_ns))

    lines = [
        f"Per-call cost in ns (median of {repeat} x {number} calls; {'quick' if args.quick else 'full'} run).",
        "",
        "| case | floor | nb::ndarray | py::dltensor | speed-up vs nb::ndarray | dltensor / floor |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for case, floor, nb_ns, dl_ns in rows:
        lines.append(f"| {case} | {floor:.0f} | {nb_ns:.0f} | {dl_ns:.0f} | {nb_ns / dl_ns:.2f}x | "
                     f"{dl_ns / floor:.2f}x |")
    table = "\n".join(lines)
    print(table)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = "quick.md" if args.quick else "latest.md"
    (out / name).write_text(table + "\n\nRecorded " + time.strftime("%Y-%m-%d %H:%M:%S") + "\n")
    print(f"\nsaved {out / name}")
    if args.update_readme:
        readme = HERE.parent / "README.md"
        text = readme.read_text()
        begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
        head, rest = text.split(begin, 1)
        readme.write_text(head + begin + "\n" + table + "\n" + end + rest.split(end, 1)[1])
        print(f"updated {readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
