"""Builds the C++ test module against the installed dltensor package and hands it to the tests.

The module is built with CMake (``find_package(dltensor CONFIG REQUIRED)``, as an extension author
would) into ``tests/.build/<backend>``; rebuilds are incremental. Every test takes the module from the
``m`` fixture, parametrized by backend, so the same tests run once per backend.
"""
import importlib
import inspect
import os
import sys
from pathlib import Path

import pytest

from cmake_build import cmake_build

# JAX truncates 64-bit dtypes unless asked; the dtype tests need int64/float64/complex128 arrays.
os.environ.setdefault("JAX_ENABLE_X64", "1")

HERE = Path(__file__).resolve().parent
# Where the test modules are built; DLTENSOR_TEST_BUILD_ROOT moves it (a second checkout state, or a
# mutated header, built beside the first without replacing a module a running suite has loaded).
BUILD_ROOT = Path(os.environ.get("DLTENSOR_TEST_BUILD_ROOT", HERE / ".build"))
BACKENDS = ["nanobind", "pybind11"]


_modules = {}


# DLTENSOR_SANITIZE=1 (tests/sanitize.sh) builds the module with AddressSanitizer and UBSan instead.
SANITIZE = os.environ.get("DLTENSOR_SANITIZE") == "1"
SANITIZER_FLAGS = "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"

# Test files that neither load the test modules nor run dltensor's C++ in this process (documents, stubs,
# packaging, other interpreters, the examples' own build, compile errors, the mutation list): the
# sanitized run leaves them out, since they would run exactly as in the plain run.
UNSANITIZED_FILES = ["test_docs.py", "test_guide.py", "test_robustness_table.py", "test_python_versions.py",
                     "test_package.py", "test_examples.py", "test_compile_errors.py", "test_stubgen.py",
                     "test_mutation.py"]
collect_ignore = UNSANITIZED_FILES if SANITIZE else []


def load_backend(backend: str):
    if backend not in _modules:
        if SANITIZE:
            build = cmake_build(HERE, BUILD_ROOT / "tests-sanitized",
                                [f"-DCMAKE_CXX_FLAGS={SANITIZER_FLAGS}",
                                 f"-DCMAKE_SHARED_LINKER_FLAGS={SANITIZER_FLAGS}",
                                 f"-DCMAKE_MODULE_LINKER_FLAGS={SANITIZER_FLAGS}"])
        else:
            build = cmake_build(HERE, BUILD_ROOT / "tests")
        sys.path.insert(0, str(build))
        _modules[backend] = importlib.import_module(f"dltensor_test_{backend}")
    return _modules[backend]


@pytest.fixture(scope="session", params=BACKENDS)
def backend_module(request):
    """The C++ test module for one backend: one submodule per topic (`m.torch` for test_torch.py, defined in
    test_torch.cpp; `m.imports` for test_import.py) and `m.common`, the helpers several files share
    (test_common.cpp); see tests/test_module.cpp."""
    return load_backend(request.param)


# Import paths for producers that publish the DLPack C exchange API (PyTorch): every test runs through
# the fast path and through __dlpack__, and must see the same results. Tests of PyTorch tensors also run
# through the fast path with the calibrated key-set read off (torch_key_set.h): the negative and
# conjugate bits then come from `is_neg()` / `is_conj()`, and the results must be the same again.
PATHS = ["exchange", "exchange-queries", "dlpack"]


def route(module, path):
    """Routes `module`'s imports through `path` (one of PATHS; None: the default, the fast path)."""
    module.common.set_fast_paths(path != "dlpack")
    module.torch_key_set.set_enabled(path != "exchange-queries")


@pytest.fixture(params=PATHS)
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


def pytest_collection_modifyitems(config, items):
    # The `exchange-queries` path changes nothing for tensors of other producers: run it for PyTorch tests.
    dropped = [item for item in items if getattr(item, "callspec", None) is not None
               and item.callspec.params.get("m") == "exchange-queries" and not _about_pytorch(item)]
    if dropped:
        ids = {id(item) for item in dropped}
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if id(item) not in ids]
