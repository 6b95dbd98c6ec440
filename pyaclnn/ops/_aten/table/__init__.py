"""The aten tier's table: one data module per family (math.py, nn.py, reduce.py, index.py...),
each a list ``ENTRIES`` of ``_entry.E(...)``; a new family is a new module here, found by itself.

Modules are data: they import only ``._entry`` (no torch), so loading the table is cheap. One
operator has one entry, in one module (the ew_* families have the ops-math element-wise
operators, traced one by one from their op sources).
"""
from __future__ import annotations

import importlib
import pkgutil

from ._entry import Entry

__all__ = ["load"]


def load() -> dict[str, Entry]:
    """Every entry, by operator name (ValueError when two entries name the same operator)."""
    found: dict[str, Entry] = {}
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if m.name.startswith("_"):
            continue
        for entry in importlib.import_module(f"{__name__}.{m.name}").ENTRIES:
            if entry.op in found:
                raise ValueError(f"aten table: {entry.op} is in {found[entry.op].family}.py and {m.name}.py")
            object.__setattr__(entry, "family", m.name)
            found[entry.op] = entry
    return found
