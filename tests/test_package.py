"""The installed package: include_dir(), cmake_dir(), the CLI; the wheel (pure, with its license); and a
separate CMake project (tests/downstream) that finds dltensor with find_package(dltensor CONFIG REQUIRED),
configured and built with the exact command lines docs/getting-started.md shows, as an extension author would."""
import importlib
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

import dltensor
from cmake_build import _progress, run
from conftest import BUILD_ROOT, HERE

ROOT = HERE.parent

torch = pytest.importorskip("torch")
jnp = pytest.importorskip("jax.numpy")


def test_include_dir_holds_the_headers():
    inc = Path(dltensor.include_dir())
    for header in ("nanobind.h", "tensor/dlpack.h", "tensor/dtypes.h", "tensor/requirements.h", "core/import.h"):
        assert (inc / "dltensor" / header).is_file()


def test_cmake_dir_holds_the_package_config():
    cm = Path(dltensor.cmake_dir())
    assert (cm / "dltensorConfig.cmake").is_file()
    assert (cm / "dltensorConfigVersion.cmake").is_file()
    assert dltensor.__version__ in (cm / "dltensorConfigVersion.cmake").read_text()


@pytest.mark.parametrize("flag, expected", [("--include_dir", dltensor.include_dir),
                                            ("--cmake_dir", dltensor.cmake_dir),
                                            ("--includedir", dltensor.include_dir),  # pybind11's spellings
                                            ("--cmakedir", dltensor.cmake_dir)])
def test_command_line(flag, expected):
    out = subprocess.run([sys.executable, "-m", "dltensor", flag], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected()


def test_command_line_rejects_no_flag():
    assert subprocess.run([sys.executable, "-m", "dltensor"], capture_output=True).returncode != 0


def readme_build_commands():
    """docs/getting-started.md's configure and build lines for a downstream project: the `sh` block that sets
    dltensor_DIR (one command per line)."""
    text = (ROOT / "docs" / "getting-started.md").read_text()
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        if "-Ddltensor_DIR=" in block:
            return [line for line in block.splitlines() if line.strip()]
    raise AssertionError("docs/getting-started.md shows no configure line with -Ddltensor_DIR")


def test_configure_line_names_every_package_dir():
    configure = readme_build_commands()[0]
    for flag in ("-Ddltensor_DIR=$(python -m dltensor --cmake_dir)",
                 "-Dnanobind_DIR=$(python -m nanobind --cmake_dir)",
                 "-Dpybind11_DIR=$(python -m pybind11 --cmakedir)"):
        assert flag in configure, f"the configure line lacks {flag}"


@pytest.fixture(scope="module")
def downstream_build():
    """tests/downstream, configured and built by running docs/getting-started.md's command lines verbatim (bash) in a
    copy of the project, with this interpreter's environment first on PATH, as an activated virtual
    environment would be. The installed dltensor package is the one found, as for a user."""
    src = BUILD_ROOT / "downstream-readme"
    src.mkdir(parents=True, exist_ok=True)
    for f in (HERE / "downstream").iterdir():
        if f.is_file() and (not (src / f.name).exists() or (src / f.name).read_bytes() != f.read_bytes()):
            shutil.copy2(f, src / f.name)  # unchanged files keep their time stamps: rebuilds stay incremental
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if sys.prefix != sys.base_prefix:
        env["VIRTUAL_ENV"] = sys.prefix  # what `. .venv/bin/activate` sets; CMake's FindPython reads it
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    if shutil.which("ninja", path=env["PATH"]):
        env.setdefault("CMAKE_GENERATOR", "Ninja")
    cache = src / "build" / "CMakeCache.txt"
    if cache.exists() and f"CMAKE_GENERATOR:INTERNAL={env.get('CMAKE_GENERATOR', 'Unix Makefiles')}\n" \
            not in cache.read_text():
        shutil.rmtree(src / "build")  # configured with another generator earlier
    start = time.monotonic()
    _progress(f"[dltensor] building {src.relative_to(ROOT) if src.is_relative_to(ROOT) else src} with docs/getting-started.md's "
              "commands ...")
    for command in readme_build_commands():
        run(["bash", "-c", command], steps=True, cwd=src, env=env)  # a line per build step; raises on failure
    _progress(f"[dltensor] built in {time.monotonic() - start:.0f} s")
    return src / "build"


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_downstream_project_builds_and_behaves(downstream_build, backend):
    sys.path.insert(0, str(downstream_build))
    try:
        ext = importlib.import_module(f"downstream_ext_{backend}")
    finally:
        sys.path.remove(str(downstream_build))
    pts = [[1, 2, 2], [0, 3, 4]]
    for x in (np.array(pts, np.float32), torch.tensor(pts), jnp.array(pts, jnp.float32)):
        r = ext.norms(x)
        assert isinstance(r, np.ndarray) and r.tolist() == [3.0, 5.0]
    a = np.ones(3, np.float32)
    ext.scale(a, 2.0)
    assert a.tolist() == [2, 2, 2]
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.scale(np.ones(3), 2.0)  # float64 into a writable float parameter: no silent copy


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_downstream_scale_refuses_strided_views_it_would_write_wrongly(downstream_build, backend):
    # `scale` loops over data()[0 .. size()): py::c_contig makes that every element of its argument, and
    # refuses (writable: never a copy) the views whose elements lie elsewhere.
    sys.path.insert(0, str(downstream_build))
    try:
        ext = importlib.import_module(f"downstream_ext_{backend}")
    finally:
        sys.path.remove(str(downstream_build))
    base = np.arange(8, dtype=np.float32)
    for view in (base[::2], base[::-1], base.reshape(2, 4).T, torch.from_numpy(base)[1::3]):
        with pytest.raises(TypeError, match="incompatible function arguments"):
            ext.scale(view, 10.0)
    assert base.tolist() == list(range(8))  # nothing written
    with pytest.raises(TypeError) as e:  # unnamed parameters (no py::arg): the notes call them arg0, arg1
        dltensor.explain(ext.scale, base[::2], 10.0)
    assert len(e.value.__notes__) == 1 and e.value.__notes__[0].startswith("dltensor: argument `arg0` (numpy.ndarray): ")
    ext.scale(base[2:6], 10.0)  # a contiguous slice: exactly its elements change
    assert base.tolist() == [0, 1, 20, 30, 40, 50, 6, 7]
    m = base.reshape(2, 4)
    ext.scale(m, 0.5)  # any rank
    assert m.tolist() == [[0, 0.5, 10, 15], [20, 25, 3, 3.5]]


def test_build_requires_no_binding_library():
    tomllib = pytest.importorskip("tomllib")
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    assert not [r for r in requires if re.match(r"(nanobind|pybind11)\b", r)], requires


def test_wheel_is_pure_and_carries_the_license(tmp_path):
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("not a checkout")
    pytest.importorskip("scikit_build_core")  # in the test extras: build here, without an isolated env
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "-w", str(tmp_path), "--no-deps",
                           "--no-build-isolation", "-q"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name == f"dltensor-{dltensor.__version__}-py3-none-any.whl"
    info = f"dltensor-{dltensor.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert z.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        assert "Root-Is-Purelib: true" in z.read(f"{info}/WHEEL").decode()
        metadata = z.read(f"{info}/METADATA").decode()
        entry_points = z.read(f"{info}/entry_points.txt").decode()
    assert "License-Expression: BSD-3-Clause" in metadata
    assert "Classifier: " in metadata
    # one entry point, scikit-build-core's dltensor_ROOT (pyproject.toml); no console script: `python -m
    # dltensor` is the CLI
    assert [line.strip() for line in entry_points.splitlines() if line.strip()] == ["[cmake.root]",
                                                                                   "dltensor = dltensor"], entry_points
    include = ROOT / "cpp" / "include" / "dltensor"
    headers = {f"dltensor/include/dltensor/{h.relative_to(include).as_posix()}" for h in include.rglob("*.h")}
    assert headers <= names and "dltensor/cmake/dltensorConfig.cmake" in names
    assert "dltensor/src/core.cpp" in names  # the core the CMake package compiles once
