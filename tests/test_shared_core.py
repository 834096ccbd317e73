"""The core as one shared library (CMake option DLTENSOR_SHARED_CORE, config.h: DLTENSOR_CORE_SHARED):
two modules per backend (tests/shared_core) loaded into one process share one libdltensor_core and its
process-wide state; the same modules with the core static in each (the control) keep one copy each.
Every check runs in a subprocess (a wrong shared library is a crash)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cmake_build import cmake_build
from conftest import BUILD_ROOT

SOURCE = Path(__file__).resolve().parent / "shared_core"
MODULES = {"nanobind": ("sc_a_nanobind", "sc_b_nanobind"), "pybind11": ("sc_a_pybind11", "sc_b_pybind11")}

_builds = {}


def build(shared: bool) -> Path:
    if shared not in _builds:
        _builds[shared] = cmake_build(SOURCE, BUILD_ROOT / "shared-core" / ("shared" if shared else "static"),
                                      [f"-DDLTENSOR_SHARED_CORE={'ON' if shared else 'OFF'}"])
    return _builds[shared]


def run(shared: bool, code: str, where=None, before=""):
    """Runs `code` with the four modules imported as a, b (nanobind) and c, d (pybind11) from `where`
    (default: the build tree), `before` ahead of the imports; returns what it printed as JSON."""
    prelude = "import json, sys\nimport numpy as np\nimport dltensor\n"
    imports = ("import sc_a_nanobind as a, sc_b_nanobind as b, sc_a_pybind11 as c, sc_b_pybind11 as d\n"
               "mods = (a, b, c, d)\n")
    proc = subprocess.run([sys.executable, "-c", prelude + before + imports + code], cwd=where or build(shared),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def core_name(path) -> str:
    """A core library's name without its build tree's tag: lib<project>_dltensor_core."""
    return re.sub(r"_[0-9a-f]{12}$", "", Path(path).name.split(".")[0])


def loaded_core_libraries():
    return ("maps = open('/proc/self/maps').read().splitlines()\n"
            "libs = sorted({l.split()[-1] for l in maps if '_dltensor_core' in l})\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_every_module_of_a_shared_core_loads_the_one_library():
    out = run(True, loaded_core_libraries() + "print(json.dumps(libs))")
    assert len(out) == 1 and core_name(out[0]) == "libdltensor_shared_core_dltensor_core"
    out = run(False, loaded_core_libraries() + "print(json.dumps(libs))")
    assert out == []  # the control: the core is inside each module


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "static"])
def test_modules_bind_convert_return_and_explain_refusals(shared):
    out = run(shared, """
x = np.arange(4, dtype=np.float32)
res = []
for m in mods:
    res.append([m.total(x), m.total([1, 2]), m.doubled(x).tolist(), type(m.doubled(x)).__name__])
    y = np.zeros(3, np.float32); m.fill(y, 2.5); res[-1].append(y.tolist())
    try:
        dltensor.explain(m.fill, np.ones(3), 1.0)
    except TypeError as e:
        res[-1].append(str(e) + " ".join(getattr(e, "__notes__", [])))
print(json.dumps(res))
""")
    for total, from_list, doubled, kind, filled, refusal in out:
        assert (total, from_list, doubled, kind, filled) == (6.0, 3.0, [0.0, 2.0, 4.0, 6.0], "ndarray", [2.5] * 3)
        assert "dtype float64, expected float32" in refusal


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "static"])
def test_process_wide_state_is_one_per_core(shared):
    # The state a module's own inline code and the core both use (config.h: DLTENSOR_PROCESS_WIDE): the
    # sub-interpreter count, the last refusal, the kept producer error and the fast-path switch. One
    # shared core keeps one of each for all four modules; static cores keep one per module.
    out = run(shared, """
addresses = [m.state_addresses() for m in mods]
a.fast_paths(0)
seen = [m.fast_paths(-1) for m in mods]
a.fast_paths(1)
print(json.dumps([addresses, seen, [m.py_names_slot() for m in mods]]))
""")
    addresses, seen, slots = out
    distinct = [len(set(column)) for column in zip(*addresses)]
    if shared:
        assert distinct == [1, 1, 1, 1]
        assert seen == [False] * 4
    else:
        assert distinct == [4, 4, 4, 4]
        assert seen == [False, True, True, True]
    # A kind of state has one slot number in every module (its name, not the order of the modules' loading).
    assert len(set(slots)) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF symbol tables")
@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_a_module_of_a_shared_core_holds_none_of_the_core(backend):
    # The modules call the library's entry points (dynamic symbols they import); the library exports them.
    lib = next(build(True).glob("lib*_dltensor_core*"))
    exported = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True,
                              check=True).stdout
    assert "import_tensor" in exported and "export_tensor" in exported
    for name in MODULES[backend]:
        module = next(build(True).glob(f"{name}.*"))
        symbols = subprocess.run(["nm", "-D", str(module)], capture_output=True, text=True, check=True).stdout
        imported = {line.split()[-1] for line in symbols.splitlines() if line.split()[0] == "U"}
        assert any("import_tensor" in s for s in imported), name
        defined = subprocess.run(["nm", "-D", "--defined-only", str(module)], capture_output=True, text=True,
                                 check=True).stdout
        assert "import_tensor" not in defined


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_installed_modules_find_the_shared_core_installed_beside_them(tmp_path):
    # reference §1's recipe (tests/shared_core/CMakeLists.txt, snippet shared-core-install): the core
    # installed beside the modules, whose run path is their own directory; the build tree is not used.
    prefix = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "cmake", "--install", str(build(True)), "--prefix", str(prefix)],
                   check=True, capture_output=True)
    assert sorted(core_name(p) for p in prefix.iterdir()) == sorted(
        ["libdltensor_shared_core_dltensor_core", *MODULES["nanobind"], *MODULES["pybind11"]])
    out = run(True, loaded_core_libraries() + "x = np.arange(3, dtype=np.float32)\n"
              "print(json.dumps([libs, [m.total(x) for m in mods]]))", where=prefix)
    libs, totals = out
    assert len(libs) == 1 and Path(libs[0]).parent == prefix
    assert totals == [3.0] * 4


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
@pytest.mark.parametrize("flags", ["local", "global"])
@pytest.mark.parametrize("name", ["other_package", "dltensor_shared_core"], ids=["other-name", "same-name"])
def test_two_packages_with_shared_cores_each_bind_their_own(flags, name):
    # A second package (tests/shared_core/other) built the same way, under another project name and under
    # the first package's own: its core is named after its project and a tag drawn per build tree, so the
    # dynamic loader never hands its modules the first package's core (one SONAME for both would, whatever
    # dltensor release or layout each was built with); its exports are versioned by the same name, so
    # neither does a library loaded RTLD_GLOBAL; and no state is merged across the two (GCC's
    # STB_GNU_UNIQUE statics would be).
    other = cmake_build(SOURCE / "other", BUILD_ROOT / "shared-core" / f"other-{name}", [f"-DSC_OTHER_PROJECT={name}"])
    dlopen = "import os\nsys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_NOW)\n" if flags == "global" else ""
    out = run(True, f"sys.path.insert(0, {str(other)!r})\n"
              "import sc_other_nanobind as e, sc_other_pybind11 as f\n" + loaded_core_libraries() +
              "a.fast_paths(0)\n"
              "x = np.arange(3, dtype=np.float32)\n"
              "print(json.dumps([sorted(libs), [m.total(x) for m in (a, c, e, f)],\n"
              "                  [m.fast_paths(-1) for m in (a, c, e, f)],\n"
              "                  [m.state_addresses()[3] for m in (a, c, e, f)]]))\n"
              "a.fast_paths(1)\n", before=dlopen)
    libs, totals, fast, switch = out
    assert len(libs) == 2, libs
    assert sorted(core_name(p) for p in libs) == sorted(["libdltensor_shared_core_dltensor_core",
                                                         f"lib{name}_dltensor_core"]), libs
    assert totals == [3.0] * 4
    assert fast == [False, False, True, True]  # one switch per core, not per process
    assert switch[0] == switch[1] and switch[2] == switch[3] and switch[0] != switch[2]


def test_a_legacy_sub_interpreter_uses_a_shared_core_and_leaves_no_state_behind():
    # Python 3.12 (pyenv): the four modules built with a shared core, imported in the main interpreter
    # and in a sub-interpreter (shared GIL); buffers from the standard library (NumPy is not loaded in
    # sub-interpreters). The core counts the sub-interpreter once, for all modules, and frees its states
    # with it.
    from test_python_versions import _clean_env, find_python, skip_missing
    python = find_python("3.12")
    if python is None:
        skip_missing("3.12")
    build312 = cmake_build(SOURCE, BUILD_ROOT / "shared-core" / "shared-3.12", ["-DDLTENSOR_SHARED_CORE=ON"],
                           python=python)
    calls = ("import array\nimport sc_a_nanobind as a, sc_b_nanobind as b, sc_a_pybind11 as c, sc_b_pybind11 as d\n"
             "x = array.array('f', [1, 2, 3])\n"
             "assert [m.total(x) for m in (a, b, c, d)] == [6.0] * 4\n")
    sub = f"import sys; sys.path.insert(0, {str(build312)!r})\n" + calls + \
        "print('DURING', [m.sub_interpreters_in_use() for m in (a, b, c, d)], flush=True)\n"
    code = (f"import sys; sys.path.insert(0, {str(build312)!r})\nimport _testcapi\n" + calls +
            "print('BEFORE', [m.sub_interpreters_in_use() for m in (a, b, c, d)])\n"
            f"assert _testcapi.run_in_subinterp({sub!r}) == 0\n"
            "print('AFTER', [m.sub_interpreters_in_use() for m in (a, b, c, d)])\n"
            "assert [m.total(x) for m in (a, b, c, d)] == [6.0] * 4\n")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300, env=_clean_env())
    assert out.returncode == 0, out.stdout + out.stderr
    assert "BEFORE [0, 0, 0, 0]" in out.stdout, out.stdout
    assert "DURING [1, 1, 1, 1]" in out.stdout, out.stdout
    assert "AFTER [0, 0, 0, 0]" in out.stdout, out.stdout
