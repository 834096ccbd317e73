"""The library's C++ code (cpp/include, cpp/src) is formatted as .clang-format says, by the clang-format release
that the test extra pins (pyproject.toml): `clang-format -i` on a file formats it."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(str(p.relative_to(ROOT)) for d in ("cpp/include", "cpp/src") for p in (ROOT / d).rglob("*")
               if p.suffix in (".h", ".cpp"))


def pinned_release() -> str:
    return re.search(r'"clang-format==([\d.]+)"', (ROOT / "pyproject.toml").read_text()).group(1)


def clang_format() -> str:
    """The pinned clang-format: the wheel's beside this Python, else one on PATH of that release; skips when
    neither is installed (another release formats differently)."""
    for exe in (Path(sys.executable).parent / "clang-format", shutil.which("clang-format")):
        if exe and Path(exe).is_file():
            version = subprocess.run([str(exe), "--version"], capture_output=True, text=True).stdout
            if f"version {pinned_release()}" in version:
                return str(exe)
    pytest.skip(f"clang-format {pinned_release()} is not installed (pip install '.[test]')")


def check(exe, files, cwd=ROOT):
    return subprocess.run([exe, "--dry-run", "--Werror", f"--style=file:{ROOT / '.clang-format'}", *files],
                          cwd=cwd, capture_output=True, text=True)


def test_library_code_is_formatted():
    proc = check(clang_format(), FILES)
    assert FILES and proc.returncode == 0, "run clang-format -i on:\n" + proc.stderr[-4000:]


def test_format_check_refuses_a_misformatted_file(tmp_path):
    exe = clang_format()
    source = (ROOT / "cpp/include/dltensor/bindings/caster_protocol.h").read_text()
    bad = tmp_path / "caster_protocol.h"
    bad.write_text(source.replace("\n    ", "\n  ", 1))  # one line indented by 2 instead of 4
    assert check(exe, [str(bad)]).returncode != 0
    good = tmp_path / "good.h"
    good.write_text(source)
    assert check(exe, [str(good)]).returncode == 0


MAX_COMMENT_LINES = 3  # issue 63: a comment says what the code does in a line or three; the why is in docs/


def long_comments(text: str) -> list:
    """(first line, length) of each run of more than MAX_COMMENT_LINES comment-only lines in `text`."""
    runs, start, n = [], 0, 0
    for number, line in enumerate(text.splitlines() + [""], 1):
        if line.strip().startswith("//"):
            start, n = (number, 1) if n == 0 else (start, n + 1)
            continue
        if n > MAX_COMMENT_LINES:
            runs.append((start, n))
        n = 0
    return runs


def test_library_comments_are_at_most_three_lines():
    found = {f: runs for f in FILES if (runs := long_comments((ROOT / f).read_text()))}
    assert not found, f"comments over {MAX_COMMENT_LINES} lines (move the why to docs/architecture.md): {found}"


def test_comment_length_check_finds_a_long_comment():
    assert long_comments("// a\n// b\n// c\nint x;\n    /// d\n    /// e\n") == []
    assert long_comments("int x;\n// a\n// b\n  // c\n// d\nint y;\n") == [(2, 4)]
    assert long_comments("// a\n// b\n// c\n// d") == [(1, 4)]
