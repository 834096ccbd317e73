"""README.md's table of how long CI's steps take, generated from a measured CI run, never typed.

    DLTENSOR_CI_TIMES=bench/results/ci_times.json bash .ci/run   # a clean clone, as CI runs it
    python tests/setup_times.py --write                            # rewrites the README block

`tests/test_docs.py` checks that README.md's block is the rendering of bench/results/ci_times.json.
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMES = ROOT / "bench" / "results" / "ci_times.json"
README = ROOT / "README.md"
START, END = "<!-- ci-times:start -->", "<!-- ci-times:end -->"


def minutes(seconds: int) -> str:
    return f"{seconds} s" if seconds < 90 else f"{seconds / 60:.1f} minutes"


def render(times: dict) -> str:
    lines = ["Wall times of each `.ci/run` step in a clean clone on a 2-core machine (recorded in "
             "`bench/results/ci_times.json` by `DLTENSOR_CI_TIMES=... bash .ci/run`, rendered by "
             "`python tests/setup_times.py --write`); the first run of each includes its builds, later runs "
             "are incremental:", "", "| step | time |", "|---|---|"]
    for step, seconds in times.items():
        lines.append(f"| `{step}` | {minutes(seconds)} |")
    lines.append(f"| all of `.ci/run` | {minutes(sum(times.values()))} |")
    return "\n".join(lines)


def block(text: str) -> str:
    start, end = text.index(START) + len(START), text.index(END)
    return text[start:end].strip("\n")


def main(argv):
    expected = render(json.loads(TIMES.read_text()))
    text = README.read_text()
    if "--write" in argv:
        start, end = text.index(START) + len(START), text.index(END)
        README.write_text(text[:start] + "\n" + expected + "\n" + text[end:])
    else:
        print(expected)


if __name__ == "__main__":
    main(sys.argv[1:])
