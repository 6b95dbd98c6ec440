"""The aten tier's table: one data module per family (math.py, nn.py, reduce.py, index.py...),
each a list ``ENTRIES`` of ``_entry.E(...)``; a new family is a new module here, found by itself.

Modules are data: they import only ``._entry`` (no torch), so loading the table is cheap.

A module that sets ``PRECEDES = True`` (its entries traced operator by operator from the op
sources: the ew_* families of the ops-math list) takes its operators over from the other
modules, whose entries of the same names are then left out; two such modules naming one
operator are still an error.
"""
from __future__ import annotations

import importlib
import pkgutil

from ._entry import Entry

__all__ = ["load"]


def load() -> dict[str, Entry]:
    """Every entry, by operator name (ValueError when two entries name the same operator, but
    for a ``PRECEDES`` module's, which replaces the others': the module docstring)."""
    modules = [(m.name, importlib.import_module(f"{__name__}.{m.name}"))
               for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name) if not m.name.startswith("_")]
    owner: dict[str, str] = {}  # operator -> the PRECEDES module that has it
    for name, data in modules:
        if getattr(data, "PRECEDES", False):
            for entry in data.ENTRIES:
                if owner.setdefault(entry.op, name) != name:
                    raise ValueError(f"aten table: {entry.op} is in {owner[entry.op]}.py and {name}.py")
    found: dict[str, Entry] = {}
    for name, data in modules:
        for entry in data.ENTRIES:
            if owner.get(entry.op, name) != name:  # another module's traced entry replaces it
                continue
            if entry.op in found:
                raise ValueError(f"aten table: {entry.op} is in {found[entry.op].family}.py and {name}.py")
            object.__setattr__(entry, "family", name)
            found[entry.op] = entry
    return found
