"""aclnnGroupNormBackward with the given mean/rstd, gamma inside the group sums (ops.md §2.1).

Precision: this follows the fused GroupNormGrad kernel of A2/A3/950, which works in fp32 local
tensors (mean/rstd read as fp32, fp32 sums) and rounds each output once to its dtype. The 910
path composes l0 ops whose elementwise Mul/Sub/Div run in the *input* dtype (fp16 stays fp16,
ops.md §2.4); ops.md leaves the fp32 path as the stated choice for the reference, and this is it.

Per sample n and group g (D = C/G channels, M = D*HxW elements), with d = x - mean[n,g]:
    S1[n,c] = sum_i dy                   dbeta  = sum_n S1
    S2[n,c] = rstd * sum_i dy*d          dgamma = sum_n S2        (= sum_i dy*xhat)
    c1 = sum_{c in g} gamma*S1 / M,      c2 = sum_{c in g} gamma*S2 / M
    dx = rstd*(gamma*dy - c1 - xhat*c2) = A[c]*dy + B[g]*d + K[g]
         with A = rstd*gamma, B = -rstd^2*c2, K = -rstd*c1
x - mean is formed explicitly (no cancellation-prone sum(dy*x) - mean*sum(dy) as in PyTorch's
CPU kernel). A tile keeps [dy, d, 1] as three fp32 planes of one scratch, so both sums are one
einsum pass (dy against [d, 1]) and dx is one small matrix product per channel row (BLAS gemv:
every output element is its own 3-term dot product, so BLAS threading cannot change it). The
sums themselves never go through BLAS, whose reduction order could depend on its threads.
Every channel's [A, B, K] lives in one (N, C, 3) array (A filled up front, B and K written per
unit once its groups' sums exist), so a unit is a handful of NumPy calls over ~1 MiB planes:
with two threads every call hands the GIL over, which costs more than cache misses do when the
calls are short.
Results match the kernel's formula to fp32 rounding; the device's own summation tree and FMA
use are not reproduced bit for bit (ops.md §6).
"""
from __future__ import annotations

import importlib
import threading
from typing import Any, Callable

import numpy as np

from ..._numpy.kernels._layout import F32, as_f32, gather_flat, scatter_flat, store, tiles, view_as
from ..._numpy.kernels import _parallel
from ..._numpy.kernels._parallel import run_blocks, scratch

__all__ = ["prepare", "group_norm_backward", "bind"]

_tls = threading.local()

# np.einsum's own function: np.einsum adds __array_function__ dispatch and argument handling
# around it, half a microsecond a call, a third of the call on the small path's arrays.
def _c_einsum() -> Callable[..., Any]:
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):  # NumPy 2, NumPy 1
        try:
            return getattr(importlib.import_module(module), "c_einsum")
        except (ImportError, AttributeError):
            pass
    return np.einsum


_einsum = _c_einsum()

# Elements per tile (whole groups of one sample when they fit). Large enough that each NumPy
# call outlasts a GIL hand-over between threads; the [dy, d, 1] planes then live in L2/L3.
BLOCK = 1 << 18
# A group bigger than this is done in two sweeps (sums, then dx) over cache-sized tiles.
FUSE_MAX = 1 << 18


class _Source:
    """One input seen as (N, C, HxW): row-major views when possible, else per-tile copies."""

    def __init__(self, a: np.ndarray, shape3: tuple[int, int, int]) -> None:
        self.a, self.v3 = a, view_as(a, shape3)
        self.C, self.HW = shape3[1], shape3[2]

    def get(self, n: int, c0: int, c1: int, h0: int, h1: int, slot: str) -> np.ndarray:
        if self.v3 is not None:
            return self.v3[n, c0:c1, h0:h1]
        start = (n * self.C + c0) * self.HW + h0
        stop = (n * self.C + c1 - 1) * self.HW + h1
        buf = scratch(slot, stop - start, F32)
        return gather_flat(self.a, start, stop, buf).reshape(c1 - c0, h1 - h0)


class _Sink:
    """grad_input seen as (N, C, HxW): fp32 tiles written in place or rounded and copied out."""

    def __init__(self, a: np.ndarray, shape3: tuple[int, int, int]) -> None:
        self.a, self.v3 = a, view_as(a, shape3)
        self.C, self.HW = shape3[1], shape3[2]

    def target(self, n: int, c0: int, c1: int, h0: int, h1: int) -> np.ndarray:
        if self.v3 is not None and self.v3.dtype == F32:
            return self.v3[n, c0:c1, h0:h1]
        return scratch("gn_dx", (c1 - c0, h1 - h0), F32)

    def commit(self, n: int, c0: int, c1: int, h0: int, h1: int, t: np.ndarray) -> None:
        if self.v3 is not None:
            if self.v3.dtype != F32:
                store(self.v3[n, c0:c1, h0:h1], t)
            return
        start = (n * self.C + c0) * self.HW + h0
        stop = (n * self.C + c1 - 1) * self.HW + h1
        if self.a.dtype != F32:
            low = scratch("gn_dx_low", t.shape, self.a.dtype)
            np.copyto(low, t, casting="unsafe")
            t = low
        scatter_flat(self.a, start, stop, t.reshape(-1))


def _tile_buffer(cb: int, L: int) -> np.ndarray:
    """Per-thread fp32 planes (3, cb, L) for [dy, x - mean, 1]; the ones plane is kept filled."""
    cache = getattr(_tls, "planes", None)
    if cache is None:
        cache = _tls.planes = {}
    S = cache.get((cb, L))
    if S is None:
        if len(cache) >= 4:
            cache.clear()
        S = cache[(cb, L)] = np.empty((3, cb, L), F32)
        S[2] = 1
    return S


class _Shared:
    """Everything the tiles share: fp32 statistics, sources, sink and the (N, C) sums."""

    def __init__(self, grad_out, input, mean, rstd, gamma, N, C, HW, G, grad_input):
        self.N, self.C, self.HW, self.G = N, C, HW, G
        self.D = D = C // G
        self.M = D * HW
        self.mean = as_f32(mean).reshape(N, G)
        self.rstd = r = as_f32(rstd).reshape(N, G)
        self.rstd_c = np.repeat(r, D, axis=1)
        self.gamma = np.ones(C, F32) if gamma is None else as_f32(gamma)
        self.gamma_g = self.gamma.reshape(G, D)
        shape3 = (N, C, HW)
        self.dy, self.x = _Source(grad_out, shape3), _Source(input, shape3)
        self.sink = None if grad_input is None else _Sink(grad_input, shape3)
        # Per (n, c): [sum(dy*d) (then times rstd: S2), sum(dy) (S1)], written tile by tile.
        self.sums = np.zeros((N, 2, C), F32)
        self.S2, self.S1 = self.sums[:, 0], self.sums[:, 1]
        if self.sink is not None:
            with np.errstate(all="ignore"):
                m = np.float32(self.M)
                # (N, 2, G): factors turning [sum_c gamma*S2, sum_c gamma*S1] into [B, K]
                self.F = np.stack([-(r * r) / m, -r / m], axis=1)
                # (N, C, 3): each channel's dx weights [A, B, K] for its [dy, d, 1] planes;
                # A = rstd*gamma now, B and K once the channel's group sums are known.
                self.W = np.empty((N, C, 3), F32)
                np.multiply(self.rstd_c, self.gamma, out=self.W[:, :, 0])

    def load(self, n: int, c0: int, c1: int, h0: int, h1: int) -> np.ndarray:
        """fp32 planes (3, cb, L) holding [dy, x - mean, 1] for one tile."""
        cb, L, D = c1 - c0, h1 - h0, self.D
        S = _tile_buffer(cb, L)
        np.copyto(S[0], self.dy.get(n, c0, c1, h0, h1, "gn_dy"), casting="unsafe")
        x = self.x.get(n, c0, c1, h0, h1, "gn_x")
        g0, g1 = c0 // D, (c1 - 1) // D + 1
        if c0 == g0 * D and c1 == g1 * D and L == self.HW:
            rows = view_as(x, (g1 - g0, D * L))  # whole groups: one long row per group
            if rows is not None:
                np.subtract(rows, self.mean[n, g0:g1, None], out=S[1].reshape(g1 - g0, D * L),
                            dtype=F32)
                return S
        for g in range(g0, g1):  # one scalar subtract per group segment
            a, b = max(c0, g * D) - c0, min(c1, (g + 1) * D) - c0
            np.subtract(x[a:b], self.mean[n, g], out=S[1, a:b], dtype=F32)
        return S

    @staticmethod
    def sums_into(S: np.ndarray, out: np.ndarray | None) -> np.ndarray:
        """(2, cb) fp32: per-row [sum(dy*d), sum(dy)] in one pass over the tile (into ``out``)."""
        return np.einsum("ch,kch->kc", S[0], S[1:3], out=out)

    def set_group_terms(self, n: int, g0: int, g1: int) -> None:
        """[B, K] of whole groups g0..g1 of sample n into their channels' dx weights."""
        D = self.D
        E = np.einsum("jgd,gd->jg", self.sums[n, :, g0 * D:g1 * D].reshape(2, g1 - g0, D),
                      self.gamma_g[g0:g1])
        E *= self.F[n, :, g0:g1]
        self.W[n, g0 * D:g1 * D, 1:].reshape(g1 - g0, D, 2)[...] = E.T[:, None, :]

    def write_dx(self, n, c0, c1, h0, h1, S) -> None:
        """dx = A*dy + B*d + K for the tile: per channel row, [A, B, K] @ [dy; d; 1] (BLAS)."""
        cb, L = c1 - c0, h1 - h0
        out = self.sink.target(n, c0, c1, h0, h1)
        np.matmul(self.W[n, c0:c1, None, :], S.transpose(1, 0, 2), out=out.reshape(cb, 1, L))
        self.sink.commit(n, c0, c1, h0, h1, out)


def prepare(soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for C arguments ``a`` (pyaclnn._numpy.ops.prepare): the kernel bound to N, C,
    HxW, group and the mask; on an empty call (Ascend950, spec.empty_fills) zeroed dgamma and dbeta,
    whatever the mask."""
    if empty:
        return _zero_dgamma_dbeta
    n, c, hxw, group = map(int, a[5:9])
    gn = bind(n, c, hxw, group, a[9])
    return lambda v: gn(v[0], v[1], v[2], v[3], v[4], v[10], v[11], v[12])


def _zero_dgamma_dbeta(v: tuple) -> None:
    for out in (v[11], v[12]):
        if out is not None:
            out[...] = 0


def group_norm_backward(grad_out, input, mean, rstd, gamma, N: int, C: int, HxW: int, group: int,
                        output_mask, grad_input, grad_gamma, grad_beta, soc: str) -> None:
    """Write the masked GroupNorm gradients; outputs whose mask is False are left untouched."""
    bind(N, C, HxW, group, output_mask)(grad_out, input, mean, rstd, gamma, grad_input, grad_gamma, grad_beta)


def bind(N: int, C: int, HxW: int, group: int, output_mask) -> Callable[..., None]:
    """group_norm_backward with its sizes and mask given once: a function of the arrays
    ``(grad_out, input, mean, rstd, gamma, grad_input, grad_gamma, grad_beta)``, for calls
    repeated on arrays of one shape (the small path's per-call cost is its NumPy calls)."""
    want_dx, want_dgamma, want_dbeta = map(bool, output_mask)
    if not (want_dx or want_dgamma or want_dbeta):
        return _nothing
    size = N * C * HxW

    def run(grad_out, input, mean, rstd, gamma, grad_input, grad_gamma, grad_beta) -> None:
        if size <= _parallel.SMALL:  # read at each call: tiled_only() may have changed it
            _parallel.quietly(_small, grad_out, input, mean, rstd, gamma, N, C, HxW, group,
                              grad_input if want_dx else None, grad_gamma if want_dgamma else None,
                              grad_beta if want_dbeta else None)
        else:
            _tiled(grad_out, input, mean, rstd, gamma, N, C, HxW, group, grad_input if want_dx else None,
                   grad_gamma if want_dgamma else None, grad_beta if want_dbeta else None)
    return run


def _nothing(*arrays: Any) -> None:
    """An all-False output mask: nothing is computed."""


def _tiled(grad_out, input, mean, rstd, gamma, N: int, C: int, HxW: int, group: int,
           grad_input, grad_gamma, grad_beta) -> None:
    """The tiled paths (fused, or two sweeps for big groups), over the thread pool."""
    want_dgamma, want_dbeta = grad_gamma is not None, grad_beta is not None
    p = _Shared(grad_out, input, mean, rstd, gamma, N, C, HxW, group, grad_input)
    D, HW, G = p.D, HxW, group

    if p.M <= FUSE_MAX:
        # One sweep: a unit holds whole groups of one sample, so dx follows from the unit's own
        # sums while its data is still in cache. Units of one sample are made equal in size.
        per = -(-G // max(1, BLOCK // p.M))  # units per sample
        k = -(-G // per)
        units = [(n, g0, min(g0 + k, G)) for n in range(N) for g0 in range(0, G, k)]

        def fused(i: int) -> None:
            n, g0, g1 = units[i]
            c0, c1 = g0 * D, g1 * D
            S = p.load(n, c0, c1, 0, HW)
            sums = p.sums_into(S, p.sums[n, :, c0:c1])
            np.multiply(sums[0], p.rstd_c[n, c0:c1], out=sums[0])
            if p.sink is not None:
                p.set_group_terms(n, g0, g1)
                p.write_dx(n, c0, c1, 0, HW, S)

        run_blocks(fused, len(units))
    else:
        # Two sweeps over cache-sized tiles of one sample each (whole channels, or a slice of
        # one channel's HxW): partial sums first, combined in tile order, then dx.
        tl = [(t[0].start, t[1].start, t[1].stop, t[2].start, t[2].stop)
              for t in tiles((N, C, HW), BLOCK, min_axis=1)]
        partial = run_blocks(lambda i: p.sums_into(p.load(*tl[i]), None), len(tl))
        dot = np.zeros((N, C), F32)
        for (n, c0, c1, _, _), E in zip(tl, partial):
            dot[n, c0:c1] += E[0]
            p.S1[n, c0:c1] += E[1]
        np.multiply(dot, p.rstd_c, out=p.S2)
        if p.sink is not None:
            with np.errstate(all="ignore"):
                for n in range(N):
                    p.set_group_terms(n, 0, G)

            def grads(i: int) -> None:
                n, c0, c1, h0, h1 = tl[i]
                p.write_dx(n, c0, c1, h0, h1, p.load(n, c0, c1, h0, h1))

            run_blocks(grads, len(tl))

    with np.errstate(all="ignore"):
        if want_dgamma:
            store(grad_gamma, np.add.reduce(p.S2, axis=0).reshape(grad_gamma.shape))
        if want_dbeta:
            store(grad_beta, np.add.reduce(p.S1, axis=0).reshape(grad_beta.shape))


def _gamma_tiled(N: int, C: int) -> np.ndarray:
    """A per-thread fp32 (N*C,) buffer for gamma repeated over the samples (the small path)."""
    cache = getattr(_tls, "gamma_tiled", None)
    if cache is None:
        cache = _tls.gamma_tiled = {}
    P = cache.get((N, C))
    if P is None:
        if len(cache) >= 4:
            cache.clear()
        P = cache[(N, C)] = np.empty(N * C, F32)
    return P


def _small(grad_out, input, mean, rstd, gamma, N: int, C: int, HW: int, G: int,
           grad_input, grad_gamma, grad_beta) -> None:
    """The fused path's formulas for all samples at once, as one tile of N*C channel rows.

    For inputs of at most SMALL elements, where the per-unit NumPy calls of the tiled path
    would cost many times the arithmetic (issue 12). Here each NumPy call is the cost: about
    0.25 us on same-shape contiguous operands, 1 us and more once it broadcasts or strides,
    so there are few calls, mostly of the first kind: group values are ``repeat``-ed to their
    channels (the same values broadcasting gives) and each channel's [A, B, K] is formed on
    (3, N*C) rows. dx is the same 3-term dot product per element, [A, B, K] . [dy, d, 1], by
    one einsum: np.matmul would call BLAS once per channel row (21 us for 4096 rows of one).
    Same fp32 steps as the tiled path otherwise: [dy, d, 1] planes (the thread's tile buffer,
    ones kept filled), both sums in one einsum.
    """
    D, NC = C // G, N * C
    S = _tile_buffer(NC, HW)                                     # [dy, x - mean, 1]
    S[0] = grad_out.reshape(NC, HW)                              # to fp32 (copied first if the layout needs it)
    S[1] = input.reshape(NC, HW)
    S[1] -= np.asarray(mean, F32).repeat(D * HW).reshape(NC, HW)  # d = x - mean, in fp32
    sums = _einsum("ch,kch->kc", S[0], S[1:])                    # (2, N*C): [sum(dy*d), sum(dy)]
    r = np.asarray(rstd, F32).repeat(D)                          # (N*C,): each channel's rstd
    sums[0] *= r                                                 # S2 = rstd * sum(dy*d)
    if grad_input is not None:
        g = np.ones(C, F32) if gamma is None else np.asarray(gamma, F32).reshape(C)
        W = np.empty((3, NC), F32)                               # each channel's [A, B, K]
        gN = _gamma_tiled(N, C)
        gN.reshape(N, C)[...] = g
        np.multiply(r, gN, out=W[0])                             # A = rstd * gamma
        np.multiply(r, r, out=W[1])
        W[2] = r
        W[1:] /= -np.float32(D * HW)                             # [-(rstd^2)/M, -rstd/M] ...
        E = _einsum("kngd,gd->kng", sums.reshape(2, N, G, D), g.reshape(G, D))  # [sum gamma*S2, sum gamma*S1]
        W[1:] *= E.repeat(D, axis=2).reshape(2, NC)              # ... times those: [B, K]
        if grad_input.dtype == F32 and grad_input.flags.c_contiguous:
            _einsum("kc,kch->ch", W, S, out=grad_input.reshape(NC, HW))
        else:  # rounded to its dtype, as store() does
            grad_input[...] = _einsum("kc,kch->ch", W, S).reshape(grad_input.shape)
    if grad_gamma is not None or grad_beta is not None:
        total = np.add.reduce(sums.reshape(2, N, C), axis=1)    # [dgamma, dbeta]
        if grad_gamma is not None:
            grad_gamma[...] = total[0].reshape(grad_gamma.shape)
        if grad_beta is not None:
            grad_beta[...] = total[1].reshape(grad_beta.shape)
