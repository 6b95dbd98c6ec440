"""Where a test's own marked line is, as pyaclnn's reports name it (``<file>:<line>``)."""
from __future__ import annotations

from pathlib import Path


def marked_line(path: str, marker: str) -> str:
    """``<basename>:<line>`` of the one line of ``path`` ending with the comment ``# <marker>``."""
    lines = Path(path).read_text().splitlines()
    (n,) = [i + 1 for i, text in enumerate(lines) if text.rstrip().endswith(f"# <{marker}>")]
    return f"{Path(path).name}:{n}"
