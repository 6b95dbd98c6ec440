"""aclnnCat's phase 2 on NumPy views (aclnn_cat.cpp SplitToConcat): the empty tensors are left
out; one non-empty tensor is Cast straight to out's dtype and ViewCopied (ProcessOneTensor);
two or more are each Cast to the promoted dtype, concatenated (ConcatD), Cast to out's dtype and
ViewCopied. The result is made whole before it is written, so out may overlap the inputs.

Casts as the device's Cast (and the CANN emulator's kit_round_f / kit_st_f): to a float dtype
through float64, then float16/bf16 through float32; integers wrap; anything to bool is != 0
(CanCast allows no float to integer here).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ...dtypes import from_numpy, to_numpy
from ..._spec import TensorMeta
from ..._numpy.kernels._cast import cast as _cast
from ..._numpy.kernels._parallel import quietly
from .spec import kept, plan

__all__ = ["prepare", "cat"]


def cat(tensors: Sequence[np.ndarray], dim: int, out: np.ndarray) -> None:
    """out = Cast(ConcatD(Cast(t, promoted) for the non-empty t), out's dtype)."""
    quietly(_cat, tuple(tensors), dim, out)


def _cat(tensors: tuple[np.ndarray, ...], dim: int, out: np.ndarray) -> None:
    metas = kept([TensorMeta(t.shape, from_numpy(t.dtype)) for t in tensors])
    arrays = [t for t in tensors if t.shape != (0,)]
    full = [t for t in arrays if t.size]
    if not full:
        return
    d = dim + arrays[0].ndim if dim < 0 else dim
    if len(full) == 1:
        r = _cast(full[0], out.dtype)
    else:
        P = to_numpy(plan(metas))
        r = _cast(np.concatenate([_cast(t, P) for t in full], axis=d), out.dtype)
    out[...] = r.reshape(out.shape)  # same shape, or one element on both sides (spec.check)


def prepare(soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for C arguments (tensors, dim, out); ``tensors`` arrives as a tuple of views."""
    dim = int(a[1])
    return lambda v: cat(v[0], dim, v[2])
