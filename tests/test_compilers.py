"""Every compiler extension authors build with: the test modules' sources (both backends, every feature the
suite binds) and the core compile with the oldest and newest Clang, with libstdc++ and libc++, under C++17
to C++23, and through nvcc's CUDA front end; under GCC and Clang without one warning from dltensor's headers under
pybind11's own warning flags and -Werror, the headers included as ordinary (-I) headers. What runs: the
suite itself is run on GCC's build (the plain run) and Clang's (tools/sanitize.sh), the examples on GCC's,
Clang's (libc++) and nvcc's builds (test_examples.py)."""
import json
import os
import re
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import pytest

import toolchains
from cmake_build import REPO, run
from conftest import BUILD_ROOT, HERE

INCLUDE = str(REPO / "cpp" / "include")

# (name, compiler, standard, extra flags, whether warnings fail it)
MATRIX = [
    ("gcc-c++17", "c++", 17, [], True),
    ("gcc-c++23", "c++", 23, [], True),
    ("clang14-c++17", toolchains.CLANG_OLDEST, 17, [], True),
    ("clang19-c++20", toolchains.CLANG_NEWEST, 20, [], True),
    ("clang19-libc++-c++23", toolchains.CLANG_NEWEST, 23, ["-stdlib=libc++"], True),
    ("nvcc-c++17", toolchains.NVCC, 17, ["-x", "cu"], False),
]


@lru_cache(maxsize=None)
def translation_units():
    """The test modules' translation units (unity batches, the sources kept out of them) and the core, each
    as (backend or "core", file, include and define flags), from a configured test build's
    compile_commands.json. dltensor's include directory becomes an ordinary -I; the others stay -isystem."""
    import nanobind
    import pybind11
    build = BUILD_ROOT / "compilers"
    from cmake_build import dltensor_package_dir
    run(["cmake", "-S", str(HERE), "-B", str(build), "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
         f"-Ddltensor_DIR={dltensor_package_dir()}", f"-Dnanobind_DIR={nanobind.cmake_dir()}",
         f"-Dpybind11_DIR={pybind11.get_cmake_dir()}", f"-DPython_EXECUTABLE={os.sys.executable}"])
    units = []
    for entry in json.loads((build / "compile_commands.json").read_text()):
        args, out = shlex.split(entry["command"]), entry.get("output", "")
        if "nanobind-static" in out or "/nanobind/src/" in entry["file"]:
            continue  # nanobind's own library
        backend = ("core" if entry["file"].endswith("core.cpp") else
                   "nanobind" if "dltensor_test_nanobind" in out else "pybind11")
        flags, i = [], 0
        while i < len(args):
            a = args[i]
            if a == "-isystem":
                flags += ["-I" if args[i + 1] == INCLUDE else "-isystem", args[i + 1]]
                i += 2
                continue
            if a.startswith("-I"):  # the binding libraries' headers are theirs: -isystem
                path = a[2:]
                flags += ["-I", path] if path in (INCLUDE, str(HERE)) else ["-isystem", path]
            elif a.startswith("-D"):
                flags.append(a)
            i += 1
        units.append((backend, entry["file"], flags))
    return units


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
@pytest.mark.parametrize("name, compiler, std, extra, werror", MATRIX, ids=[m[0] for m in MATRIX])
def test_sources_compile_without_warnings(name, compiler, std, extra, werror, backend):
    if not toolchains.have(compiler):
        pytest.skip(f"{compiler} is not installed")
    if "-stdlib=libc++" in extra and not toolchains.has_libcxx(compiler):
        pytest.skip(f"{compiler} finds no libc++")
    units = [u for u in translation_units() if u[0] in (backend, "core" if backend == "nanobind" else None)]
    assert len(units) >= 3, units  # the unity batches, the source kept out of them (and the core)
    if compiler == toolchains.NVCC:  # nvcc's CUDA front end (cudafe++); the examples' nvcc build compiles fully
        mode = ["--cuda", "-o", os.devnull]
    else:
        mode = ["-fsyntax-only", *toolchains.WARNING_FLAGS, "-Werror"]

    def compile_one(unit):
        _, source, flags = unit
        cmd = [compiler, f"-std=c++{std}", *extra, *mode, *flags, source]
        done = subprocess.run(cmd, capture_output=True, text=True)
        return source, done.returncode, done.stdout + done.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(compile_one, units))
    failed = [f"{Path(s).name}:\n{out[-4000:]}" for s, rc, out in results if rc != 0 or (werror and "warning:" in out)]
    assert not failed, f"{name} ({backend}):\n" + "\n".join(failed)


# The only places outside config.h where a GCC/Clang extension may appear, each beside its other path.
EXTENSIONS_ELSEWHERE = {
    "bindings/construction.h": "__attribute__((unavailable",  # under __has_attribute; else the static_assert refuses
    "python/process_state.h": "__PRETTY_FUNCTION__",  # MSVC: __FUNCSIG__ (the #if above it)
}


def test_compiler_extensions_have_a_path_for_every_compiler():
    """MSVC cannot run here: what the headers use of GCC and Clang goes through config.h's macros, each
    with a path for other compilers (MSVC's own or plain C++), or appears where EXTENSIONS_ELSEWHERE says."""
    extension = ("__attribute__", "__builtin_", "__PRETTY_FUNCTION__", "__int128", "__typeof", "__extension__")
    found = []
    for header in sorted((REPO / "cpp" / "include" / "dltensor").rglob("*")):
        rel = header.relative_to(REPO / "cpp" / "include" / "dltensor").as_posix()
        if header.suffix not in (".h", ".cpp") or rel in ("tensor/config.h", "tensor/dlpack.h"):
            continue
        for n, line in enumerate(header.read_text().splitlines(), 1):
            code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line).split("//")[0]  # no string or comment
            for word in extension:
                if word in code and not (EXTENSIONS_ELSEWHERE.get(rel, "\0") in code):
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "use config.h's macros:\n" + "\n".join(found)
    # In config.h each GCC/Clang branch has another (#elif or #else) before its #endif.
    lines = (REPO / "cpp" / "include" / "dltensor" / "tensor" / "config.h").read_text().splitlines()
    for n, line in enumerate(lines):
        if line.startswith("#if defined(__GNUC__)") or line.startswith("#if defined(DLTENSOR_CORE_LIBRARY_BUILD) && defined(__GNUC__)"):
            depth, other = 0, False
            for later in lines[n + 1:]:
                if later.startswith("#if"):
                    depth += 1
                elif later.startswith("#endif"):
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0 and later.startswith(("#else", "#elif")):
                    other = True
            assert other, f"config.h:{n + 1}: {line} has no path for other compilers"


def test_ci_installs_every_compiler():
    """CI (DLTENSOR_REQUIRE_COMPILERS=1, .ci/run) must have every compiler of the matrix: none may skip there."""
    if os.environ.get("DLTENSOR_REQUIRE_COMPILERS") != "1":
        pytest.skip("only CI requires every compiler (DLTENSOR_REQUIRE_COMPILERS=1)")
    missing = [c for c in ("c++", toolchains.CLANG_OLDEST, toolchains.CLANG_NEWEST, toolchains.NVCC)
               if not toolchains.have(c)]
    assert not missing and toolchains.has_libcxx(toolchains.CLANG_NEWEST), missing


WORKFLOW = REPO / ".github" / "workflows" / "tests.yml"


def test_hosted_workflow_passes_actionlint():
    """The hosted-CI workflow (Linux GCC and Clang, macOS, Windows MSVC) is valid, so that a fork's first push
    runs it; it proves nothing here (README: Supported versions, compilers and platforms)."""
    import shutil
    actionlint = shutil.which("actionlint")
    if not actionlint:
        pytest.skip("actionlint is not installed (the test extra has it)")
    done = subprocess.run([actionlint, str(WORKFLOW)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_hosted_workflow_runs_the_readme_test_command_on_every_platform():
    text = WORKFLOW.read_text()
    for os_name, cxx in [("ubuntu-latest", "g++"), ("ubuntu-latest", "clang++"), ("macos-latest", "clang++"),
                         ("windows-latest", "cl")]:
        assert f"- os: {os_name}\n            cxx: {cxx}\n" in text, (os_name, cxx)
    readme = (REPO / "README.md").read_text()
    command = next(line for line in readme.splitlines() if line.startswith("python3 -m venv .venv") and
                   "download.pytorch.org" in line and '".[test]"' in line)
    for part in ["pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
                 'pip install ".[test]"', "python -m pytest"]:
        assert part in command and part in text, part


def test_readme_names_what_the_matrix_and_the_workflow_cover():
    """README's *Supported versions, compilers and platforms* table, and the fuller one of
    docs/getting-started.md, state only what this file and CI run."""
    readme = (REPO / "README.md").read_text()
    guide = (REPO / "docs" / "getting-started.md").read_text()
    short = readme[readme.index("## Supported versions, compilers and platforms"):readme.index("## Documentation")]
    full = guide[guide.index("## Compilers and platforms"):guide.index("## Free-threaded Python")]
    for table in (short, full):
        for compiler in (toolchains.CLANG_OLDEST, toolchains.CLANG_NEWEST):
            assert f"`{compiler}`" in table, compiler
        assert "C++23" in table and "libc++" in table and "nvcc" in table
        assert "Apple Clang (macOS), MSVC (Windows)" in table and "unproven here" in table
    names = [m[0] for m in MATRIX]
    assert {"clang14-c++17", "clang19-libc++-c++23", "gcc-c++23", "nvcc-c++17"} <= set(names)
    classifiers = (REPO / "pyproject.toml").read_text()
    assert '"Operating System :: POSIX :: Linux"' in classifiers and "OS Independent" not in classifiers
    ci = (REPO / ".ci" / "run").read_text()
    assert "clang-14 clang-19 libc++-19-dev" in ci and "DLTENSOR_REQUIRE_COMPILERS=1" in ci


@pytest.mark.skipif(not toolchains.have(toolchains.CLANG_NEWEST), reason=f"{toolchains.CLANG_NEWEST} is not installed")
def test_downstream_project_builds_with_clang_and_behaves():
    """The README's downstream CMake project (tests/downstream), built by Clang with libc++ where Debian's
    package is installed, then used from a fresh interpreter on both backends."""
    from cmake_build import cmake_build
    flags = ["-DCMAKE_CXX_FLAGS=-stdlib=libc++"] if toolchains.has_libcxx(toolchains.CLANG_NEWEST) else []
    build = cmake_build(HERE / "downstream", BUILD_ROOT / "downstream-clang",
                        [f"-DCMAKE_CXX_COMPILER={toolchains.CLANG_NEWEST}", *flags])
    code = ("import sys, numpy as np\nsys.path.insert(0, sys.argv[1])\n"
            "import downstream_ext_nanobind as a, downstream_ext_pybind11 as b\n"
            "for m in (a, b):\n"
            "    assert m.norms(np.array([[3, 4, 0]], np.float32)).tolist() == [5.0]\n"
            "    x = np.ones(3, np.float32); m.scale(x, 2.0); assert x.tolist() == [2.0] * 3\n"
            "print('ok')\n")
    done = subprocess.run([os.sys.executable, "-c", code, str(build)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


CUDA_CONTAINERS_CHECK = """
import sys, numpy as np, torch
sys.path.insert(0, sys.argv[1])
import cuda_containers_nanobind as a, cuda_containers_pybind11 as b
wrap = {"vector": lambda x: [x], "list": lambda x: [x], "array": lambda x: [x], "optional": lambda x: x,
        "map": lambda x: {"k": x}, "unordered_map": lambda x: {"k": x}}
for m in (a, b):
    for name, make in wrap.items():
        x = np.zeros(3, np.float32)
        assert getattr(m, name)(make(x), 2) == 1 and x.tolist() == [2.0] * 3, (m, name)
        t = torch.zeros(2)
        cap = torch.utils.dlpack.to_dlpack(t)
        try:
            getattr(m, name)(make(cap), "not an int")
        except TypeError:
            pass
        assert "used" not in repr(cap), (m, name)  # handed back
        assert getattr(m, name)(make(cap), 3) == 1 and t.tolist() == [3.0, 3.0], (m, name)
    assert m.vector([], 1) == 0 and m.optional(None, 1) == 0 and m.vector_ref([np.zeros(1, np.float32)], 1) == 1
print("ok")
"""


@pytest.mark.skipif(not toolchains.have(toolchains.NVCC), reason=f"{toolchains.NVCC} is not installed")
def test_containers_of_tensors_in_a_cuda_source_load_and_hand_back_capsules():
    """tests/cuda_containers: a module compiled as CUDA by nvcc, on both backends, called with every
    container of tensors dltensor specializes (CPU tensors): each loads, calls and hands a capsule back."""
    from cmake_build import cmake_build
    build = cmake_build(HERE / "cuda_containers", BUILD_ROOT / "cuda-containers")
    done = subprocess.run([os.sys.executable, "-c", CUDA_CONTAINERS_CHECK, str(build)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr[-4000:]


@pytest.mark.parametrize("source, backend", [("bench_module.cpp", "nanobind"), ("bench_pybind11.cpp", "pybind11"),
                                             ("kernel/kernel_nanobind.cpp", "nanobind"),
                                             ("kernel/kernel_pybind11.cpp", "pybind11")])
@pytest.mark.parametrize("compiler", [toolchains.CLANG_OLDEST, toolchains.CLANG_NEWEST])
def test_benchmark_modules_compile_with_clang(source, backend, compiler):
    if not toolchains.have(compiler):
        pytest.skip(f"{compiler} is not installed")
    flags = next(u[2] for u in translation_units() if u[0] == backend)
    cmd = [compiler, "-std=c++17", "-fsyntax-only", *flags, "-I", str(REPO / "bench"), str(REPO / "bench" / source)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
