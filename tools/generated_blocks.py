"""The generated blocks of the docs pages: text between `<!-- NAME:start -->` and `<!-- NAME:end -->` that a
script writes (bench/run.py, bench/kernel.py, bench/compile.py, tools/robustness.py, tools/setup_times.py)
and the tests compare with what the script would write now."""
from pathlib import Path


def markers(name: str) -> tuple:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def read_block(page: Path, name: str) -> str:
    """The block `name` of `page`, without its markers and surrounding blank lines."""
    text = page.read_text()
    start, end = markers(name)
    if start not in text or end not in text:
        raise ValueError(f"{page} has no {start} ... {end} block")
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def write_block(page: Path, name: str, content: str) -> bool:
    """Replaces the block `name` of `page` with `content`; True when the page changed."""
    text = page.read_text()
    start, end = markers(name)
    if start not in text or end not in text:
        raise ValueError(f"{page} has no {start} ... {end} block")
    head, rest = text.split(start, 1)
    new = head + start + "\n" + content.strip("\n") + "\n" + end + rest.split(end, 1)[1]
    if new != text:
        page.write_text(new)
    return new != text
