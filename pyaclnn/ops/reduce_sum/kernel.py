"""aclnnReduceSum's phase 2 on NumPy views: Cast self to the compute dtype, ReduceSumOp (ReduceAny
for bool), Cast to out's dtype, ViewCopy (aclnn_reduce_sum.cpp); an empty self zero-fills out.

Rounding, as the CANN emulator models the device: a float sum accumulates in float64 in the
order of self's elements and is rounded once; integer sums wrap; casts round to nearest (floats,
through float32 for float16/bf16) or truncate (float to integer).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...dtypes import DType, from_numpy, to_numpy
from ..._spec import TensorMeta
from ..._numpy.kernels._cast import cast as _cast
from ..._numpy.kernels._parallel import quietly
from .spec import plan

__all__ = ["prepare", "reduce_sum"]

F64 = np.dtype(np.float64)


def reduce_sum(self: np.ndarray, dims: Any, keep_dims: bool, dtype: int, out: np.ndarray) -> None:
    quietly(_reduce_sum, self, dims, keep_dims, dtype, out)


def _reduce_sum(x: np.ndarray, dims: Any, keep_dims: bool, dtype: int, out: np.ndarray) -> None:
    if x.ndim == 0:
        out[...] = _cast(x, out.dtype).reshape(out.shape)
        return
    axes, promote, any_ = plan(TensorMeta(x.shape, from_numpy(x.dtype)), tuple(dims), dtype)
    P = to_numpy(promote)
    xc = _cast(x, P)
    kept = [d for d in range(x.ndim) if d not in axes]
    n_out = int(np.prod([x.shape[d] for d in kept], dtype=np.int64))
    k = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    flat = np.transpose(xc, kept + list(axes)).reshape(n_out, k)  # each row: one sum, in self's order
    if any_:
        r = flat.any(axis=1)
    elif P.kind in "fV":
        r = _cast(np.cumsum(flat.astype(F64), axis=1)[:, -1] if k else np.zeros(n_out, F64), P)
    elif P.kind == "c":
        r = np.cumsum(flat.astype(np.complex128), axis=1)[:, -1].astype(P) if k else np.zeros(n_out, P)
    else:
        r = flat.astype(np.int64).sum(axis=1).astype(P)  # wraps, as the int64 sum does
    out[...] = _cast(np.asarray(r), out.dtype).reshape(out.shape)


def _fill_zero(v: tuple) -> None:
    v[4][...] = 0


def prepare(soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for C arguments (self, dims, keepDims, dtype, out); an empty self (spec.empty_fills)
    zero-fills out."""
    if empty:
        return _fill_zero
    dims, keep, dtype = tuple(int(d) for d in a[1]), bool(a[2]), int(a[3])
    return lambda v: reduce_sum(v[0], dims, keep, dtype, v[4])
