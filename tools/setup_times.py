"""docs/contributing.md's table of how long CI's steps take, generated from a measured CI run, never typed.

    DLTENSOR_CI_TIMES=bench/results/ci_times.json bash .ci/run   # a clean clone, as CI runs it
    python bench/run.py --record                                   # also records its own wall time
    python tools/setup_times.py --add-run                          # appends that run's total to ci_runs.json
    python tools/setup_times.py --write                            # rewrites the block in docs/contributing.md

`tests/test_docs.py` checks that docs/contributing.md's block is the rendering of bench/results/ci_times.json.

Each time says under what load it was taken: a step is recorded as {"seconds": s, "load": [the 1, 5 and
15-minute load averages at its end]} (.ci/run), the full benchmark with "load" beside its seconds
(bench/run.py --record). Older records hold bare seconds and no load: they render as "load not recorded".
"""
import json
import sys
from pathlib import Path

from generated_blocks import write_block

ROOT = Path(__file__).resolve().parent.parent
TIMES = ROOT / "bench" / "results" / "ci_times.json"
BENCH_TIME = ROOT / "bench" / "results" / "bench_time.json"  # written by `python bench/run.py --record`
RUNS = ROOT / "bench" / "results" / "ci_runs.json"  # every recorded whole run of .ci/run: --add-run
PAGE = ROOT / "docs" / "contributing.md"
BLOCK = "ci-times"  # the generated block of PAGE (tools/generated_blocks.py)


def minutes(seconds: int) -> str:
    return f"{seconds} s" if seconds < 90 else f"{seconds / 60:.1f} minutes"


NOT_RECORDED = "load not recorded"


def step_record(value) -> tuple:
    """(seconds, load or None) of one recorded step: {"seconds": s, "load": [...]}, or an older bare s."""
    if isinstance(value, dict):
        return value["seconds"], value.get("load")
    return value, None


def load_text(load) -> str:
    """The 1, 5 and 15-minute load averages as the table shows them, or that none was recorded."""
    if not load:
        return NOT_RECORDED
    return "load average " + ", ".join(f"{x:.1f}" for x in load)


def add_run(times: dict, runs_file: Path = RUNS) -> dict:
    """Appends the whole run recorded in `times` (its "total": seconds, load, exit status, commit, date) to
    `runs_file`; a run that failed is not a timing of CI."""
    total = times.get("total")
    if not total:
        raise SystemExit("no total in the recorded run: record it with DLTENSOR_CI_TIMES=... bash .ci/run")
    if total.get("status", 0) != 0:
        raise SystemExit(f"the recorded run failed (exit status {total['status']}): not added")
    runs = json.loads(runs_file.read_text()) if runs_file.is_file() else []
    run = {k: total[k] for k in ("date", "commit", "seconds", "load")}
    if run not in runs:
        runs.append(run)
    runs_file.write_text(json.dumps(runs, indent=1) + "\n")
    return run


def render_runs(runs: list) -> list:
    if not runs:
        return []
    lines = ["", "Whole runs of `.ci/run` in a clean clone (each added by `python tools/setup_times.py --add-run` from "
             "its recorded times; CI's limit is 90 minutes, and `.ci/run` warns past 45):", "",
             "| date | commit | wall time | load at its end |", "|---|---|---|---|"]
    lines += [f"| {r['date']} | `{r['commit']}` | {minutes(r['seconds'])} | {load_text(r['load'])} |" for r in runs]
    return lines


def render(times: dict, bench: dict, runs: list = None) -> str:
    if runs is None:
        runs = json.loads(RUNS.read_text()) if RUNS.is_file() else []
    times = {k: v for k, v in times.items() if k != "total"}
    records = {step: step_record(v) for step, v in times.items()}
    seconds = {step: s for step, (s, _) in records.items()}
    lines = ["Wall times of each `.ci/run` step in a clean clone on a 2-core machine (recorded in "
             "`bench/results/ci_times.json` by `DLTENSOR_CI_TIMES=... bash .ci/run`, rendered by "
             "`python tools/setup_times.py --write`); the first run of each includes its builds, later runs "
             "are incremental. *Load*: the machine's 1, 5 and 15-minute load averages when the step ended "
             "(2 cores: above 2, other work was competing for them):", "",
             "| step | time | load |", "|---|---|---|"]
    for step, (s, load) in records.items():
        lines.append(f"| `{step}` | {minutes(s)} | {load_text(load)} |")
    lines.append(f"| all of `.ci/run` | {minutes(sum(seconds.values()))} | see each step |")
    times = seconds
    full = bench["python bench/run.py"]
    lines += ["", "The README's two commands (1: the benchmark, 2: the tests), from the same steps (the full benchmark's own wall time, its builds "
              "included but for apache-tvm-ffi's module, which tvm-ffi caches after a machine's first build; "
              f"recorded by `python bench/run.py --record` on {bench['recorded']}, "
              f"{load_text(bench.get('load'))}{' at its end' if bench.get('load') else ''}):", "",
              "| command | steps | time |", "|---|---|---|",
              f"| 1. the main job | `pip install torch`, `pip install .[bench]`, `python bench/run.py` (full run: "
              f"{minutes(full)}) | "
              f"{minutes(times['pip install torch'] + times['pip install .[bench]'] + full)} |",
              f"| 2. the tests | `pip install torch`, `pip install .[test]`, `python -m pytest` | "
              f"{minutes(times['pip install torch'] + times['pip install .[test]'] + times['python -m pytest'])} |"]
    lines += render_runs(runs)
    return "\n".join(lines)


def main(argv):
    expected = render(json.loads(TIMES.read_text()), json.loads(BENCH_TIME.read_text()))
    if "--add-run" in argv:
        print("added:", add_run(json.loads(TIMES.read_text())))
        expected = render(json.loads(TIMES.read_text()), json.loads(BENCH_TIME.read_text()))
    if "--write" in argv:
        write_block(PAGE, BLOCK, expected)
    else:
        print(expected)


if __name__ == "__main__":
    main(sys.argv[1:])
