"""The NumPy references: C-shaped operator calls -> each operator's spec (phase 1) and kernel
(phase 2), asked by name of the registry's catalog (``_registry/references.py``, which ``pyaclnn.ops``
fills: one folder per operator, and the aten tier's table).
``references()`` names the operators with an exact reference, ``runs(op)`` says whether either
tier computes ``op``; every other operator the registry finds raises NotSupportedError on this backend
(``no_reference``); a name no header declares, UnknownOperatorError (the runtime's ``_unknown``).

``args`` are the C arguments of ``aclnn<Op>GetWorkspaceSize`` without the two out-parameters,
in C order. In them a tensor is a ``TensorDesc`` (phase 1) or an ndarray view (phase 2),
``None`` is the nullptr, and an aclBoolArray is a tuple of bools.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

# Each operator's spec and kernel, by name, from the registry's catalog (which pyaclnn.ops fills:
# the operators' folders stand above this backend).
from .._registry import references as _references
from .._spec import TensorMeta, Workspace
from ..dtypes import from_numpy
from ..errors import NotSupportedError

__all__ = ["TensorMeta", "references", "runs", "no_reference", "check", "prepare", "fills_when_empty",
           "meta_of", "workspace_size", "written"]


# The operators with a NumPy reference (a folder of pyaclnn.ops each): () -> tuple of names.
references = _references.names


def runs(op: str) -> bool:
    """Whether a tier of references computes ``op``: an exact one, or the aten tier's table."""
    return _references.tier(op) is not None


def no_reference(op: str) -> NotSupportedError:
    """The error for an operator a header declares but the NumPy backend cannot compute."""
    return NotSupportedError(
        f"aclnn{op} has no NumPy reference in pyaclnn: it runs with PYACLNN_BACKEND=acl on a device "
        f"(through the CANN headers and libraries installed there). Operators with a reference: "
        f"{', '.join(references())}")


def meta_of(x: Any) -> Any:
    """TensorMeta of a TensorDesc or ndarray (None stays None); other values pass through."""
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        item = x.itemsize
        return TensorMeta(x.shape, from_numpy(x.dtype), tuple(s // item for s in x.strides))
    meta = getattr(x, "meta", None)
    if meta is not None:
        return meta()
    if isinstance(x, tuple):  # an aclTensorList's tensors (an aclBoolArray's bools pass through)
        return tuple(meta_of(t) for t in x)
    return x


def metas(args: tuple) -> list[Any]:
    """``meta_of`` each argument: what ``check`` and ``workspace_size`` take (made once for both)."""
    return [meta_of(x) for x in args]


def check(op: str, soc: str, metas: list[Any]) -> bool:
    """Run the library's phase-1 checks (the operator's spec.check) on the arguments' ``metas``;
    True means empty (success, nothing to compute)."""
    return (RULES.get(op) or rules(op))[0](soc, *metas)


_SPECS: dict[str, Any] = {}  # op -> its spec module: a plain dict on the per-call path


_KERNELS: dict[str, Any] = {}  # op -> its kernel module


def _kernel_of(op: str) -> Any:
    kernel = _KERNELS[op] = _references.kernel(op)
    return kernel


def _spec_of(op: str) -> Any:
    spec = _SPECS[op] = _references.spec(op)
    if not _watch(spec):
        _UNWATCHED.add(op)
    return spec


def spec_of(op: str) -> Any:
    """The spec (module, or the aten tier's AtenSpec) of ``op``."""
    return _SPECS.get(op) or _spec_of(op)


# op -> its spec's rule functions (``rules``), read once: valid until an attribute of a spec is
# set or deleted (a rule replaced, as tests do with monkeypatch.setattr(spec, "check", ...)),
# which empties it (``_watch``); an op whose spec cannot be watched is never kept here
RULES: dict[str, tuple] = {}
_RULES_LOCK = threading.RLock()  # (a read racing with a change: never kept after the change's emptying)
_WATCHED: dict[type, type] = {}  # a spec's class -> its watched subclass
_UNWATCHED: set[str] = set()  # the ops whose spec's class cannot be swapped (rules read every time)


def rules(op: str) -> tuple:
    """The functions of ``op``'s spec a phase 1 runs: ``check`` and the other rules (None where
    the spec has none), as ``getattr`` finds them now: kept in RULES while its spec is watched,
    which equals reading them again: a spec's attributes change only by a set or a delete, which
    empties RULES first (a replaced rule on the spec's class itself, not on the spec, is not seen:
    replace it on the spec, which is what runs)."""
    found = RULES.get(op)
    if found is None:
        spec = _SPECS.get(op) or _spec_of(op)
        with _RULES_LOCK:
            found = (spec.check, getattr(spec, "written", None), getattr(spec, "workspace_size", None),
                     getattr(spec, "empty_fills", None))
            if op not in _UNWATCHED:
                RULES[op] = found
    return found


def _changed() -> None:
    """A spec's attribute was set or deleted: its rules are read again (``rules``)."""
    with _RULES_LOCK:
        RULES.clear()


def _watch(spec: Any) -> bool:
    """Swap ``spec``'s class for a subclass whose attribute sets and deletes call
    ``_changed`` (a module too: the Python data model's "customizing module attribute access");
    False when its class cannot be swapped."""
    cls = type(spec)
    if cls in _WATCHED.values():
        return True
    watched = _WATCHED.get(cls)
    if watched is None:
        base_set: Callable[[Any, str, Any], None] = getattr(cls, "__setattr__")
        base_del: Callable[[Any, str], None] = getattr(cls, "__delattr__")

        def __setattr__(self: Any, name: str, value: Any) -> None:
            base_set(self, name, value)
            _changed()

        def __delattr__(self: Any, name: str) -> None:
            base_del(self, name)
            _changed()
        meta: Any = type(cls)  # (type, or a module's: ModuleType's subclass is made by type too)
        watched = _WATCHED[cls] = meta(cls.__name__, (cls,), {
            "__slots__": (), "__module__": cls.__module__, "__qualname__": cls.__qualname__,
            "__setattr__": __setattr__, "__delattr__": __delattr__})
    try:
        spec.__class__ = watched
    except TypeError:  # (a class whose instances cannot change class: its rules are read every call)
        return False
    return True


def workspace_size(op: str, soc: str, metas: list[Any]) -> Workspace:
    """The workspace phase 1 reports (after ``check`` accepted ``metas``): the operator's
    spec.workspace_size, the rule traced from its sources. A spec without one reports none (0),
    as before the rules."""
    rule = (RULES.get(op) or rules(op))[2]
    return Workspace(0, False) if rule is None else rule(soc, *metas)


def fills_when_empty(op: str, soc: str, metas: list[Any]) -> bool:
    """Whether phase 2 still writes on a call ``check`` found empty (``metas``: a spec's
    ``empty_fills``: Ascend950's GroupNorm zero-fills dgamma/dbeta, ops.md §2.2.6)."""
    rule = (RULES.get(op) or rules(op))[3]
    return rule is not None and bool(rule(soc, *metas))


def written(op: str, soc: str, metas: list[Any]) -> dict[str, Any] | None:
    """What phase 2 writes of the outputs, for a call ``check`` accepted (``metas``): the spec's ``written``
    (C output parameter name -> elements written in row-major order, None for all, a tuple of
    those for a tensor list; an output it leaves out is written whole), or None: every output
    is written whole (a spec without the rule)."""
    rule = (RULES.get(op) or rules(op))[1]
    return None if rule is None else rule(soc, *metas)


def prepare(op: str, soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for the ndarray views ``a`` (outputs written in place), and for any others of
    the same metadata and plain values: the operator's kernel.prepare, which converts those values
    once (the runtime makes it once per executor, and a repeated NumPy-in/NumPy-out call reruns
    it, where this conversion would cost as much as a small kernel)."""
    kernel = _KERNELS.get(op) or _kernel_of(op)
    return kernel.prepare(soc, a, empty)

