"""Sub-interpreters (docs/reference.md §14): dltensor keeps its Python state per interpreter. Built from
tests/versions (stdlib producers) for Python 3.12 and 3.13 from pyenv, each case in a fresh process:
- isolated sub-interpreters refuse to import a module that does not declare support (nanobind's, and
  pybind11's default);
- a pybind11 module declared `per_interpreter_gil()` works in an isolated sub-interpreter (arguments,
  writes, returns, tensors kept across calls), with its own `dltensor.Tensor` type, also while the main
  interpreter uses the module concurrently (whose type's reference count stays steady);
- a legacy sub-interpreter (shared GIL) works on both backends, and what it made is released with it:
  the main interpreter neither uses it afterwards nor keeps references it took;
- a tensor that C++ kept from a sub-interpreter and drops in another interpreter is leaked, never
  released under the wrong interpreter.
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
a = array.array('d', [1, 2])
assert m.sum(a) == 3
m.scale(a, 2.0)
assert a.tolist() == [2.0, 4.0]
t = m.arange(3)
assert memoryview(t).tolist() == [0.0, 1.0, 2.0]
frees = m.frees()[1]
del t
assert m.frees()[1] == frees + 1, "a returned tensor's owner is freed with it"
assert memoryview(m.adopt_range(4)).tolist() == [0.0, 1.0, 2.0, 3.0]
assert m.keep(array.array('d', [5.0])) >= 1 and m.kept_sum() >= 5.0
m.release()
print("SUB OK", id(type(m.arange(1))), flush=True)
"""

SUB_LOOP = """
import array
import {module} as m
for i in range(2000):
    assert memoryview(m.arange(2)).tolist() == [0.0, 1.0]
    assert m.sum(array.array('d', [float(i)])) == i
print("SUB LOOP OK", flush=True)
"""


@pytest.mark.parametrize("version", VERSIONS)
def test_per_interpreter_gil_module_works_in_an_isolated_sub_interpreter(version):
    python, build = built(version, "pybind11")
    sub = SUB_CALLS.format(module="dltensor_versions_pybind11_subinterp")
    out = run(python, build, f"""
        import array
        import dltensor_versions_pybind11_subinterp as m
        main_type = type(m.arange(1))
        for _ in range(2):
            failure = run_isolated({sub!r})
            if failure is not None:
                print("SUB FAILED", failure)
        assert m.sum(array.array('d', [1, 2, 3])) == 6
        assert memoryview(m.arange(3)).tolist() == [0.0, 1.0, 2.0] and type(m.arange(1)) is main_type
        print("MAIN OK", id(main_type))
    """)
    assert out.stdout.count("SUB OK") == 2 and "SUB FAILED" not in out.stdout, out.stdout + out.stderr
    assert "MAIN OK" in out.stdout, out.stdout + out.stderr
    ids = [line.split()[-1] for line in out.stdout.splitlines() if line.startswith(("SUB OK", "MAIN OK"))]
    assert len(set(ids)) == 3, "each interpreter has its own dltensor.Tensor type: " + out.stdout


@pytest.mark.parametrize("version", VERSIONS)
def test_concurrent_isolated_sub_interpreter_works_and_leaves_the_main_type_alone(version):
    python, build = built(version, "pybind11")
    sub = SUB_LOOP.format(module="dltensor_versions_pybind11_subinterp")
    out = run(python, build, f"""
        import array, sys, threading
        import dltensor_versions_pybind11_subinterp as m
        T = type(m.arange(1))
        before = sys.getrefcount(T)
        failures = []
        worker = threading.Thread(target=lambda: failures.append(run_isolated({sub!r})))
        worker.start()
        for i in range(2000):
            assert memoryview(m.arange(2)).tolist() == [0.0, 1.0]
            assert m.sum(array.array('d', [float(i)])) == i
        worker.join()
        print("FAILURES", failures)
        print("DRIFT", sys.getrefcount(T) - before)
    """)
    assert "SUB LOOP OK" in out.stdout and "FAILURES [None]" in out.stdout, out.stdout + out.stderr
    assert "DRIFT 0" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("version", VERSIONS)
def test_legacy_sub_interpreter_works_and_leaves_no_state_behind(version, backend):
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
        print("MAIN OK", id(type(t)))
    """)
    assert out.stdout.count("SUB OK") == 1 and "MAIN OK" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("version", VERSIONS)
def test_sub_interpreter_state_lives_and_dies_with_its_interpreter(version, backend):
    """dltensor's count of sub-interpreters holding its state: one while the sub-interpreter runs, none
    once it is gone (its states were freed with its dict)."""
    python, build = built(version, backend)
    sub = (f"import sys; sys.path.insert(0, {str(build)!r})\nimport array\n"
           f"import dltensor_versions_{backend} as m\n"
           "assert m.sum(array.array('d', [1.0])) == 1\nprint('DURING', m.sub_interpreters_in_use(), flush=True)")
    out = run(python, build, f"""
        import _testcapi
        import dltensor_versions_{backend} as m
        print("BEFORE", m.sub_interpreters_in_use())
        assert _testcapi.run_in_subinterp({sub!r}) == 0
        print("AFTER", m.sub_interpreters_in_use())
        assert _testcapi.run_in_subinterp({sub!r}) == 0
        print("AFTER", m.sub_interpreters_in_use())
    """)
    assert "BEFORE 0" in out.stdout and out.stdout.count("DURING 1") == 2, out.stdout + out.stderr
    assert out.stdout.count("AFTER 0") == 2, out.stdout + out.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_tensor_kept_from_a_dead_sub_interpreter_is_leaked_not_released_by_main(version):
    python, build = built(version, "pybind11")
    sub = ("import array\nimport dltensor_versions_pybind11_subinterp as m\n"
           "for _ in range(50): m.keep(array.array('d', [1.0] * 1000))\n")
    out = run(python, build, f"""
        import gc
        import dltensor_versions_pybind11_subinterp as m
        failure = run_isolated({sub!r})
        print("SUB", failure)
        m.release()   # 50 tensors whose owners were the dead interpreter's
        gc.collect()
        print("MAIN OK")
    """)
    assert out.returncode == 0 and "SUB None" in out.stdout and "MAIN OK" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_thread_that_ran_a_destroyed_sub_interpreter_uses_the_next_ones_own_state(version):
    """One worker thread runs two isolated sub-interpreters in turn; the first is destroyed by the main
    thread (so the worker never sees its end) before the second runs."""
    python, build = built(version, "pybind11")
    sub = SUB_CALLS.format(module="dltensor_versions_pybind11_subinterp")
    out = run(python, build, f"""
        import queue, threading
        jobs, results = queue.Queue(), queue.Queue()
        def worker():
            while (job := jobs.get()) is not None:
                try:
                    results.put(interpreters.run_string(job, "import sys; sys.path.insert(0, {str(build)!r})\\n" + {sub!r}))
                except Exception as e:
                    results.put(e)
        thread = threading.Thread(target=worker)
        thread.start()
        for _ in range(3):
            iid = interpreters.create()
            jobs.put(iid)
            print("RUN", results.get(), flush=True)
            interpreters.destroy(iid)
        jobs.put(None)
        thread.join()
        import dltensor_versions_pybind11_subinterp as m
        print("IN USE", m.sub_interpreters_in_use())
    """)
    assert out.returncode == 0 and out.stdout.count("RUN None") == 3, out.stdout + out.stderr
    assert out.stdout.count("SUB OK") == 3 and "IN USE 0" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_main_interpreter_tensor_dropped_in_a_sub_interpreter_is_leaked_not_released_there(version):
    """C++ keeps a tensor from the main interpreter; a sub-interpreter that makes no tensor call of its own
    drops it (isolated: its own allocator; legacy: the shared one): its owner stays alive, untouched."""
    python, build = built(version, "pybind11")
    sub = "import dltensor_versions_pybind11_subinterp as m\nm.release()\n"
    out = run(python, build, f"""
        import array, weakref, _testcapi
        import dltensor_versions_pybind11_subinterp as m
        class Buffer(array.array):
            pass
        for sub_interpreter in ("isolated", "legacy"):
            a = Buffer('d', [4.0, 5.0])
            alive = weakref.ref(a)
            m.keep(a)
            del a
            if sub_interpreter == "isolated":
                print("SUB", run_isolated({sub!r}))
            else:
                print("SUB", _testcapi.run_in_subinterp("import sys; sys.path.insert(0, {str(build)!r})\\n" + {sub!r}))
            print(sub_interpreter, "OWNER ALIVE", alive() is not None, flush=True)
    """)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "isolated OWNER ALIVE True" in out.stdout and "legacy OWNER ALIVE True" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_first_call_in_a_sub_interpreter_may_be_a_return(version):
    """The sub-interpreter's first dltensor call builds a tensor with an owner in C++ and returns it: the
    owner is that interpreter's, freed there when the tensor goes."""
    python, build = built(version, "pybind11")
    sub = ("import dltensor_versions_pybind11_subinterp as m\n"
           "before = m.frees()[1]\nt = m.arange(3)\nassert memoryview(t).tolist() == [0.0, 1.0, 2.0]\n"
           "del t\nprint('FREED', m.frees()[1] - before, flush=True)\n")
    out = run(python, build, f"""
        import dltensor_versions_pybind11_subinterp as m
        print("SUB", run_isolated({sub!r}))
    """)
    assert "FREED 1" in out.stdout and "SUB None" in out.stdout, out.stdout + out.stderr
