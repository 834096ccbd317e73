"""Stubs that need no dltensor: ``python -m dltensor.stubs FILE.pyi ...`` rewrites stubs in place.

The signature text of a ``py::dltensor<...>`` parameter or return names ``dltensor.typing.ArrayLike`` (and
``Array``, ``DLPackArray``) and ``dltensor.Tensor``, which the stub generators (``python -m
nanobind.stubgen``, ``pybind11-stubgen``) copy into the stubs with an ``import dltensor...``. dltensor is
a build requirement only, so the extension's users do not have it, and a type checker would read each of
those types as ``Any``. This rewrite:

- defines those types in the stub itself, as private names (``_dlt_ArrayLike``, ...), made from
  ``dltensor/typing.py`` (one source), and drops the ``import dltensor`` lines: the stub then needs only
  ``typing`` and the frameworks that framework annotations name (NumPy, PyTorch, ...);
- silences what mypy and pyright say of overloads that no type tells apart and that return different
  types (``# type: ignore[<mypy's code>]``, ``# pyright: ignore[<pyright's rule>]``, on the lines they
  name): overloads by dtype of a parameter without a framework annotation, whose types differ only in
  their ``Annotated[...]`` metadata, overloads by dtype of a NumPy-annotated parameter, and a kept
  ``py::array_t`` overload after a ``py::dltensor`` one. The overloads stay in the stub, in order, and
  dispatch at run time as before.

A stub without ``dltensor.`` names is left as it is. Rewriting twice changes nothing more.
"""
import argparse
import ast
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import List, Optional

__all__ = ["self_contained", "main"]

PREFIX = "_dlt_"
_MARK = "# dltensor: the types its signatures name, defined here (python -m dltensor.stubs)"


@lru_cache(maxsize=None)  # once per process: the same text goes into every stub file
def _definitions() -> str:
    """dltensor/typing.py's definitions, renamed (``DLPackArray`` -> ``_dlt_DLPackArray``, ``Any`` ->
    ``_dlt_typing.Any``), without its docstrings and ``__all__``, plus ``_dlt_Tensor`` (``dltensor.Tensor``)."""
    tree = ast.parse((Path(__file__).parent / "typing.py").read_text())
    imported, defined = set(), set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "typing":
            imported |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    defined.discard("__all__")

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in imported:
                return ast.copy_location(ast.Attribute(ast.Name(PREFIX + "typing", ast.Load()), node.id, node.ctx), node)
            if node.id in defined:
                node.id = PREFIX + node.id.lstrip("_")
            return node

        def visit_ClassDef(self, node):
            self.generic_visit(node)
            node.name = PREFIX + node.name.lstrip("_")
            node.decorator_list = []  # runtime_checkable: no meaning in a stub
            if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
                node.body = node.body[1:] or [ast.Expr(ast.Constant(...))]
            return node

    body = [Rename().visit(node) for node in tree.body
            if isinstance(node, ast.ClassDef) or isinstance(node, ast.Assign) and node.targets[0].id != "__all__"]
    lines = [_MARK, f"import typing as {PREFIX}typing", *(ast.unparse(n) for n in body),
             f"class {PREFIX}Tensor({PREFIX}DLPackArray, {PREFIX}typing.Protocol): ...", "# dltensor: end of the inlined types"]
    return "\n".join(lines) + "\n"


def _strip_annotated(text: str) -> str:
    """`text` with each ``Annotated[T, meta]`` (``typing.`` or not) reduced to ``T``."""
    out, i = [], 0
    pattern = re.compile(r"(?:typing\.)?Annotated\[")
    while True:
        m = pattern.search(text, i)
        if not m:
            return "".join(out) + text[i:]
        out.append(text[i:m.start()])
        depth, j, comma = 1, m.end(), None
        while depth:
            c = text[j]
            depth += c in "[(" and 1 or c in "])" and -1 or 0
            if c == "," and depth == 1 and comma is None:
                comma = j
            j += 1
        out.append(_strip_annotated(text[m.end():comma if comma is not None else j - 1]))
        i = j


# dltensor's protocols (after the rewrite) and what each takes, by name: a tensor type of a framework or a
# narrower protocol (NumPy's, PyTorch's, JAX's arrays have __dlpack__; pyright counts them in, mypy not all).
_PROTOCOLS = {PREFIX + "ArrayLike", PREFIX + "Array", PREFIX + "DLPackArray"}
_TENSOR = re.compile(r"(numpy\.typing\.NDArray(\[.*\])?|numpy\.ndarray(\[.*\])?|torch\.Tensor|jax\.Array|"
                     r"tensorflow\.Tensor|paddle\.Tensor|cupy\.ndarray|memoryview|" + PREFIX + r"\w+)$")


def _split_top(text: str) -> List[str]:
    """`text` split at its top-level commas (not inside brackets or parentheses)."""
    parts, depth, start = [], 0, 0
    for k, c in enumerate(text):
        depth += 1 if c in "[(" else -1 if c in "])" else 0
        if c == "," and depth == 0:
            parts.append(text[start:k].strip())
            start = k + 1
    last = text[start:].strip()
    return parts + [last] if last else parts


def _covers(earlier: List[str], later: List[str]) -> bool:
    """Does every parameter of `later` take only what `earlier`'s takes (equal types, or a tensor type where
    `earlier` has one of dltensor's protocols)?"""
    if len(earlier) != len(later):
        return False
    for a, b in zip(earlier, later):
        (name_a, _, type_a), (name_b, _, type_b) = a.partition(":"), b.partition(":")
        type_a, type_b = type_a.split("=")[0].strip(), type_b.split("=")[0].strip()
        if name_a.strip() != name_b.strip() or type_a != type_b and not (
                type_a in _PROTOCOLS and _TENSOR.match(type_b) and type_b != PREFIX + "ArrayLike"):
            return False
    return True


def _mark_overlapping_overloads(lines: List[str]) -> List[str]:
    """Silences, line by line and code by code, what mypy (1.x, --strict) and pyright say of ``@overload``s
    that no type tells apart:
    - parameters equal but for ``Annotated`` metadata: mypy calls the later one unreachable
      (``overload-cannot-match``); pyright too where the returns are equal, else it calls the earlier one
      overlapping (``reportOverlappingOverload``);
    - a later overload whose parameters are tensor types where the earlier one's are dltensor's protocols
      (a kept ``py::array_t`` overload after a ``py::dltensor`` one): pyright calls it unreachable;
    - parameters that differ only in NumPy's dtype (``NDArray[float32]``, ``NDArray[float64]``) and returns
      that differ: mypy calls the earlier one overlapping (``overload-overlap``)."""
    groups = {}  # (indent, name) -> [(line index, parameters, parameters less NumPy's dtypes, return)]
    for k, line in enumerate(lines):
        m = re.match(r"(\s*)def (\w+)\((.*)\)\s*->(.*?):\s*(\.\.\.)?\s*(#.*)?$", line)
        if m and k and lines[k - 1].strip() in ("@overload", "@typing.overload"):
            params = _strip_annotated(m.group(3))
            groups.setdefault((m.group(1), m.group(2)), []).append(
                (k, params, re.sub(r"(numpy\.typing\.)?NDArray\[[^\]]*\]", "NDArray", params), m.group(4).strip()))
    mypy, pyright = {}, {}  # line index -> codes
    for overloads in groups.values():
        for a, (i, p_i, np_i, r_i) in enumerate(overloads):
            for j, p_j, np_j, r_j in overloads[a + 1:]:
                if p_i == p_j:
                    mypy.setdefault(j, set()).add("overload-cannot-match")
                    pyright.setdefault(j if r_i == r_j else i, set()).add("reportOverlappingOverload")
                elif _covers(_split_top(p_i), _split_top(p_j)):
                    pyright.setdefault(j, set()).add("reportOverlappingOverload")
                elif np_i == np_j and r_i != r_j:
                    mypy.setdefault(i, set()).add("overload-overlap")
    out = []
    for k, line in enumerate(lines):
        if (k in mypy or k in pyright) and "# type: ignore" not in line and "# pyright: ignore" not in line:
            line = line.rstrip()
            if k in mypy:
                line += f"  # type: ignore[{', '.join(sorted(mypy[k]))}]"
            if k in pyright:
                line += f"  # pyright: ignore[{', '.join(sorted(pyright[k]))}]"
        out.append(line)
    return out


def self_contained(text: str) -> str:
    """The stub `text` without dltensor names (module docstring above)."""
    if "dltensor." not in text.replace(_MARK, ""):
        return "\n".join(_mark_overlapping_overloads(text.split("\n")))
    text = re.sub(r"\bdltensor\.typing\.(\w+)", lambda m: PREFIX + m.group(1), text)
    text = re.sub(r"\bdltensor\.Tensor\b", PREFIX + "Tensor", text)
    lines = [line for line in text.split("\n")
             if not re.match(r"\s*(import dltensor(\.typing)?\s*$|from dltensor(\.typing)? import )", line)]
    if not any(line == _MARK for line in lines):
        # after the module docstring, `from __future__` lines and the first block of imports
        tree = ast.parse("\n".join(lines))
        at = 0
        for node in tree.body:
            first = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node is tree.body[0]
            if first or isinstance(node, (ast.Import, ast.ImportFrom)):
                at = node.end_lineno
            else:
                break
        lines[at:at] = ["", *_definitions().rstrip("\n").split("\n"), ""]
    return "\n".join(_mark_overlapping_overloads(lines))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dltensor.stubs", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help=".pyi files, or folders searched for them")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        print(f"python -m dltensor.stubs: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 1
    files = [f for p in args.paths for f in (sorted(p.rglob("*.pyi")) if p.is_dir() else [p])]
    if not files:
        print("python -m dltensor.stubs: no .pyi file found", file=sys.stderr)
        return 1
    for f in files:
        text = f.read_text()
        new = self_contained(text)
        if new != text:
            f.write_text(new)
            print(f"rewrote {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
