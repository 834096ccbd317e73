"""Builds the C++ test module against the installed dltensor package and hands it to the tests.

The module is built with CMake (``find_package(dltensor CONFIG REQUIRED)``, as an extension author
would) into ``tests/.build/<backend>``; rebuilds are incremental. Every test takes the module from the
``m`` fixture, parametrized by backend, so the same tests run once per backend.

By default everything runs (both backends, every import path, every file: what CI runs). A contributor's
quick subset, a few minutes (docs/contributing.md, "Running the suite"):

    DLTENSOR_BACKENDS=nanobind DLTENSOR_PATHS=exchange python -m pytest -m "not slow"

``DLTENSOR_BACKENDS`` (comma-separated: ``nanobind``, ``pybind11``) builds and runs only those backends;
``DLTENSOR_PATHS`` (``exchange``, ``exchange-queries``, ``dlpack``) only those import paths; ``-m "not
slow"`` leaves out the files in SLOW_FILES (builds of their own, other interpreters, compilers, long loops).
Tests left out by either variable are reported as deselected.
"""
import gc
import importlib
import inspect
import os
import re
import sys
from pathlib import Path

import pytest

import cmake_build as cmake_build_module
from cmake_build import cmake_build

# JAX truncates 64-bit dtypes unless asked; the dtype tests need int64/float64/complex128 arrays.
os.environ.setdefault("JAX_ENABLE_X64", "1")

HERE = Path(__file__).resolve().parent
# tools/: the scripts CI and the records run (setup_times, robustness), which some tests import.
sys.path.insert(0, str(HERE.parent / "tools"))
# Where the test modules are built; DLTENSOR_TEST_BUILD_ROOT moves it (a second checkout state, or a
# mutated header, built beside the first without replacing a module a running suite has loaded).
BUILD_ROOT = Path(os.environ.get("DLTENSOR_TEST_BUILD_ROOT", HERE / ".build"))
ALL_BACKENDS = ["nanobind", "pybind11"]
# Import paths for producers that publish the DLPack C exchange API (PyTorch): every test runs through
# the fast path and through __dlpack__, and must see the same results. Tests of PyTorch tensors also run
# through the fast path with the calibrated key-set read off (torch_key_set.h): the negative and
# conjugate bits then come from `is_neg()` / `is_conj()`, and the results must be the same again.
ALL_PATHS = ["exchange", "exchange-queries", "dlpack"]


def _selection(variable: str, choices: list) -> list:
    """The choices named (comma-separated) by the environment variable `variable`; all of them when unset."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return list(choices)
    named = [v.strip() for v in value.split(",") if v.strip()]
    unknown = sorted(set(named) - set(choices))
    if unknown or not named:
        raise pytest.UsageError(f"{variable}={value!r}: unknown {unknown}; choose from {choices}")
    return [c for c in choices if c in named]


# DLTENSOR_BACKENDS / DLTENSOR_PATHS narrow a run (the quick subset); unset, every backend and path runs.
BACKENDS = _selection("DLTENSOR_BACKENDS", ALL_BACKENDS)
PATHS = _selection("DLTENSOR_PATHS", ALL_PATHS)

# Left out by `-m "not slow"` (the quick subset): files that build projects of their own (the examples,
# the downstream project and the wheel, other interpreters and old binding releases), run a compiler per
# case, run subprocesses or 100,000-call loops per case, or collect the whole suite. The marker is added
# here, by file; the default run includes them.
SLOW_FILES = ["test_python_versions.py", "test_examples.py", "test_package.py", "test_leaks.py",
              "test_stubgen.py", "test_mutation.py", "test_compile_errors.py", "test_lifecycle.py",
              "test_robustness_table.py", "test_subinterpreters.py", "test_downstream_package.py",
              "test_release.py", "test_free_threaded.py", "test_compilers.py"]


_modules = {}


# DLTENSOR_SANITIZE=1 (tools/sanitize.sh) builds the module with AddressSanitizer and UBSan instead.
SANITIZE = os.environ.get("DLTENSOR_SANITIZE") == "1"
# The compiler of the test modules: CMake's default (c++), or $CXX where it is set (tools/sanitize.sh sets
# Clang); each compiler builds into its own directory.
TEST_CXX = os.environ.get("CXX", "").strip()
TEST_BUILD = BUILD_ROOT / ("tests" + ("-sanitized" if SANITIZE else "") +
                           (f"-{Path(TEST_CXX.split()[0]).name}" if TEST_CXX else ""))
# -g1: line tables for the sanitizers' stack traces, without the full debug information (a slower build).
SANITIZER_FLAGS = "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1"

# Test files that neither load the test modules nor run dltensor's C++ in this process (documents, stubs,
# packaging, other interpreters, the examples' own build, compile errors, the mutation list, the shared
# core's own build, which runs the C++ the sanitized static core runs): the sanitized run leaves them out,
# since they would run exactly as in the plain run.
UNSANITIZED_FILES = ["test_docs.py", "test_guide.py", "test_robustness_table.py", "test_python_versions.py",
                     "test_package.py", "test_examples.py", "test_compile_errors.py", "test_stubgen.py",
                     "test_mutation.py", "test_subinterpreters.py", "test_downstream_package.py",
                     "test_release.py", "test_free_threaded.py", "test_shared_core.py", "test_compilers.py"]
collect_ignore = UNSANITIZED_FILES if SANITIZE else []


def names_dltensor(stub: str) -> bool:
    """Whether a stub's code (comments left out) imports dltensor or names one of its types."""
    code = "\n".join(line.split("#")[0] for line in stub.splitlines())
    return bool(re.search(r"^\s*(import|from) dltensor\b|\bdltensor\.(typing|Tensor)\b", code, re.M))


def load_backend(backend: str):
    if backend not in _modules:
        # Every backend's module at once by default; with DLTENSOR_BACKENDS, only the one asked for.
        targets = [f"dltensor_test_{backend}"] if BACKENDS != ALL_BACKENDS else []
        if SANITIZE:
            build = cmake_build(HERE, TEST_BUILD,
                                [f"-DCMAKE_CXX_FLAGS={SANITIZER_FLAGS}",
                                 f"-DCMAKE_SHARED_LINKER_FLAGS={SANITIZER_FLAGS}",
                                 f"-DCMAKE_MODULE_LINKER_FLAGS={SANITIZER_FLAGS}",
                                 # A Debug configuration at -O0 (NDEBUG kept, so the code is the plain
                                 # build's): a third of -O1's build time (Clang's sanitized pybind11
                                 # batch: 45 s against 127 s), and the suite's time goes to Python, not to
                                 # the modules' code; the plain build is the optimized one. In Debug
                                 # nanobind neither optimizes for size (-Os: the nanobind batch took 119 s)
                                 # nor strips the module (the sanitizers' stack traces keep their names),
                                 # and pybind11 adds no link-time optimization
                                 "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -DNDEBUG"],
                                targets=targets)
        else:
            build = cmake_build(HERE, TEST_BUILD, targets=targets)
        sys.path.insert(0, str(build))
        _modules[backend] = importlib.import_module(f"dltensor_test_{backend}")
    return _modules[backend]


@pytest.fixture(scope="session", autouse=True)
def frozen_imports():
    """What the test files imported (NumPy, PyTorch, JAX, TensorFlow: millions of objects) is moved out of
    the cyclic collector's sight once per process, before the first test: each gc.collect() a test makes
    then scans only what the tests made (0.26 s a call with all four frameworks imported, microseconds after)."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(scope="session", params=ALL_BACKENDS)  # narrowed by deselection: _left_out
def backend_module(request):
    """The C++ test module for one backend: one submodule per topic (`m.torch` for test_torch.py, defined in
    test_torch.cpp; `m.imports` for test_import.py) and `m.common`, the helpers several files share
    (test_common.cpp); see tests/test_module.cpp."""
    return load_backend(request.param)


def route(module, path):
    """Routes `module`'s imports through `path` (one of PATHS; None: the default, the fast path)."""
    module.common.set_fast_paths(path != "dlpack")
    module.torch_key_set.set_enabled(path != "exchange-queries")


@pytest.fixture(params=ALL_PATHS)
def m(backend_module, request):
    """The C++ test module, routed through one import path for the duration of a test."""
    route(backend_module, request.param)
    yield backend_module
    route(backend_module, None)


def _about_pytorch(item) -> bool:
    """A test whose id or function names PyTorch."""
    if "torch" in item.nodeid.lower():
        return True
    try:
        return "torch" in inspect.getsource(item.function)
    except (OSError, TypeError):
        return True


# At most this many pytest-xdist workers for `-n auto` (pyproject.toml's addopts): each imports every
# framework (about 1.5 GB), and past a few workers the subprocess-heavy files only compete for the cores.
MAX_WORKERS = 4


# The files that take longest (their builds, subprocesses and loops; CI's --durations list), longest first.
# pytest-xdist hands out whole files in collection order (`--dist loadfile`), so these go first and the
# many short files fill the workers' time at the end; xdist's own reordering (by number of tests per file)
# would send these last, where one of them would keep a single worker busy while the others idle.
LONGEST_FIRST = ["test_examples.py", "test_compilers.py", "test_shared_core.py", "test_leaks.py",
                 "test_subinterpreters.py", "test_lifecycle.py", "test_python_versions.py",
                 "test_compile_errors.py", "test_stubgen.py", "test_free_threaded.py", "test_paddle.py",
                 "test_downstream_package.py", "test_package.py", "test_release.py"]


def pytest_xdist_auto_num_workers(config):
    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1))


def pytest_configure(config):
    config.addinivalue_line("markers", "only_backend(name): a test or case that only that backend can express "
                            "(nanobind has no std::deque caster, pybind11 alone has array_t): the other "
                            "backend's instance is deselected, not skipped")
    config.addinivalue_line("markers", "slow: a file of SLOW_FILES (tests/conftest.py), left out of the quick "
                                       "subset by -m \"not slow\"")
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist >= 3.6: keep LONGEST_FIRST's order
        config.option.loadscopereorder = False
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:  # build progress (tests/cmake_build.py) reaches the terminal, also without a tty
        def write(line):
            with capture.global_and_fixture_disabled():
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
        cmake_build_module.progress_writer = write


def pytest_unconfigure(config):
    cmake_build_module.progress_writer = None


def _left_out(item) -> bool:
    """A test that this run does not include: the `exchange-queries` path of a test that does not involve
    PyTorch (that path changes nothing for tensors of other producers), or a backend or import path that
    DLTENSOR_BACKENDS / DLTENSOR_PATHS leave out (also where a file parametrizes its own `backend` or
    `path`)."""
    params = item.callspec.params
    if params.get("m") == "exchange-queries" and not _about_pytorch(item):
        return True
    only = item.get_closest_marker("only_backend")  # a case that one binding library alone can express
    if only and params.get("backend_module", params.get("backend")) not in (None, *only.args):
        return True
    for name in ("backend", "backend_module"):
        if params.get(name) in ALL_BACKENDS and params[name] not in BACKENDS:
            return True
    for name in ("m", "path"):
        if params.get(name) in ALL_PATHS and params[name] not in PATHS:
            return True
    return False


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order
    dropped = [item for item in items if getattr(item, "callspec", None) is not None and _left_out(item)]
    if dropped:
        ids = {id(item) for item in dropped}
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if id(item) not in ids]
