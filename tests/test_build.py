"""The test modules compile against this checkout's headers, never a copy installed in site-packages:
editing a header and rerunning pytest tests the edited header."""
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SANITIZE, TEST_BUILD, load_backend

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_test_module_includes_the_checkouts_headers(backend):
    load_backend(backend)
    ninja = pytest.importorskip("ninja")
    build = TEST_BUILD
    deps = subprocess.run([str(Path(ninja.BIN_DIR) / "ninja"), "-C", str(build), "-t", "deps"],
                          capture_output=True, text=True, check=True).stdout
    # What is dltensor's is decided by resolved paths, never by a folder's name: a clone is usually a folder
    # named `dltensor`, with the README's `.venv` (nanobind's and pybind11's headers) inside it.
    checkout = (REPO / "cpp" / "include" / "dltensor").resolve()
    ours = {p.relative_to(checkout).as_posix() for p in checkout.rglob("*.h")}
    deps_headers = {Path(line.strip()) for line in deps.splitlines() if line.strip().endswith(".h")}
    from_checkout = {h for h in deps_headers if checkout in h.resolve().parents}
    assert from_checkout, "no header of this checkout among the test module's dependencies"
    # A copy of one of dltensor's headers anywhere else (an installed package's include/dltensor/...).
    copies = [h for h in deps_headers - from_checkout
              if any(h.resolve().as_posix().endswith("/include/dltensor/" + rel) for rel in ours)]
    assert not copies, copies


def test_cmake_target_compiles_the_core_once_and_the_module_only_its_declarations():
    # dltensor::dltensor links the core library (config.h: DLTENSOR_CORE): core.cpp is compiled once in the
    # build tree, and the test modules' sources with DLTENSOR_CORE_LIBRARY (declarations only).
    ninja = pytest.importorskip("ninja")
    build = TEST_BUILD
    commands = subprocess.run([str(Path(ninja.BIN_DIR) / "ninja"), "-C", str(build), "-t", "commands"],
                              capture_output=True, text=True, check=True).stdout.splitlines()
    core = [c for c in commands if c.rstrip().endswith(("src/core.cpp", "src/core.cpp.o"))
            or "/src/core.cpp" in c and " -c " in c]
    assert len(core) == 1, core
    assert str(REPO / "cpp" / "src" / "core.cpp") in core[0]
    modules = [c for c in commands if " -c " in c and "CMakeFiles/dltensor_test_" in c]  # unity batches or not
    assert modules and all("-DDLTENSOR_CORE_LIBRARY" in c for c in modules), modules
    # Both builds, plain and sanitized, compile the test sources in unity batches (tests/CMakeLists.txt).
    batches = [c for c in modules if "/Unity/unity_" in c]
    assert 0 < len(batches) <= 6 and len(modules) <= 8, modules
    # Machine code only, one section per function: no LTO bytecode, over which GCC's linker plugin would
    # run LTO in every plain (nanobind) link, and a --gc-sections link keeps only what a module calls.
    assert "-ffunction-sections" in core[0] and "-flto" not in core[0], core[0]
    # -O2 whatever the build type but Debug (Release's -O3 comes first): every callgrind row within 1% of
    # -O3's, and 12 KB less in every module (bench/results/compile.md). The sanitized build is a Debug one
    # (conftest.py): its own level, -O0, stays last.
    levels = [flag for flag in core[0].split() if flag.startswith("-O")]
    assert levels and levels[-1] == ("-O0" if SANITIZE else "-O2"), core[0]


def test_cmake_target_compiles_the_nanobind_part_once_and_nanobind_modules_only_its_declarations():
    # The nanobind backend's functions that are no template (config.h: DLTENSOR_NANOBIND_PART): the package
    # compiles src/nanobind.cpp once per nanobind library (the test build has one, nanobind-static) and the
    # nanobind module's sources with DLTENSOR_NANOBIND_LIBRARY; the pybind11 module has no part of it.
    ninja = pytest.importorskip("ninja")
    commands = subprocess.run([str(Path(ninja.BIN_DIR) / "ninja"), "-C", str(TEST_BUILD), "-t", "commands"],
                              capture_output=True, text=True, check=True).stdout.splitlines()
    part = [c for c in commands if " -c " in c and "/src/nanobind.cpp" in c]
    assert len(part) == 1 and str(REPO / "cpp" / "src" / "nanobind.cpp") in part[0], part
    assert "-DDLTENSOR_CORE_LIBRARY" in part[0] and "-ffunction-sections" in part[0], part[0]
    compiles = [c for c in commands if " -c " in c]
    nanobind = [c for c in compiles if "CMakeFiles/dltensor_test_nanobind.dir" in c]
    pybind11 = [c for c in compiles if "CMakeFiles/dltensor_test_pybind11.dir" in c]
    assert nanobind and all("-DDLTENSOR_NANOBIND_LIBRARY" in c for c in nanobind), nanobind
    assert pybind11 and not any("DLTENSOR_NANOBIND" in c for c in pybind11), pybind11
    # The module's objects call the loader; none defines it (its body is the library's).
    objects = sorted((TEST_BUILD / "CMakeFiles" / "dltensor_test_nanobind.dir").rglob("*.o"))
    symbols = subprocess.run(["nm", "-C", *map(str, objects)], capture_output=True, text=True, check=True).stdout
    loader = [line for line in symbols.splitlines() if "type_caster<nanobind::detail::dltensor_untyped, int>::load(" in line]
    assert loader and all(line.split()[0] == "U" for line in loader), loader


def test_core_library_holds_no_initial_image_of_the_refusal_ring(tmp_path):
    # The per-thread refusal ring (refusal_log.h, 32 records) is zero bits until written: thread-local
    # .tbss, which costs a module file nothing, not a 14 KB .tdata image.
    library = TEST_BUILD / "libdltensor_core.a"
    if not library.exists():
        pytest.skip("the test build has no core library (DLTENSOR_HEADER_ONLY)")
    subprocess.run(["ar", "x", str(library)], cwd=tmp_path, check=True)
    sections = subprocess.run(["size", "-A", *map(str, tmp_path.glob("*.o"))], capture_output=True, text=True,
                              check=True).stdout
    # the ring's data sections (at -O0, the sanitized build's, the function has a .text section of its own)
    ring = [line.split() for line in sections.splitlines()
            if "refusal_log14of_this_thread" in line and not line.startswith(".text")]
    assert ring and all(name.startswith(".tbss") for name, *_ in ring), ring
    tdata = sum(int(parts[1]) for parts in map(str.split, sections.splitlines())
                if parts and parts[0].startswith(".tdata"))
    assert tdata < 2048, sections


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_a_module_source_parses_none_of_what_only_the_core_calls(backend, tmp_path):
    # With DLTENSOR_CORE_LIBRARY a binding source parses only what its templates call (the compile cost,
    # issue 30): not the import routes (import.h) nor a framework's file past its tag and public switches.
    # Header-only, the same source holds all of it.
    import sysconfig
    lib = pytest.importorskip(backend)
    include = lib.include_dir() if backend == "nanobind" else lib.get_include()
    source = tmp_path / "m.cpp"
    source.write_text(f"#include <dltensor/{backend}.h>\n")
    def preprocess(*defines):
        cmd = ["c++", "-std=c++17", "-E", "-P", *defines, f"-I{REPO / 'cpp' / 'include'}", f"-I{include}",
               "-isystem", sysconfig.get_paths()["include"], str(source)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-4000:]
        return proc.stdout
    core_only = ["import_by_route", "import_converted", "torch_precheck", "framework_table",
                 *(f"{f}_framework" for f in ["numpy", "pytorch", "tensorflow", "jax", "cupy", "mlx", "paddle"])]
    public = ["torch_key_set_enabled", "torch_exchange_api", "fast_paths_enabled", "explain_last_refusal",
              "import_tensor", "refusal_message"]
    library, header_only = preprocess("-DDLTENSOR_CORE_LIBRARY"), preprocess()
    assert [n for n in core_only if n in library] == []
    assert [n for n in core_only + public if n not in header_only] == []
    assert [n for n in public if n not in library] == []


@pytest.mark.parametrize("opt", ["-O2", "-O3", "-Os"])
def test_core_compiles_without_warnings_under_a_users_strict_flags(opt, tmp_path):
    # dltensor_core compiles core.cpp in the user's project with the user's flags, and core.cpp is not
    # a system header: a warning there (a truncating strncpy at -O2 and up) reaches a -Wall -Werror build.
    import sysconfig
    cmd = ["c++", "-std=c++17", opt, "-fPIC", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
           f"-I{REPO / 'cpp' / 'include'}", "-isystem", sysconfig.get_paths()["include"],
           "-c", str(REPO / "cpp" / "src" / "core.cpp"), "-o", str(tmp_path / "core.o")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_header_only_build_without_cmake_is_complete(tmp_path):
    # A build without CMake (dltensor.include_dir(), docs/getting-started.md) gets the whole core from the headers: the
    # README's example extension compiled by one compiler command on the pybind11 backend links, imports,
    # binds, refuses with its explanation, and returns.
    pybind11 = pytest.importorskip("pybind11")
    import sysconfig
    import dltensor
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    out = tmp_path / f"downstream_ext_pybind11{suffix}"
    cmd = ["c++", "-std=c++17", "-O1", "-shared", "-fPIC", "-fvisibility=hidden", "-DDOWNSTREAM_PYBIND11",
           f"-I{REPO / 'cpp' / 'include'}", f"-I{pybind11.get_include()}", f"-I{sysconfig.get_paths()['include']}",
           str(REPO / "tests" / "downstream" / "downstream_ext.cpp"), "-o", str(out)]
    assert Path(dltensor.include_dir()).is_dir()  # what such a build names instead of the checkout's headers
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import numpy as np; import downstream_ext_pybind11 as m\n"
            "r = m.norms(np.array([[3, 4, 0]], np.float32)); assert r.tolist() == [5.0], r\n"
            "try:\n    m.norms(np.ones((2, 2), np.float32))\nexcept TypeError as e:\n    assert 'incompatible' in str(e)\n"
            "else:\n    raise AssertionError('no refusal')\nprint('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stdout + proc.stderr


def test_package_config_is_configured_again_after_its_template_changes(tmp_path):
    # tests/cmake_build.py configures the checkout's dltensor package once; an edit of its inputs (the
    # template cmake/dltensorConfig.cmake.in holds the core library's flags) must reach the next build
    # instead of being tested against the config generated before it.
    import os
    from cmake_build import package_inputs, package_is_stale
    config = tmp_path / "dltensorConfig.cmake"
    template = tmp_path / "dltensorConfig.cmake.in"
    template.write_text("template")
    assert package_is_stale(config, [template])  # never configured
    config.write_text("generated")
    os.utime(template, (1_000_000, 1_000_000))
    os.utime(config, (2_000_000, 2_000_000))
    assert not package_is_stale(config, [template])  # generated after the last edit
    os.utime(template, (3_000_000, 3_000_000))
    assert package_is_stale(config, [template])  # the template edited since
    assert not package_is_stale(config, [tmp_path / "absent.in"])
    names = {p.name for p in package_inputs()}
    assert {"CMakeLists.txt", "dltensorConfig.cmake.in", "__init__.py"} <= names
