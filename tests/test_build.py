"""The test modules compile against this checkout's headers, never a copy installed in site-packages:
editing a header and rerunning pytest tests the edited header."""
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BUILD_ROOT, SANITIZE, load_backend

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_test_module_includes_the_checkouts_headers(backend):
    load_backend(backend)
    ninja = pytest.importorskip("ninja")
    build = BUILD_ROOT / ("tests-sanitized" if SANITIZE else "tests")
    deps = subprocess.run([str(Path(ninja.BIN_DIR) / "ninja"), "-C", str(build), "-t", "deps"],
                          capture_output=True, text=True, check=True).stdout
    headers = {line.strip() for line in deps.splitlines() if "/dltensor/" in line and line.strip().endswith(".h")}
    assert headers, "no dltensor header among the test module's dependencies"
    checkout = REPO / "cpp" / "include" / "dltensor"
    for h in headers:
        assert checkout in Path(h).resolve().parents, h
    assert str(Path(sys.prefix)) not in " ".join(headers)
