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
    spec = _SPECS.get(op) or _spec_of(op)
    return spec.check(soc, *metas)


_SPECS: dict[str, Any] = {}  # op -> its spec module: a plain dict on the per-call path


_KERNELS: dict[str, Any] = {}  # op -> its kernel module


def _kernel_of(op: str) -> Any:
    kernel = _KERNELS[op] = _references.kernel(op)
    return kernel


def _spec_of(op: str) -> Any:
    spec = _SPECS[op] = _references.spec(op)
    return spec


def spec_of(op: str) -> Any:
    """The spec (module, or the aten tier's AtenSpec) of ``op``."""
    return _SPECS.get(op) or _spec_of(op)


def workspace_size(op: str, soc: str, metas: list[Any]) -> Workspace:
    """The workspace phase 1 reports (after ``check`` accepted ``metas``): the operator's
    spec.workspace_size, the rule traced from its sources. A spec without one reports none (0),
    as before the rules."""
    rule = getattr(_SPECS.get(op) or _spec_of(op), "workspace_size", None)
    return Workspace(0, False) if rule is None else rule(soc, *metas)


def fills_when_empty(op: str, soc: str, metas: list[Any]) -> bool:
    """Whether phase 2 still writes on a call ``check`` found empty (``metas``: a spec's
    ``empty_fills``: Ascend950's GroupNorm zero-fills dgamma/dbeta, ops.md §2.2.6)."""
    rule = getattr(_SPECS.get(op) or _spec_of(op), "empty_fills", None)
    return rule is not None and bool(rule(soc, *metas))


def written(op: str, soc: str, metas: list[Any]) -> dict[str, Any] | None:
    """What phase 2 writes of the outputs, for a call ``check`` accepted (``metas``): the spec's ``written``
    (C output parameter name -> elements written in row-major order, None for all, a tuple of
    those for a tensor list; an output it leaves out is written whole), or None: every output
    is written whole (a spec without the rule)."""
    rule = _WRITTEN.get(op, _WRITTEN)
    if rule is _WRITTEN:  # looked up once: a getattr that misses costs a microsecond per call
        rule = _WRITTEN[op] = getattr(_SPECS.get(op) or _spec_of(op), "written", None)
    return None if rule is None else rule(soc, *metas)


_WRITTEN: dict[str, Any] = {}  # op -> its spec's ``written``, or None


def prepare(op: str, soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for the ndarray views ``a`` (outputs written in place), and for any others of
    the same metadata and plain values: the operator's kernel.prepare, which converts those values
    once (the runtime makes it once per executor, and a repeated NumPy-in/NumPy-out call reruns
    it, where this conversion would cost as much as a small kernel)."""
    kernel = _KERNELS.get(op) or _kernel_of(op)
    return kernel.prepare(soc, a, empty)

