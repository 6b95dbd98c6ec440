"""aclnnCrossEntropyLossGrad (ops.md §3.1): out = exp(logProb)*nll - onehot(target)*nll (+ ls).

All arithmetic is fp32 (logProb and gradLoss cast to fp32, exp in fp32, weight always fp32); the
result is rounded once to ``out``'s dtype. There is no softmax renormalisation.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..._spec import is_regbase
from .spec import effective_reduction
from ...errors import AclnnParamInvalidError
from ..._numpy.kernels._layout import F32, as_f32, store, tiles
from ..._numpy.kernels import _parallel
from ..._numpy.kernels._parallel import run_blocks, scratch

__all__ = ["prepare", "cross_entropy_loss_grad", "row_scales"]

API = "aclnnCrossEntropyLossGrad"
# Elements per tile: dozens of rows, so each exp/multiply call is long next to a GIL hand-over.
BLOCK = 1 << 20


def _first(a: np.ndarray) -> np.float32:
    return np.float32(a[(0,) * a.ndim])


def row_scales(grad_loss, target, weight, reduction: str, ignore_index: int,
               label_smoothing: float, C: int, soc: str):
    """Per-row terms: (target int64, nll fp32, smooth fp32 | None, weight fp32 | None, sum_w,
    in_range: the rows whose target is a class index).

    ``smooth`` (s_i) and ``sum_w`` (sum of the weights, C without one) are None without
    label smoothing.

    nll_i = lossOutGrad_i * w_i with lossOutGrad = g*(1-ls)[/W] * mask; W = sum_i w_i*mask_i.
    An all-ignored ``mean`` gives W = 0 and NaN in every row: inf*0 or 0/0 (ops.md §3.1).
    Call it with floating-point errors ignored (the caller runs it under ``_parallel.quietly``).
    """
    t = np.asarray(target).reshape(-1).astype(np.int64, copy=False)
    n = t.size
    if is_regbase(soc):
        # 950 applies the ignore mask only for ignoreIndex >= 0.
        mask = t != ignore_index if ignore_index >= 0 else np.ones(n, bool)
    else:
        # A2/A3 compare after casting both sides to fp32 (ComputeIgnoreMask).
        mask = t.astype(F32) != np.float32(ignore_index)
    in_range = t.view(np.uint64) < C  # 0 <= t < C in one compare: a negative int64 is a huge uint64
    if (mask > in_range).any():  # a row that is not ignored and whose target is no class
        i = int(np.flatnonzero(mask & ~in_range)[0])
        why = (f"; {soc} ignores rows only for an ignore_index >= 0" if is_regbase(soc) and t[i] == ignore_index
               else "")
        raise AclnnParamInvalidError(
            api=API, detail=f"target[{i}]={int(t[i])} is out of range [0, {C}) and not ignored "
                            f"(ignore_index={ignore_index}{why}); the device would read out of bounds")
    w = None if weight is None else as_f32(weight)
    maskf = mask.astype(F32)
    # tw_masked = mask * w[t] (w[t]: the row's class weight, 0 where the target is no class).
    # (s * mask) * w[t] == s * (mask * w[t]) for a 0/1 mask, inf and NaN included, so it is
    # formed once; without weights it is the mask itself (a row not ignored has a class: above).
    if w is None:
        tw_masked = maskf
    else:
        tw = np.zeros(n, F32)
        tw[in_range] = w[t[in_range]]
        tw_masked = tw * maskf
    ls = np.float32(label_smoothing)
    g: np.ndarray | np.float32  # per-row gradients ('none'), else gradLoss[0] for every row
    if reduction == "none":
        g = as_f32(grad_loss)
        if g.size != n:
            raise AclnnParamInvalidError(
                api=API, detail=f"reduction 'none' needs {n} gradLoss elements, got {g.size}")
    else:
        g = _first(np.asarray(grad_loss))
    total = np.add.reduce(tw_masked, dtype=F32) if reduction == "mean" else None
    loss_grad = g * (np.float32(1) - ls)
    if total is not None:
        loss_grad = loss_grad / total
    nll = (loss_grad * tw_masked).astype(F32, copy=False)
    smooth = sum_w = None
    if ls != 0:
        s = g / total if total is not None else g
        smooth = ((s * ls) / np.float32(C) * maskf).astype(F32)
        sum_w = np.float32(C) if w is None else np.add.reduce(w, dtype=F32)
    return t, nll, smooth, w, sum_w, in_range


def prepare(soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for C arguments ``a`` (pyaclnn._numpy.ops.prepare): the kernel with the plain
    values converted once."""
    reduction = effective_reduction(soc, a[6])
    ignore_index, smoothing = int(a[7]), float(a[8])
    return lambda v: cross_entropy_loss_grad(v[0], v[1], v[2], v[3], reduction, ignore_index, smoothing, v[10], soc)


def cross_entropy_loss_grad(grad_loss, log_prob, target, weight, reduction: str,
                            ignore_index: int, label_smoothing: float, out, soc: str) -> None:
    """Write the CrossEntropyLoss gradient w.r.t. logits (given log-probs) into ``out`` (N, C).

    ``label_smoothing`` is only implemented by the 950 kernels (callers refuse it elsewhere):
    out[i,j] += exp(lp[i,j]) * s_i * sum_k w_k - s_i * w_j.
    """
    # all under one errstate (``quietly``: the small path's per-call cost), row_scales included
    _parallel.quietly(_grad, grad_loss, log_prob, target, weight, reduction, ignore_index, label_smoothing,
                      out, soc)


def _grad(grad_loss, log_prob, target, weight, reduction: str, ignore_index: int, label_smoothing: float,
          out, soc: str) -> None:
    N, C = log_prob.shape
    t, nll, smooth, w, sum_w, in_range = row_scales(grad_loss, target, weight, reduction, ignore_index,
                                                    label_smoothing, C, soc)
    if smooth is not None:
        smooth_sum = smooth * sum_w
        w_row = np.ones(C, F32) if w is None else w
    # small: one tile, run here (the same as tiles() and run_blocks() would do, without their cost)
    small = N * C <= _parallel.SMALL
    tl = [(slice(0, N), slice(0, C))] if small else tiles((N, C), BLOCK)
    direct = out.dtype == F32 and smooth is None
    native = log_prob.dtype == F32

    def block(i: int) -> None:
        rows, cols = tl[i]
        r0, r1, c0, c1 = rows.start, rows.stop, cols.start, cols.stop
        o = out[rows, cols]
        e = o if direct else scratch("ce_e", o.shape, F32)
        if native:
            np.exp(log_prob[rows, cols], out=e)
        else:
            np.exp(log_prob[rows, cols], out=e, dtype=F32)
        acc = e if smooth is None else scratch("ce_acc", o.shape, F32)
        if smooth is not None:
            np.multiply(e, nll[r0:r1, None], out=acc)
        else:
            np.multiply(e, nll[r0:r1, None], out=e)
        tr = t[r0:r1]
        # a 1-D mask: its own nonzero() (np.flatnonzero's ravel and dispatch cost ~0.6 us a call)
        hit = (in_range[r0:r1] if c0 == 0 and c1 == C else (tr >= c0) & (tr < c1)).nonzero()[0]
        if hit.size:
            acc[hit, tr[hit] - c0] -= nll[r0 + hit]
        if smooth is not None:
            # e*(s_i*sum_w) - s_i*w_j, added to the main term
            np.multiply(e, smooth_sum[r0:r1, None], out=e)
            e -= smooth[r0:r1, None] * w_row[None, c0:c1]
            acc += e
        if not direct:
            store(o, acc)

    if small:
        block(0)
        return
    run_blocks(block, len(tl))
