"""The NumPy references: C-shaped operator calls -> the shared specs (phase 1) and the kernels
(phase 2). ``REFERENCES`` names the operators that have one; every other operator the registry
finds raises NotSupportedError on this backend (``no_reference``); a name no header declares,
UnknownOperatorError (the runtime's ``_unknown``).

``args`` are the C arguments of ``aclnn<Op>GetWorkspaceSize`` without the two out-parameters,
in C order. In them a tensor is a ``TensorDesc`` (phase 1) or an ndarray view (phase 2),
``None`` is the nullptr, and the GroupNorm output mask is a tuple of bools.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._spec import TensorMeta, cross_entropy_loss_grad, group_norm_backward, mse_loss_backward, prelu_backward
from .._spec import is_regbase
from ..dtypes import from_numpy
from .._registry import REFERENCES as _REFERENCES
from ..errors import NotSupportedError
from . import kernels
from .kernels import group_norm as group_norm_kernel

__all__ = ["TensorMeta", "REFERENCES", "no_reference", "check", "prepare", "compute", "fills_when_empty",
           "meta_of"]

# The operators with a NumPy reference (spec checks + kernel, dispatched by check/compute below).
REFERENCES = _REFERENCES


def no_reference(op: str) -> NotSupportedError:
    """The error for an operator a header declares but the NumPy backend cannot compute."""
    return NotSupportedError(
        f"aclnn{op} has no NumPy reference in pyaclnn: it runs with PYACLNN_BACKEND=acl on a device "
        f"(through the CANN headers and libraries installed there). Operators with a reference: "
        f"{', '.join(REFERENCES)}")


def meta_of(x: Any) -> Any:
    """TensorMeta of a TensorDesc or ndarray (None stays None); other values pass through."""
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        item = x.itemsize
        return TensorMeta(x.shape, from_numpy(x.dtype), tuple(s // item for s in x.strides))
    meta = getattr(x, "meta", None)
    return meta() if meta is not None else x


def check(op: str, soc: str, args: tuple) -> bool:
    """Run the library's phase-1 checks; True means empty (success, nothing to compute)."""
    a = [meta_of(x) for x in args]
    if op == "MseLossBackward":
        return mse_loss_backward.check(soc, *a)
    if op == "GroupNormBackward":
        return group_norm_backward.check(soc, *a)
    if op == "CrossEntropyLossGrad":
        return cross_entropy_loss_grad.check(soc, *a)
    if op == "PreluBackward":
        return prelu_backward.check(soc, *a)
    raise KeyError(op)


def fills_when_empty(op: str, soc: str, args: tuple) -> bool:
    """Ascend950's GroupNorm empty path zero-fills dgamma/dbeta (ops.md §2.2.6)."""
    if op != "GroupNormBackward" or not is_regbase(soc):
        return False
    m = [meta_of(x) for x in args]
    return group_norm_backward.empty_zero_fills(soc, m[0], m[1], m[2], m[3], m[4])


def prepare(op: str, soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for the ndarray views ``a`` (outputs written in place), and for any others of
    the same metadata and plain values: the kernel with those values converted once (a plan
    is rerun on repeated NumPy-in/NumPy-out calls, where this conversion would cost as much as
    a small kernel)."""
    if op == "MseLossBackward":
        mse_reduction, mse = int(a[3]), kernels.mse_loss_backward
        return lambda v: mse(v[0], v[1], v[2], mse_reduction, v[4], soc)
    if op == "GroupNormBackward":
        if empty:  # Ascend950 empty path: zero dgamma and dbeta whatever the mask
            return _zero_dgamma_dbeta
        n, c, hxw, group = map(int, a[5:9])
        gn = group_norm_kernel.bind(n, c, hxw, group, a[9])
        return lambda v: gn(v[0], v[1], v[2], v[3], v[4], v[10], v[11], v[12])
    if op == "CrossEntropyLossGrad":
        reduction = cross_entropy_loss_grad.effective_reduction(soc, a[6])
        ignore_index, smoothing, ce = int(a[7]), float(a[8]), kernels.cross_entropy_loss_grad
        return lambda v: ce(v[0], v[1], v[2], v[3], reduction, ignore_index, smoothing, v[10], soc)
    if op == "PreluBackward":
        prelu = kernels.prelu_backward
        return lambda v: prelu(v[0], v[1], v[2], v[3], v[4], soc)
    raise KeyError(op)


def _zero_dgamma_dbeta(v: tuple) -> None:
    for out in (v[11], v[12]):
        if out is not None:
            out[...] = 0


def compute(op: str, soc: str, a: tuple, empty: bool = False) -> None:
    """Phase 2 on ndarray views (outputs are written in place)."""
    prepare(op, soc, a, empty)(a)
