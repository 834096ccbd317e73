"""docs/robustness.md's robustness table is generated from the suite (tools/robustness.py: collection only, the test
modules' own constants): the block between its markers must equal what the generator prints now, so a
figure that the suite no longer supports fails here. Fix: python tools/robustness.py --write"""
import subprocess
import sys

import pytest

from generated_blocks import markers, read_block
from robustness import BLOCK, INCOMPLETE, PAGE, ROOT


def test_robustness_table_is_generated_from_the_suite():
    text = PAGE.read_text()
    START, END = markers(BLOCK)
    assert text.count(START) == 1 and text.count(END) == 1 and text.index(START) < text.index(END), \
        f"docs/robustness.md needs one {START} ... {END} block"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "robustness.py")], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode == INCOMPLETE:
        pytest.skip(f"the whole suite cannot be collected here: {proc.stderr.strip()[:500]}")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert read_block(PAGE, BLOCK) == proc.stdout.rstrip("\n"), \
        "docs/robustness.md's robustness table is stale: run python tools/robustness.py --write"
