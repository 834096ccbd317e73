"""Sub-interpreters (docs/reference.md §14): dltensor runs in the main interpreter only. Built from
tests/versions (stdlib producers) for Python 3.12 and 3.13 from pyenv, each case in a fresh process:
- isolated sub-interpreters refuse to import a module that does not declare support (nanobind's, and
  pybind11's default);
- a pybind11 module declared `per_interpreter_gil()`: in a sub-interpreter every tensor argument and
  return raises RuntimeError, also while the main interpreter uses the module concurrently (whose own
  calls keep working, with the `dltensor.Tensor` type's reference count steady);
- a legacy sub-interpreter (shared GIL) that uses a module first is refused, and leaves no state behind
  that the main interpreter would use after the sub-interpreter is gone.
"""
import subprocess
import textwrap

import pytest

from cmake_build import cmake_build
from test_python_versions import BUILD_ROOT, SOURCE, _clean_env, find_python, skip_missing

VERSIONS = ["3.12", "3.13"]
BACKENDS = ["nanobind", "pybind11"]

PRELUDE = """
import sys
sys.path.insert(0, {build!r})
try:
    import _interpreters as interpreters          # Python 3.13
except ImportError:
    import _xxsubinterpreters as interpreters     # Python 3.12

def run_isolated(code):
    '''Runs `code` in a new isolated sub-interpreter (its own GIL); returns its failure, or None.'''
    iid = interpreters.create()
    try:
        try:
            return interpreters.run_string(iid, "import sys; sys.path.insert(0, {build!r})" + chr(10) + code)
        except Exception as e:  # 3.12 raises RunFailedError
            return e
    finally:
        interpreters.destroy(iid)
"""


def built(version, backend):
    python = find_python(version)
    if python is None:
        skip_missing(version)
    build = cmake_build(SOURCE, BUILD_ROOT / f"{version}-{backend}", [f"-DDLTENSOR_VERSIONS_BACKEND={backend}"],
                        python=python)
    return python, build


def run(python, build, body):
    code = textwrap.dedent(PRELUDE.format(build=str(build))) + textwrap.dedent(body)
    return subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300, env=_clean_env())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("version", VERSIONS)
def test_isolated_sub_interpreter_refuses_to_import_a_module_without_support(version, backend):
    python, build = built(version, backend)
    out = run(python, build, f"""
        failure = run_isolated("import dltensor_versions_{backend}")
        print("REFUSED" if failure is not None and "ImportError" in repr(failure) else "IMPORTED", failure)
    """)
    assert "REFUSED" in out.stdout, out.stdout + out.stderr


SUB_CALLS = """
import array
import {module} as m
for call in (lambda: m.sum(array.array('d', [1, 2])), lambda: m.arange(3)):
    try:
        call()
        print("SUB BOUND", flush=True)
    except (RuntimeError, TypeError) as e:
        print("SUB REFUSED" if "only the main interpreter" in str(e) or "incompatible" in str(e)
              else "SUB OTHER " + str(e), flush=True)
"""

SUB_LOOP = """
import {module} as m
for _ in range(2000):
    try:
        m.arange(2)
    except RuntimeError:
        pass
"""


@pytest.mark.parametrize("version", VERSIONS)
def test_per_interpreter_gil_module_refuses_tensors_in_a_sub_interpreter(version):
    python, build = built(version, "pybind11")
    sub = SUB_CALLS.format(module="dltensor_versions_pybind11_subinterp")
    out = run(python, build, f"""
        import array
        import dltensor_versions_pybind11_subinterp as m
        failure = run_isolated({sub!r})
        if failure is not None:
            print("SUB FAILED", failure)
        assert m.sum(array.array('d', [1, 2, 3])) == 6
        assert memoryview(m.arange(3)).tolist() == [0.0, 1.0, 2.0]
        print("MAIN OK")
    """)
    assert out.stdout.count("SUB REFUSED") == 2 and "SUB BOUND" not in out.stdout, out.stdout + out.stderr
    assert "MAIN OK" in out.stdout and "SUB FAILED" not in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_concurrent_sub_interpreter_leaves_the_tensor_type_alone(version):
    python, build = built(version, "pybind11")
    sub = SUB_LOOP.format(module="dltensor_versions_pybind11_subinterp")
    out = run(python, build, f"""
        import array, sys, threading
        import dltensor_versions_pybind11_subinterp as m
        T = type(m.arange(1))
        before = sys.getrefcount(T)
        worker = threading.Thread(target=run_isolated, args=({sub!r},))
        worker.start()
        for _ in range(2000):
            m.arange(2)
            m.sum(array.array('d', [1.0]))
        worker.join()
        print("DRIFT", sys.getrefcount(T) - before)
    """)
    assert "DRIFT 0" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("version", VERSIONS)
def test_legacy_sub_interpreter_used_first_leaves_no_state_behind(version, backend):
    python, build = built(version, backend)
    sub = f"import sys; sys.path.insert(0, {str(build)!r})" + SUB_CALLS.format(module=f"dltensor_versions_{backend}")
    out = run(python, build, f"""
        import _testcapi
        assert _testcapi.run_in_subinterp({sub!r}) == 0
        import array
        import dltensor_versions_{backend} as m
        assert m.sum(array.array('d', [1, 2, 3])) == 6
        t = m.arange(3)
        assert memoryview(t).tolist() == [0.0, 1.0, 2.0] and type(t).__name__ == "Tensor"
        print("MAIN OK")
    """)
    assert out.stdout.count("SUB REFUSED") == 2 and "MAIN OK" in out.stdout, out.stdout + out.stderr
