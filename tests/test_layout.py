"""The headers are laid out the way change arrives: one file (or a few `frameworks/<name>*.h`) per
framework, listed once in frameworks/registry.h, and no framework's module or types named in the code
of more than 3 places (its own files count as one). NumPy is the CPU workhorse of everything else
(lists and buffers converted through `numpy.asarray`, CPU tensors of JAX, TensorFlow and no framework
allocated by NumPy, F-order copies made by NumPy), so it is held to the places it has now, listed below.
Static checks of the checkout's headers: comments and `#include` lines are not code."""
import re
from pathlib import Path

import pytest

HEADERS = Path(__file__).resolve().parent.parent / "cpp" / "include" / "dltensor"
FRAMEWORKS = HEADERS / "frameworks"

# framework file stem -> how its module or types are spelled in code (strings and identifiers)
NAMES = {
    "numpy": r"numpy|ml_dtypes",
    "pytorch": r"torch",
    "jax": r"jax",
    "tensorflow": r"tensorflow",
    "cupy": r"cupy",
    "mlx": r"mlx",
    "paddle": r"paddle",
}
# Where NumPy is named outside its own files, and why (see the module docstring).
NUMPY_PLACES = {
    "core/conversion.h": "lists and buffers converted through numpy.asarray; other DLPack producers on the CPU",
    "core/import.h": "objects that are no tensor, read through numpy.asarray",
    "core/export.h": "the no-framework tensor's docstring and the copy policy's hint name py::numpy",
    "tensor/refusal.h": "the explanations of numpy.asarray's refusals",
    "frameworks/registry.h": "the list; NumPy allocates CPU tensors of frameworks without an allocator",
    "frameworks/jax.h": "copies JAX cannot adopt, and CPU conversions, go through NumPy",
    "frameworks/tensorflow.h": "copies TensorFlow cannot adopt, and F-order conversions, go through NumPy",
    "frameworks/paddle.h": "F-order conversions go through NumPy",
    "frameworks/pytorch_checks.h": "the float8 refusal suggests py::numpy",
}


def code(path: Path) -> str:
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    lines = [re.sub(r"//.*", "", line) for line in text.splitlines()]
    return "\n".join(line for line in lines if not re.match(r"\s*#\s*include", line))


def places(stem: str) -> set:
    """The places whose code names the framework: its own files as one, every other header by path (with
    its bodies, `<name>-inl.h`)."""
    found = set()
    for h in sorted(HEADERS.rglob("*.h")):
        rel = h.relative_to(HEADERS).as_posix()
        if not re.search(NAMES[stem], code(h), re.I):
            continue
        own = h.parent == FRAMEWORKS and h.stem.startswith(stem)
        found.add("<own files>" if own else rel.replace("-inl.h", ".h"))  # a header and its bodies: one place
    return found


def framework_files():
    return sorted(h.stem for h in FRAMEWORKS.glob("*.h") if re.search(r"^DLTENSOR_FRAMEWORK_TAG\(", code(h), re.M))


def test_every_framework_has_its_file():
    assert framework_files() == sorted(NAMES)


@pytest.mark.parametrize("stem", [s for s in sorted(NAMES) if s != "numpy"])
def test_a_framework_is_named_in_at_most_three_places(stem):
    where = places(stem)
    assert "<own files>" in where
    assert len(where) <= 3, f"{stem} is named in {sorted(where)}"


def test_numpy_is_named_only_where_it_works_for_the_others():
    assert places("numpy") - {"<own files>"} <= set(NUMPY_PLACES)


def test_the_registry_lists_every_framework_once():
    """One list (DLTENSOR_FRAMEWORKS), from which the table of records and the stub type names are made."""
    registry = code(FRAMEWORKS / "registry.h") + code(FRAMEWORKS / "registry-inl.h")
    listed = re.findall(r"X\((\w+)\)", re.search(r"#define DLTENSOR_FRAMEWORKS\(X\)(.*)", registry).group(1))
    table = re.search(r"framework_table frameworks = \{(.*?)\};", registry, re.S).group(1)
    assert table.strip() == "DLTENSOR_FRAMEWORKS(DLTENSOR_FRAMEWORK_RECORD_OF)", table
    included = re.findall(r'#include "(\w+)\.h"', (FRAMEWORKS / "registry.h").read_text())
    for stem in framework_files():
        assert stem in included, f"registry.h does not include frameworks/{stem}.h"
        assert listed.count(stem) == 1, f"DLTENSOR_FRAMEWORKS lists {stem} not exactly once"


def test_hot_paths_name_their_frameworks_only_in_the_registrys_declarations():
    """export_tensor(), allocate_for() and allocate_by_framework() reach every framework through the records
    or the declared hot-path choices (DLTENSOR_INLINED_EXPORTS, inlined_allocator, fallback_allocators)."""
    registry = code(FRAMEWORKS / "registry.h") + code(FRAMEWORKS / "registry-inl.h")
    for function in ("export_tensor", "allocate_for", "allocate_by_framework"):
        body = re.search(r"\b" + function + r"\([^;{]*\)\s*noexcept\s*\{(.*?)\n\}", registry, re.S)
        assert body, function
        named = [n for n in NAMES if re.search(r"(?<![A-Za-z])" + n + r"(?![A-Za-z])", body.group(1))]
        assert not named, f"{function}() names {named}"


def test_framework_numbers_are_distinct():
    numbers = {}
    for stem in framework_files():
        m = re.search(r"DLTENSOR_FRAMEWORK_TAG\(\w+,\s*(\d+),", code(FRAMEWORKS / f"{stem}.h"))
        numbers[stem] = int(m.group(1))
    assert len(set(numbers.values())) == len(numbers), numbers
    assert not {0, 6, 7} & set(numbers.values()), "0, 6 and 7 are none, memview and array_api"


def test_only_the_registry_brings_in_framework_files():
    """Outside frameworks/, headers include the registry or the record's definition, never one framework
    (but the list of every body, core/core-inl.h)."""
    for h in sorted(HEADERS.rglob("*.h")):
        if h.parent == FRAMEWORKS or h == HEADERS / "core" / "core-inl.h":
            continue
        for inc in includes(h):
            assert not inc.startswith("frameworks/") or inc in ("frameworks/registry.h", "frameworks/framework.h",
                                                               "frameworks/registry-inl.h"), f"{h.name} includes {inc}"


# The folders by layer, and what each may include (docs/architecture.md: Layout). `tensor/` needs no
# Python; `core/` and `frameworks/` need each other (the registry lists the frameworks, whose files use the
# core's import and export mechanisms); only the entry headers sit at the top.
LAYERS = {
    "tensor": {"tensor"},
    "python": {"tensor", "python"},
    "core": {"tensor", "python", "core", "frameworks"},
    "frameworks": {"tensor", "python", "core", "frameworks"},
    "bindings": {"tensor", "python", "core", "frameworks", "bindings"},
    "": {"tensor", "python", "core", "frameworks", "bindings", ""},  # "": nanobind.h and its bodies
}
ENTRY_HEADERS = ["nanobind.h", "pybind11.h"]


def includes(h: Path) -> list:
    """The headers of this checkout that `h` includes, relative to the include folder."""
    return [(h.parent / inc).resolve().relative_to(HEADERS.resolve()).as_posix()
            for inc in re.findall(r'^#\s*include "([^"]+)"', h.read_text(), re.M)]


def test_the_top_of_the_include_folder_holds_only_the_entry_headers():
    # and the nanobind backend's bodies that are no template (config.h: DLTENSOR_NANOBIND_PART)
    assert sorted(p.name for p in HEADERS.iterdir() if p.is_file()) == sorted(ENTRY_HEADERS + ["nanobind-inl.h"])
    assert sorted(p.name for p in HEADERS.iterdir() if p.is_dir()) == sorted(k for k in LAYERS if k)


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_each_layer_includes_only_the_layers_it_may_use(layer):
    wrong = [f"{h.relative_to(HEADERS).as_posix()} includes {inc}"
             for h in sorted((HEADERS / layer).glob("*.h")) for inc in includes(h)
             if (inc.split("/")[0] if "/" in inc else "") not in LAYERS[layer]]
    assert (HEADERS / layer).is_dir() and not wrong, wrong


def test_the_tensor_layer_needs_no_python():
    """tensor/ (the DLPack ABI, dtypes, strides, requirements, annotations, refusal records) compiles
    without Python: no <Python.h>, no object of the C API in its code."""
    for h in sorted((HEADERS / "tensor").glob("*.h")):
        assert "<Python.h>" not in h.read_text(), h.name
        no_strings = re.sub(r'"(?:[^"\\]|\\.)*"', '""', re.sub(r"^#.*$", "", code(h), flags=re.M))
        assert not re.search(r"\bPy[A-Z_]\w*", no_strings), h.name


BODY_LISTS = {"core/core-inl.h": "DLTENSOR_CORE_DEFINITIONS", "python/process_wide-inl.h": "DLTENSOR_PROCESS_WIDE_BODIES"}


def test_bodies_are_compiled_only_where_the_build_mode_says():
    """One switch (config.h): the bodies of the core's entry points sit in `<name>-inl.h` beside their
    header, all listed in core/core-inl.h (the process-wide state's in python/process_wide-inl.h), which
    src/core.cpp includes, and the entry headers include under the build mode's macro. No other header
    asks the build mode, and only bodies include bodies."""
    bodies = {h.relative_to(HEADERS).as_posix() for h in HEADERS.rglob("*-inl.h")} - set(BODY_LISTS) - {"nanobind-inl.h"}
    assert bodies and set(includes(HEADERS / "core" / "core-inl.h")) == bodies
    for name in ENTRY_HEADERS:
        text = (HEADERS / name).read_text()
        for listed, macro in BODY_LISTS.items():
            assert re.search(rf'^#if {macro}\n#\s*include "{listed}"\n#endif$', text, re.M), name
    for h in sorted(HEADERS.rglob("*.h")):
        rel = h.relative_to(HEADERS).as_posix()
        if rel in ENTRY_HEADERS or rel == "tensor/config.h":
            continue
        assert not re.search(r"DLTENSOR_CORE_DEFINITIONS|DLTENSOR_PROCESS_WIDE_BODIES|DLTENSOR_NANOBIND_DEFINITIONS",
                             code(h)), rel
        if not rel.endswith("-inl.h"):
            assert not [i for i in includes(h) if i.endswith("-inl.h")], f"{rel} includes bodies"
    core = (HEADERS.parent.parent / "src" / "core.cpp").read_text()
    assert re.findall(r"^#include <dltensor/(.+)>", core, re.M) == sorted(BODY_LISTS, reverse=True)
    # The nanobind backend's bodies: in nanobind.h's units, or once in the library of src/nanobind.cpp.
    assert re.search(r'^#if DLTENSOR_NANOBIND_DEFINITIONS\n#\s*include "nanobind-inl.h"\n#endif$',
                     (HEADERS / "nanobind.h").read_text(), re.M)
    assert "nanobind-inl.h" not in (HEADERS / "pybind11.h").read_text()
    part = (HEADERS.parent.parent / "src" / "nanobind.cpp").read_text()
    assert re.findall(r"^#\s*(?:include|define) (\S+)", part, re.M) == ["DLTENSOR_NANOBIND_LIBRARY_BUILD",
                                                                          "<dltensor/nanobind.h>"]


def test_header_names_are_unique_across_the_folders():
    # An include names one header by its file name alone: tests/mutation/run.py (code_of) compares two
    # versions of a header with include paths reduced to names, so that a move to another folder is no change.
    names = [h.name for h in HEADERS.rglob("*.h")]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)


def test_the_core_source_lives_outside_the_include_folder():
    sources = [HEADERS.parent.parent / "src" / name for name in ("core.cpp", "nanobind.cpp")]
    assert all(s.is_file() for s in sources) and not list(HEADERS.rglob("*.cpp"))
    assert re.findall(r"^#include <dltensor/(\w+)/", sources[0].read_text(), re.M)


def test_tests_folder_holds_tests_and_their_helpers_only():
    # tests/ holds tests: a script that CI, an interpreter build or a record runs lives in tools/. What else
    # sits at the top of tests/ is a helper that a test file imports or runs (or a conftest).
    tests = Path(__file__).resolve().parent
    assert not sorted(p.name for p in tests.glob("*.sh")), "shell scripts belong in tools/"
    sources = "\n".join(p.read_text() for p in tests.glob("test_*.py")) + (tests / "conftest.py").read_text()
    helpers = [p.stem for p in tests.glob("*.py") if not p.name.startswith("test_") and p.name != "conftest.py"]
    unused = [h for h in helpers if not re.search(rf"^\s*(?:import {h}\b|from {h} import)", sources, re.M)
              and f'"{h}.py"' not in sources]
    assert helpers and not unused, f"not imported by any test: {unused} (a tool belongs in tools/)"
