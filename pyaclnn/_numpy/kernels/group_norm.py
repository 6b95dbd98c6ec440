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
CPU kernel). A tile keeps [dy, d, 1] side by side in one fp32 scratch, so the sums are two
einsum passes and dx is one small matrix product per channel row (BLAS gemv: every output
element is its own 3-term dot product, so BLAS threading cannot change the result).
"""
from __future__ import annotations

import numpy as np

from ._layout import F32, as_f32, gather_flat, scatter_flat, store, tiles, view_as
from ._parallel import run_blocks, scratch

__all__ = ["group_norm_backward"]

# Elements per tile (whole groups of one sample when they fit): the [dy, d, 1] scratch and the
# dx tile stay in L2.
BLOCK = 1 << 17
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


class _Plan:
    """Everything the tiles share: fp32 statistics, sources, sink and the (N, C) sums."""

    def __init__(self, grad_out, input, mean, rstd, gamma, N, C, HW, G, grad_input):
        self.N, self.C, self.HW, self.G = N, C, HW, G
        self.D = D = C // G
        self.M = D * HW
        self.mean = as_f32(mean).reshape(N, G)
        self.rstd = as_f32(rstd).reshape(N, G)
        self.rstd_c = np.repeat(self.rstd, D, axis=1)
        self.gamma = np.ones(C, F32) if gamma is None else as_f32(gamma)
        with np.errstate(all="ignore"):
            self.A = self.rstd_c * self.gamma  # (N, C): rstd*gamma
        shape3 = (N, C, HW)
        self.dy, self.x = _Source(grad_out, shape3), _Source(input, shape3)
        self.sink = None if grad_input is None else _Sink(grad_input, shape3)
        self.S1 = np.zeros((N, C), F32)
        self.S2 = np.zeros((N, C), F32)

    def load(self, n: int, c0: int, c1: int, h0: int, h1: int) -> np.ndarray:
        """fp32 scratch (cb, 3, L) holding [dy, x - mean, 1] for one tile."""
        S = scratch("gn_S", (c1 - c0, 3, h1 - h0), F32)
        np.copyto(S[:, 0], self.dy.get(n, c0, c1, h0, h1, "gn_dy"), casting="unsafe")
        x = self.x.get(n, c0, c1, h0, h1, "gn_x")
        D = self.D
        for g in range(c0 // D, (c1 - 1) // D + 1):  # one scalar subtract per group
            a, b = max(c0, g * D) - c0, min(c1, (g + 1) * D) - c0
            np.subtract(x[a:b], self.mean[n, g], out=S[a:b, 1], dtype=F32)
        S[:, 2] = 1
        return S

    @staticmethod
    def sums(S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-row sum(dy) and sum(dy*d), fp32."""
        return np.einsum("ij->i", S[:, 0]), np.einsum("ij,ij->i", S[:, 0], S[:, 1])

    def write_dx(self, n, c0, c1, h0, h1, S, a, b, k) -> None:
        """dx = a*dy + b*d + k for the tile, with a, b, k per channel row."""
        W = scratch("gn_W", (c1 - c0, 1, 3), F32)
        W[:, 0, 0], W[:, 0, 1], W[:, 0, 2] = a, b, k
        out = self.sink.target(n, c0, c1, h0, h1)
        np.matmul(W, S, out=out.reshape(c1 - c0, 1, h1 - h0))
        self.sink.commit(n, c0, c1, h0, h1, out)

    def group_terms(self, s1, s2, n, g0, g1):
        """Per-group B = -rstd^2*c2 and K = -rstd*c1 from per-channel sums of groups g0..g1."""
        D = self.D
        gam = self.gamma[g0 * D:g1 * D].reshape(-1, D)
        m = np.float32(self.M)
        c1 = np.einsum("gd,gd->g", gam, s1.reshape(-1, D)) / m
        c2 = np.einsum("gd,gd->g", gam, s2.reshape(-1, D)) / m
        r = self.rstd[n, g0:g1]
        return -(r * r * c2), -(r * c1)


def group_norm_backward(grad_out, input, mean, rstd, gamma, N: int, C: int, HxW: int, group: int,
                        output_mask, grad_input, grad_gamma, grad_beta, soc: str) -> None:
    """Write the masked GroupNorm gradients; outputs whose mask is False are left untouched."""
    want_dx, want_dgamma, want_dbeta = (bool(m) for m in output_mask)
    if not (want_dx or want_dgamma or want_dbeta):
        return
    p = _Plan(grad_out, input, mean, rstd, gamma, N, C, HxW, group,
              grad_input if want_dx else None)
    D, HW, G = p.D, HxW, group

    if p.M <= FUSE_MAX:
        # One sweep: a unit holds whole groups of one sample, so dx follows from the unit's own
        # sums while its data is still in cache.
        k = max(1, BLOCK // p.M)
        units = [(n, g0, min(g0 + k, G)) for n in range(N) for g0 in range(0, G, k)]

        def fused(i: int) -> None:
            n, g0, g1 = units[i]
            c0, c1 = g0 * D, g1 * D
            S = p.load(n, c0, c1, 0, HW)
            s1, dot = p.sums(S)
            s2 = dot * p.rstd_c[n, c0:c1]
            p.S1[n, c0:c1] = s1
            p.S2[n, c0:c1] = s2
            if p.sink is not None:
                b, kk = p.group_terms(s1, s2, n, g0, g1)
                p.write_dx(n, c0, c1, 0, HW, S, p.A[n, c0:c1], np.repeat(b, D), np.repeat(kk, D))

        run_blocks(fused, len(units))
    else:
        # Two sweeps over cache-sized tiles of one sample each (whole channels, or a slice of
        # one channel's HxW): partial sums first, combined in tile order, then dx.
        tl = [(t[0].start, t[1].start, t[1].stop, t[2].start, t[2].stop)
              for t in tiles((N, C, HW), BLOCK, min_axis=1)]
        partial = run_blocks(lambda i: p.sums(p.load(*tl[i])), len(tl))
        dot = np.zeros((N, C), F32)
        for (n, c0, c1, _, _), (s1, d1) in zip(tl, partial):
            p.S1[n, c0:c1] += s1
            dot[n, c0:c1] += d1
        np.multiply(dot, p.rstd_c, out=p.S2)
        if p.sink is not None:
            with np.errstate(all="ignore"):
                terms = [p.group_terms(p.S1[n], p.S2[n], n, 0, G) for n in range(N)]
            b_c = np.repeat(np.stack([t[0] for t in terms]), D, axis=1)
            k_c = np.repeat(np.stack([t[1] for t in terms]), D, axis=1)

            def grads(i: int) -> None:
                n, c0, c1, h0, h1 = tl[i]
                S = p.load(n, c0, c1, h0, h1)
                p.write_dx(n, c0, c1, h0, h1, S, p.A[n, c0:c1], b_c[n, c0:c1], k_c[n, c0:c1])

            run_blocks(grads, len(tl))

    with np.errstate(all="ignore"):
        if want_dgamma:
            store(grad_gamma, np.add.reduce(p.S2, axis=0).reshape(grad_gamma.shape))
        if want_dbeta:
            store(grad_beta, np.add.reduce(p.S1, axis=0).reshape(grad_beta.shape))
