"""PaddlePaddle as a framework (tests/paddle_cases.py), run in a process of its own: PaddlePaddle 3.3
crashes the interpreter (SIGSEGV while loading its own library) when it is imported after TensorFlow,
which the rest of the suite imports, and it installs C-level handlers for SIGINT, SIGSEGV and other
signals that the interrupt and crash tests of this suite must not see. The child process runs the same
backends and import paths as this session (DLTENSOR_BACKENDS / DLTENSOR_PATHS pass through)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def paddle_installed() -> bool:
    """Without importing it here (see the module docstring)."""
    import importlib.util
    return importlib.util.find_spec("paddle") is not None


@pytest.mark.skipif(not paddle_installed(), reason="PaddlePaddle is not installed (the test extras install it)")
def test_paddle_cases_pass_in_a_process_without_tensorflow():
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:  # the sanitized suite (tools/sanitize.sh): libpaddle itself frees with `delete`
        # what it allocated with `new[]` (pir::IrContext's destructor, at exit), which ASan would abort on
        env["ASAN_OPTIONS"] += ":alloc_dealloc_mismatch=0"
        # ... and with the sanitizer runtime preloaded, Paddle's loader no longer finds its own bundled
        # libraries (libmklml_intel.so, in paddle/libs): name that folder for it.
        import importlib.util
        libs = os.path.join(importlib.util.find_spec("paddle").submodule_search_locations[0], "libs")
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (libs, env.get("LD_LIBRARY_PATH")) if p)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-x",
                           str(HERE / "paddle_cases.py")],
                          cwd=HERE.parent, capture_output=True, text=True, timeout=3000, env=env)
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, tail
    assert " passed" in proc.stdout and "skipped" not in proc.stdout.splitlines()[-1], tail
