#!/usr/bin/env python3
"""Runs nanobind's own ndarray test suite against py::dltensor (issue 27: the drop-in promise).

    python tests/nanobind_suite/run.py [--backend nanobind|pybind11] [--skip-function NAME ...]
                                       [--skip-failing] [-k EXPR] [--sdist FILE] [--show-source]

What it does (nothing of nanobind's is committed; see README.md in this folder):

1. Takes the installed nanobind's version, downloads nanobind's sdist of exactly that version from PyPI
   (``pip download``) and unpacks it under ``tests/.build/nanobind-suite/`` (ignored by git, and not
   collected by pytest: pytest never recurses into dot-directories).
2. Re-spells ``tests/test_ndarray.cpp`` mechanically:
   - nanobind backend: ``#include <dltensor/nanobind.h>`` is added after ``#include <nanobind/ndarray.h>``
     and ``nb::ndarray<`` becomes ``nb::dltensor<``; nothing else changes.
   - pybind11 backend: the same, plus the substitutions of ``PYBIND11_PORT`` below (nanobind's names for
     pybind11's, and a few constructs pybind11 has no spelling for, each replaced by its nearest
     pybind11 equivalent and listed when the script runs).
   ``--skip-function NAME`` removes every ``m.def("NAME", ...)`` statement (all overloads) before
   building, so the rest of the suite can run when one function does not compile.
3. Builds it as the extension ``test_ndarray_ext`` (the name the .py imports) against this checkout's
   headers (``find_package(dltensor CONFIG)`` from ``tests/cmake_build.py``), with nanobind_add_module
   or pybind11_add_module, and with nanobind's own test define ``NB_ABORT_ON_LEAK``.
4. Runs nanobind's ``tests/test_ndarray.py`` unchanged with pytest in a subprocess (next to its
   helpers ``common.py`` and ``conftest.py``), reads the per-test results from ``--junitxml``, and
   prints every failing test with its classification: a documented deliberate difference
   (``DELIBERATE``, test name -> a key of ``REASONS``; the reasons are written down in
   docs/reference.md), an artifact of the pybind11 port (keys ``port-...``), or ``UNEXPECTED``.

Exit status: 0 when every failure is a documented deliberate difference or port artifact; 1 when a failure is unexpected
(a test of a function removed with ``--skip-function`` counts as one: it fails with AttributeError), or
pytest crashed, or nanobind's leak check aborted the interpreter at exit; 2 when the extension does not
compile (the compiler's errors are printed, with the ``m.def`` blocks they belong to and the
``--skip-function`` options that would leave them out) or the sdist cannot be fetched.
``--skip-failing`` does that second build by itself: it reports the compile error, removes the
functions that failed and still runs the tests (the exit status stays 2).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
REPO = TESTS.parent
CACHE = TESTS / ".build" / "nanobind-suite"

sys.path.insert(0, str(TESTS))
from cmake_build import _has_ninja, _pybind11_dir, dltensor_package_dir  # noqa: E402

# Files of nanobind's sdist (its tests/ folder) the suite needs: the C++ and Python halves of the
# ndarray suite, and the helpers test_ndarray.py imports (common.py) or its conftest.py registers.
CPP_FILE = "test_ndarray.cpp"
PY_FILE = "test_ndarray.py"
HELPERS = ["common.py", "conftest.py"]
MODULE = "test_ndarray_ext"  # `import test_ndarray_ext as t` in test_ndarray.py

# ---------------------------------------------------------------------------------------------------
# Documented deliberate differences: test name -> key of REASONS (docs/reference.md says each one). A failure
# of a test listed here is expected; any other failure is UNEXPECTED. A listed test that passes is
# reported as "stale" (the entry can go). Parametrized tests are listed by their base name.
# ---------------------------------------------------------------------------------------------------
REASONS = {
    "writable-never-converts":
        "writable parameters never convert: nanobind copies a mismatched argument (dtype, order) into "
        "any parameter that allows conversion, dltensor only into a read-only one (const dtype or "
        "py::ro), so C++ writes always reach the caller's memory (reference.md §11)",
    "no-bare-capsule":
        "a return without a framework annotation is a dltensor.Tensor (with __dlpack__, "
        "__dlpack_device__ and the buffer protocol), never a bare DLPack capsule (reference.md §13)",
    "signature-text":
        "signature text: every tensor is typing.Annotated[<type>, dict(...)] on both backends, naming "
        "every annotation its type does not say already (read-only: ArrayLike or writable=False), with a type a type "
        "checker uses (dltensor.typing.ArrayLike, numpy.typing.NDArray[...], torch.Tensor, ...) where "
        "nanobind writes ndarray[dtype=..., ...] (reference.md §18)",
    "reference-internal-keeps-both":
        "reference_internal keeps both alive: a returned view of a tensor that has an owner keeps the "
        "parent (self) and the tensor's own owner alive, where nanobind refuses with RuntimeError "
        "(\"ndarray already has an owner\") (reference.md §13)",
    "dlpack-1-first":
        "DLPack 1.x is asked first: imports call __dlpack__(max_version=(1, 3)) and fall back to "
        "__dlpack__() only on TypeError, where nanobind asks read-only imports for an unversioned "
        "capsule without arguments (reference.md §8)",
    # pybind11 backend only.
    "none-needs-optional":
        "pybind11 backend: None binds only to a std::optional<py::dltensor<...>> parameter; pybind11's "
        "arg.none() never reaches a type caster, so a .none() argument does not make a py::dltensor "
        "accept None as an invalid tensor, as it does on nanobind (reference.md §8)",
    "cast-returns-object":
        "pybind11 backend: cast() returns a plain py::object, so a binding returning x.cast(...) shows "
        "`-> object` in its signature, not the tensor's type text (reference.md §7)",
    # Keys starting with "port-": artifacts of the mechanical port, not differences of dltensor.
    "port-null-capsule":
        "port: pybind11's py::capsule refuses a NULL pointer (PyCapsule_New raises ValueError), so "
        "ret_ndarray_empty's capsule over nullptr fails before any dltensor code runs",
}

_NB_DELIBERATE = {
    "test02_docstr": "signature-text",
    "test10_implicit_conversion": "writable-never-converts",
    "test10b_implicit_conversion_unusual_module": "writable-never-converts",
    "test11_implicit_conversion_pytorch": "writable-never-converts",
    "test14_consume_numpy": "no-bare-capsule",
    "test20b_import_metal_dlpack": "dlpack-1-first",
    "test26_return_ro": "signature-text",
    "test32_reference_internal": "reference-internal-keeps-both",
    "test33_force_contig_numpy": "writable-never-converts",
    "test34_force_contig_pytorch": "writable-never-converts",
}
DELIBERATE = {
    "nanobind": _NB_DELIBERATE,
    # The pybind11 port: the same contract, plus what the port's substitutions (PYBIND11_PORT) and
    # pybind11 itself change.
    "pybind11": {
        **_NB_DELIBERATE,
        "test01_metadata": "none-needs-optional",
        "test15_passthrough_numpy": "none-needs-optional",
        "test16_passthrough_torch": "none-needs-optional",
        "test49_test_matrix4f_ref": "cast-returns-object",
        "test50_test_matrix4f_copy": "cast-returns-object",
        "test55_empty_ndarray": "port-null-capsule",
    },
}

# ---------------------------------------------------------------------------------------------------
# The mechanical port to the pybind11 spelling: (regex, replacement, why), applied in order after the
# nanobind re-spelling. The first group renames; the second replaces constructs that pybind11 has no
# spelling for with their nearest equivalent (each is listed when the script runs).
# ---------------------------------------------------------------------------------------------------
PYBIND11_PORT = [
    # Headers and names.
    # dltensor's header first, as the reference asks (it declares `py::cast` overloads that pybind11's
    # templates must see).
    (r"#include <nanobind/nanobind\.h>", "#include <dltensor/pybind11.h>", "rename"),
    (r"#include <nanobind/ndarray\.h>\n#include <dltensor/nanobind\.h>\n", "", "rename"),
    (r"#include <nanobind/stl/pair\.h>", "#include <pybind11/stl.h>", "rename"),
    (r"namespace nb = nanobind;", "namespace nb = pybind11;", "rename"),
    (r"\bNB_MODULE\(", "PYBIND11_MODULE(", "rename"),
    (r"\bnb::rv_policy::none\b", "nb::return_value_policy::reference",
     "pybind11 has no `none` policy: `reference` returns an imported tensor's object as `none` does"),
    (r"\bnb::rv_policy::", "nb::return_value_policy::", "rename"),
    (r"\.def_rw\(", ".def_readwrite(", "rename"),
    (r"\bnb::dtype<", "dlt::dtype_of<", "pybind11's py::dtype is NumPy's dtype class: dlt::dtype_of<T>()"),
    # Constructs without a pybind11 spelling.
    (r"\bnb::ndarray_check\(h\)", "nb::hasattr(h, \"__dlpack__\") || PyObject_CheckBuffer(h.ptr())",
     "pybind11 has no ndarray_check: `has __dlpack__ or the buffer protocol`"),
    (r"\bnb::find\(this\)", "nb::cast(this, nb::return_value_policy::reference)",
     "pybind11 has no find(): cast(this, reference) finds the registered instance"),
    (r", nb::type_slots\(wrapper_slots\)\)", ")",
     "pybind11 has no type_slots: Wrapper is bound without tp_traverse/tp_clear"),
    (r"(?s)\n        static int tp_traverse\(.*?\n        }\n\n        static int tp_clear\(.*?\n        }\n", "\n",
     "(Wrapper's slots, unused without type_slots)"),
    (r"(?s)    PyType_Slot wrapper_slots\[\] = \{.*?\};\n", "", "(same)"),
    (r"nb::pointer_and_handle<MyArray> self,", "nb::handle self_h,",
     "pybind11 has no pointer_and_handle: the handle, and the pointer cast from it"),
    (r"self\.p->data\(\)", "self_h.cast<MyArray *>()->data()", "(same)"),
    (r"\bself\.h\b", "self_h", "(same)"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["nanobind", "pybind11"], default="nanobind")
    ap.add_argument("--skip-function", action="append", default=[], metavar="NAME",
                    help="remove every m.def(\"NAME\", ...) statement before building (repeatable)")
    ap.add_argument("--skip-failing", action="store_true",
                    help="when the extension does not compile, remove the functions that failed and "
                         "build again, so the tests still run (the exit status stays 2)")
    ap.add_argument("-k", dest="keyword", help="pytest -k expression (a subset of the tests)")
    ap.add_argument("--sdist", type=Path, help="unpack this nanobind sdist (.tar.gz) instead of downloading one "
                                            "(when tests/.build/nanobind-suite holds no unpacked copy yet)")
    ap.add_argument("--show-source", action="store_true", help="print the re-spelled C++ and exit")
    args = ap.parse_args()

    import nanobind
    version = nanobind.__version__
    try:
        src = fetch_sdist(version, args.sdist)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    work = CACHE / args.backend
    work.mkdir(parents=True, exist_ok=True)
    cpp, notes = respell((src / "tests" / CPP_FILE).read_text(), args.backend)
    cpp, missing = skip_functions(cpp, args.skip_function)
    if args.show_source:
        print(cpp)
        return 0

    print(f"nanobind {version} test_ndarray, {args.backend} backend, dltensor headers of {REPO / 'cpp' / 'include'}")
    for note in notes:
        print(f"  port: {note}")
    for name in args.skip_function:
        print(f"  skipped function: {name}" + ("  (no such m.def!)" if name in missing else ""))

    status = 0
    build_error = build(cpp, work, args.backend)
    if build_error is not None:
        status = 2
        failing = report_compile_error(build_error, cpp, work)
        if not (args.skip_failing and failing):
            return status
        print(f"\n--skip-failing: building again without {', '.join(failing)}\n")
        cpp, _ = skip_functions(cpp, failing)
        build_error = build(cpp, work, args.backend)
        if build_error is not None:
            report_compile_error(build_error, cpp, work)
            return status
        args.skip_function += failing

    tests = prepare_tests(src, work)
    results, crash = run_pytest(tests, work / "build", args.keyword)
    unexpected = report(results, crash, args.backend, args.skip_function)
    return status or (1 if unexpected else 0)


# ---------------------------------------------------------------------------------------------------
# 1. The sdist
# ---------------------------------------------------------------------------------------------------
def fetch_sdist(version: str, sdist: Path = None) -> Path:
    """Unpacks nanobind's sdist of `version` (downloaded from PyPI once, or `sdist`) into CACHE and
    returns the unpacked folder."""
    dest = CACHE / f"nanobind-{version}"
    if (dest / "tests" / CPP_FILE).is_file():
        return dest
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        if sdist is None:
            sdist = download_sdist(version, Path(tmp))
        with tarfile.open(sdist) as tar:
            top = f"nanobind-{version}/"
            members = [m for m in tar.getmembers() if m.name.startswith(top) and (m.isfile() or m.isdir())]
            kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(tmp, members=members, **kwargs)
        unpacked = Path(tmp) / f"nanobind-{version}"
        if not (unpacked / "tests" / CPP_FILE).is_file():
            raise RuntimeError(f"{sdist} has no tests/{CPP_FILE}")
        if dest.exists():
            shutil.rmtree(dest)
        unpacked.rename(dest)
    return dest


def download_sdist(version: str, into: Path) -> Path:
    """`pip download` of nanobind's sdist. pip prepares the sdist's metadata, which needs its build
    backend (scikit-build-core): the installed one first (no build isolation; fast), else an isolated
    environment with binary build dependencies (`--no-binary nanobind` only: `:all:` would build CMake
    from source)."""
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "nanobind",
            f"nanobind=={version}", "-d", str(into), "--quiet"]
    print(f"downloading nanobind {version}'s sdist from PyPI ...")
    for extra in (["--no-build-isolation"], []):
        proc = subprocess.run(base + extra, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        found = sorted(into.glob(f"nanobind-{version}.tar.gz"))
        if proc.returncode == 0 and found:
            return found[0]
    raise RuntimeError(f"pip download of nanobind=={version}'s sdist failed:\n{proc.stdout[-4000:]}")


# ---------------------------------------------------------------------------------------------------
# 2. The re-spelling
# ---------------------------------------------------------------------------------------------------
def respell(cpp: str, backend: str):
    """The mechanical re-spelling of test_ndarray.cpp for `backend`; returns (source, notes)."""
    include = "#include <nanobind/ndarray.h>"
    if include not in cpp:
        raise SystemExit(f"error: {CPP_FILE} does not include <nanobind/ndarray.h>: the re-spelling needs updating")
    cpp = cpp.replace(include, include + "\n#include <dltensor/nanobind.h>", 1)
    n = cpp.count("nb::ndarray<")
    cpp = cpp.replace("nb::ndarray<", "nb::dltensor<")
    notes = [f"nb::ndarray< -> nb::dltensor< ({n} places)"]
    if backend == "pybind11":
        for pattern, repl, why in PYBIND11_PORT:
            cpp, count = re.subn(pattern, repl, cpp)
            if count == 0:
                raise SystemExit(f"error: the pybind11 port's pattern {pattern!r} no longer matches "
                                 f"nanobind's {CPP_FILE}: update PYBIND11_PORT")
            if why != "(same)" and why != "rename":
                notes.append(f"{pattern!r} -> {repl!r}: {why}")
        notes.append(f"renamed: {', '.join(p for p, _, w in PYBIND11_PORT if w == 'rename')}")
    return cpp, notes


def def_blocks(cpp: str):
    """The `m.def("name", ...);` statements of the source: a list of (name, start, end) character
    offsets, `end` just past the closing `;`. Parentheses are matched outside string, character
    literals and comments."""
    blocks = []
    for mo in re.finditer(r'\bm\.def\(\s*"([^"]+)"', cpp):
        i, depth = mo.start() + len("m.def"), 0
        while i < len(cpp):
            c = cpp[i]
            if c in "\"'":
                j = i + 1
                while cpp[j] != c:
                    j += 2 if cpp[j] == "\\" else 1
                i = j
            elif cpp.startswith("//", i):
                i = cpp.index("\n", i)
            elif cpp.startswith("/*", i):
                i = cpp.index("*/", i) + 1
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    end = cpp.index(";", i) + 1
                    blocks.append((mo.group(1), mo.start(), end))
                    break
            i += 1
    return blocks


def skip_functions(cpp: str, names):
    """Removes every `m.def("name", ...);` of `names` (all overloads); returns (source, names not
    found). Line numbers are kept (the removed statement becomes a comment of as many lines)."""
    missing = [n for n in names if not any(b[0] == n for b in def_blocks(cpp))]
    for name, start, end in reversed(def_blocks(cpp)):
        if name in names:
            lines = cpp[start:end].count("\n")
            cpp = cpp[:start] + f"/* run.py --skip-function {name} */" + "\n" * lines + cpp[end:]
    return cpp, missing


# ---------------------------------------------------------------------------------------------------
# 3. The build
# ---------------------------------------------------------------------------------------------------
CMAKELISTS = """\
# Generated by tests/nanobind_suite/run.py: nanobind's test_ndarray.cpp, re-spelled for dltensor.
cmake_minimum_required(VERSION 3.18...3.31)
project(nanobind_suite LANGUAGES CXX)
find_package(Python 3.9 COMPONENTS Interpreter Development.Module REQUIRED)
find_package(dltensor CONFIG REQUIRED)
# As nanobind's tests/CMakeLists.txt: abort at interpreter exit when instances or types leaked.
add_definitions(-DNB_ABORT_ON_LEAK)
# Deliberate (reference.md §13): dltensor refuses to compile an owner-less constructor unless this is
# defined; nanobind's tests build owner-less tensors over static arrays, which is safe.
add_definitions(-DDLTENSOR_ALLOW_OWNERLESS)
{add_module}
target_link_libraries({module} PRIVATE dltensor::dltensor)
"""
ADD_MODULE = {
    "nanobind": "find_package(nanobind CONFIG REQUIRED)\nnanobind_add_module({module} {cpp})",
    "pybind11": "find_package(pybind11 CONFIG REQUIRED)\npybind11_add_module({module} {cpp})",
}


def build(cpp: str, work: Path, backend: str):
    """Writes the re-spelled source and its CMake project into `work` and builds it into work/build.
    Returns None on success, else the build's output."""
    import nanobind

    source = work / "src"
    source.mkdir(exist_ok=True)
    write_if_changed(source / CPP_FILE, cpp)
    write_if_changed(source / "CMakeLists.txt", CMAKELISTS.format(
        add_module=ADD_MODULE[backend].format(module=MODULE, cpp=CPP_FILE), module=MODULE))
    build_dir = work / "build"
    defs = [f"-Ddltensor_DIR={dltensor_package_dir()}", f"-Dnanobind_DIR={nanobind.cmake_dir()}",
            *_pybind11_dir(), f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release"]
    gen = ["-G", "Ninja"] if _has_ninja() and not (build_dir / "Makefile").exists() else []
    start = time.monotonic()
    print(f"building {build_dir.relative_to(REPO)} ...", flush=True)
    log = []
    for cmd in ([sys.executable, "-m", "cmake", "-S", str(source), "-B", str(build_dir), *gen, *defs],
                [sys.executable, "-m", "cmake", "--build", str(build_dir), "--parallel", str(os.cpu_count() or 2)]):
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        log.append(proc.stdout)
        if proc.returncode != 0:
            (work / "build.log").write_text("".join(log))
            return "".join(log)
    (work / "build.log").write_text("".join(log))
    print(f"built in {time.monotonic() - start:.0f} s")
    return None


def write_if_changed(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def report_compile_error(output: str, cpp: str, work: Path):
    """Prints the compiler's errors (with the lines of test_ndarray.cpp they are reported at or
    instantiated from) and the m.def blocks they fall in; returns those blocks' names."""
    line_of = lambda offset: cpp.count("\n", 0, offset) + 1  # noqa: E731
    blocks = [(name, line_of(s), line_of(e)) for name, s, e in def_blocks(cpp)]
    here = re.compile(re.escape(CPP_FILE) + r":(\d+):(?:\d+:)?")
    shown, failing = [], []
    for line in output.splitlines():
        if "In instantiation of" in line or ("In lambda" in line and here.search(line)):
            shown.append("")  # a new error context
            shown.append(line)
        elif ": error:" in line or line.startswith("error:") or "required from" in line:
            shown.append(line)
        if ": error:" in line or "required from here" in line:
            for mo in here.finditer(line):
                n = int(mo.group(1))
                for name, first, last in blocks:
                    if first <= n <= last and name not in failing:
                        failing.append(name)
    print("\nCOMPILE ERROR: the re-spelled test_ndarray.cpp does not compile "
          f"(full log: {(work / 'build.log').relative_to(REPO)}; source: {(work / 'src' / CPP_FILE).relative_to(REPO)})\n")
    for line in shown[:80] or output.splitlines()[-60:]:
        print(("  " + shorten_paths(line)[:400]) if line else "")
    if len(shown) > 80:
        print(f"  ... ({len(shown) - 80} more lines in the log)")
    if failing:
        print(f"\nthe errors fall in: {', '.join(failing)}")
        for name in failing:
            first, last = next((f, l) for n, f, l in blocks if n == name)
            print(f"\n  {CPP_FILE}:{first}-{last}:")
            for text in cpp.splitlines()[first - 1:last]:
                print("    " + text)
        print("\nto run the rest of the suite: " + " ".join(f"--skip-function {n}" for n in failing)
              + " (or --skip-failing)")
    else:
        print("\nthe errors fall in no m.def block (the whole file is affected)")
    return failing


def shorten_paths(line: str) -> str:
    return line.replace(str(REPO) + "/", "")


# ---------------------------------------------------------------------------------------------------
# 4. The tests
# ---------------------------------------------------------------------------------------------------
def prepare_tests(src: Path, work: Path) -> Path:
    """Copies test_ndarray.py and its helpers, unchanged, into work/tests, with a pytest.ini of its own
    (so that neither this repository's pyproject.toml nor tests/conftest.py applies)."""
    tests = work / "tests"
    tests.mkdir(exist_ok=True)
    for name in [PY_FILE, *HELPERS]:
        shutil.copyfile(src / "tests" / name, tests / name)
    (tests / "pytest.ini").write_text("[pytest]\n# nanobind's test_ndarray.py, run by tests/nanobind_suite/run.py\n")
    return tests


def run_pytest(tests: Path, build_dir: Path, keyword=None):
    """Runs test_ndarray.py in a subprocess; returns ({test name: (outcome, message, details)}, crash),
    where `crash` describes an abnormal end of pytest (None when it ended normally)."""
    junit = tests / "junit.xml"
    if junit.exists():
        junit.unlink()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(build_dir), str(tests), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [sys.executable, "-m", "pytest", PY_FILE, "-c", "pytest.ini", "--rootdir", str(tests),
           "-p", "no:cacheprovider", "-q", "-rN", "--tb=short", f"--junitxml={junit}",
           *(["-k", keyword] if keyword else [])]
    print(f"running {PY_FILE} ...", flush=True)
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=tests, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    (tests / "pytest.log").write_text(proc.stdout)
    print(f"ran in {time.monotonic() - start:.0f} s (output: {(tests / 'pytest.log').relative_to(REPO)})")
    crash = None
    if proc.returncode not in (0, 1, 5):
        leaks = [l for l in proc.stdout.splitlines() if "leak" in l.lower()]
        crash = (f"pytest ended with status {proc.returncode}"
                 + (" (nanobind's leak check, NB_ABORT_ON_LEAK, at interpreter exit?)" if proc.returncode in (-6, 134) else "")
                 + "".join("\n    " + l for l in (leaks or proc.stdout.splitlines()[-15:])[:30]))
    results = {}
    if junit.is_file():
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = case.get("name")
            outcome, message, details = "passed", "", ""
            for tag in ("failure", "error", "skipped"):
                el = case.find(tag)
                if el is not None:
                    outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                    message, details = el.get("message") or "", el.text or ""
                    break
            results[name] = (outcome, message, details)
    elif crash is None:
        crash = f"pytest wrote no {junit.name} (status {proc.returncode}):\n{proc.stdout[-3000:]}"
    return results, crash


def classify(name: str, backend: str):
    """The key of REASONS that explains `name`'s failure on `backend`, or None (UNEXPECTED)."""
    table = DELIBERATE[backend]
    return table.get(name) or table.get(name.split("[", 1)[0])


def label(reason) -> str:
    if reason is None:
        return "UNEXPECTED"
    return f"port ({reason})" if reason.startswith("port-") else f"deliberate ({reason})"


def report(results, crash, backend: str, skipped_functions) -> int:
    """Prints the table of failures; returns the number of unexpected ones (a crash counts as one)."""
    counts = {}
    for outcome, _, _ in results.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    print(f"\n{len(results)} tests: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    failed = {n: r for n, r in results.items() if r[0] in ("failed", "error")}
    reasons = {n: classify(n, backend) for n in failed}
    if failed:
        width = max(len(n) for n in failed)
        print(f"\n{'test':<{width}}  classification\n{'-' * width}  {'-' * 60}")
        for name, (outcome, message, details) in failed.items():
            text = label(reasons[name])
            removed = [f for f in skipped_functions if f"'{f}'" in message or f"'{f}'" in details]
            if removed and reasons[name] is None:
                text += f" (calls {', '.join(removed)}, removed by --skip-function)"
            print(f"{name:<{width}}  {text}")
            print(textwrap.indent(failure_summary(message, details), " " * (width + 2) + "| ", lambda l: True))
    used = sorted(set(reasons.values()) - {None})
    if used:
        print("\nreasons (the deliberate differences are documented in docs/reference.md):")
        for key in used:
            print(textwrap.fill(REASONS[key], width=110, initial_indent=f"  {key}: ", subsequent_indent="    "))
    for name in DELIBERATE[backend]:
        if any(r[0] == "passed" and k.split("[", 1)[0] == name for k, r in results.items()):
            print(f"\nnote: {name} is listed in DELIBERATE but passes now: the entry can go")
    if crash:
        print(f"\nUNEXPECTED: {crash}")
    n_port = sum(1 for r in reasons.values() if r and r.startswith("port-"))
    n_unexpected = sum(1 for r in reasons.values() if r is None)
    print(f"\n{len(failed)} failing: {len(failed) - n_port - n_unexpected} deliberate, {n_port} port artifacts, "
          f"{n_unexpected} unexpected" + (", and pytest ended abnormally" if crash else ""))
    return n_unexpected + (1 if crash else 0)


def failure_summary(message: str, details: str) -> str:
    """The assertion message of a failure, and the line of test_ndarray.py that raised it."""
    lines = [l for l in details.splitlines() if l.strip()]
    where = [l.strip() for l in lines if PY_FILE in l]
    msg = [l for l in message.strip().splitlines() if l.strip()]
    out = msg[:6] if msg else lines[-3:]
    if where:
        out.append(where[-1])
    return "\n".join(l[:300] for l in out)


if __name__ == "__main__":
    sys.exit(main())
