"""The NumPy references: C-shaped operator calls -> the shared specs (phase 1) and the kernels
(phase 2). ``REFERENCES`` names the operators that have one; every other operator the registry
finds raises NotSupportedError on this backend (``no_reference``).

``args`` are the C arguments of ``aclnn<Op>GetWorkspaceSize`` without the two out-parameters,
in C order. In them a tensor is a ``TensorDesc`` (phase 1) or an ndarray view (phase 2),
``None`` is the nullptr, and the GroupNorm output mask is a tuple of bools.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._spec import TensorMeta, cross_entropy_loss_grad, group_norm_backward, mse_loss_backward, prelu_backward
from .._spec import is_regbase
from ..dtypes import from_numpy
from .._registry import REFERENCES as _REFERENCES
from ..errors import NotSupportedError
from . import kernels

__all__ = ["TensorMeta", "REFERENCES", "no_reference", "check", "check_arrays", "compute", "fills_when_empty",
           "meta_of"]

# The operators with a NumPy reference (spec checks + kernel, dispatched by check/compute below).
REFERENCES = _REFERENCES


def no_reference(op: str) -> NotSupportedError:
    """The error for an operator the NumPy backend cannot compute."""
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


# check_arrays' memo: (op, soc, each argument's metadata) -> check's result, for calls that passed.
_PASSED: dict[tuple, bool] = {}
_PASSED_MAX = 1024
# Argument types whose value is all a check sees. Any other object (one that could change between
# calls) puts an unhashable item in the key: that call is checked, not remembered.
_VALUE_TYPES = frozenset((int, float, str, bool, type(None), tuple))
_UNHASHABLE: list = []


def check_arrays(op: str, soc: str, args: tuple, _nd: Any = np.ndarray, _values: frozenset = _VALUE_TYPES,
                 _unhashable: list = _UNHASHABLE) -> bool:
    """``check`` for host arrays (the NumPy-in/NumPy-out path), remembered for calls that passed.

    ``check`` is a pure function of the arguments' shapes, dtypes and strides, the scalar
    arguments and the SoC, and all of that is the key, so a repeated call gets the result
    ``check`` gave it. A failing call raises and is never remembered: every failure runs the
    checks and raises the same error. Small calls are dominated by this bookkeeping (issue 12).
    """
    # arrays by metadata; None, scalars, the mask, a reduction string by type and value (True != 1).
    # The names the key reads are default arguments (locals): ~0.2 us less than globals per call.
    k = (op, soc, *[(a.shape, a.dtype, a.strides) if type(a) is _nd else
                    (type(a), a) if type(a) in _values else _unhashable for a in args])
    try:
        return _PASSED[k]
    except KeyError:
        pass
    except TypeError:  # an unhashable (or not plain) argument: no memo
        return check(op, soc, args)
    empty = check(op, soc, args)
    if len(_PASSED) >= _PASSED_MAX:
        _PASSED.clear()
    _PASSED[k] = empty
    return empty


def fills_when_empty(op: str, soc: str, args: tuple) -> bool:
    """Ascend950's GroupNorm empty path zero-fills dgamma/dbeta (ops.md §2.2.6)."""
    if op != "GroupNormBackward" or not is_regbase(soc):
        return False
    m = [meta_of(x) for x in args]
    return group_norm_backward.empty_zero_fills(soc, m[0], m[1], m[2], m[3], m[4])


def compute(op: str, soc: str, a: tuple, empty: bool = False) -> None:
    """Phase 2 on ndarray views (outputs are written in place)."""
    if op == "MseLossBackward":
        grad, x, target, reduction, out = a
        kernels.mse_loss_backward(grad, x, target, int(reduction), out, soc)
    elif op == "GroupNormBackward":
        dy, x, mean, rstd, gamma, n, c, hxw, group, mask, gi, gg, gb = a
        if empty:  # Ascend950 empty path: zero dgamma and dbeta whatever the mask
            for out in (gg, gb):
                if out is not None:
                    out[...] = 0
            return
        kernels.group_norm_backward(dy, x, mean, rstd, gamma, int(n), int(c), int(hxw), int(group),
                                    tuple(mask), gi, gg, gb, soc)
    elif op == "CrossEntropyLossGrad":
        gl, lp, target, weight, _gzl, _lse, reduction, ignore_index, ls, _scale, out = a
        kernels.cross_entropy_loss_grad(gl, lp, target, weight,
                                        cross_entropy_loss_grad.effective_reduction(soc, reduction),
                                        int(ignore_index), float(ls), out, soc)
    elif op == "PreluBackward":
        grad, x, weight, gi, gw = a
        kernels.prelu_backward(grad, x, weight, gi, gw, soc)
    else:
        raise KeyError(op)
