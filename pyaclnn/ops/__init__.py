"""The operators pyaclnn ships with a reference, one folder each; the rest of the package finds them here.

``pyaclnn/ops/<folder>/``, the folder named after the operator in snake case (aclnnAddRmsNorm:
``add_rms_norm``), holds everything specific to that operator, one module per layer
(docs/adding-an-operator.md):

- ``spec.py``: ``OP`` (the CANN name) and the library's phase-1 ``check`` in its order with its
  status codes, dtype tables per SoC, output shapes; optionally ``ROLES`` (the outputs of a
  header that declares every tensor const), ``empty_fills`` (an empty call that still writes) and
  ``written`` (the part of each output the kernel writes, where it leaves some unwritten).
  Backend-neutral: it imports neither backend.
- ``kernel.py``: the NumPy backend's phase 2, ``prepare(soc, args, empty) -> run(views)``. It
  belongs to the NumPy backend: it imports the NumPy kernel helpers, never the acl backend nor the
  object layer.
- ``api.py``: the public face, above the backends: its two-phase class and NumPy-in/NumPy-out
  function (where it has them), its documented ``sample`` with ``EXPECTED`` values, its benchmark
  cases.

Its header (``headers/aclnn_<folder>.h``, as CANN names it) declares the C functions.

A second tier, ``aten``, computes many more operators with PyTorch's CPU kernels from one data
table (``pyaclnn/ops/_aten``: no folder per operator): ``tier(op)`` says which tier has ``op``,
and ``spec``/``kernel`` return that tier's generic ones for a table entry; ``names()`` lists
the folders (the exact tier) only.

This module imports nothing of the package: ``pyaclnn/__init__`` installs it in the registry's
catalog (``pyaclnn._registry.references``) when ``pyaclnn`` is imported, and the registry, the
NumPy backend and the acl loader ask that catalog, by name, which operators exist (they stand
below the operators' folders, whose api.py sits above the object layer); the CLI, the samples and
the benchmarks ask here. Each operator's modules load on first use.
"""
from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import Any

__all__ = ["names", "spec", "kernel", "api", "apis", "folder", "snake", "tier", "aten_names", "aten_fits"]

_lock = threading.Lock()
_specs: dict[str, ModuleType] | None = None
_names: tuple[str, ...] = ()
_kernels: dict[str, ModuleType] = {}  # looked up on every launch of the NumPy backend: plain dicts
_apis: dict[str, ModuleType] = {}


def snake(op: str) -> str:
    """AddRmsNorm -> add_rms_norm (the folder name of an operator)."""
    out = []
    for i, ch in enumerate(op):
        if ch.isupper() and i and (not op[i - 1].isupper() or (i + 1 < len(op) and op[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _load() -> dict[str, ModuleType]:
    import pkgutil  # here: pyaclnn/__init__ imports this module at ``import pyaclnn``
    global _specs, _names
    with _lock:
        if _specs is None:
            found: dict[str, ModuleType] = {}
            for entry in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
                if not entry.ispkg or entry.name.startswith("_"):  # _aten: the second tier
                    continue
                module = importlib.import_module(f"{__name__}.{entry.name}.spec")
                op = module.OP
                if snake(op) != entry.name:  # the folder is found from the name, and back
                    raise ImportError(f"pyaclnn/ops/{entry.name}/spec.py declares OP = {op!r}; its folder "
                                      f"must be named {snake(op)!r}")
                found[op] = module
            _names = tuple(found)
            _specs = found
    return _specs


def names() -> tuple[str, ...]:
    """The operators with a reference (CANN names, without aclnn), in folder order."""
    if _specs is None:
        _load()
    return _names


def spec(op: str) -> Any:
    """The spec of ``op``: its folder's spec module, or the aten tier's generic spec of its table
    entry (KeyError if it has no reference)."""
    found = (_specs if _specs is not None else _load()).get(op)
    if found is None:
        found = _aten_spec(op)
    return found


def folder(op: str) -> str:
    """The folder (and the NumPy-in/out function's usual name) of ``op`` (an exact reference)."""
    (_specs if _specs is not None else _load())[op]
    return snake(op)


_aten_table: dict[str, Any] | None = None  # the aten tier's entries, loaded on first use (not `_aten`:
#                                           importing the subpackage sets that attribute)
_aten_specs: dict[str, Any] = {}


def _aten_entries() -> dict[str, Any]:
    global _aten_table
    if _aten_table is None:
        from ._aten import entries
        _aten_table = entries()
    return _aten_table


def aten_names() -> tuple[str, ...]:
    """The operators of the aten tier's table, sorted (the exact references not among them)."""
    exact = set(names())
    return tuple(sorted(op for op in _aten_entries() if op not in exact))


def tier(op: str) -> str | None:
    """Which tier computes ``op`` on the NumPy backend: ``"exact"`` (a folder of this package,
    traced by hand), ``"aten"`` (the aten tier's table: PyTorch's CPU kernels) or None."""
    if op in (_specs if _specs is not None else _load()):
        return "exact"
    return "aten" if op in _aten_entries() else None


def aten_fits(op: str, params: tuple[str, ...]) -> bool:
    """Whether ``op`` is in the aten tier's table for the prototype with C parameters ``params``
    (the names, in order: the declaration its entry was written for)."""
    entry = _aten_entries().get(op)
    return entry is not None and entry.params == tuple(params)


def _aten_spec(op: str) -> Any:
    found = _aten_specs.get(op)
    if found is None:
        entry = _aten_entries()[op]
        from ._aten.spec import AtenSpec
        from ._aten.kernel import AtenKernel
        found = _aten_specs[op] = AtenSpec(entry)
        _kernels[op] = AtenKernel(entry)  # type: ignore[assignment]
    return found


def _layer(op: str, layer: str, cache: dict[str, ModuleType]) -> ModuleType:
    module = cache[op] = importlib.import_module(f"{__name__}.{folder(op)}.{layer}")
    return module


def kernel(op: str) -> Any:
    """The NumPy backend's phase 2 of ``op`` (its kernel.py, or the aten tier's generic kernel)."""
    module = _kernels.get(op)
    if module is None and tier(op) == "aten":
        _aten_spec(op)
        return _kernels[op]
    return module if module is not None else _layer(op, "kernel", _kernels)


def api(op: str) -> ModuleType:
    """The public face of ``op`` (its api.py: class, function, sample, benchmark cases)."""
    module = _apis.get(op)
    return module if module is not None else _layer(op, "api", _apis)


def apis() -> dict[str, ModuleType]:
    """Every operator's api module, by operator name, in folder order."""
    return {op: api(op) for op in names()}
