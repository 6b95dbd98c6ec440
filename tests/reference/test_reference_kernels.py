"""Reference-backend compute of the four backward ops, checked against PyTorch CPU (the oracle).

The oracle is independent: aten backward ops or autograd, usually in float64. Where the device
deliberately differs from PyTorch (ops.md), the test asserts the documented device behaviour.

Every op is called through one helper at the top of this file (run_mse, run_group_norm, run_ce,
run_prelu), so the same tests can later drive the public API instead of the kernels.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pyaclnn import ops  # noqa: E402
from pyaclnn._numpy.kernels._layout import reshape_view  # noqa: E402
from pyaclnn.errors import AclnnParamInvalidError  # noqa: E402
from helpers.data import rand  # noqa: E402
from helpers.oracles import ce_oracle, f64, mse_oracle, prelu_oracle, t64  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
DTYPES = [F32, F16, BF16]
DEFAULT_SOC = "Ascend910B"


# --------------------------------------------------------------------------------------------
# The four call helpers: allocate outputs (unless given) and run the op. Optional ``out``
# arguments let a test hand in strided views of a larger buffer.
# --------------------------------------------------------------------------------------------

def run_mse(g, x, y, reduction, out_dtype=None, soc=DEFAULT_SOC, out=None):
    shape = np.broadcast_shapes(np.shape(g), np.shape(x), np.shape(y))
    if out is None:
        out = np.empty(shape, out_dtype or x.dtype)
    ops.kernel("MseLossBackward").mse_loss_backward(g, x, y, reduction, out, soc)
    return out


def run_group_norm(dy, x, mean, rstd, gamma, N, C, HxW, G, mask=(True, True, True),
                   soc=DEFAULT_SOC, outs=None):
    if outs is None:
        wshape = (C,) if gamma is None else gamma.shape
        wdt = dy.dtype if gamma is None else gamma.dtype
        outs = (np.empty(x.shape, x.dtype) if mask[0] else None,
                np.empty(wshape, wdt) if mask[1] else None,
                np.empty(wshape, wdt) if mask[2] else None)
    ops.kernel("GroupNormBackward").group_norm_backward(dy, x, mean, rstd, gamma, N, C, HxW, G, tuple(mask), *outs, soc)
    return outs


def run_ce(grad_loss, log_prob, target, weight=None, reduction="mean", ignore_index=-100,
           label_smoothing=0.0, soc=DEFAULT_SOC, out=None):
    if out is None:
        out = np.empty(log_prob.shape, log_prob.dtype)
    ops.kernel("CrossEntropyLossGrad").cross_entropy_loss_grad(grad_loss, log_prob, target, weight, reduction, ignore_index,
                                    label_smoothing, out, soc)
    return out


def run_prelu(g, x, w, soc=DEFAULT_SOC, outs=None):
    if outs is None:
        if w.size == 1:
            gw_shape = w.shape
        else:
            gw_shape = (x.shape[1] if x.ndim >= 2 else 1,)
        outs = (np.empty(x.shape, x.dtype), np.empty(gw_shape, w.dtype))
    ops.kernel("PreluBackward").prelu_backward(g, x, w, *outs, soc)
    return outs


# --------------------------------------------------------------------------------------------
# utilities
# --------------------------------------------------------------------------------------------

RTOL = {F32: 1e-5, F16: 2e-3, BF16: 1.6e-2}
TINY = {F32: 1e-38, F16: 6e-8, BF16: 1e-38}  # absolute floor: subnormal spacing


def close(actual, expected, dtype, scale=None, rtol=None):
    """Per-dtype tolerance; ``scale`` sets the absolute floor for sums with cancellation."""
    dtype = np.dtype(dtype)
    rtol = RTOL[dtype] if rtol is None else rtol
    expected = np.asarray(expected, dtype=np.float64)
    if scale is None:
        scale = float(np.max(np.abs(expected))) if expected.size else 1.0
    np.testing.assert_allclose(f64(actual), expected, rtol=rtol, atol=rtol * scale + TINY[dtype])


def layouts(a, mode):
    """A view equal to ``a`` with another memory layout (for inputs)."""
    a = np.asarray(a)
    if a.ndim == 0 or mode == "contig":
        return a
    if mode == "step":
        base = np.zeros(tuple(2 * s + 1 for s in a.shape), a.dtype)
        v = base[tuple(slice(1, None, 2) for _ in a.shape)]
    elif mode == "neg":
        base = np.zeros(a.shape, a.dtype)
        v = base[tuple(slice(None, None, -1) for _ in a.shape)]
    elif mode == "transposed":
        base = np.zeros(a.shape[::-1], a.dtype)
        v = base.T
    else:
        raise ValueError(mode)
    v[...] = a
    return v


def strided_out(shape, dtype, mode):
    """(view, base, sentinel) — an output view into a larger sentinel-filled buffer."""
    sentinel = np.array(-7.25, dtype)
    if mode == "step" and len(shape):
        base = np.full(tuple(2 * s + 1 for s in shape), sentinel, dtype)
        return base[tuple(slice(1, None, 2) for _ in shape)], base, sentinel
    if mode == "neg" and len(shape):
        base = np.full(tuple(s + 2 for s in shape), sentinel, dtype)
        return base[tuple(slice(-2, 0, -1) for _ in shape)], base, sentinel
    if mode == "transposed" and len(shape):
        base = np.full(tuple(shape[::-1]), sentinel, dtype)
        return base.T, base, sentinel
    base = np.full(shape, sentinel, dtype)
    return base, base, sentinel


def untouched_outside(view, base, sentinel):
    """Fill the view with the sentinel too: then the whole buffer must be the sentinel."""
    view[...] = sentinel
    bits = {2: np.uint16, 4: np.uint32}[base.itemsize]
    assert np.all(base.view(bits) == np.asarray(sentinel, base.dtype).view(bits)), \
        "kernel wrote outside its output view"


# --------------------------------------------------------------------------------------------
# MseLossBackward
# --------------------------------------------------------------------------------------------

MSE_SHAPES = [  # (grad, self, target): every operand broadcasts somewhere
    ((), (), ()),
    ((3, 4), (3, 4), (3, 4)),
    ((), (5, 6), (5, 6)),
    ((2, 3, 4), (3, 4), (4,)),
    ((4, 1), (1, 5), (4, 5)),
    ((2, 1, 3, 1), (1, 4, 1, 5), (2, 4, 3, 5)),
    ((6, 7, 2, 3, 2), (6, 7, 2, 3, 2), (1,)),
    ((1, 300), (200, 1), ()),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_mse_broadcast_against_torch(dtype, reduction):
    rng = np.random.default_rng(10 + reduction)
    for gs, xs, ys in MSE_SHAPES:
        g, x, y = rand(rng, gs, dtype), rand(rng, xs, dtype), rand(rng, ys, dtype)
        got = run_mse(g, x, y, reduction)
        assert got.dtype == dtype and got.shape == np.broadcast_shapes(gs, xs, ys)
        close(got, mse_oracle(g, x, y, reduction), dtype, scale=1e-30,
              rtol={F32: 1e-6, F16: 1e-3, BF16: 8e-3}[dtype])


def test_mse_same_shape_matches_aten_directly():
    rng = np.random.default_rng(1)
    g, x, y = (rand(rng, (17, 33), F32) for _ in range(3))
    for reduction in (0, 1, 2):
        ref = torch.ops.aten.mse_loss_backward(*map(torch.from_numpy, (g, x, y)), reduction)
        close(run_mse(g, x, y, reduction), ref.numpy(), F32, scale=1e-30, rtol=1e-6)


def test_mse_mean_divides_by_self_numel_not_broadcast_numel():
    g = np.ones((10, 4), F32)      # grad_output larger than self
    x = np.full((4,), 3.0, F32)
    y = np.zeros((4,), F32)
    got = run_mse(g, x, y, 1)
    np.testing.assert_array_equal(got, np.full((10, 4), np.float32(3 * 2 / 4)))


@pytest.mark.parametrize("mode", ["step", "neg", "transposed"])
def test_mse_strided_inputs_and_outputs(mode):
    rng = np.random.default_rng(2)
    for dtype in DTYPES:
        g, x, y = (rand(rng, (5, 6, 7), dtype) for _ in range(3))
        out, base, sentinel = strided_out((5, 6, 7), dtype, mode)
        got = run_mse(layouts(g, mode), layouts(x, mode), layouts(y[0], mode), 1, out=out)
        ref = run_mse(g, x, y[0], 1)
        bits = np.uint32 if dtype == F32 else np.uint16
        np.testing.assert_array_equal(got.view(bits), ref.view(bits))
        untouched_outside(out, base, sentinel)


def test_mse_big_tiled_matches_small_tiles():
    """Large enough to run on several tiles/threads; must equal the per-element formula."""
    rng = np.random.default_rng(3)
    g, x, y = (rand(rng, (3, 1 << 17), F32) for _ in range(3))
    got = run_mse(g, x, y[:1], 1)
    cof = np.float32(np.float32(1) / np.float32(x.size)) * np.float32(2)
    expect = ((x - y[:1]) * cof) * g  # fp32 numpy, same op order
    np.testing.assert_array_equal(got, expect)
    close(got, mse_oracle(g, x, y[:1], 1), F32, scale=1e-30, rtol=1e-6)


@pytest.mark.parametrize("in_dtype,out_dtype", [(F16, F32), (BF16, F32), (F32, F16),
                                                (F32, BF16), (F16, BF16), (BF16, F16)])
def test_mse_out_dtype_differs_double_rounding(in_dtype, out_dtype):
    """ops.md §1.4: the kernel rounds to the input dtype, then Cast rounds to out's dtype."""
    rng = np.random.default_rng(4)
    g, x, y = (rand(rng, (8, 9), in_dtype) for _ in range(3))
    same = run_mse(g, x, y, 1)  # out dtype == input dtype
    got = run_mse(g, x, y, 1, out_dtype=out_dtype)
    assert got.dtype == out_dtype
    np.testing.assert_array_equal(got, same.astype(out_dtype))
    if in_dtype == F32:  # one rounding from the fp32 result only
        close(got, mse_oracle(g, x, y, 1), out_dtype, scale=1e-30,
              rtol={F16: 1e-3, BF16: 8e-3}[out_dtype])


def test_mse_cof_differs_per_soc_beyond_2_pow_24():
    """V2 computes 1.0f/float(numel)*2.0f, the 950 DAG float(2.0/numel) (ops.md §1.1)."""
    n = (1 << 24) + 1
    x = np.broadcast_to(np.float32(1), (n,))
    y = np.broadcast_to(np.float32(0), (n,))
    g = np.ones((), F32)
    a2 = run_mse(g, x, y, 1, soc="Ascend910B")[:3]
    a950 = run_mse(g, x, y, 1, soc="Ascend950")[:3]
    np.testing.assert_array_equal(a2, np.float32(2.0 ** -23))             # float(n) == 2**24
    np.testing.assert_array_equal(a950, np.float32(2.0 / n))
    assert a2[0] != a950[0]


def test_mse_none_and_sum_identical():
    rng = np.random.default_rng(5)
    g, x, y = (rand(rng, (4, 5), F16) for _ in range(3))
    np.testing.assert_array_equal(run_mse(g, x, y, 0), run_mse(g, x, y, 2))


# --------------------------------------------------------------------------------------------
# GroupNormBackward
# --------------------------------------------------------------------------------------------

def gn_oracle(dy, x, mean, rstd, gamma, N, C, HxW, G, mask):
    dy4, x4 = (t64(np.reshape(f64(a), (N, C, HxW))) for a in (dy, x))
    m, r = (t64(np.reshape(f64(a), (N, G))) for a in (mean, rstd))
    # gamma=None means ones (the device Fill(1)s a gamma); pass them explicitly to aten
    gm = torch.ones(C, dtype=torch.float64) if gamma is None else t64(np.reshape(f64(gamma), (C,)))
    return [None if t is None else t.numpy()
            for t in torch.ops.aten.native_group_norm_backward(dy4, x4, m, r, gm, N, C, HxW, G,
                                                               list(mask))]


def gn_check(got, ref, dtype, N, C, HxW, G, x_shape, w_shape, mask):
    for i, (a, b) in enumerate(zip(got, ref)):
        if not mask[i]:
            assert a is None
            continue
        assert a.shape == (x_shape if i == 0 else w_shape)
        # sums over N*HxW (dgamma, dbeta) or over a group (dx) may cancel: floor by the scale
        # of the summed magnitudes
        scale = max(float(np.max(np.abs(b))), 1.0) if b.size else 1.0
        close(a, b.reshape(a.shape), dtype, scale=scale * (4 if dtype != F32 else 1))


GN_CASES = [  # N, C, HxW, G
    (1, 1, 1, 1), (2, 4, 3, 2), (3, 6, 10, 3), (2, 8, 1, 8), (4, 12, 25, 4), (1, 16, 7, 1),
    (2, 32, 49, 8),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_group_norm_against_torch(dtype):
    rng = np.random.default_rng(20)
    for (N, C, HxW, G) in GN_CASES:
        for gamma_none in (False, True):
            dy = rand(rng, (N, C, HxW), dtype)
            x = rand(rng, (N, C, HxW), dtype, -3, 3)
            # arbitrary, not forward-derived, statistics
            mean = rand(rng, (N, G), dtype, -1, 1)
            rstd = rand(rng, (N, G), dtype, 0.3, 2.0)
            gamma = None if gamma_none else rand(rng, (C,), dtype)
            got = run_group_norm(dy, x, mean, rstd, gamma, N, C, HxW, G)
            ref = gn_oracle(dy, x, mean, rstd, gamma, N, C, HxW, G, (True, True, True))
            gn_check(got, ref, dtype, N, C, HxW, G, x.shape, (C,), (True, True, True))


@pytest.mark.parametrize("mask", [(True, False, False), (False, True, False),
                                  (False, False, True), (False, True, True), (True, True, False)])
def test_group_norm_masks(mask):
    rng = np.random.default_rng(21)
    N, C, HxW, G = 3, 8, 12, 4
    dy, x = rand(rng, (N, C, HxW), F32), rand(rng, (N, C, HxW), F32)
    mean, rstd = rand(rng, (N, G), F32), rand(rng, (N, G), F32, 0.5, 1.5)
    gamma = rand(rng, (C,), F32)
    got = run_group_norm(dy, x, mean, rstd, gamma, N, C, HxW, G, mask=mask)
    ref = gn_oracle(dy, x, mean, rstd, gamma, N, C, HxW, G, mask)
    gn_check(got, ref, F32, N, C, HxW, G, x.shape, (C,), mask)


def test_group_norm_masked_outputs_untouched():
    rng = np.random.default_rng(22)
    N, C, HxW, G = 2, 4, 5, 2
    dy, x = rand(rng, (N, C, HxW), F32), rand(rng, (N, C, HxW), F32)
    mean, rstd = rand(rng, (N, G), F32), rand(rng, (N, G), F32, 0.5, 1.5)
    dx = np.full(x.shape, 9.0, F32)
    dgamma = np.full((C,), 9.0, F32)
    dbeta = np.empty((C,), F32)
    run_group_norm(dy, x, mean, rstd, None, N, C, HxW, G, mask=(False, False, True),
                   outs=(dx, dgamma, dbeta))
    assert np.all(dx == 9.0) and np.all(dgamma == 9.0)
    close(dbeta, dy.sum(axis=(0, 2)), F32)


def test_group_norm_flat_and_odd_shapes():
    """Only numels are checked: 1-D gradOut, (N,C,H,W,1) input, (N*G,) mean/rstd, (1,C) gamma."""
    rng = np.random.default_rng(23)
    N, C, H, W, G = 2, 6, 3, 4, 3
    HxW = H * W
    dy = rand(rng, (N * C * HxW,), F32)
    x = rand(rng, (N, C, H, W, 1), F32)
    mean = rand(rng, (N * G,), F32)
    rstd = rand(rng, (N * G,), F32, 0.5, 1.5)
    gamma = rand(rng, (1, C), F32)
    got = run_group_norm(dy, x, mean, rstd, gamma, N, C, HxW, G)
    ref = gn_oracle(dy, x, mean, rstd, gamma, N, C, HxW, G, (True, True, True))
    gn_check(got, ref, F32, N, C, HxW, G, x.shape, (1, C), (True, True, True))


@pytest.mark.parametrize("mode", ["step", "neg", "transposed"])
def test_group_norm_strided(mode):
    rng = np.random.default_rng(24)
    N, C, H, W, G = 2, 6, 4, 5, 2
    HxW = H * W
    for dtype in (F32, F16):
        dy, x = rand(rng, (N, C, H, W), dtype), rand(rng, (N, C, H, W), dtype)
        mean, rstd = rand(rng, (N, G), dtype), rand(rng, (N, G), dtype, 0.5, 1.5)
        gamma = rand(rng, (C,), dtype)
        dx, base, sentinel = strided_out(x.shape, dtype, mode)
        dg, db = np.empty((C,), dtype)[::-1], np.empty((2 * C,), dtype)[::2]
        got = run_group_norm(layouts(dy, mode), layouts(x, mode), layouts(mean, mode),
                             layouts(rstd, mode), layouts(gamma, mode), N, C, HxW, G,
                             outs=(dx, dg, db))
        ref = gn_oracle(dy, x, mean, rstd, gamma, N, C, HxW, G, (True, True, True))
        gn_check(got, ref, dtype, N, C, HxW, G, x.shape, (C,), (True, True, True))
        untouched_outside(dx, base, sentinel)


def test_group_norm_layout_needing_per_tile_copies():
    """(N,C,H,W) views whose (H,W) are swapped in memory cannot be reshaped to (N,C,HxW)."""
    rng = np.random.default_rng(25)
    N, C, H, W, G = 2, 4, 3, 5, 2
    HxW = H * W
    dy = np.ascontiguousarray(rand(rng, (N, C, W, H), F32)).transpose(0, 1, 3, 2)
    x = np.ascontiguousarray(rand(rng, (N, C, W, H), F32)).transpose(0, 1, 3, 2)
    with pytest.raises(ValueError):
        reshape_view(x, (N, C, HxW))
    mean, rstd = rand(rng, (N, G), F32), rand(rng, (N, G), F32, 0.5, 1.5)
    gamma = rand(rng, (C,), F32)
    for dtype in (F32, BF16):
        dx = np.zeros((N, C, W, H), dtype).transpose(0, 1, 3, 2)
        got = run_group_norm(dy.astype(dtype), x.astype(dtype), mean.astype(dtype),
                             rstd.astype(dtype), gamma.astype(dtype), N, C, HxW, G,
                             outs=(dx, np.empty((C,), dtype), np.empty((C,), dtype)))
        ref = gn_oracle(dy.astype(dtype), x.astype(dtype), mean.astype(dtype),
                        rstd.astype(dtype), gamma.astype(dtype), N, C, HxW, G, (True,) * 3)
        gn_check(got, ref, dtype, N, C, HxW, G, x.shape, (C,), (True, True, True))


def test_group_norm_large_groups_two_sweeps():
    """Groups bigger than one cache tile (and a channel bigger than a tile) take two sweeps."""
    rng = np.random.default_rng(26)
    N, C, HxW, G = 2, 2, 150_000, 1
    dy, x = rand(rng, (N, C, HxW), F32), rand(rng, (N, C, HxW), F32)
    mean, rstd = rand(rng, (N, G), F32, -0.1, 0.1), rand(rng, (N, G), F32, 0.5, 1.5)
    gamma = rand(rng, (C,), F32)
    got = run_group_norm(dy, x, mean, rstd, gamma, N, C, HxW, G)
    ref = gn_oracle(dy, x, mean, rstd, gamma, N, C, HxW, G, (True, True, True))
    gn_check(got, ref, F32, N, C, HxW, G, x.shape, (C,), (True, True, True))


def test_group_norm_gamma_inside_group_sums():
    """gamma varying inside a group: the doc's gamma-outside formula would be wrong (§2.1)."""
    N, C, HxW, G = 1, 2, 2, 1
    dy = np.array([[[1.0, 2.0], [3.0, -1.0]]], F32)
    x = np.array([[[0.5, -0.5], [1.0, 2.0]]], F32)
    mean, rstd = np.array([[0.25]], F32), np.array([[2.0]], F32)
    gamma = np.array([1.0, 3.0], F32)
    got = run_group_norm(dy, x, mean, rstd, gamma, N, C, HxW, G)
    ref = gn_oracle(dy, x, mean, rstd, gamma, N, C, HxW, G, (True, True, True))
    gn_check(got, ref, F32, N, C, HxW, G, x.shape, (C,), (True, True, True))


def test_group_norm_mean_far_from_zero_stays_accurate():
    """x - mean is formed first, so a large common offset costs no precision."""
    rng = np.random.default_rng(27)
    N, C, HxW, G = 2, 4, 64, 2
    dy = rand(rng, (N, C, HxW), F32)
    noise = rand(rng, (N, C, HxW), F32, -1, 1)
    x = (np.float32(1000) + noise).astype(F32)
    mean = np.full((N, G), 1000, F32)
    rstd = np.ones((N, G), F32)
    gamma = rand(rng, (C,), F32)
    got = run_group_norm(dy, x, mean, rstd, gamma, N, C, HxW, G)
    ref = gn_oracle(dy, x, mean, rstd, gamma, N, C, HxW, G, (True, True, True))
    gn_check(got, ref, F32, N, C, HxW, G, x.shape, (C,), (True, True, True))


# --------------------------------------------------------------------------------------------
# CrossEntropyLossGrad
# --------------------------------------------------------------------------------------------

def ce_inputs(rng, N, C, dtype):
    z = torch.from_numpy(rng.standard_normal((N, C)) * 2.0)
    lp = torch.log_softmax(z, 1).numpy().astype(np.float32).astype(dtype)
    return lp


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ce_against_torch(dtype, reduction):
    rng = np.random.default_rng(30)
    for N, C in [(1, 1), (1, 5), (7, 3), (16, 40), (33, 129)]:
        for with_weight in (False, True):
            for ignore_index in (-100, 1):
                lp = ce_inputs(rng, N, C, dtype)
                target = rng.integers(0, C, N)
                if N > 2:
                    target[::3] = ignore_index if ignore_index < 0 else target[::3]
                    target[1] = min(1, C - 1)
                weight = rng.uniform(0.2, 2.0, C).astype(np.float32) if with_weight else None
                if reduction == "none":
                    gl = rng.uniform(-1, 2, N).astype(dtype)
                else:
                    gl = np.array(rng.uniform(0.5, 2.0), dtype)
                if (np.all(target == ignore_index)) and reduction == "mean":
                    continue  # all-ignored mean is its own test
                got = run_ce(gl, lp, target, weight, reduction, ignore_index)
                assert got.dtype == dtype and got.shape == (N, C)
                ref = ce_oracle(gl, lp, target, weight, reduction, ignore_index)
                # fp16/bf16 logProb rows do not sum to exactly 1 after rounding; the device uses
                # exp(logProb) as is, torch renormalises: allow that on top of output rounding
                close(got, ref, dtype, scale=float(np.max(np.abs(ref))) + 1e-30,
                      rtol={F32: 1e-5, F16: 4e-3, BF16: 3e-2}[dtype])


def test_ce_uses_exp_logprob_without_renormalising():
    lp = np.log(np.array([[0.5, 0.25, 0.125]], F32))  # sums to 0.875, not 1
    got = run_ce(np.array(1.0, F32), lp, np.array([0]), reduction="sum")
    np.testing.assert_allclose(got, [[0.5 - 1, 0.25, 0.125]], rtol=1e-6)


def test_ce_grad_loss_forms_and_first_element():
    rng = np.random.default_rng(31)
    lp = ce_inputs(rng, 6, 4, F32)
    target = rng.integers(0, 4, 6)
    a = run_ce(np.array(1.5, F32), lp, target)
    b = run_ce(np.array([1.5], F32), lp, target)
    c = run_ce(np.array([[1.5]], F32), lp, target)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    # for mean/sum only gradLoss[0] is read (A2/A3, ops.md §3.1)
    d = run_ce(np.array([1.5, 99.0], F32), lp, target, reduction="sum")
    np.testing.assert_array_equal(d, run_ce(np.array(1.5, F32), lp, target, reduction="sum"))


def test_ce_all_ignored_mean_is_nan_not_zero():
    """Documented deviation (ops.md §3.1): W = 0 -> g/0 * mask 0 -> NaN everywhere; torch: 0."""
    rng = np.random.default_rng(32)
    lp = ce_inputs(rng, 4, 5, F32)
    target = np.full(4, -100)
    for weight in (None, np.ones(5, F32)):
        got = run_ce(np.array(1.0, F32), lp, target, weight, "mean", -100)
        assert np.all(np.isnan(got))
        ref = ce_oracle(np.array(1.0), lp, target, weight, "mean", -100)
        assert np.all(ref == 0)
    got = run_ce(np.array(0.0, F32), lp, target, None, "mean", -100)  # 0/0
    assert np.all(np.isnan(got))
    # sum and none have no denominator: ignored rows are plain zeros
    assert np.all(run_ce(np.array(1.0, F32), lp, target, None, "sum", -100) == 0)


def test_ce_ignore_index_is_a_valid_class():
    rng = np.random.default_rng(33)
    lp = ce_inputs(rng, 5, 4, F32)
    target = np.array([2, 0, 2, 3, 1])
    got = run_ce(np.array(1.0, F32), lp, target, None, "mean", 2)
    assert np.all(got[[0, 2]] == 0)
    close(got, ce_oracle(np.array(1.0), lp, target, None, "mean", 2), F32)


def test_ce_target_out_of_range_raises():
    lp = np.log(np.full((3, 4), 0.25, F32))
    with pytest.raises(AclnnParamInvalidError) as info:
        run_ce(np.array(1.0, F32), lp, np.array([0, 4, 1]))
    assert "target[1]=4" in str(info.value)
    with pytest.raises(AclnnParamInvalidError):
        run_ce(np.array(1.0, F32), lp, np.array([0, -3, 1]))
    # an ignored out-of-range target is fine on A2/A3
    run_ce(np.array(1.0, F32), lp, np.array([0, -100, 1]), ignore_index=-100)
    # the 950 kernels apply the mask only for ignore_index >= 0: -100 is then a real target
    with pytest.raises(AclnnParamInvalidError):
        run_ce(np.array(1.0, F32), lp, np.array([0, -100, 1]), ignore_index=-100,
               soc="Ascend950")


def test_ce_950_negative_ignore_index_counts_every_row():
    rng = np.random.default_rng(34)
    lp = ce_inputs(rng, 6, 5, F32)
    target = rng.integers(0, 5, 6)
    a = run_ce(np.array(1.0, F32), lp, target, None, "mean", -1, soc="Ascend950")
    close(a, ce_oracle(np.array(1.0), lp, target, None, "mean", -1), F32)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ce_label_smoothing_on_950(reduction):
    rng = np.random.default_rng(35)
    N, C = 12, 7
    for with_weight in (False, True):
        for ls in (0.1, 0.45, 1.0):
            lp = ce_inputs(rng, N, C, F32)
            target = rng.integers(0, C, N)
            target[::4] = 3  # ignore_index >= 0 so the 950 applies the mask
            weight = rng.uniform(0.2, 2.0, C).astype(np.float32) if with_weight else None
            gl = (rng.uniform(-1, 2, N) if reduction == "none" else np.array(1.3)).astype(F32)
            got = run_ce(gl, lp, target, weight, reduction, 3, ls, soc="Ascend950")
            ref = ce_oracle(gl, lp, target, weight, reduction, 3, ls)
            close(got, ref, F32, scale=float(np.max(np.abs(ref))))


@pytest.mark.parametrize("mode", ["step", "neg", "transposed"])
def test_ce_strided(mode):
    rng = np.random.default_rng(36)
    N, C = 9, 13
    for dtype in (F32, BF16):
        lp = ce_inputs(rng, N, C, dtype)
        target = rng.integers(0, C, N)
        weight = rng.uniform(0.5, 1.5, C).astype(np.float32)
        out, base, sentinel = strided_out((N, C), dtype, mode)
        got = run_ce(np.array(0.7, dtype), layouts(lp, mode), layouts(target, mode),
                     layouts(weight, mode), "mean", -100, out=out)
        ref = run_ce(np.array(0.7, dtype), lp, target, weight, "mean", -100)
        np.testing.assert_array_equal(got, ref)
        untouched_outside(out, base, sentinel)


def test_ce_large_rows_split_into_column_tiles():
    rng = np.random.default_rng(37)
    N, C = 3, 70_000
    lp = ce_inputs(rng, N, C, F32)
    target = np.array([0, C - 1, 35_000])
    got = run_ce(np.array(1.0, F32), lp, target)
    close(got, ce_oracle(np.array(1.0), lp, target, None, "mean", -100), F32)


# --------------------------------------------------------------------------------------------
# PreluBackward
# --------------------------------------------------------------------------------------------


PRELU_CASES = [  # (grad shape, self shape, weight shape)
    ((), (), (1,)),
    ((5,), (5,), (1,)),
    ((), (7,), (1,)),
    ((3, 4), (3, 4), (4,)),
    ((4,), (3, 4), (1,)),
    ((2, 3, 5), (2, 3, 5), (3,)),
    ((1, 3, 1), (2, 3, 5), (3,)),
    ((3, 4, 5), (2, 3, 4, 5), (3,)),
    ((2, 4, 3, 3), (2, 4, 3, 3), (2, 2)),
    ((2, 1, 3, 3, 2), (2, 5, 3, 3, 2), (1,)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_prelu_against_torch(dtype):
    rng = np.random.default_rng(40)
    for i, (gs, xs, ws) in enumerate(PRELU_CASES):
        # slopes in [0, 1] (the usual case) and of both signs / above 1
        lo, hi = ((0.0, 1.0), (-0.5, 0.5), (-3.0, 3.0))[i % 3]
        g, x, w = rand(rng, gs, dtype), rand(rng, xs, dtype), rand(rng, ws, dtype, lo, hi)
        if x.size > 2:
            x.reshape(-1)[::5] = 0  # x == 0 takes the weight branch
        dx, dw = run_prelu(g, x, w)
        rdx, rdw = prelu_oracle(g, x, w)
        assert dx.shape == x.shape and dx.dtype == dtype
        close(dx, rdx, dtype, scale=1e-30, rtol={F32: 1e-6, F16: 1e-3, BF16: 8e-3}[dtype])
        # the sum of x*dy cancels; floor by the summed magnitudes
        scale = float(np.sum(np.abs(f64(x) * f64(np.broadcast_to(g, x.shape)))))
        close(dw, rdw.reshape(dw.shape), dtype, scale=scale / max(dw.size, 1))


def test_prelu_zero_input_takes_weight_branch():
    x = np.array([[0.0, -0.0, 1.0, -1.0]], F32).reshape(1, 1, 4)
    g = np.array([2.0, 2.0, 2.0, 2.0], F32)
    dx, dw = run_prelu(g, x, np.array([0.25], F32))
    np.testing.assert_array_equal(dx.reshape(-1), [0.5, 0.5, 2.0, 0.5])
    np.testing.assert_array_equal(dw, [-2.0])
    rdx, _ = prelu_oracle(g, x, np.array([0.25]))
    np.testing.assert_array_equal(dx, rdx)


def test_prelu_fp16_rounds_each_update_before_the_sum():
    """ops.md §4.3: update is stored in fp16, so each x*dy is rounded before the fp32 sum.

    (1 + 22*2**-10)**2 = 1 + 44.47*2**-10 rounds down to 1 + 44*2**-10 in fp16 every time; pick
    a length where that systematic loss changes the fp16 total, so the test can tell the two.
    """
    v = np.float16(1 + 22 * 2.0 ** -10)
    for n in range(1, 4096):
        rounded = np.float16(n * float(np.float16(np.float64(v) * np.float64(v))))
        exact = np.float16(n * np.float64(v) * np.float64(v))
        if rounded != exact:
            break
    else:  # pragma: no cover
        pytest.fail("no discriminating length")
    x = np.full((1, 1, n), -v, F16)
    g = np.full((n,), v, F16)
    _, dw = run_prelu(g, x, np.array([0.1], F16))
    assert dw.dtype == F16
    # fp64 sum of round_fp16(x*dy), rounded once: the device's value
    expect = np.float16((f64(x) * f64(g)).astype(F16).astype(np.float64).sum())
    assert dw[0] == expect == -rounded and dw[0] != -exact
    # a generic random case agrees with the fp64-of-rounded-products model within an ulp
    rng = np.random.default_rng(41)
    x = -rng.uniform(0.0, 1.0, (2, 3, 999)).astype(F16)
    g = rng.uniform(-1.0, 1.0, (3, 999)).astype(F16)
    _, dw = run_prelu(g, x, np.array([0.1, 0.2, 0.3], F16))
    prods = (f64(x) * f64(np.broadcast_to(g, x.shape))).astype(F16).astype(np.float64)
    expect = prods.sum(axis=(0, 2)).astype(F16)
    assert np.all(np.abs(f64(dw) - f64(expect)) <= f64(np.spacing(np.abs(expect))))


@pytest.mark.parametrize("mode", ["step", "neg", "transposed"])
def test_prelu_strided(mode):
    rng = np.random.default_rng(42)
    for dtype in (F32, F16):
        x = rand(rng, (3, 4, 5, 6), dtype)
        g = rand(rng, (3, 4, 5, 6), dtype)
        w = rand(rng, (4,), dtype)
        dx, base, sentinel = strided_out(x.shape, dtype, mode)
        dw = np.zeros((8,), dtype)[::2]
        got = run_prelu(layouts(g, mode), layouts(x, mode), layouts(w, mode), outs=(dx, dw))
        ref = run_prelu(g, x, w)
        np.testing.assert_array_equal(got[0], ref[0])
        close(got[1], ref[1], dtype, scale=float(np.max(np.abs(f64(ref[1])))))
        untouched_outside(dx, base, sentinel)


def test_prelu_large_multi_tile():
    rng = np.random.default_rng(43)
    x = rand(rng, (4, 8, 96, 97), F32)
    g = rand(rng, (8, 1, 97), F32)  # broadcast grad_output
    for w in (rand(rng, (8,), F32), rand(rng, (8,), F32, 0.0, 1.0)):
        dx, dw = run_prelu(g, x, w)
        rdx, rdw = prelu_oracle(g, x, w)
        np.testing.assert_array_equal(dx, rdx.astype(F32))
        scale = float(np.sum(np.abs(f64(x) * f64(np.broadcast_to(g, x.shape))))) / 8
        close(dw, rdw, F32, scale=scale)


def test_prelu_tbe_nan_quirk_on_910b_not_950():
    """TBE update = update + dx*0 (ops.md §4.1): inf dy at x > 0 poisons gradWeight on 910B."""
    x = np.array([[1.0, -1.0, 2.0], [-2.0, -1.0, -3.0]], F32)  # channels in dim 1
    g = np.array([[np.inf, 1.0, 1.0], [1.0, 1.0, 1.0]], F32)
    w = np.array([0.5, 0.5, 0.5], F32)
    for dtype in (F32, F16, BF16):
        dx_b, dw_b = run_prelu(g.astype(dtype), x.astype(dtype), w.astype(dtype),
                               soc="Ascend910B")
        dx_9, dw_9 = run_prelu(g.astype(dtype), x.astype(dtype), w.astype(dtype),
                               soc="Ascend950")
        np.testing.assert_array_equal(dx_b, dx_9)
        assert np.isinf(f64(dx_b[0, 0]))
        assert np.isnan(f64(dw_b[0])) and not np.isnan(f64(dw_9[0]))
        np.testing.assert_array_equal(f64(dw_b[1:]), f64(dw_9[1:]))
        _, rdw = prelu_oracle(g, x, w)
        close(dw_9, rdw, dtype)  # torch, like the 950, gives 0 contribution there


def test_prelu_tbe_quirk_when_dy_times_weight_overflows():
    """Finite dy, but dx = dy*w overflows to inf at x < 0: the quirk turns that update to NaN."""
    x = np.array([[-1e-30, -1.0], [-2.0, 3.0]], F32).reshape(2, 2, 1)
    g = np.array([[3e38, 1.0], [1.0, 1.0]], F32).reshape(2, 2, 1)
    w = np.array([2.0, 0.5], F32)
    dx_b, dw_b = run_prelu(g, x, w, soc="Ascend910B")
    dx_9, dw_9 = run_prelu(g, x, w, soc="Ascend950")
    assert np.isinf(dx_b[0, 0, 0]) and np.isinf(dx_9[0, 0, 0])
    assert np.isnan(dw_b[0]) and np.isfinite(dw_9[0])
    np.testing.assert_array_equal(dw_b[1], dw_9[1])
    _, rdw = prelu_oracle(g, x, w)
    close(dw_9, rdw, F32)


# --------------------------------------------------------------------------------------------
# Fresh outputs of the NumPy-in/NumPy-out functions
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("shape, dtype", [((3, 5), F32), (((1 << 21) + 7,), F32), ((1031, 4099), F16)],
                         ids=["small", "big-f32", "big-f16-odd"])
def test_zeros_faulted_in_is_plain_zeros(monkeypatch, threads, shape, dtype):
    from pyaclnn._numpy.kernels._parallel import zeros_faulted_in
    monkeypatch.setenv("PYACLNN_NUM_THREADS", threads)
    a = zeros_faulted_in(shape, dtype)
    assert a.shape == shape and a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable
    assert a.flags.owndata and not a.any()


def test_functional_output_big_enough_to_be_faulted_in_matches_torch(use_backend):
    import pyaclnn
    use_backend("numpy")
    rng = np.random.default_rng(7)
    g, x, y = (rng.standard_normal((1 << 21) + 3, dtype=np.float32) for _ in range(3))  # 8 MiB out
    got = pyaclnn.mse_loss_backward(g, x, y, "none")
    want = torch.ops.aten.mse_loss_backward(*(torch.from_numpy(a).double() for a in (g, x, y)), 0)
    np.testing.assert_allclose(got, want.numpy(), rtol=2e-6, atol=0)


# --------------------------------------------------------------------------------------------
# Small inputs (<= SMALL elements) take a direct path without tiles or threads (issue 12): it
# must agree with the tiled path, which the tests above hold against torch.
# --------------------------------------------------------------------------------------------

from pyaclnn._numpy.kernels import _parallel  # noqa: E402


def small_and_tiled(monkeypatch, run):
    """(result of ``run()`` as it is, result with every kernel forced onto its tiled path)."""
    assert _parallel.SMALL == 4096
    small = run()
    with _parallel.tiled_only():
        tiled = run()
    assert _parallel.SMALL == 4096
    return small, tiled


def same_bits(a, b):
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(bits), np.ascontiguousarray(b).view(bits))


@pytest.mark.parametrize("mode", ["contig", "step", "neg", "transposed"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_small_mse_equals_tiled_path(monkeypatch, dtype, mode):
    rng = np.random.default_rng(60)
    for gs, xs, ys in MSE_SHAPES + [((64, 64), (64, 64), (64, 64)), ((), (), ())]:
        g, x, y = rand(rng, gs, dtype), rand(rng, xs, dtype), rand(rng, ys, dtype)
        x.reshape(-1)[:1] = np.inf  # inf - inf = NaN, inf * 0: the special values too
        for reduction, out_dtype in ((0, None), (1, F32), (2, None)):
            small, tiled = small_and_tiled(monkeypatch, lambda: run_mse(
                layouts(g, mode), layouts(x, mode), layouts(y, mode), reduction, out_dtype))
            same_bits(small, tiled)


@pytest.mark.parametrize("mode", ["contig", "neg", "transposed"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_small_group_norm_equals_tiled_path(monkeypatch, dtype, mode):
    rng = np.random.default_rng(61)
    for N, C, HxW, G in GN_CASES + [(4, 16, 64, 4), (256, 16, 1, 4)]:  # the last: 4096 rows of one
        dy, x = rand(rng, (N, C, HxW), dtype), rand(rng, (N, C, HxW), dtype)
        mean, rstd = rand(rng, (N, G), dtype), rand(rng, (N, G), dtype, 0.5, 1.5)
        for gamma, mask in ((rand(rng, (C,), dtype), (True, True, True)), (None, (True, False, True)),
                            (rand(rng, (C,), dtype), (False, True, True)), (None, (True, False, False))):
            small, tiled = small_and_tiled(monkeypatch, lambda: run_group_norm(
                layouts(dy, mode), layouts(x, mode), mean, rstd, gamma, N, C, HxW, G, mask))
            for a, b in zip(small, tiled):
                assert (a is None) == (b is None)
                if a is not None:
                    # the same fp32 formulas; einsum/BLAS may group the sums differently
                    scale = max(float(np.max(np.abs(f64(b)))), 1.0)
                    close(a, b, dtype, scale=scale, rtol=RTOL[dtype] if dtype != F32 else 2e-6)


def test_small_group_norm_into_strided_outputs_equals_tiled_path(monkeypatch):
    """Outputs that are views (a Tensor's, on the NumPy backend): transposed, or with gaps. The
    small path writes them in place, as the tiled path does, and leaves the gaps alone."""
    rng = np.random.default_rng(64)
    N, C, HxW, G = 2, 8, 6, 4
    dy, x = rand(rng, (N, C, HxW), F32), rand(rng, (N, C, HxW), F32)
    mean, rstd, gamma = rand(rng, (N, G), F32), rand(rng, (N, G), F32, 0.5, 1.5), rand(rng, (C,), F32)

    def run():
        bases = [np.full((N, HxW, C), 7.0, F32), np.full(2 * C, 7.0, F32), np.full(2 * C, 7.0, F32)]
        run_group_norm(dy, x, mean, rstd, gamma, N, C, HxW, G,
                       outs=(bases[0].transpose(0, 2, 1), bases[1][::2], bases[2][1::2]))
        return bases

    small, tiled = small_and_tiled(monkeypatch, run)
    for a, b in zip(small, tiled):
        close(a, b, F32, scale=max(float(np.max(np.abs(b))), 1.0), rtol=2e-6)
    assert not (small[0] == 7.0).any() and (small[1][1::2] == 7.0).all() and (small[2][::2] == 7.0).all()


@pytest.mark.parametrize("mode", ["contig", "neg", "transposed"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_small_cross_entropy_equals_tiled_path(monkeypatch, dtype, mode):
    rng = np.random.default_rng(62)
    for N, C in ((1, 1), (8, 16), (3, 100), (64, 64)):
        lp = rand(rng, (N, C), dtype, -6.0, 0.0)
        target = rng.integers(0, C, N)
        weight = rng.uniform(0.5, 1.5, C).astype(F32)
        for reduction, w, soc, ls in (("mean", None, DEFAULT_SOC, 0.0), ("sum", weight, DEFAULT_SOC, 0.0),
                                      ("none", weight, DEFAULT_SOC, 0.0), ("mean", weight, "Ascend950", 0.1)):
            gl = rand(rng, (N,), dtype) if reduction == "none" else np.array(0.7, dtype)
            small, tiled = small_and_tiled(monkeypatch, lambda: run_ce(
                gl, layouts(lp, mode), target, w, reduction, int(target[0]), ls, soc))  # row 0 ignored
            same_bits(small, tiled)


@pytest.mark.parametrize("soc", ["Ascend910B", "Ascend950"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_small_prelu_equals_tiled_path(monkeypatch, dtype, soc):
    rng = np.random.default_rng(63)
    for xs, gs, ws in (((8, 16), (8, 16), (16,)), ((2, 3, 4, 5), (3, 1, 5), (3,)), ((2, 3, 4), (2, 3, 4), (1,)),
                       ((7,), (7,), (1,)), ((), (), (1,)), ((64, 64), (64, 64), (64,))):
        x, g = rand(rng, xs, dtype), rand(rng, gs, dtype)
        for w in (rand(rng, ws, dtype, 0.0, 1.0), rand(rng, ws, dtype, -3.0, 3.0)):
            if x.size > 2:  # x == 0 takes the weight branch; inf dy at x > 0: the TBE NaN quirk
                x.reshape(-1)[:2] = (0, 1)
                g.reshape(-1)[1] = np.inf
            for mode in ("contig", "neg"):
                small, tiled = small_and_tiled(monkeypatch, lambda: run_prelu(
                    layouts(g, mode), layouts(x, mode), layouts(w, mode), soc))
                same_bits(small[0], tiled[0])
                a, b = f64(small[1]), f64(tiled[1])
                finite = np.isfinite(b)
                assert np.array_equal(np.isfinite(a), finite)
                np.testing.assert_array_equal(a[~finite], b[~finite])  # the same inf/NaN
                scale = max(float(np.max(np.abs(b[finite]), initial=0.0)), 1.0)
                close(small[1][finite], tiled[1][finite], dtype, scale=scale)
