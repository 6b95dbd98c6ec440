"""Every Python example in README.md runs, on both backends."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(backend):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 4
    has_torch = importlib.util.find_spec("torch") is not None
    namespace: dict = {}
    skipped = 0
    for block in blocks:
        # The oldest-dependencies run of .ci/run has no torch: its blocks are all the README
        # examples that need it (torch interop), and only those are left out there.
        if not has_torch and re.search(r"^\s*(import torch|from torch\b)", block, re.M):
            skipped += 1
            continue
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own documentation
    if skipped:
        pytest.skip(f"{skipped} README block(s) need torch, which is not installed (the others ran)")
