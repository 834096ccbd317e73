"""Ready to publish: `python -m build` makes an sdist and a wheel (the wheel built from the sdist), that
wheel has the same files as one built straight from the checkout, `twine check --strict` accepts both
(metadata, and the README rendered as PyPI renders it), and the version is written once: `__version__` in
python/dltensor/__init__.py, which pyproject.toml (scikit-build-core's regex provider) and CMakeLists.txt
read.

`build` and `twine` come with the test extra (pyproject.toml)."""
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from cmake_build import _progress, run
from conftest import HERE

ROOT = HERE.parent
VERSION_LINE = re.compile(r'^__version__ = "(\d+\.\d+\.\d+)"$', re.M)


def checkout_version() -> str:
    (version,) = VERSION_LINE.findall((ROOT / "python" / "dltensor" / "__init__.py").read_text())
    return version


def test_version_is_written_only_in_the_package():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    provider = project["tool"]["scikit-build"]["metadata"]["version"]
    assert provider == {"provider": "scikit_build_core.metadata.regex", "input": "python/dltensor/__init__.py"}
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(r"^project\(dltensor VERSION \$\{_dltensor_version\}", cmake, re.M)
    assert checkout_version() not in cmake


def _names(archive: Path) -> list:
    if archive.suffix == ".whl":
        return sorted(zipfile.ZipFile(archive).namelist())
    with tarfile.open(archive) as t:
        return sorted(m.name for m in t.getmembers() if m.isfile())


def _module(name):
    try:
        __import__(name)
    except ImportError:
        pytest.skip(f"{name} is not installed (it is in the test extra)")


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """`python -m build` of the checkout (the sdist, then the wheel built from it) and, beside it, a wheel
    built straight from the checkout. Without build isolation: scikit-build-core is in the test extra."""
    _module("build")
    out = tmp_path_factory.mktemp("dist")
    _progress("[dltensor] python -m build (sdist, wheel from the sdist, wheel from the checkout) ...")
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out / "from-sdist"), str(ROOT)])
    run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(out / "from-checkout"),
         str(ROOT)])
    (sdist,) = (out / "from-sdist").glob("*.tar.gz")
    (wheel,) = (out / "from-sdist").glob("*.whl")
    (direct,) = (out / "from-checkout").glob("*.whl")
    return sdist, wheel, direct


def test_build_makes_an_sdist_and_a_wheel_of_the_checkouts_version(dist):
    sdist, wheel, _ = dist
    version = checkout_version()
    assert sdist.name == f"dltensor-{version}.tar.gz"
    assert wheel.name == f"dltensor-{version}-py3-none-any.whl"
    names = _names(sdist)
    for f in ("pyproject.toml", "CMakeLists.txt", "cmake/dltensorConfig.cmake.in", "LICENSE", "README.md",
              "python/dltensor/__init__.py", "cpp/include/dltensor/nanobind.h", "PKG-INFO"):
        assert f"dltensor-{version}/{f}" in names, f
    assert not [n for n in names if "/.build/" in n or "/.venv/" in n or "__pycache__" in n], "build output in sdist"
    with zipfile.ZipFile(wheel) as z:
        metadata = z.read(f"dltensor-{version}.dist-info/METADATA").decode()
        config_version = z.read("dltensor/cmake/dltensorConfigVersion.cmake").decode()
    assert f"\nVersion: {version}\n" in metadata
    assert f'set(PACKAGE_VERSION "{version}")' in config_version  # CMake's package version is the same


def test_wheel_from_the_sdist_equals_the_wheel_from_the_checkout(dist):
    _, wheel, direct = dist
    assert _names(wheel) == _names(direct)
    with zipfile.ZipFile(wheel) as a, zipfile.ZipFile(direct) as b:
        differ = [n for n in a.namelist() if not n.endswith("RECORD") and a.read(n) != b.read(n)]
    assert not differ, differ


def test_twine_check_accepts_the_distributions(dist):
    _module("twine")
    sdist, wheel, _ = dist
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.count("PASSED") == 2, proc.stdout + proc.stderr
