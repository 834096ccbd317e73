"""The mutation script (tests/mutation/run.py, run by hand: it rebuilds the test modules once per mutant),
checked without building anything: every mutant applies exactly once to the headers as they are and names
tests that exist, and tests/mutation/results.json records a run of the current list scoring at least 90%."""
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

from mutation import results, run
from mutation.mutants import MUTANTS

ROOT = Path(__file__).resolve().parent.parent
MIN_MUTANTS = 30
MIN_SCORE = 0.9


def test_there_are_enough_mutants_with_unique_names():
    names = [m.name for m in MUTANTS]
    assert len(names) >= MIN_MUTANTS
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)


def test_every_mutant_applies_exactly_once_to_the_headers():
    stale = [m.name for m in MUTANTS if (ROOT / run.HEADERS / m.file).read_text().count(m.old) != 1]
    assert not stale, f"update the `old` text of {stale} in tests/mutation/mutants.py"
    assert all(m.new != m.old and m.description for m in MUTANTS)


def test_every_mutant_names_tests_that_exist():
    missing = []
    for m in MUTANTS:
        assert m.tests, m.name
        for selection in m.tests:
            path, _, function = selection.partition("::")
            source = ROOT / path
            if not source.is_file() or (function and not re.search(rf"^def {re.escape(function)}\(",
                                                                   source.read_text(), re.M)):
                missing.append(f"{m.name}: {selection}")
    assert not missing, missing


def test_results_record_the_current_mutants_and_the_score():
    recorded = results.load()
    assert recorded, "no tests/mutation/results.json: run python tests/mutation/run.py"
    summary = results.summarize(recorded, MUTANTS)
    names = summary["names"]
    assert not names["missing"], f"mutants without a result for their current definition: {names['missing']} " \
                                 "(python tests/mutation/run.py --only NAME...)"
    assert recorded["mutants_hash"] == results.list_hash(MUTANTS)
    assert not names[results.NO_COMPILE] and not names[results.ERROR], "invalid mutants: fix them"
    assert recorded["summary"] == {k: v for k, v in summary.items() if k != "names"}
    assert summary["score"] >= MIN_SCORE, f"score {summary['score']:.1%}; survivors: {names[results.SURVIVED]}"


def test_verdicts_name_what_killed_a_mutant():
    assert run.verdict(0, "3 passed in 1.0s") == (results.SURVIVED, "")
    failed = "...F\nFAILED tests/test_a.py::test_b[nanobind-read only] - assert 1 == 2\n1 failed, 3 passed\n"
    assert run.verdict(1, failed) == (results.KILLED, "tests/test_a.py::test_b[nanobind-read only]")
    crash = 'Fatal Python error: Segmentation fault\n\n  File "/tmp/x/tests/test_a.py", line 3 in test_b\n'
    assert run.verdict(-11, crash) == (results.KILLED, "crashed (signal 11) in tests/test_a.py::test_b")
    assert run.verdict(None, "")[0] == results.KILLED  # a hang
    assert run.verdict(5, "no tests ran in 0.1s")[0] == results.ERROR  # a selection that selects nothing


def test_a_move_that_rewrote_only_include_paths_is_no_change_to_the_code():
    same = run.code_of('#include "config.h"  // first\nint f() { return 1; }\n')
    assert run.code_of('// moved\n#include "../tensor/config.h"\n\n  int f() { return 1; }  // why\n') == same
    assert run.code_of('#include "../tensor/config.h"\nint f() { return 2; }\n') != same
    assert run.code_of('#include "dtypes.h"\nint f() { return 1; }\n') != same
    assert run.code_of('const char *s = "// kept";') != run.code_of('const char *s = "";')


def test_a_result_is_carried_over_a_move_only_where_the_code_is_the_same(monkeypatch):
    m = MUTANTS[0]
    old_file = "elsewhere/" + m.file.rsplit("/", 1)[-1]
    entry = {"hash": results.mutant_hash(dataclasses.replace(m, file=old_file)), "file": old_file,
             "outcome": results.KILLED, "commit": "abc"}
    texts = {("HEAD", old_file): "int a;\n", (None, m.file): "// moved\nint a;\n"}
    monkeypatch.setattr(run, "header_text", lambda rev, name: texts.get((rev, name)))
    recorded = {"mutants": {m.name: dict(entry)}}
    assert run.carry_moved(recorded) == [m.name]
    assert recorded["mutants"][m.name] == {**entry, "hash": results.mutant_hash(m), "file": m.file,
                                           "moved_from": old_file}
    texts[(None, m.file)] = "int b;\n"  # the code changed too: it must run again
    recorded = {"mutants": {m.name: dict(entry)}}
    assert run.carry_moved(recorded) == [] and recorded["mutants"][m.name] == entry
    moved_more = {**entry, "hash": results.mutant_hash(dataclasses.replace(m, file=old_file, new=m.new + " "))}
    texts[(None, m.file)] = "int a;\n"  # the definition changed beyond its path: it must run again
    recorded = {"mutants": {m.name: dict(moved_more)}}
    assert run.carry_moved(recorded) == []


def test_a_result_goes_stale_when_its_headers_code_changes_whatever_commit_it_names():
    m = MUTANTS[0]
    header = run.header_text(None, m.file)
    entry = {"commit": "0" * 40, "code": run.code_hash(header)}  # a commit that does not exist
    assert not run.header_changed(m, entry, None)
    entry["code"] = run.code_hash(header + "\nint planted;\n")
    assert run.header_changed(m, entry, None)


def test_list_option_names_every_mutant():
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "mutation" / "run.py"), "--list"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert all(m.name in proc.stdout for m in MUTANTS)
