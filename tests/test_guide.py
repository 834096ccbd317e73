"""README.md and docs/*.md quote their code: every fenced block follows a marker

    <!-- snippet: <path> [<name>] -->

naming the file, and within it the lines between `// snippet: <name>` (or `# snippet: <name>`) and
`// end snippet`; no name quotes the whole file. These tests fail when a quote drifts from its source, so
the guide shows code that CI compiles and runs (tests/test_examples.py).

    python tests/test_guide.py --write    # rewrite every quoted block from its source
"""
import re
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "migration.md"
README = ROOT / "README.md"
REFERENCE = ROOT / "docs" / "reference.md"  # quotes the downstream package (§1); its other blocks are not quotes
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]  # every page that may quote a source
QUOTING = [d for d in PAGES if d != REFERENCE]  # every code block of these is a quote
EXAMPLES = ROOT / "cpp" / "examples"

MARKER = re.compile(r"^(?P<indent>[ \t]*)<!-- snippet: (?P<path>\S+)(?: (?P<name>\S+))? -->$")
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>\S*)$")
SOURCE_MARK = re.compile(r"^\s*(?://|#) (?:snippet: (?P<name>\S+)|end snippet)\s*$")


def source_snippets(path: Path) -> dict:
    """{name: dedented text} of a source file's marked snippets."""
    out, name, lines = {}, None, []
    for line in path.read_text().splitlines():
        m = SOURCE_MARK.match(line)
        if m and m.group("name"):
            assert name is None, f"{path}: snippet {m.group('name')!r} opens inside {name!r}"
            name, lines = m.group("name"), []
        elif m:
            assert name is not None, f"{path}: 'end snippet' without a start"
            assert name not in out, f"{path}: snippet {name!r} defined twice"
            out[name] = textwrap.dedent("\n".join(lines)).strip("\n")
            name = None
        elif name is not None:
            lines.append(line)
    assert name is None, f"{path}: snippet {name!r} never ends"
    return out


def quoted_text(path: str, name) -> str:
    file = ROOT / path
    if name is None:
        return file.read_text().strip("\n")
    snippets = source_snippets(file)
    assert name in snippets, f"{path} has no snippet {name!r} (it has {sorted(snippets)})"
    return snippets[name]


def fences(lines):
    """(opening index, closing index, language, indent, marker match or None) of every fenced block."""
    i = 0
    while i < len(lines):
        f = FENCE.match(lines[i])
        if f:
            indent, start = f.group("indent"), i
            i += 1
            while not (lines[i].strip() == "```" and lines[i].startswith(indent)):
                i += 1
            marker = MARKER.match(lines[start - 1]) if start else None
            yield start, i, f.group("lang") or "(none)", indent, marker
        i += 1


def blocks(doc: Path):
    """(line number, fence language, marker match or None, block text) for every fenced block."""
    lines = doc.read_text().splitlines()
    for start, end, lang, indent, marker in fences(lines):
        body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[start + 1:end]]
        yield start + 1, lang, marker, "\n".join(body)


def quotes(doc: Path):
    return [(line, m.group("path"), m.group("name"), text) for line, _, m, text in blocks(doc) if m]


UNQUOTED_LANGUAGES = {"sh", "text", "{toctree}"}  # commands, output, the site's contents; code is quoted


@pytest.mark.parametrize("doc", QUOTING, ids=lambda p: p.name)
def test_every_code_block_is_quoted_from_a_source(doc):
    unquoted = [f"{doc.name}:{line} ({lang})" for line, lang, m, _ in blocks(doc)
                if m is None and lang not in UNQUOTED_LANGUAGES]
    assert not unquoted, f"code blocks without a <!-- snippet: --> marker: {unquoted}"


@pytest.mark.parametrize("doc, line, path, name, text", [(d.name, *q) for d in PAGES for q in quotes(d)],
                         ids=lambda v: str(v) if isinstance(v, (int, str)) and not str(v).count("\n") else None)
def test_quote_matches_its_source(doc, line, path, name, text):
    assert text == quoted_text(path, name), f"{doc}: quote at line {line} differs from {path} {name or ''}"


def test_every_example_snippet_is_quoted_in_the_guide():
    quoted = {(path, name) for _, path, name, _ in quotes(GUIDE)}
    sources = sorted(EXAMPLES.rglob("*.cpp")) + [ROOT / "tests" / "test_examples.py"]
    missing = [f"{p.relative_to(ROOT)} {n}" for p in sources for n in source_snippets(p)
               if (str(p.relative_to(ROOT)), n) not in quoted]
    assert not missing, f"snippets the guide does not show: {missing}"


def test_guide_covers_every_example_task():
    text = GUIDE.read_text()
    for task in sorted(d.name for d in EXAMPLES.iterdir() if d.is_dir()):
        assert f"cpp/examples/{task}/" in text, f"the guide never quotes cpp/examples/{task}"


def test_readme_links_the_guide_and_shows_the_quickstart():
    text = README.read_text()
    assert "(docs/migration.md)" in text
    assert any(path == "cpp/examples/quickstart.cpp" for _, path, _, _ in quotes(README))


def test_readme_and_reference_quote_the_downstream_package():
    for doc in (README, REFERENCE, ROOT / "docs" / "getting-started.md"):
        quoted = {path for _, path, _, _ in quotes(doc)}
        assert {"tests/downstream_package/pyproject.toml", "tests/downstream_package/CMakeLists.txt"} <= quoted, doc


def write(doc: Path) -> bool:
    """Rewrites every quoted block of `doc` from its source; True when something changed."""
    old = doc.read_text()
    lines = old.splitlines()
    for start, end, _, indent, marker in reversed(list(fences(lines))):  # from the end: indices stay valid
        if marker:
            text = quoted_text(marker.group("path"), marker.group("name"))
            lines[start + 1:end] = [(indent + l).rstrip() for l in text.splitlines()]
    new = "\n".join(lines) + "\n"
    doc.write_text(new)
    return new != old


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    for d in PAGES:
        print(f"{d.relative_to(ROOT)}: {'rewritten' if write(d) else 'up to date'}")
