"""dltensor as a dependency, the way an extension author ships one.

tests/downstream_package: a pip-installable package (pyproject.toml for scikit-build-core, CMakeLists.txt,
one source for both backends), built by `pip wheel` with build isolation: dltensor from a folder holding
a wheel of this checkout (PIP_FIND_LINKS, as README's "Ship an extension" says), scikit-build-core,
nanobind and pybind11 from the index. Its wheel must hold both modules (scikit-build-core builds a wheel
without them when the CMakeLists lacks install(TARGETS ...)) and no dltensor file, and must work from a
fresh virtual environment.

tests/vendored: a parent project that add_subdirectory()s (or FetchContent's) this checkout: its
`cmake --install` must install the parent's module and none of dltensor's files, unless DLTENSOR_INSTALL=ON.
"""
import os
import shutil
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import pytest

from cmake_build import _has_ninja, _progress, _pybind11_dir, run
from conftest import HERE

ROOT = HERE.parent
PACKAGE = HERE / "downstream_package"
MODULES = ("downstream_package_nanobind", "downstream_package_pybind11")


def _timed(what, cmd, **kwargs):
    """run(cmd), with a line to the terminal when it starts and one with its wall time when it ends."""
    start = time.monotonic()
    _progress(f"[dltensor] {what} ...")
    out = run(cmd, **kwargs)
    _progress(f"[dltensor] {what}: {time.monotonic() - start:.0f} s")
    return out


@pytest.fixture(scope="module")
def dltensor_wheel_dir(tmp_path_factory):
    """A folder holding one wheel of this checkout, as a user makes it: `pip wheel <checkout> -w <folder>`
    (without build isolation: scikit-build-core is in the test extra)."""
    pytest.importorskip("scikit_build_core")
    wheels = tmp_path_factory.mktemp("dltensor-wheels")
    _timed("building the dltensor wheel", [sys.executable, "-m", "pip", "wheel", str(ROOT), "-w", str(wheels),
                                           "--no-deps", "--no-build-isolation", "-q"])
    assert [w.name.split("-")[0] for w in wheels.glob("*.whl")] == ["dltensor"]
    return wheels


@pytest.fixture(scope="module")
def downstream_wheel(dltensor_wheel_dir, tmp_path_factory):
    """tests/downstream_package built by `pip wheel` with build isolation, dltensor found through
    PIP_FIND_LINKS (only that folder: the index has no dltensor)."""
    out = tmp_path_factory.mktemp("downstream-wheel")
    env = dict(os.environ, PIP_FIND_LINKS=str(dltensor_wheel_dir))
    env.pop("PIP_NO_BUILD_ISOLATION", None)
    _timed("pip wheel tests/downstream_package (build isolation)",
           [sys.executable, "-m", "pip", "wheel", str(PACKAGE), "-w", str(out), "--no-deps"], env=env)
    (wheel,) = out.glob("downstream_package-*.whl")
    return wheel


def test_downstream_wheel_holds_both_modules_and_no_dltensor_file(downstream_wheel):
    names = zipfile.ZipFile(downstream_wheel).namelist()
    for module in MODULES:  # at the top of site-packages: install(TARGETS ... LIBRARY DESTINATION .)
        assert [n for n in names if n.startswith(module + ".") and n.endswith((".so", ".pyd"))], (module, names)
    assert not [n for n in names if n.startswith("dltensor")], names  # headers are build requirements only


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, downstream_wheel):
    """A new virtual environment with the downstream wheel installed (numpy, its dependency, from the
    index), by this interpreter's pip (`pip --python`): nothing else of this environment is visible there."""
    env_dir = tmp_path_factory.mktemp("downstream-venv")
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    _timed("installing the downstream wheel into a fresh venv",
           [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(downstream_wheel)])
    return python


@pytest.mark.parametrize("module", MODULES)
def test_downstream_wheel_works_from_a_fresh_venv(fresh_venv, module):
    code = (f"import numpy as np, {module} as ext\n"
            "r = ext.norms(np.array([[1, 2, 2], [0, 3, 4]], np.float32))\n"
            "assert isinstance(r, np.ndarray) and r.dtype == np.float32 and r.tolist() == [3.0, 5.0], r\n"
            "try:\n"
            "    ext.norms(np.ones((2, 4), np.float32))\n"
            "except TypeError as e:\n"
            "    assert 'incompatible function arguments' in str(e), e\n"
            "else:\n"
            "    raise AssertionError('a (2, 4) array bound to shape (-1, 3)')\n"
            "import importlib.util\n"
            "assert importlib.util.find_spec('dltensor') is None  # not a run-time dependency\n")
    proc = subprocess.run([str(fresh_venv), "-c", code], capture_output=True, text=True, cwd=fresh_venv.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _vendored(tmp_path, *defs, build=True):
    """Configures tests/vendored against this checkout with `defs`, builds it, installs it into an empty
    prefix; returns the prefix's files (relative paths)."""
    build_dir, prefix = tmp_path / "build", tmp_path / "prefix"
    cmake = [sys.executable, "-m", "cmake"] if shutil.which("cmake") is None else ["cmake"]
    _timed(f"building tests/vendored {' '.join(defs)}",
           [*cmake, "-S", str(HERE / "vendored"), "-B", str(build_dir), *(["-G", "Ninja"] if _has_ninja() else []),
            f"-DDLTENSOR_CHECKOUT={ROOT}", f"-DPython_EXECUTABLE={sys.executable}", *_pybind11_dir(),
            "-DCMAKE_BUILD_TYPE=Release", *defs])
    run([*cmake, "--build", str(build_dir), "--parallel", str(os.cpu_count() or 2)], steps=True)
    run([*cmake, "--install", str(build_dir), "--prefix", str(prefix)])
    return sorted(p.relative_to(prefix).as_posix() for p in prefix.rglob("*") if p.is_file()) \
        if prefix.exists() else []


def test_add_subdirectory_installs_the_parents_module_and_no_dltensor_file(tmp_path):
    pytest.importorskip("pybind11")
    files = _vendored(tmp_path)
    assert len(files) == 1 and files[0].startswith("downstream_package_pybind11."), files
    code = ("import numpy as np, downstream_package_pybind11 as ext\n"
            "assert ext.norms(np.array([[1, 2, 2]], np.float32)).tolist() == [3.0]\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path / "prefix")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_fetchcontent_installs_no_dltensor_file(tmp_path):
    assert _vendored(tmp_path, "-DVENDORED_WITH_FETCHCONTENT=ON", "-DVENDORED_MODULE=OFF") == []


def test_vendored_dltensor_installs_its_package_when_asked(tmp_path):
    files = _vendored(tmp_path, "-DVENDORED_MODULE=OFF", "-DDLTENSOR_INSTALL=ON")
    assert "dltensor/include/dltensor/nanobind.h" in files and "dltensor/cmake/dltensorConfig.cmake" in files
