"""dltensor as a dependency, the way an extension author ships one.

tests/downstream_package: a pip-installable package (pyproject.toml for scikit-build-core, CMakeLists.txt,
one source for both backends), built by `pip wheel` with build isolation: dltensor from a folder holding
a wheel of this checkout (PIP_FIND_LINKS, as README's "Use it in your package" says), scikit-build-core,
nanobind and pybind11 from the index. Its wheel must hold both modules (scikit-build-core builds a wheel
without them when the CMakeLists lacks install(TARGETS ...)), their stubs (dltensor_add_stub) and no dltensor
file, and must work from a fresh virtual environment, where type checkers read the stubs without dltensor.

tests/vendored: a parent project that add_subdirectory()s (or FetchContent's) this checkout: its
`cmake --install` must install the parent's module and none of dltensor's files, unless DLTENSOR_INSTALL=ON.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import pytest

from cmake_build import _has_ninja, _progress, _pybind11_dir, run
from conftest import HERE, names_dltensor

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
def build_python(tmp_path_factory) -> Path:
    """The interpreter of a new virtual environment that a build of tests/downstream_package runs for: none of
    the build requirements there (the build environment alone has them), and a decoy dltensor whose CMake
    package stops any build that finds it (scikit-build-core puts this environment's site-packages on CMake's
    search path ahead of the build environment's)."""
    env_dir = tmp_path_factory.mktemp("build-venv")
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "dltensor" / "cmake").mkdir(parents=True)
    (site / "dltensor" / "cmake" / "dltensorConfig.cmake").write_text(
        'message(FATAL_ERROR "found the dltensor installed where pip runs, not the build requirement")\n')
    return python


@pytest.fixture(scope="module")
def downstream_wheel(dltensor_wheel_dir, build_python, tmp_path_factory):
    """tests/downstream_package built by `pip wheel` with build isolation, dltensor found through
    PIP_FIND_LINKS (only that folder: the index has no dltensor), for `build_python`'s environment."""
    out = tmp_path_factory.mktemp("downstream-wheel")
    env = dict(os.environ, PIP_FIND_LINKS=str(dltensor_wheel_dir))
    env.pop("PIP_NO_BUILD_ISOLATION", None)
    _timed("pip wheel tests/downstream_package (build isolation)",
           [sys.executable, "-m", "pip", "--python", str(build_python), "wheel", str(PACKAGE), "-w", str(out),
            "--no-deps"], env=env)
    (wheel,) = out.glob("downstream_package-*.whl")
    return wheel


def test_downstream_wheel_holds_both_modules_and_no_dltensor_file(downstream_wheel):
    names = zipfile.ZipFile(downstream_wheel).namelist()
    for module in MODULES:  # at the top of site-packages: install(TARGETS ... LIBRARY DESTINATION .)
        assert [n for n in names if n.startswith(module + ".") and n.endswith((".so", ".pyd"))], (module, names)
    assert not [n for n in names if n.startswith("dltensor")], names  # headers are build requirements only
    for module in MODULES:  # dltensor_add_stub's stubs, as stub-only packages (PEP 561), without dltensor
        stub = zipfile.ZipFile(downstream_wheel).read(f"{module}-stubs/__init__.pyi").decode()
        assert "def norms(" in stub and "def total(" in stub and "def scale_(" in stub, stub
        assert not names_dltensor(stub), stub


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
            "    assert 'argument 1, a numpy.ndarray: shape (2, 4), expected (*, 3)' in str(e), e  # explain_refusals\n"
            "else:\n"
            "    raise AssertionError('a (2, 4) array bound to shape (-1, 3)')\n"
            "assert abs(ext.total([0.1] * 10) - 1.0) < 1e-12  # a list converts for the float64 overload first\n"
            "a = np.ones(3, np.float32)\n"
            "ext.scale_(a, 2.0)\n"
            "assert a.tolist() == [2.0, 2.0, 2.0], a\n"
            "import importlib.util\n"
            "assert importlib.util.find_spec('dltensor') is None  # not a run-time dependency\n")
    proc = subprocess.run([str(fresh_venv), "-c", code], capture_output=True, text=True, cwd=fresh_venv.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# A user's code against the installed stubs; `# E`: a line the type checkers must flag.
USER_CODE = """\
import numpy as np
import numpy.typing as npt
import torch
import jax.numpy as jnp
import MODULE as ext

r: npt.NDArray[np.float32] = ext.norms(np.zeros((2, 3), np.float32))
ext.norms(torch.zeros(2, 3))
ext.norms(jnp.zeros((2, 3)))
ext.norms([[1.0, 2.0, 3.0]])
ext.scale_(np.zeros(3, np.float32), 2.0)
t: float = ext.total(np.zeros(3, np.float32))
ext.total(torch.zeros(3, dtype=torch.float64))
ext.norms("abc")  # E
ext.total(3)  # E
"""


def _frameworks_beside(fresh_site: Path, tmp_path: Path) -> None:
    """This environment's PyTorch and JAX made visible to the fresh venv (links in a folder that a .pth file
    there names), for the type checkers to read their types as a user who has them installed would;
    dltensor stays out of it."""
    import importlib.util
    folder = tmp_path / "frameworks"
    folder.mkdir()
    for name in ("torch", "jax", "jaxlib", "ml_dtypes"):
        (folder / name).symlink_to(Path(importlib.util.find_spec(name).origin).parent)
    (fresh_site / "frameworks-for-type-checking.pth").write_text(str(folder) + "\n")


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
@pytest.mark.parametrize("module", MODULES)
def test_installed_stubs_type_check_without_dltensor(fresh_venv, module, checker, tmp_path):
    pytest.importorskip(checker)
    for framework in ("torch", "jax"):
        pytest.importorskip(framework)
    proc = subprocess.run([str(fresh_venv), "-c", "import importlib.util, sysconfig; "
                           "assert importlib.util.find_spec('dltensor') is None; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True)
    fresh_site = Path(proc.stdout.strip())
    stub = fresh_site / f"{module}-stubs" / "__init__.pyi"
    code = tmp_path / "user_code.py"
    code.write_text(USER_CODE.replace("MODULE", module))
    _frameworks_beside(fresh_site, tmp_path)
    if checker == "mypy":
        cmd = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", f"--python-executable={fresh_venv}",
               str(code), str(stub)]
    else:
        config = {"typeCheckingMode": "standard", "reportMissingModuleSource": False}
        (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
        cmd = [sys.executable, "-m", "pyright", "--pythonpath", str(fresh_venv), str(code), str(stub)]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    text = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env).stdout
    flagged = {i + 1 for i, line in enumerate(USER_CODE.splitlines()) if line.endswith("# E")}
    errors = {int(m.group(1)) for m in re.finditer(r"user_code\.py:(\d+):(?:\d+ -)? ?error", text)}
    assert errors == flagged, text
    assert not re.search(re.escape(str(stub)) + r":\d+:(?:\d+ -)? ?error", text), text  # the stub as it stands


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
