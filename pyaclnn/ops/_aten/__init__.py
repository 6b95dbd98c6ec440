"""The aten tier: operators the NumPy reference computes with PyTorch's CPU kernels (aten),
driven by one data table (``table/``: one module per family) instead of code per operator.

- ``table/``: the entries (``table/_entry.py`` says the format);
- ``spec.py``: the generic phase 1 of every entry (nullptr 161001; rank > 8, dtype, out shape
  and dtype 161002, the output rule from aten's meta kernels), and torch's lazy import;
- ``kernel.py``: the generic phase 2 (NumPy views in and out, through ``torch.from_numpy``).

``pyaclnn.ops`` plugs them in (``ops.tier(op) == "aten"``); the NumPy backend runs them through
its one launch path. torch is imported when an aten-tier operator first runs, never before.
"""
from __future__ import annotations

import threading

from .table import load
from .table._entry import Entry

__all__ = ["entries", "Entry"]

_lock = threading.Lock()
_entries: dict[str, Entry] | None = None


def entries() -> dict[str, Entry]:
    """Every entry of the table, by operator name (loaded once; no torch)."""
    global _entries
    if _entries is None:
        with _lock:
            if _entries is None:
                _entries = load()
    return _entries
