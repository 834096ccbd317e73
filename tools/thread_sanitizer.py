"""ThreadSanitizer over the free-threaded stress run: tests/free_threaded built with -fsanitize=thread (the
module's own code, dltensor's core and the binding library's sources) for a TSAN-instrumented CPython 3.13t,
then tests/free_threaded/stress.py on both backends, many threads through every route at once.

    bash tools/build_free_threaded_python.sh --tsan     # once per machine: ~/.cache/dltensor/pythons/3.13t-tsan
    python tools/thread_sanitizer.py                    # both backends; exit 1 on a report in dltensor's code
    python tools/thread_sanitizer.py --record           # ... and write tests/free_threaded/thread_sanitizer.json

Run it with the test extras' virtual environment (nanobind, pybind11, cmake). Every ThreadSanitizer report is
sorted by the code its stacks run through: dltensor's (the checkout's headers, tests/free_threaded), the
binding library's (nanobind, pybind11), or the interpreter's and NumPy's alone. A report that touches
dltensor's code fails the run; the others are printed and counted. First, per backend, a canary: a data
race planted in the module (`unsynchronized_bump`, 4 threads writing one plain int) must be reported, or
the run fails: a build without instrumentation, or threads that never overlap, would report nothing too. Suppressions
(tests/free_threaded/tsan_suppressions.txt) cover CPython and NumPy internals only, each with its reason.
It is not part of CI: the instrumented interpreter is a second build, about twice the plain one's time
(bash tools/build_free_threaded_python.sh prints it), and the run itself is slow (docs/robustness.md, whose row is generated from the recorded file).
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from cmake_build import REPO, cmake_build  # noqa: E402

TESTS = Path(__file__).resolve().parent.parent / "tests"
SOURCE = TESTS / "free_threaded"
SUPPRESSIONS = SOURCE / "tsan_suppressions.txt"
RECORD = SOURCE / "thread_sanitizer.json"
BUILD_ROOT = TESTS / ".build" / "free-threaded-tsan"
FLAGS = "-fsanitize=thread -g -O1 -fno-omit-frame-pointer"
BACKENDS = ["nanobind", "pybind11"]
OURS = (str(REPO / "cpp" / "include" / "dltensor"), str(REPO / "cpp" / "src"), str(SOURCE), "/dltensor/src/core.cpp")
BINDINGS = ("/nanobind/", "/pybind11/")


def tsan_python():
    cache = Path(os.environ.get("DLTENSOR_PYTHONS", Path.home() / ".cache" / "dltensor" / "pythons"))
    for exe in (os.environ.get("DLTENSOR_TSAN_PYTHON"), cache / "3.13t-tsan" / "bin" / "python3.13t"):
        if exe and Path(exe).is_file():
            return str(exe)
    return None


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHON_GIL", "LD_PRELOAD")}
    env.update(extra)
    return env


def tsan_options(halt=False):
    return " ".join([f"suppressions={SUPPRESSIONS}", f"halt_on_error={int(halt)}", "second_deadlock_stack=1",
                     "report_signal_unsafe=0", "exitcode=66"])


def ensure_numpy(python):
    env = clean_env(TSAN_OPTIONS=tsan_options())
    if subprocess.run([python, "-c", "import numpy"], capture_output=True, env=env, timeout=600).returncode:
        print("[tsan] installing NumPy's free-threaded wheel into the instrumented interpreter", flush=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--root-user-action=ignore", "--only-binary", ":all:", "numpy"],
                       check=True, timeout=1800, env=env)


def split_reports(stderr):
    """The ThreadSanitizer reports in `stderr`: one (kind, text, frame files) per report."""
    reports = []
    for block in stderr.split("==================\n"):
        head = re.search(r"WARNING: ThreadSanitizer: ([^(\n]+)", block)
        if not head:
            continue
        # "#3 ns::f(int, char const*) /path/file.h:154 (module.so+0x43f99)": the source file of each frame
        files = re.findall(r"^\s+#\d+ .*? (/\S+?)(?::\d+)+ \(", block, flags=re.M)
        # A frame in the test module that the symbolizer could not name ("(ft_nanobind...so+0x9660)"):
        # dltensor's or the binding library's, counted as dltensor's (the module is built unstripped, so this
        # means missing debug information, which must not hide a report).
        files += ["(unsymbolized) " + str(SOURCE) for _ in re.findall(r"^\s+#\d+ <null> .*\(\S*/ft_\w+\.\S+\+0x[0-9a-f]+\)\s*$",
                                                                      block, flags=re.M)]
        reports.append((head.group(1).strip(), block.strip(), files))
    return reports


def owner(files):
    if any(any(o in f for o in OURS) for f in files):
        return "dltensor"
    if any(any(b in f for b in BINDINGS) for f in files):
        return "binding library"
    return "interpreter or NumPy"


CANARY = """
import importlib, sys, threading
sys.path.insert(0, sys.argv[1])
m = importlib.import_module(sys.argv[2])
barrier = threading.Barrier(4)
def bump():
    barrier.wait()
    m.unsynchronized_bump(100000)
ts = [threading.Thread(target=bump) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print("canary ran", sys._is_gil_enabled())
"""


def canary_reported(python, build, backend):
    """Whether ThreadSanitizer reports the race planted in `unsynchronized_bump` (4 threads write one plain
    int): without that report, the run below would prove nothing (no instrumentation, or no threads)."""
    proc = subprocess.run([python, "-c", CANARY, str(build), f"ft_{backend}"], capture_output=True, text=True,
                          timeout=600, env=clean_env(TSAN_OPTIONS=tsan_options()))
    races = [text for kind, text, _ in split_reports(proc.stderr) if kind == "data race"]
    return "canary ran False" in proc.stdout and any("unsynchronized_bump" in t or "canary_count" in t for t in races)


def run_backend(python, backend, threads, seconds):
    # RelWithDebInfo: nanobind_add_module and pybind11_add_module strip Release modules, and a stripped
    # module's frames have no names or files to tell whose code a report is in.
    build = cmake_build(SOURCE, BUILD_ROOT / backend,
                        [f"-DDLTENSOR_FT_BACKEND={backend}", f"-DDLTENSOR_FT_FLAGS={FLAGS}",
                         "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], python=python)
    canary = canary_reported(python, build, backend)
    start = time.monotonic()
    proc = subprocess.run([python, str(SOURCE / "stress.py"), str(build), f"ft_{backend}", str(threads),
                           str(seconds)], capture_output=True, text=True, timeout=seconds * 20 + 1800,
                          env=clean_env(TSAN_OPTIONS=tsan_options()))
    took = time.monotonic() - start
    reports = split_reports(proc.stderr)
    by_owner = {}
    for kind, text, files in reports:
        by_owner.setdefault(owner(files), []).append((kind, text))
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    ok = last.startswith("ok ") and proc.returncode in (0, 66) and canary
    if not canary:
        last = "ThreadSanitizer did not report the planted race (unsynchronized_bump): not instrumented?"
    return {"backend": backend, "canary_reported": canary, "stress": last if ok else f"exit status {proc.returncode}: {last}",
            "stress_ok": ok, "rounds": int(last.split()[1]) if ok else 0, "seconds": round(took),
            "reports": {k: len(v) for k, v in by_owner.items()},
            "kinds": sorted({kind for kind, _, _ in reports}),
            "texts": {k: [t for _, t in v[:3]] for k, v in by_owner.items()},
            "stdout": proc.stdout[-3000:], "stderr_tail": proc.stderr[-3000:]}


def suppressed_entries():
    return [line.strip() for line in SUPPRESSIONS.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--record", action="store_true", help=f"write {RECORD.relative_to(REPO)}")
    args = ap.parse_args()
    python = tsan_python()
    if python is None:
        sys.exit("[tsan] no TSAN-instrumented 3.13t: run `bash tools/build_free_threaded_python.sh --tsan` first "
                 "(or set DLTENSOR_TSAN_PYTHON)")
    ensure_numpy(python)
    version = subprocess.run([python, "-c", "import sys, numpy; print(sys.version.split()[0], numpy.__version__)"],
                             capture_output=True, text=True, env=clean_env(TSAN_OPTIONS=tsan_options()),
                             check=True).stdout.split()
    results = []
    for backend in args.backends.split(","):
        print(f"[tsan] {backend}: {args.threads} threads x {args.seconds:g} s under ThreadSanitizer", flush=True)
        r = run_backend(python, backend, args.threads, args.seconds)
        results.append(r)
        print(f"[tsan] {backend}: {r['stress']} in {r['seconds']} s; reports by code: {r['reports'] or 'none'}",
              flush=True)
        for who, texts in r["texts"].items():
            for text in texts:
                print(f"[tsan] --- a report in {who}'s code ---\n{text}\n", flush=True)
        if not r["stress_ok"]:
            print(r["stdout"], r["stderr_tail"], sep="\n", flush=True)
    failed = [r["backend"] for r in results if not r["stress_ok"] or r["reports"].get("dltensor")]
    if args.record:
        commit = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=REPO, capture_output=True,
                                text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "cpp", "tests/free_threaded",
                                     "tools/thread_sanitizer.py", f":!{RECORD.relative_to(REPO)}"],
                                    cwd=REPO, capture_output=True, text=True).stdout.strip())
        RECORD.write_text(json.dumps({
            "date": datetime.date.today().isoformat(), "commit": commit, "dirty": dirty,
            "python": version[0], "numpy": version[1], "threads": args.threads, "seconds": args.seconds,
            "flags": FLAGS, "suppressions": suppressed_entries(), "passed": not failed,
            "load": [round(x, 2) for x in os.getloadavg()],
            "backends": [{k: r[k] for k in ("backend", "canary_reported", "stress", "rounds", "seconds", "reports",
                                            "kinds")}
                         for r in results]}, indent=1) + "\n")
        print(f"[tsan] recorded in {RECORD.relative_to(REPO)}")
    if failed:
        sys.exit(f"[tsan] FAILED on {', '.join(failed)}: a ThreadSanitizer report in dltensor's code, or the "
                 "stress run failed")
    print("[tsan] no report in dltensor's code")


if __name__ == "__main__":
    main()
