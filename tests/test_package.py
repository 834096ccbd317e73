"""The installed package: include_dir(), cmake_dir(), the CLI, and a separate CMake project that finds
dltensor with find_package(dltensor CONFIG REQUIRED) and imports, as an extension author would."""
import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dltensor
from cmake_build import cmake_build
from conftest import BUILD_ROOT, HERE

torch = pytest.importorskip("torch")
jnp = pytest.importorskip("jax.numpy")


def test_include_dir_holds_the_headers():
    inc = Path(dltensor.include_dir())
    for header in ("nanobind.h", "dlpack.h", "dtypes.h", "requirements.h", "import.h"):
        assert (inc / "dltensor" / header).is_file()


def test_cmake_dir_holds_the_package_config():
    cm = Path(dltensor.cmake_dir())
    assert (cm / "dltensorConfig.cmake").is_file()
    assert (cm / "dltensorConfigVersion.cmake").is_file()
    assert dltensor.__version__ in (cm / "dltensorConfigVersion.cmake").read_text()


@pytest.mark.parametrize("flag, expected", [("--include_dir", dltensor.include_dir),
                                            ("--cmake_dir", dltensor.cmake_dir)])
def test_command_line(flag, expected):
    out = subprocess.run([sys.executable, "-m", "dltensor", flag], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected()


def test_command_line_rejects_no_flag():
    assert subprocess.run([sys.executable, "-m", "dltensor"], capture_output=True).returncode != 0


@pytest.fixture(scope="module")
def downstream_build():
    return cmake_build(HERE / "downstream", BUILD_ROOT / "downstream")


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
        assert isinstance(r, np.ndarray) and r.tolist() == [9.0, 25.0]
    a = np.ones(3, np.float32)
    ext.scale(a, 2.0)
    assert a.tolist() == [2, 2, 2]
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.scale(np.ones(3), 2.0)  # float64 into a writable float parameter: no silent copy
