"""aclnnPreluBackward (ops.md §4): PReluGradUpdate (dx, update) then PReluGradReduce.

    dx     = dy           where x > 0 (strict; x == 0 takes the weight branch)
           = dy * w[c]    elsewhere
    update = 0 where x > 0, else x * dy;   gradWeight[c] = sum of update over all axes but dim 1

Channel dim is 1 for self.ndim >= 2; 1-D and 0-D self are one channel. A one-element weight is
shared by every channel and gradWeight gets the grand total. fp16/bf16: elementwise in fp32, dx
rounded to the dtype; each update = round_to_dtype(x*dy) (the TBE kernel stores update in the
input dtype, ops.md §4.3), summed in fp32 and rounded once.

TBE quirk (910 / 910B / 910_93, not 950): the kernel computes update = update + dx*0, so a
position whose dx is inf/NaN makes its update NaN even where x > 0, and that NaN reaches
gradWeight. It is reproduced with the fp32 dx (the TBE elementwise step runs in fp32).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..._numpy.kernels._layout import F32, as_f32, coalesce, store, tiles
from ..._numpy.kernels import _parallel
from ..._numpy.kernels._parallel import run_blocks, scratch

__all__ = ["prepare", "prelu_backward"]

# Elements per tile. Big enough that each NumPy call outlasts a GIL hand-over between the two
# threads, small enough that the tile and its scratch mostly stay in cache.
BLOCK = 1 << 18
_ZERO = np.float32(0)


def _positive_mask(x) -> np.ndarray:
    """int32 scratch: -1 (all bits set) where x > 0, else 0 (NaN compares false)."""
    mask = scratch("prelu_mask", x.shape, np.bool_)
    m32 = scratch("prelu_m32", x.shape, np.int32)
    np.greater(x, _ZERO, out=mask)
    np.negative(mask.view(np.int8), out=m32, casting="unsafe")
    return m32


def _select_dx(dy, w, m32, out) -> None:
    """out = dy where m32 else dy*w (fp32), as a branch-free select of the bit patterns.

    np.copyto(where=) and np.where cost several ns per element on a random mask; selecting
    with an all-ones/all-zeros int32 mask is exact and about six times faster.
    """
    t = scratch("prelu_t", out.shape, np.int32)
    np.multiply(dy, w, out=out)
    a, b = out.view(np.int32), dy.view(np.int32)
    np.bitwise_xor(a, b, out=t)
    np.bitwise_and(t, m32, out=t)
    np.bitwise_xor(a, t, out=a)  # a ^ ((a ^ b) & m): b where m, else a


def _dx_unit_weights(x, dy, w, out) -> None:
    """out = dy where x > 0 else dy*w, for weights in [+0, 1] (the usual PReLU slopes).

    Then max(float(x > 0), w) is exactly 1 where x > 0 and exactly w elsewhere (NaN x compares
    false), so one multiply by it gives both branches bit-exactly, in three passes.
    """
    f = scratch("prelu_f", out.shape, F32)
    np.greater(x, _ZERO, out=f, casting="unsafe")
    np.maximum(f, w, out=f)
    np.multiply(dy, f, out=out)


def _exact_update_sums(x32, dy32, dx32, m32, axes, low_dtype, quirk: bool) -> np.ndarray:
    """Per-channel fp32 sums of the update, element by element as the device forms it."""
    u = scratch("prelu_u", x32.shape, F32)
    np.multiply(x32, dy32, out=u)
    if low_dtype != F32:  # update is stored in the input dtype: round each product
        low = scratch("prelu_u_low", u.shape, low_dtype)
        np.copyto(low, u, casting="unsafe")
        np.copyto(u, low, casting="unsafe")
    t = scratch("prelu_t", u.shape, np.int32)
    np.invert(m32, out=t)
    np.bitwise_and(u.view(np.int32), t, out=u.view(np.int32))  # +0.0 where x > 0
    if quirk:  # TBE: update = update + dx*0
        z = scratch("prelu_z", u.shape, F32)
        np.multiply(dx32, _ZERO, out=z)
        np.add(u, z, out=u)
    return np.add.reduce(u, axis=axes)


def prepare(soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for C arguments ``a`` (pyaclnn._numpy.ops.prepare)."""
    return lambda v: prelu_backward(v[0], v[1], v[2], v[3], v[4], soc)


def prelu_backward(grad_output, self, weight, grad_input, grad_weight, soc: str) -> None:
    """Write dx into ``grad_input`` (self's shape) and the weight gradient into ``grad_weight``."""
    dt = self.dtype
    quirk = soc != "Ascend950"
    if self.size <= _parallel.SMALL:
        _parallel.quietly(_small, grad_output, self, weight, grad_input, grad_weight, quirk)
        return
    w = as_f32(weight)
    dy = np.broadcast_to(grad_output, self.shape)
    views = [self, dy, grad_input]
    if self.ndim < 2:  # one channel: (1, 1, n) or (1, 1)
        views = [a[np.newaxis, np.newaxis] for a in views]
    xv, dyv, dxv = coalesce(views, keep=2)
    nd, n_ch = xv.ndim, xv.shape[1]
    w_c = np.full(n_ch, w[0], F32) if w.size == 1 else w
    axes = (0,) + tuple(range(2, nd))
    sub = list(range(nd))
    tl = tiles(xv.shape, BLOCK)
    check_dx = quirk and not bool(np.all(np.abs(w_c) <= 1))
    unit_weights = bool(np.all((w_c >= 0) & (w_c <= 1) & ~np.signbit(w_c)))

    def block(i: int) -> np.ndarray:
        idx = tl[i]
        xt, dyt, dxt = xv[idx], dyv[idx], dxv[idx]
        wb = w_c[idx[1]].reshape((1, -1) + (1,) * (nd - 2))
        if dt == F32:
            m32 = None
            if unit_weights:
                _dx_unit_weights(xt, dyt, wb, dxt)
            else:
                m32 = _positive_mask(xt)
                _select_dx(dyt, wb, m32, dxt)
            # Fast sum: min(0, x)*dy equals the update wherever dy is finite at x > 0. A finite
            # result means every dy was finite; with the quirk, dx = dy*w can then only be
            # non-finite if some |w| > 1 (overflow). Otherwise the tile is redone exactly.
            xm = scratch("prelu_xm", xt.shape, F32)
            np.minimum(_ZERO, xt, out=xm)
            part = np.einsum(xm, sub, dyt, sub, [1])
            if np.isfinite(part).all() and not (
                    check_dx and not np.isfinite(np.einsum(dxt, sub, []))):
                return part
            if m32 is None:
                m32 = _positive_mask(xt)
            return _exact_update_sums(xt, dyt, dxt, m32, axes, F32, quirk)
        x32 = scratch("prelu_x", xt.shape, F32)
        dy32 = scratch("prelu_dy", xt.shape, F32)
        dx32 = scratch("prelu_dx", xt.shape, F32)
        np.copyto(x32, xt, casting="unsafe")
        np.copyto(dy32, dyt, casting="unsafe")
        m32 = _positive_mask(x32)
        _select_dx(dy32, wb, m32, dx32)
        store(dxt, dx32)
        return _exact_update_sums(x32, dy32, dx32, m32, axes, dt, quirk)

    parts = run_blocks(block, len(tl))
    gw = np.zeros(n_ch, F32)
    for idx, part in zip(tl, parts):
        gw[idx[1]] += part
    with np.errstate(all="ignore"):
        if w.size == 1:
            gw = np.add.reduce(gw, dtype=F32)
        store(grad_weight, np.reshape(gw, grad_weight.shape))


def _small(grad_output, self, weight, grad_input, grad_weight, quirk: bool) -> None:
    """The exact path's steps on the whole arrays, for inputs of at most SMALL elements.

    There the tiles, the fast-sum checks and the per-tile scratch of the large path cost many
    times the arithmetic (issue 12). dx is the same selection; each update is rounded to the
    input dtype, zeroed where x > 0, given the TBE quirk, and summed in fp32 per channel.
    """
    w = np.asarray(weight, F32).reshape(-1)
    x = np.asarray(self, F32)
    dy = np.asarray(grad_output, F32)  # broadcasts against x in every step below
    nd = x.ndim
    if nd == 0:  # as (1,): ufuncs would return scalars
        x, dy = x.reshape(1), dy.reshape(1)
    if nd >= 2:
        n_ch, axes = x.shape[1], (0,) + tuple(range(2, nd))
        wb = w if w.size == 1 else w.reshape((1, -1) + (1,) * (nd - 2))
    else:  # one channel
        n_ch, axes, wb = 1, None, w
    positive = np.greater(x, _ZERO)
    dx = np.where(positive, dy, dy * wb)  # dy where x > 0 (strict), else dy * w, in fp32
    np.copyto(grad_input, dx.reshape(grad_input.shape), casting="unsafe")
    u = x * dy
    if self.dtype != F32:  # update is stored in the input dtype: round each product
        u = u.astype(self.dtype).astype(F32)
    u[positive] = 0
    if quirk:  # TBE: update = update + dx*0
        u += dx * _ZERO
    gw = np.add.reduce(u, axis=axes)
    if w.size == 1 and n_ch > 1:
        gw = np.add.reduce(gw, dtype=F32)
    store(grad_weight, np.reshape(gw, grad_weight.shape))
