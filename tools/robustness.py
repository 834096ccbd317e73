"""Generates docs/robustness.md's robustness table from the test suite itself: every figure comes from the tests
pytest collects (their parametrizations, counted) and from the test modules' own constants (producers,
dtypes, bounds), never from typed numbers. The words say what a group of tests checks; each group names
its test functions, and the generator fails when one of them no longer exists.

    python tools/robustness.py           prints the table
    python tools/robustness.py --write   rewrites the block between the markers in docs/robustness.md
    python tools/robustness.py --check   exits 1 when docs/robustness.md's block is stale

Collection only (`pytest --collect-only`, nothing is built or run); it needs the test extras (a test
module skipped at collection would change the figures: exit status 3 then).
"""
import contextlib
import io
import math
import os
import re
import sys
from pathlib import Path

import pytest

from generated_blocks import read_block, write_block

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
PAGE = ROOT / "docs" / "robustness.md"
BLOCK = "robustness"  # the generated block of PAGE (tools/generated_blocks.py)
INCOMPLETE = 3  # exit status when the environment cannot collect the whole suite


class Incomplete(RuntimeError):
    """Part of the suite was skipped at collection (a framework is missing)."""


class _Recorder:
    def __init__(self):
        self.items, self.skipped, self.errors = [], [], []

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(f"{report.nodeid}: {report.longrepr}")
        elif report.skipped:
            self.skipped.append(f"{report.nodeid}: {report.longrepr}")

    def pytest_collection_modifyitems(self, items):
        self.items = list(items)


class Collected:
    """One collected test: its file (relative to the root), function, and parameters."""

    def __init__(self, item):
        self.file = Path(item.path).resolve().relative_to(ROOT).as_posix()
        self.function = item.originalname
        self.params = dict(item.callspec.params) if hasattr(item, "callspec") else {}
        self.item = item


class Suite:
    """The collected suite: counts and the test modules' constants."""

    def __init__(self, items):
        self.all = [Collected(i) for i in items]
        # PyTorch tests run once more through the fast path with the key-set read off (conftest.py's
        # `exchange-queries` path); the matrices below count the other runs, key_set_off() counts these.
        self.key_set_off = [t for t in self.all if t.params.get("m") == "exchange-queries"]
        self.tests = [t for t in self.all if t.params.get("m") != "exchange-queries"]
        self.modules = {t.file: t.item.module for t in self.all}

    def module(self, file):
        return self.modules[file]

    def select(self, file, functions=None):
        """The tests of `file` (of the named functions only, each of which must exist)."""
        tests = [t for t in self.tests if t.file == file]
        if functions is None:
            assert tests, f"no tests collected from {file}"
            return tests
        present = {t.function for t in tests}
        missing = [f for f in functions if f not in present]
        assert not missing, f"{file}: {missing} not collected (update tools/robustness.py)"
        return [t for t in tests if t.function in functions]

    def functions(self, file):
        return list(dict.fromkeys(t.function for t in self.select(file)))

    def count(self, file, functions=None):
        return len(self.select(file, functions))

    def axes(self, file, function):
        """{parameter: number of distinct values} of one test function, checked to be a full matrix."""
        tests = self.select(file, [function])
        axes = {}
        for name in tests[0].params:
            axes[name] = len({id(t.params[name]) for t in tests})
        assert math.prod(axes.values()) == len(tests), f"{file}::{function} is not a full matrix: {axes}"
        return axes

    def matrix(self, file, function, labels):
        """'a x b x c = n' for one test function: its axes, in the order and with the names of `labels`
        ({parameter: plural noun}), every axis named."""
        axes = self.axes(file, function)
        assert set(axes) == set(labels), f"{file}::{function} has axes {sorted(axes)}, labels {sorted(labels)}"
        parts = [f"{axes[p]} {noun}" for p, noun in labels.items()]
        return " x ".join(parts) + f" = {math.prod(axes.values()):,}"

    def parametrize_ids(self, file, function, argname):
        """The ids given to `@pytest.mark.parametrize(argname, ..., ids=[...])`."""
        item = self.select(file, [function])[0].item
        for mark in item.iter_markers("parametrize"):
            if mark.args[0] == argname:
                return list(mark.kwargs["ids"])
        raise AssertionError(f"{file}::{function}: no parametrize ids for {argname}")


def collect() -> Suite:
    recorder = _Recorder()
    for variable in ("DLTENSOR_BACKENDS", "DLTENSOR_PATHS"):  # the quick subset's: the table is the whole suite's
        os.environ.pop(variable, None)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = pytest.main(["--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", "tests"], plugins=[recorder])
    finally:
        os.chdir(cwd)
    if recorder.errors or code != pytest.ExitCode.OK:
        raise RuntimeError("collection failed:\n" + "\n".join(recorder.errors) + out.getvalue()[-4000:])
    if recorder.skipped:
        raise Incomplete("modules skipped at collection (install the test extras):\n" + "\n".join(recorder.skipped))
    return Suite(recorder.items)


# ---- the rows ---------------------------------------------------------------------------------------------

BACKEND = {"backend_module": "backends"}
M = {"m": "import paths", "backend_module": "backends"}  # the `m` fixture: both paths on both backends


def code(names):
    return ", ".join(f"`{n}`" for n in names)


def words(function):
    return function.removeprefix("test_").replace("_", " ")


def kib(n):
    return f"{n / 1024:g} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:g} MiB"


def producers(s):
    f = "tests/test_producers.py"
    mod = s.module(f)
    kinds = {  # the test functions that take a producer `case`, and the parameter kind each exercises
        "test_read_only_parameter_reads_the_logical_values": "typed read-only",
        "test_read_only_parameter_without_conversion_binds_only_direct_sources": "read-only `noconvert`",
        "test_writable_parameter_writes_reach_the_caller_or_the_call_fails": "writable",
    }
    taking_case = [fn for fn in s.functions(f) if "case" in s.select(f, [fn])[0].params]
    assert sorted(taking_case) == sorted(kinds), f"producer-matrix functions changed: {taking_case}"
    per_kind = [s.axes(f, fn) for fn in kinds]
    assert all(a == per_kind[0] for a in per_kind)
    axes = per_kind[0]
    producers = [*mod.PRODUCERS, *mod.MODULE_PRODUCERS]
    assert axes["case"] == len(producers)
    total = s.count(f, list(kinds))
    matrix = (f"{axes['case']} producers x {len(kinds)} parameter kinds x {axes['m']} import paths x "
              f"{axes['backend_module']} backends = {total:,}")
    what = (f"Producers as users bring them ({code(producers)}), each through every parameter kind "
            f"({', '.join(kinds.values())})")
    hold = ("read-only: the logical values (negative and conjugate views materialized); `noconvert`: binds "
            "only what needs no conversion or copy, else `TypeError`; writable: the write reaches the "
            "caller, or `TypeError` and nothing written")
    return f"producers (`{f}`)", what, hold, matrix


def returns(s):
    f = "tests/test_producers.py"
    fn = "test_return_has_the_framework_dtype_and_values"
    mod = s.module(f)
    layout = {"C": "C order", "F": "Fortran order", "neg": "negative strides", "zero": "zero strides"}
    assert set(mod.LAYOUTS) <= set(layout), f"unnamed layouts: {set(mod.LAYOUTS) - set(layout)}"
    # The in-process matrix leaves out what PyTorch would abort the process on (negative strides): those
    # cases run in a subprocess (test_lifecycle.py), one per backend covering every dtype.
    tests = s.select(f, [fn])
    cases = {(t.params["fw"], t.params["dtype"], t.params["layout"]) for t in tests}
    full = {(w, d, l) for w in mod.FRAMEWORKS for d in mod.DTYPES for l in mod.LAYOUTS}
    assert cases == set(mod.RETURNS) and cases <= full, "the returns matrix changed shape"
    outside = sorted({(w, l) for (w, d, l) in full - cases})
    assert all(w == "pytorch" and l == "neg" for w, l in outside), outside
    backends = len({t.params["backend_module"] for t in tests})
    what = (f"Returns of every dtype ({code(mod.DTYPES)}) in every layout "
            f"({', '.join(layout[l] for l in mod.LAYOUTS)}) to every framework ({code(mod.FRAMEWORKS)}); "
            f"PyTorch with negative strides in a subprocess (`tests/test_lifecycle.py`)")
    hold = "the framework's own tensor type (a DLPack object for `none`), with the dtype and values C++ wrote"
    matrix = (f"{len(mod.DTYPES)} dtypes x {len(mod.LAYOUTS)} layouts x {len(mod.FRAMEWORKS)} frameworks "
              f"- {len(full - cases)} = {len(cases)} x {backends} backends = {len(tests):,}")
    return f"returns (`{f}`)", what, hold, matrix


def return_matrix(s):
    f = "tests/test_return_matrix.py"
    fn = "test_constructed_return_holds_its_values_owner_and_flags"
    mod = s.module(f)
    from returns_matrix import matrix_cases
    cases = {len(matrix_cases(d)) for d in ("float8_e4m3fn", "float32")}
    assert len(cases) == 1, "every dtype is tried with the same number of byte offsets"
    per_test = cases.pop()
    paddle = (TESTS / "paddle_cases.py").read_text()
    assert "def test_constructed_return_matrix_holds_its_values_and_releases_its_owner_once" in paddle
    what = (f"A 2x3 tensor constructed over C++ memory to every framework ({code(mod.FRAMEWORKS)}; PaddlePaddle's "
            f"rows in `tests/paddle_cases.py`) x dtype (`float8_e4m3fn`, `bfloat16`, `float16`, `float32`, "
            f"`complex64`) x layout (C, F, strided) x byte offset (none, one element: misaligned, 64 bytes: "
            f"aligned) x returned once or as one tensor twice")
    hold = ("the values, dtype and strides C++ wrote; the owner released exactly once, after the last "
            "reference, with the GIL; `py::memview` refuses dtypes the buffer protocol cannot name")
    return (f"return matrix (`{f}`)", what, hold,
            f"{s.matrix(f, fn, {'fw': 'frameworks', 'dtype': 'dtypes', 'layout': 'layouts', 'backend_module': 'backends'})}"
            f" tests, {per_test} cases each")


def producer_rules(s):
    f = "tests/test_producers.py"
    bf16 = "test_bfloat16_parameters_read_every_producer"
    ids = s.parametrize_ids(f, bf16, "make")
    rules = ["test_writes_bump_the_autograd_version_counter", "test_writes_through_a_view_bump_the_base_version",
             "test_leaf_requiring_grad_is_writable_under_no_grad_only",
             "test_inference_tensor_is_writable_inside_inference_mode_only"]
    subclasses = ["test_subclass_negative_view_reads_the_sign_and_refuses_writes",
                  "test_subclass_overriding_queries_cannot_hide_a_negative_view",
                  "test_subclass_conjugate_view_reads_the_sign"]
    matrices = ["test_read_only_parameter_reads_the_logical_values",
                "test_read_only_parameter_without_conversion_binds_only_direct_sources",
                "test_writable_parameter_writes_reach_the_caller_or_the_call_fails",
                "test_return_has_the_framework_dtype_and_values"]
    claimed = rules + subclasses + [bf16]
    s.select(f, claimed + matrices)
    rest = [fn for fn in s.functions(f) if fn not in claimed + matrices]
    what = (f"PyTorch's in-place rules; `torch.Tensor` subclasses that are negative or conjugate views; "
            f"bfloat16 from {len(ids)} producers ({', '.join(ids)}); the file's other tests")
    hold = ("writes bump the autograd version counter (of a view's base too); a leaf requiring grad is "
            "writable under `no_grad` only, an inference tensor inside `inference_mode` only; subclass views "
            "read with their sign (even when they override the queries) and refuse writes; bfloat16 read "
            "from every producer; " + "; ".join(words(fn) for fn in rest))
    return f"PyTorch rules, bfloat16, JAX (`{f}`)", what, hold, f"{s.count(f, claimed + rest):,}"


def lifecycles(s):
    f = "tests/test_lifecycle.py"
    mod = s.module(f)
    held = "test_held_past_deletion_then_dropped_without_the_gil"
    others = {
        "test_tensors_held_in_statics_at_exit": f"all {len(mod.HELD)} held in C++ statics to interpreter exit",
        "test_jax_array_deleted_while_held": "a JAX array `delete()`d while C++ holds it",
        "test_multi_device_jax_arrays_are_refused_on_every_path": "sharded and replicated JAX arrays",
        "test_negative_stride_pytorch_returns_do_not_abort": "negative-stride PyTorch returns of every dtype",
        "test_first_calls_come_from_many_threads_at_once": "a fresh process's first calls (7 kinds of argument, 4 "
                                                           "returns) from 8 threads released at once",
    }
    assert sorted(s.functions(f)) == sorted([held, *others]), f"{f} changed: {s.functions(f)}"
    matrix = s.matrix(f, held, {"producer": "producers", "backend": "backends", "path": "import paths"})
    rest = sum(s.count(f, [fn]) for fn in others)
    what = (f"Each in a subprocess: tensors from {len(mod.HELD)} producers ({code(mod.HELD)}) held by C++ past "
            f"their owner's deletion, then dropped without the GIL; " + "; ".join(others.values()))
    hold = ("the process exits cleanly with the right values; held tensors read their values after the "
            "producer's deletion; multi-device JAX arrays refused on every path; first calls from threads "
            "neither deadlock nor answer wrong")
    return (f"lifecycles (`{f}`)", what, hold,
            f"{matrix}, + {rest} = {s.count(f):,} subprocesses")


def sub_interpreters(s):
    f = "tests/test_subinterpreters.py"
    mod = s.module(f)
    cases = {
        "test_isolated_sub_interpreter_refuses_to_import_a_module_without_support":
            "an isolated sub-interpreter imports neither backend's default module",
        "test_per_interpreter_gil_module_works_in_an_isolated_sub_interpreter":
            "a pybind11 `per_interpreter_gil()` module's arguments, writes, returns, `adopt()` and kept tensors in "
            "isolated sub-interpreters, each with its own `dltensor.Tensor` type",
        "test_concurrent_isolated_sub_interpreter_works_and_leaves_the_main_type_alone":
            "the same concurrently with the main interpreter, 2,000 calls each",
        "test_legacy_sub_interpreter_works_and_leaves_no_state_behind": "legacy sub-interpreters on both backends",
        "test_sub_interpreter_state_lives_and_dies_with_its_interpreter": "the state's lifetime",
        "test_thread_that_ran_a_destroyed_sub_interpreter_uses_the_next_ones_own_state":
            "one thread running sub-interpreters destroyed elsewhere",
        "test_tensor_kept_from_a_dead_sub_interpreter_is_leaked_not_released_by_main":
            "tensors kept from a destroyed sub-interpreter dropped by the main one",
        "test_main_interpreter_tensor_dropped_in_a_sub_interpreter_is_leaked_not_released_there":
            "main-interpreter tensors dropped in sub-interpreters",
        "test_first_call_in_a_sub_interpreter_may_be_a_return": "a sub-interpreter whose first call is a return",
    }
    assert sorted(s.functions(f)) == sorted(cases), f"{f} changed: {s.functions(f)}"
    what = (f"Each in a subprocess, on Python {' and '.join(mod.VERSIONS)} (pyenv): " + "; ".join(cases.values()))
    hold = ("right values in every interpreter; no Python object shared between interpreters; a sub-interpreter's "
            "state counted while it lives and freed with it; a tensor dropped in another interpreter than its own "
            "is leaked (its owner alive), never released there; no crash")
    return f"sub-interpreters (`{f}`)", what, hold, f"{s.count(f):,} subprocesses"


def properties(s):
    f = "tests/test_properties.py"
    mod = s.module(f)
    from hypothesis.internal.detection import is_hypothesis_test
    tests = s.select(f)
    props = [fn for fn in s.functions(f) if is_hypothesis_test(s.select(f, [fn])[0].item.obj)]
    assert len(props) == len(s.functions(f)), "every test in test_properties.py is a property"
    examples = {getattr(t.item.obj, "_hypothesis_internal_use_settings", mod.PROPERTY).max_examples for t in tests}
    assert examples == {mod.EXAMPLES}, examples
    axes = {tuple(sorted(s.axes(f, fn).items())) for fn in props}
    assert len(axes) == 1, "every property runs on the same axes"
    ax = dict(axes.pop())
    steps = sorted(set(mod.STEPS))
    what = (f"Hypothesis: random shapes (up to {mod.MAX_DIMS} dimensions, extents 0 to {mod.MAX_EXTENT}, "
            f"at most {mod.MAX_ELEMENTS:,} elements), {len(mod.DTYPES)} NumPy and {len(mod.TORCH_DTYPES)} "
            f"PyTorch dtypes, views with slice steps {', '.join(map(str, steps))}, transposes and broadcasts "
            f"from NumPy and PyTorch; properties: " + "; ".join(words(fn) for fn in props))
    hold = "C++ reads every element exactly as the framework does; writes land in place; returns hold the C++ pattern"
    matrix = (f"{len(props)} properties x {ax['m']} import paths x {ax['backend_module']} backends = {len(tests)} "
              f"tests, up to {mod.EXAMPLES} examples each: up to {len(tests) * mod.EXAMPLES:,} examples")
    return "properties (`tests/test_properties.py`)", what, hold, matrix


def bad_input(s):
    f = "tests/test_bad_input.py"
    mod = s.module(f)
    per = {fn: s.axes(f, fn) for fn in s.functions(f)}
    malformed = "test_malformed_capsule_is_rejected_and_not_consumed"
    assert per[malformed]["case"] == len(mod.MALFORMED)
    n = {fn: math.prod(v for k, v in a.items() if k not in M) for fn, a in per.items()}
    runs = math.prod(per[malformed][k] for k in M)
    assert all(math.prod(a[k] for k in M) == runs for a in per.values()), "every test runs on both paths and backends"
    listed = ["test_non_tensors_are_rejected", "test_dlpack_that_raises_is_rejected",
              "test_dlpack_returning_garbage_is_rejected", malformed]
    s.select(f, listed)
    rest = [fn for fn in s.functions(f) if fn not in listed]
    what = (f"{len(mod.MALFORMED)} malformed capsule kinds ({', '.join(mod.MALFORMED)}), each as a raw "
            f"capsule and from `__dlpack__`; {n['test_dlpack_that_raises_is_rejected']} raising and "
            f"{n['test_dlpack_returning_garbage_is_rejected']} garbage-returning `__dlpack__`; "
            f"{n['test_non_tensors_are_rejected']} non-tensors; {sum(n[fn] for fn in rest)} edge cases")
    hold = ("each rejection a `TypeError`; a rejected capsule is never consumed, and its producer's deleter "
            "runs exactly once; " + "; ".join(words(fn) for fn in rest))
    cases = sum(n.values())
    return (f"hostile inputs (`{f}`)", what, hold,
            f"{cases} cases x {per[malformed]['m']} import paths x {per[malformed]['backend_module']} backends "
            f"= {s.count(f):,}")


def threads(s):
    f = "tests/test_threads.py"
    mod = s.module(f)
    what = (f"{mod.THREADS} threads x {mod.ROUNDS} rounds; " + "; ".join(words(fn) for fn in s.functions(f)))
    hold = "no crash; every owner and deleter runs exactly once, never without the GIL"
    return f"threads (`{f}`)", what, hold, f"{s.count(f):,}"


def leaks(s):
    f = "tests/test_leaks.py"
    mod = s.module(f)
    assert set(mod.SLOW_PATHS) <= set(mod.PATHS) and set(mod.COUNTED_DELETERS) <= set(mod.PATHS)
    returns = [p for p in mod.PATHS if p.startswith("return")]
    what = (f"{mod.CALLS:,} repetitions of each call ({mod.SLOW_CALLS:,} for {code(mod.SLOW_PATHS)}) after "
            f"{mod.WARMUP:,} warm-up calls, for {len(mod.PATHS)} calls that import or export: {code(mod.PATHS)}")
    hold = (f"tracemalloc: less than {kib(mod.TRACED_LIMIT)} retained over each call's repetitions; resident "
            f"set growth less than {kib(mod.RSS_LIMIT)} (not under the sanitizers); every owner of the "
            f"{len(returns)} returns and every deleter of {code(mod.COUNTED_DELETERS)} released once per call")
    return f"leaks (`{f}`)", what, hold, s.matrix(f, "test_100k_calls_do_not_leak", {"path": "calls", **M})


def torch_specials(s):
    f = "tests/test_torch.py"
    what = "PyTorch beyond DLPack: special tensors the C API does not flag, streams, tensors PyTorch allocates"
    hold = "; ".join(words(fn) for fn in s.functions(f))
    return f"PyTorch specials (`{f}`)", what, hold, f"{s.count(f):,}"


def key_set(s):
    f = "tests/test_torch_key_set.py"
    what = ("PyTorch's negative/conjugate bits read from the tensor's calibrated key set (`frameworks/pytorch_key_set.h`): "
            f"the read itself ({s.count(f):,} tests: calibration, agreement with `is_neg()` / `is_conj()` on "
            f"{len(s.module(f).TENSORS)} kinds of tensor, in-place flips, the guard, the switch and "
            "`DLTENSOR_TORCH_KEY_SET`, calibration racing on 8 threads), and every other PyTorch test run again "
            "through the fast path with the read off")
    hold = "the same answers and results with the read on and off; reads that fail the guard ask the queries"
    return "PyTorch key set (`tests/test_torch_key_set.py`, `exchange-queries` path)", what, hold, \
        f"{s.count(f):,} + {len(s.key_set_off):,}"


def sanitizers(s):
    script = (ROOT / "tools" / "sanitize.sh").read_text()
    for option in ("halt_on_error=1", "abort_on_error=1"):
        assert option in script, f"tools/sanitize.sh no longer sets {option}"
    ci = [l.split() for l in (ROOT / ".ci" / "run").read_text().splitlines() if "tools/sanitize.sh" in l
          and not l.lstrip().startswith("#")]
    whole = {"-q", "tests"} | {a for l in ci for a in l if a.startswith("--durations=")}  # only reporting
    assert ci and all(set(l[l.index("tools/sanitize.sh") + 1:]) <= whole for l in ci), \
        ".ci/run must run the whole suite under tools/sanitize.sh"
    conftest = sys.modules["conftest"]
    backends = len(conftest.ALL_BACKENDS)
    left_out = set(conftest.UNSANITIZED_FILES)
    sanitized = [t for t in s.all if Path(t.file).name not in left_out]
    what = (f"AddressSanitizer + UBSan (`bash tools/sanitize.sh`, also in CI: `.ci/run`): every test that "
            f"runs dltensor's C++, {backends} backends (left out: {code(sorted(left_out))}, which load no "
            f"test module)")
    hold = "no sanitizer report (any report aborts the run)"
    return "sanitizers (`tools/sanitize.sh`)", what, hold, f"{len(sanitized):,}"


def free_threaded(s):
    f = "tests/test_free_threaded.py"
    mod = s.module(f)
    what = (f"CPython 3.13t without the GIL (`tests/free_threaded`, both backends): declared modules keep the GIL "
            f"off, undeclared ones turn it on; {mod.THREADS} threads x {mod.SECONDS} s through every route at once "
            f"(`tests/free_threaded/stress.py`)")
    hold = "the GIL stays off; every value right; every owner released once; one raw capsule raced binds once"
    return f"free-threaded (`{f}`)", what, hold, f"{s.count(f):,}"


def thread_sanitizer(s):
    record_file = TESTS / "free_threaded" / "thread_sanitizer.json"
    what = ("ThreadSanitizer (`python tools/thread_sanitizer.py`, by hand, not in CI): the free-threaded stress run "
            "with the module, dltensor's core and the binding library built with `-fsanitize=thread`, on a "
            "TSAN-instrumented 3.13t (`bash tools/build_free_threaded_python.sh --tsan`)")
    hold = "no report whose stacks run through dltensor's code; suppressions for CPython and NumPy internals only"
    if not record_file.is_file():
        return "ThreadSanitizer (`tools/thread_sanitizer.py`)", what, hold, "not recorded yet"
    import json
    r = json.loads(record_file.read_text())
    runs = ", ".join(f"{b['backend']}: {b['rounds']:,} rounds, reports: "
                     + (", ".join(f"{n} in {who}'s code" for who, n in sorted(b["reports"].items())) or "none")
                     for b in r["backends"])
    result = "passed" if r["passed"] else "FAILED"
    return ("ThreadSanitizer (`tools/thread_sanitizer.py`)", what, hold,
            f"{result} on {r['date']} (commit `{r['commit']}`{', with changes' if r['dirty'] else ''}; Python "
            f"{r['python']}, NumPy {r['numpy']}, {r['threads']} threads x {r['seconds']:g} s; {runs}; "
            f"{len(r['suppressions'])} suppressions) (not a pytest run)")


def recorded_commits(recorded, mutants) -> str:
    """Which commits the mutants' results were recorded at ("commit `a` (40 mutants), `b` (20)"): a rerun
    with --stale reruns only the mutants whose header changed since. When every result comes from the last
    full run, that run: its commit, date and length."""
    from collections import Counter
    counts = Counter(recorded["mutants"][m.name].get("commit", "?")[:10] for m in mutants if not m.equivalent)
    full = recorded.get("full_run") or {}
    if len(counts) == 1 and full.get("source", "").startswith(f"commit {next(iter(counts))}"):
        return (f"commit `{next(iter(counts))}` in one full run ({full['started'][:10]}, "
                f"{full['seconds'] / 60:.0f} min for {full['mutants']} mutants)")
    parts = [f"`{c}` ({n} mutants)" for c, n in counts.most_common()]
    return ("commit " if len(parts) == 1 else "commits ") + ", ".join(parts)


def mutation(s):
    """The last recorded run of tests/mutation/run.py (tests/mutation/results.json), which must match the
    current mutant list."""
    from mutation import results
    from mutation.mutants import MUTANTS
    recorded = results.load()
    summary = results.summarize(recorded, MUTANTS)
    stale = summary["names"]["missing"]
    assert recorded and not stale and recorded.get("mutants_hash") == results.list_hash(MUTANTS), \
        f"tests/mutation/results.json does not match tests/mutation/mutants.py (no result: {stale}): run " \
        f"python tests/mutation/run.py [--only NAME...]"
    counted = summary["mutants"] - summary["equivalent"]
    headers = sorted({m.file for m in MUTANTS})
    what = (f"{summary['mutants']} hand-written mutants of {len(headers)} headers (a flipped comparison, a dropped "
            f"check, a swapped flag, a wrong constant, a skipped reference count or GIL, a wrong policy branch), "
            f"each planted alone in a copy of the checkout, a test module rebuilt and the mutant's tests run on its "
            f"backend, then, when they pass, on both backends and both import paths; by hand (`python tests/mutation/run.py`), not in CI")
    survivors = summary["names"][results.SURVIVED]
    hold = (f"a test fails for every mutant, except equivalent ones (reason in `tests/mutation/mutants.py`): "
            f"{summary['killed']} of {counted} killed, {summary['equivalent']} equivalent (not counted), score "
            f"{summary['score']:.1%}; recorded at {recorded_commits(recorded, MUTANTS)}"
            + (f"; survived: {code(survivors)}" if survivors else ""))
    return "mutation (`tests/mutation/`)", what, hold, f"{summary['mutants']} mutants (not a pytest run)"


ROWS = [producers, returns, return_matrix, producer_rules, lifecycles, sub_interpreters, properties, bad_input, threads,
        free_threaded, leaks, torch_specials, key_set, sanitizers, thread_sanitizer, mutation]


def table(s: Suite) -> str:
    lines = [
        f"Generated from the suite by `python tools/robustness.py --write` (collection only: "
        f"{len(s.all):,} tests in one `python -m pytest` run, both backends); `tests/test_robustness_table.py` "
        f"fails when this block is stale. *Tests per run* counts collected tests; property tests run many "
        f"examples each.",
        "",
        "| suite | what is tested | what must hold | tests per run |",
        "|---|---|---|---|",
    ]
    for row in ROWS:
        cells = [c.replace("|", "\\|") for c in row(s)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv):
    try:
        generated = table(collect())
    except Incomplete as e:
        print(e, file=sys.stderr)
        return INCOMPLETE
    if "--write" in argv:
        changed = write_block(PAGE, BLOCK, generated)
        print("docs/robustness.md rewritten" if changed else "docs/robustness.md already up to date")
    elif "--check" in argv:
        if read_block(PAGE, BLOCK) != generated:
            print("docs/robustness.md's robustness table is stale: run python tools/robustness.py --write", file=sys.stderr)
            return 1
    else:
        print(generated)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
