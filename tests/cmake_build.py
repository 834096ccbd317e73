"""Configures and builds a CMake project against this checkout's dltensor headers and the installed
nanobind and pybind11 packages.

Shared by the tests (the C++ test module, the downstream project, the examples) and the benchmark
runner. dltensor itself comes from the checkout's build tree (``dltensor_package_dir()``), never from a
copy installed in site-packages: editing a header and rerunning pytest tests the edited header.
"""
import contextlib
import fcntl
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def dltensor_package_dir() -> str:
    """A dltensor CMake package whose target points at this checkout's ``cpp/include`` (the root
    project's build tree, configured once into ``tests/.build/dltensor-package``). Outside a checkout
    (an installed copy of the tests), the installed package."""
    if not (REPO / "CMakeLists.txt").is_file() or not (REPO / "cpp" / "include" / "dltensor").is_dir():
        import dltensor
        return dltensor.cmake_dir()
    build = REPO / "tests" / ".build" / "dltensor-package"
    with build_lock(build):
        if package_is_stale(build / "dltensorConfig.cmake", package_inputs()):
            run([sys.executable, "-m", "cmake", "-S", str(REPO), "-B", str(build)])
    return str(build)


def package_inputs() -> list:
    """What the generated package is made from: the root CMakeLists.txt, the package config template
    (cmake/*.in: the core library's flags live there) and the version's source."""
    return [REPO / "CMakeLists.txt", *sorted((REPO / "cmake").glob("*.in")),
            REPO / "python" / "dltensor" / "__init__.py"]


def package_is_stale(config: Path, inputs) -> bool:
    """True when `config` (the generated dltensorConfig.cmake) is missing or older than any of `inputs`:
    an edit of the package template is then configured again, not tested against the old one."""
    if not config.is_file():
        return True
    made = config.stat().st_mtime
    return any(p.is_file() and p.stat().st_mtime > made for p in inputs)


@contextlib.contextmanager
def build_lock(build: Path):
    """Holds an exclusive lock on the build dir `build` (a file beside it, `<build>.lock`) for the block:
    pytest-xdist's workers, or two suites at once, that need the same build wait for each other's build
    instead of writing into one tree together; the second then finds it up to date."""
    build.parent.mkdir(parents=True, exist_ok=True)
    with open(build.parent / f"{build.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def cmake_build(source: Path, build: Path, extra_defs=(), targets=(), dltensor_dir=None, python=None,
                steps=True) -> Path:
    """Configures and builds a CMake project (all of it, or `targets`) against the checkout's dltensor
    (or the package at `dltensor_dir`) for the interpreter `python` (default: this one); returns the
    build dir. `extra_defs` come last, so they may override nanobind_DIR / pybind11_DIR. Prints a line
    when a build starts, one per build step (Ninja's `[3/12] Building CXX object ...`) and one when it
    ends, to the terminal, also under pytest's capture; `steps=False` leaves out the step lines."""
    import nanobind

    defs = [
        f"-Ddltensor_DIR={dltensor_dir or dltensor_package_dir()}",
        f"-Dnanobind_DIR={nanobind.cmake_dir()}",
        *_pybind11_dir(),
        f"-DPython_EXECUTABLE={python or sys.executable}",
        "-DCMAKE_BUILD_TYPE=Release",
        *extra_defs,
    ]
    gen = ["-G", "Ninja"] if _has_ninja() else []
    with build_lock(build):
        build.mkdir(parents=True, exist_ok=True)
        start = time.monotonic()
        _progress(f"[dltensor] building {build.relative_to(REPO) if build.is_relative_to(REPO) else build} ...")
        run([sys.executable, "-m", "cmake", "-S", str(source), "-B", str(build), *gen, *defs])
        run([sys.executable, "-m", "cmake", "--build", str(build), "--parallel", str(os.cpu_count() or 2),
             *(["--target", *targets] if targets else [])], steps=steps)
        _progress(f"[dltensor] built in {time.monotonic() - start:.0f} s")
    return build


# Under pytest, tests/conftest.py sets this to a writer that suspends pytest's capture for the line.
progress_writer = None


def _progress(line: str) -> None:
    """Writes a progress line where a person sees it: past pytest's capture when conftest.py set
    `progress_writer`, else the controlling terminal when there is one, else stderr."""
    if progress_writer is not None:
        progress_writer(line)
        return
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(line + "\n")
            return
    except OSError:
        pass
    sys.__stderr__.write(line + "\n")
    sys.__stderr__.flush()


def _pybind11_dir():
    try:
        import pybind11
    except ImportError:
        return []
    return [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]


def _has_ninja() -> bool:
    try:
        import ninja  # noqa: F401
        return True
    except ImportError:
        return False


# A build tool's line for one step: Ninja's "[3/12] Building CXX object ...", Make's "[ 25%] Linking ...".
_STEP = re.compile(r"^\[\s*\d+(?:/\d+|%)\] ")


def run(cmd, steps=False, **popen_args):
    """Runs `cmd`, its output kept for the error message; with `steps`, each build step's line is also
    shown as progress (a long build is not silent)."""
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen_args) as proc:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if steps and _STEP.match(line):
                _progress(f"[dltensor]   {line.rstrip()[:160]}")
    out = "".join(lines)
    if proc.returncode != 0:
        raise RuntimeError(f"command failed: {' '.join(map(str, cmd))}\n{out[-20000:]}")
    return out
