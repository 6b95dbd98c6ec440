"""aclnnMseLossBackward: out = ((self - target) * cof) * gradOutput, broadcast (ops.md §1)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..._numpy.kernels._layout import F32, at_least_1d, coalesce, memory_order, store, tiles
from ..._numpy.kernels import _parallel
from ..._numpy.kernels._parallel import run_blocks, scratch

__all__ = ["prepare", "mse_loss_backward", "mse_cof"]

# Elements per tile: x, y, grad and out tiles plus one fp32 scratch stay in the 2 MiB L2.
BLOCK = 1 << 17


def mse_cof(reduction: int, numel: int, soc: str) -> np.float32:
    """The fp32 scalar ``cof``: 2/self.numel() for mean, else 2.

    MseLossGradV2 (A2/A3/310P) computes ``1.0f / float(numel) * 2.0f``; the 950 DAG computes
    ``float(2.0 / double(numel))`` (ops.md §1.1). The divisor is self's numel, not out's.
    """
    if reduction != 1:
        return np.float32(2.0)
    if soc == "Ascend950":
        return np.float32(2.0 / numel)
    return np.float32(np.float32(1.0) / np.float32(numel)) * np.float32(2.0)


def prepare(soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for C arguments ``a`` (pyaclnn._numpy.ops.prepare): the kernel with the reduction
    converted once."""
    reduction = int(a[3])
    return lambda v: mse_loss_backward(v[0], v[1], v[2], reduction, v[4], soc)


def mse_loss_backward(grad_output, self, target, reduction: int, out, soc: str) -> None:
    """Write the MSE loss gradient into ``out`` (shape = broadcast of the three inputs).

    fp16/bf16 are computed in fp32 in the kernel's order sub -> mul cof -> mul grad, rounded to
    the inputs' dtype (round-to-nearest-even) and then cast to ``out``'s dtype, which may differ:
    fp16 inputs with an fp32 ``out`` give fp16-precision values (ops.md §1.4).
    """
    in_dt = self.dtype
    cof = mse_cof(reduction, self.size, soc)
    if out.size <= _parallel.SMALL:  # one tile anyway: the same ufuncs on the whole arrays, no layout work
        _parallel.quietly(_block, self, target, grad_output, out, cof, in_dt)
        return
    shape = out.shape
    ops = [np.broadcast_to(a, shape) for a in (self, target, grad_output)] + [out]
    ops = coalesce(memory_order([at_least_1d(a) for a in ops], by=at_least_1d(out)))
    xv, yv, gv, ov = ops
    tl = tiles(ov.shape, BLOCK)

    def block(i: int) -> None:
        idx = tl[i]
        _block(xv[idx], yv[idx], gv[idx], ov[idx], cof, in_dt)

    run_blocks(block, len(tl))


def _block(x, y, g, o, cof: np.float32, in_dt: np.dtype) -> None:
    """o = ((x - y) * cof) * g for one tile (x, y, g broadcast to o's shape), in fp32."""
    t = scratch("mse_t", o.shape, F32)
    if in_dt == F32:
        np.subtract(x, y, out=t)
    else:
        np.subtract(x, y, out=t, dtype=F32)
    np.multiply(t, cof, out=t)
    if in_dt == F32 and o.dtype == F32:
        np.multiply(t, g, out=o)
        return
    np.multiply(t, g, out=t, dtype=F32)
    store(o, t, via=in_dt)
