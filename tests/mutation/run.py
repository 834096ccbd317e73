"""Mutation testing of the C++ headers: plants each mutant of tests/mutation/mutants.py alone in a copy of
the checkout, rebuilds the test modules there (tests/cmake_build.py, against the copy's own headers, as the
suite builds them: unity batches) and runs the mutant's tests with pytest, in two stages: first one backend's
module alone (nanobind's, or the backend whose test killed the mutant last time) and the tests on that
backend; when they all pass, both modules and the tests on both backends and both import paths (what CI
runs). A mutant is killed when a test fails (or the process crashes or hangs), survives when the second
stage passes, and is invalid when it does not compile.
Prints a line per mutant and the score; records them in tests/mutation/results.json. The checkout itself
is never modified (only results.json is written).

    python tests/mutation/run.py                 every mutant (on 2 cores, about 5 s of rebuilding for one
                                                 in a `-inl.h` file, the core library's; 25 s elsewhere)
    python tests/mutation/run.py --only A B      mutants A and B (merged into results.json)
    python tests/mutation/run.py --stale         mutants with no result, not killed, or whose header
                                                 changed since the commit their result was recorded at
    python tests/mutation/run.py --carry-moved   carries the results of mutants whose header moved since
                                                 HEAD (or REV) with its code unchanged but include paths
    python tests/mutation/run.py --list          the mutants

--rev REV copies that commit instead of the working tree (tracked and untracked, not ignored files);
--workdir DIR uses and keeps DIR as the copy (a later run rebuilds only what changed); --keep keeps the
temporary copy. First the unmutated copy is built and the union of the selected tests run: it must pass.
"""
import argparse
import dataclasses
import datetime
import functools
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

from mutation import results  # noqa: E402
from mutation.mutants import MUTANTS  # noqa: E402

HEADERS = "cpp/include/dltensor"
BUILD_DIR = ".mutation-build"  # inside the copy: DLTENSOR_TEST_BUILD_ROOT
KEPT = (BUILD_DIR, "tests/.build")  # build outputs a reused copy keeps
BUILD_TIMEOUT = 1800
TEST_TIMEOUT = 900  # a mutant that hangs its tests is killed by the timeout
BASELINE_TIMEOUT = 3600  # the unmutated copy runs the union of every selected mutant's tests
BACKENDS = ("nanobind", "pybind11")


def git(*args) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


def checkout_files(rev):
    """{path: bytes} of the commit `rev`, or of the working tree (tracked and untracked, not ignored)."""
    if rev:
        data = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    names = [n for n in git("ls-files", "-co", "--exclude-standard", "-z").split("\0") if n]
    return {n: (ROOT / n).read_bytes() for n in names if (ROOT / n).is_file()}


def snapshot(dest: Path, rev) -> None:
    """Makes `dest` a copy of the checkout. Files already there with the same content are left alone (and
    their times), so that a reused copy rebuilds only what changed; files the checkout lacks are removed."""
    files = checkout_files(rev)
    for name, data in files.items():
        target = dest / name
        if not target.is_file() or target.read_bytes() != data:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    for path in dest.rglob("*"):
        rel = path.relative_to(dest).as_posix()
        if path.is_file() and rel not in files and "__pycache__" not in path.parts and \
                not any(rel.startswith(k + "/") for k in KEPT):
            path.unlink()


def build(copy: Path, env, backend=None) -> tuple:
    """Builds the test modules in the copy as tests/conftest.py does (only `backend`'s when given);
    (ok, seconds, output)."""
    targets = [f"dltensor_test_{backend}"] if backend else []
    code = ("import sys; from pathlib import Path; sys.path.insert(0, 'tests'); from cmake_build import cmake_build; "
            "cmake_build(Path('tests').resolve(), Path(sys.argv[1]) / 'tests', targets=sys.argv[2:], steps=False)")
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-c", code, env["DLTENSOR_TEST_BUILD_ROOT"], *targets], cwd=copy,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=BUILD_TIMEOUT)
        ok, out = proc.returncode == 0, proc.stdout
    except subprocess.TimeoutExpired as e:
        ok, out = False, f"build timed out after {BUILD_TIMEOUT} s\n{e.output or ''}"
    return ok, time.monotonic() - start, out


def modules_hash(copy: Path, backends=BACKENDS) -> dict:
    """{backend: hash of its built test module}: tells whether a mutant changed the compiled code at all."""
    return {b: hashlib.sha256(next((copy / BUILD_DIR / "tests").glob(f"dltensor_test_{b}.*so")).read_bytes())
            .hexdigest() for b in backends}


def first_backend(entry) -> str:
    """The backend a mutant is tried on first: the one whose test killed it last time (a test id names its
    backend, `test_x[pybind11-exchange]`), else nanobind (its module builds in about half the time: no LTO)."""
    return "pybind11" if entry and "pybind11" in (entry.get("detail") or "") else "nanobind"


def run_tests(copy: Path, env, selections, backend=None, timeout=TEST_TIMEOUT) -> tuple:
    """Runs pytest on `selections` in the copy (on `backend` alone when given: DLTENSOR_BACKENDS), stopping
    at the first failure: (status, seconds, output); status None when it timed out."""
    env = {**env, "DLTENSOR_BACKENDS": backend} if backend else env
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", "--tb=short", *selections]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout)
        status, out = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as e:
        status, out = None, (e.output or b"").decode(errors="replace") if isinstance(e.output, bytes) else (e.output or "")
    return status, time.monotonic() - start, out


def try_mutant(copy: Path, env, baseline: dict, first: str, tests) -> tuple:
    """Builds and tests the planted mutant in two stages: `first`'s module alone and its tests on that
    backend; when they all pass (or none was collected), both modules and the tests on every backend, which
    is what CI runs. A kill in stage one stands: CI runs that test too. (outcome, detail, binary_changed,
    build seconds, test seconds)."""
    ok, build_s, out = build(copy, env, first)
    if not ok:
        return results.NO_COMPILE, first_error(out), None, build_s, 0.0
    changed = modules_hash(copy, [first]) != {first: baseline[first]}
    status, test_s, out = run_tests(copy, env, tests, first)
    outcome, detail = verdict(status, out)
    if outcome == results.KILLED:
        return outcome, detail, changed, build_s, test_s
    ok, more_s, out = build(copy, env)
    build_s += more_s
    if not ok:
        return results.NO_COMPILE, first_error(out), None, build_s, test_s
    changed = modules_hash(copy) != baseline
    status, more_s, out = run_tests(copy, env, tests)
    outcome, detail = verdict(status, out)
    return outcome, detail, changed, build_s, test_s + more_s


def verdict(status, output: str) -> tuple:
    """(outcome, detail) of a mutant's test run: killed (by which test), survived, or error (the selection
    itself is broken: pytest's usage error or nothing collected)."""
    if status is None:
        return results.KILLED, f"timed out after {TEST_TIMEOUT} s (a hang)"
    if status == 0:
        return results.SURVIVED, ""
    if status in (4, 5):
        return results.ERROR, f"pytest exit status {status}: {last_line(output)}"
    failed = re.search(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", output, re.M)
    if failed:
        return results.KILLED, failed.group(1)
    crashed = re.search(r'File "[^"]*?(tests/test_\w+\.py)", line \d+ in (\w+)', output)
    where = f" in {crashed.group(1)}::{crashed.group(2)}" if crashed else ""
    if status < 0:
        return results.KILLED, f"crashed (signal {-status}){where}"
    return results.KILLED, f"pytest exit status {status}{where}"


def last_line(text: str) -> str:
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else ""


def first_error(build_output: str) -> str:
    m = re.search(r"^.*error:.*$", build_output, re.M)
    return m.group(0).strip() if m else last_line(build_output)


def union(selections):
    return list(dict.fromkeys(s for sel in selections for s in sel))


@functools.lru_cache(maxsize=None)  # one compiler run per distinct header text, not per mutant
def code_of(text: str) -> str:
    """A header's code, for telling whether two versions compile the same: comments stripped (by the
    compiler itself, `-fpreprocessed -dD -E`, which executes no directive), blank lines and each line's
    outer spaces dropped, and each quoted #include reduced to the file's name, which names one header
    (tests/test_layout.py: names are unique), so that a move that rewrote only include paths changes nothing."""
    proc = subprocess.run([os.environ.get("CXX", "c++"), "-x", "c++", "-fpreprocessed", "-dD", "-E", "-P", "-"],
                          input=text, capture_output=True, text=True, check=True)
    lines = []
    for line in (l.strip() for l in proc.stdout.splitlines()):
        include = re.match(r'#\s*include\s+"([^"]+)"$', line)
        if line:
            lines.append(f'#include "{include.group(1).rsplit("/", 1)[-1]}"' if include else line)
    return "\n".join(lines)


def header_text(rev, name: str):
    """Header `name` (under HEADERS) at commit `rev`, or in the working tree when `rev` is None; None if absent."""
    if rev is None:
        path = ROOT / HEADERS / name
        return path.read_text() if path.is_file() else None
    proc = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{HEADERS}/{name}"], capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else None


def code_hash(text: str) -> str:
    return hashlib.sha256(code_of(text).encode()).hexdigest()[:16]


def header_changed(mutant, entry, rev) -> bool:
    """Whether the mutant's header compiles differently, in `rev` (the working tree when None), from the
    header its result was recorded for: its code's hash where the entry has one (`code`, which also
    stands for a run of an uncommitted tree), else its version at the entry's commit (where it may have
    had another path: `moved_from`)."""
    now = header_text(rev, mutant.file)
    if now is None:
        return True
    if entry.get("code"):
        return code_hash(now) != entry["code"]
    before = header_text(entry["commit"], entry.get("moved_from", mutant.file))
    return before is None or code_of(before) != code_of(now)


def stale_mutants(recorded, rev) -> list:
    """Names of the mutants whose recorded result does not stand for their header as it is now."""
    entries = recorded.get("mutants", {})
    out = []
    for m in MUTANTS:
        entry = entries.get(m.name)
        if m.equivalent:
            continue
        if not entry or entry.get("hash") != results.mutant_hash(m) or not entry.get("commit") or \
                entry.get("outcome") != results.KILLED or header_changed(m, entry, rev):
            out.append(m.name)
    return out


def carry_moved(recorded, rev="HEAD") -> list:
    """Carries the result of each mutant whose definition changed only in its header's path, where the
    header in the working tree compiles as its old path did at commit `rev` (code_of): the same code moved
    to another folder, which stands or goes stale (stale_mutants) as it would have where it was. The entry
    keeps the commit it was recorded at and notes the path there (`moved_from`). Returns the names."""
    carried = []
    for m in MUTANTS:
        entry = recorded.get("mutants", {}).get(m.name)
        if not entry or entry.get("hash") == results.mutant_hash(m) or not entry.get("commit") or m.equivalent:
            continue
        if results.mutant_hash(dataclasses.replace(m, file=entry["file"])) != entry["hash"]:
            continue  # more than the path changed
        before = header_text(rev, entry["file"])
        if before is None or code_of(before) != code_of(header_text(None, m.file)):
            continue
        entry.update(hash=results.mutant_hash(m), moved_from=entry.get("moved_from", entry["file"]), file=m.file)
        carried.append(m.name)
    return carried


def list_mutants() -> None:
    for m in MUTANTS:
        tag = " (equivalent)" if m.equivalent else ""
        print(f"{m.name}{tag} [{m.file}]: {m.description}")
        print(f"    tests: {' '.join(m.tests)}")
    print(f"{len(MUTANTS)} mutants, {sum(1 for m in MUTANTS if m.equivalent)} equivalent")


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutants")
    ap.add_argument("--stale", action="store_true",
                    help="run only the mutants not killed, or without a result for their header as it is now")
    ap.add_argument("--carry-moved", nargs="?", const="HEAD", metavar="REV",
                    help="carry the results of mutants whose header moved since REV (default HEAD) with the same "
                         "code, and exit")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--rev", help="copy this commit instead of the working tree")
    ap.add_argument("--workdir", type=Path, help="use and keep this directory as the copy")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = ap.parse_args(argv)
    if args.list:
        list_mutants()
        return 0
    if args.carry_moved:
        recorded = results.load()
        carried = carry_moved(recorded, args.carry_moved)
        results.save(recorded, MUTANTS)
        print(f"[mutation] carried {len(carried)} results of moved headers: {' '.join(carried) or 'none'}")
        return 0
    names = [m.name for m in MUTANTS]
    if args.stale:
        args.only = stale_mutants(results.load(), args.rev)
        print(f"[mutation] stale: {' '.join(args.only) or 'none'}", flush=True)
        if not args.only:
            return 0
    unknown = sorted(set(args.only or ()) - set(names))
    if unknown:
        print(f"unknown mutants: {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    to_run = [m for m in chosen if not m.equivalent]

    copy = (args.workdir or Path(tempfile.mkdtemp(prefix="dltensor-mutation-"))).resolve()
    copy.mkdir(parents=True, exist_ok=True)
    snapshot(copy, args.rev)
    commit = git("rev-parse", args.rev or "HEAD").strip()
    dirty = [] if args.rev else [l[3:] for l in git("status", "--porcelain").splitlines()]
    print(f"[mutation] copy of {'commit ' + commit if args.rev else 'the working tree'} in {copy}", flush=True)
    originals = {f: (copy / HEADERS / f).read_text() for f in sorted({m.file for m in MUTANTS})}
    stale = [m.name for m in MUTANTS if originals[m.file].count(m.old) != 1]
    if stale:
        print(f"these mutants' `old` text does not occur exactly once in the copy's headers: {', '.join(stale)}",
              file=sys.stderr)
        return 2

    env = {k: v for k, v in os.environ.items() if k != "DLTENSOR_SANITIZE"}
    env["DLTENSOR_TEST_BUILD_ROOT"] = str(copy / BUILD_DIR)
    started, clock = datetime.datetime.now().isoformat(timespec="seconds"), time.monotonic()
    recorded = results.load()
    try:
        ok, seconds, out = build(copy, env)
        if not ok:
            print(f"[mutation] the unmutated copy does not build:\n{out[-4000:]}", file=sys.stderr)
            return 2
        baseline = modules_hash(copy)
        selections = union(m.tests for m in to_run)
        status, test_s, out = run_tests(copy, env, selections, timeout=BASELINE_TIMEOUT)
        print(f"[mutation] baseline: built in {seconds:.0f} s, {last_line(out)} ({test_s:.0f} s)", flush=True)
        if status is None:
            print(f"[mutation] the unmutated copy's tests did not finish in {BASELINE_TIMEOUT} s", file=sys.stderr)
            return 2
        if status != 0:
            print(f"[mutation] the unmutated copy fails the selected tests:\n{out[-6000:]}", file=sys.stderr)
            return 2

        entries = recorded.setdefault("mutants", {})  # results.save() keeps this dict
        for i, m in enumerate(to_run, 1):
            header = copy / HEADERS / m.file
            header.write_text(originals[m.file].replace(m.old, m.new, 1))
            try:
                outcome, detail, changed, build_s, test_s = try_mutant(copy, env, baseline, first_backend(
                    entries.get(m.name)), m.tests)
            finally:
                header.write_text(originals[m.file])
            entries[m.name] = {"hash": results.mutant_hash(m), "file": m.file, "outcome": outcome, "detail": detail,
                               "binary_changed": changed, "build_s": round(build_s), "test_s": round(test_s),
                               "commit": commit, "code": code_hash(originals[m.file])}
            note = "" if changed is not False else " [the compiled modules did not change]"
            print(f"[{i:2}/{len(to_run)}] {m.name} ({m.file}): {outcome}{': ' + detail if detail else ''} "
                  f"(build {build_s:.0f} s, tests {test_s:.0f} s){note}", flush=True)
            results.save(recorded, MUTANTS)  # progress survives an interrupted run
        for m in chosen:
            if m.equivalent:
                entries[m.name] = {"hash": results.mutant_hash(m), "file": m.file, "outcome": results.EQUIVALENT,
                                   "detail": m.equivalent}
    finally:
        if not (args.keep or args.workdir):
            shutil.rmtree(copy, ignore_errors=True)

    run = {"started": started, "seconds": round(time.monotonic() - clock), "mutants": len(chosen),
           "source": f"commit {commit}" if args.rev else "working tree"}
    recorded.update(commit=commit, dirty=dirty, last_run=run)
    if not args.only:
        recorded["full_run"] = run
    summary = results.save(recorded, MUTANTS)
    counted = summary["mutants"] - summary["equivalent"]
    print(f"[mutation] score {summary['killed']}/{counted} = {summary['score']:.1%} ({summary['equivalent']} "
          f"equivalent, not counted); run took {run['seconds'] / 60:.0f} min")
    for outcome in (results.SURVIVED, results.NO_COMPILE, results.ERROR, "missing"):
        if summary["names"][outcome]:
            print(f"[mutation] {outcome}: {', '.join(summary['names'][outcome])}")
    return 1 if summary[results.NO_COMPILE] or summary[results.ERROR] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
