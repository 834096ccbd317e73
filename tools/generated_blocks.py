"""The generated blocks of the docs pages: text between `<!-- NAME:start -->` and `<!-- NAME:end -->` that a
script writes (bench/run.py, bench/kernel.py, bench/compile.py, tools/robustness.py, tools/setup_times.py)
and the tests compare with what the script would write now."""
from pathlib import Path


def markers(name: str) -> tuple:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def split_block(page: Path, name: str) -> tuple:
    """(text up to and with the start marker, the block between the markers, the end marker and the rest)."""
    text = page.read_text()
    start, end = markers(name)
    if start not in text or end not in text:
        raise ValueError(f"{page} has no {start} ... {end} block")
    head, rest = text.split(start, 1)
    block, tail = rest.split(end, 1)
    return head + start, block, end + tail


def read_block(page: Path, name: str) -> str:
    """The block `name` of `page`, without its markers and surrounding blank lines."""
    return split_block(page, name)[1].strip("\n")


def write_block(page: Path, name: str, content: str) -> bool:
    """Replaces the block `name` of `page` with `content`; True when the page changed."""
    head, block, tail = split_block(page, name)
    new_block = "\n" + content.strip("\n") + "\n"
    if new_block != block:
        page.write_text(head + new_block + tail)
    return new_block != block
