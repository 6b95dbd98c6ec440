"""The public NumPy-in/NumPy-out functions against PyTorch CPU, on both backends.

float32 runs on the reference backend and on the acl backend through the ABI emulator (whose
C kernels were written independently from the NumPy ones); float16/bfloat16 on the reference.
The oracle is torch in float64: aten backward ops or autograd.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn

torch = pytest.importorskip("torch")
from helpers.data import rand  # noqa: E402
from helpers.oracles import ce_oracle, t64  # noqa: E402
F = torch.nn.functional
BF16 = np.dtype(ml_dtypes.bfloat16)
TOL = {np.dtype(np.float32): (2e-5, 1e-6), np.dtype(np.float16): (4e-3, 1e-3), BF16: (3e-2, 1e-2)}


def close(got, want, dtype):
    rtol, atol = TOL[np.dtype(dtype)]
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=rtol, atol=atol)


def dtypes_for(backend):
    return [np.float32] if backend == "acl" else [np.float32, np.float16, BF16]


MSE_SHAPES = [((2, 3), (2, 3), (2, 3)), ((4, 1, 3), (2, 3), (1, 3)), ((), (5,), (5,)),
              ((2, 2, 2, 2, 2), (2, 1, 2, 1, 2), (2, 2, 2, 2, 2)), ((3,), (3,), ())]


@pytest.mark.parametrize("shapes", MSE_SHAPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum", 0, 1, 2])
def test_mse_loss_backward(backend, shapes, reduction):
    rng = np.random.default_rng(0)
    for dtype in dtypes_for(backend):
        g, x, y = (rand(rng, s, dtype) for s in shapes)
        got = pyaclnn.mse_loss_backward(g, x, y, reduction)
        r = {"none": 0, "mean": 1, "sum": 2}.get(reduction, reduction)
        # aten's own formula: norm * (input - target) * grad, norm = 2/input.numel() for mean
        want = torch.ops.aten.mse_loss_backward(t64(g), t64(x), t64(y), r).numpy()
        assert got.shape == np.broadcast_shapes(*shapes) and got.dtype == np.dtype(dtype)
        close(got, want, dtype)


def test_mse_strided_inputs(backend):
    base = np.random.default_rng(1).standard_normal((6, 8)).astype(np.float32)
    g, x, y = base[::2, ::-3], base[1::2, 1::3], base[:3, :3].T
    got = pyaclnn.mse_loss_backward(g, x, y, "mean")
    close(got, 2 * (x.astype(np.float64) - y) * g / x.size, np.float32)


@pytest.mark.parametrize("N,C,HxW,G,gamma", [(2, 6, 5, 3, True), (3, 4, 7, 2, False), (1, 8, 1, 8, True),
                                             (4, 3, 9, 1, True)])
def test_group_norm_backward(backend, N, C, HxW, G, gamma):
    rng = np.random.default_rng(2)
    for dtype in dtypes_for(backend):
        dy, x = rand(rng, (N, C, HxW), dtype), rand(rng, (N, C, HxW), dtype)
        mean, rstd = rand(rng, (N, G), dtype, -0.5, 0.5), rand(rng, (N, G), dtype, 0.5, 2)
        w = rand(rng, (C,), dtype) if gamma else None
        dx, dg, db = pyaclnn.group_norm_backward(dy, x, mean, rstd, w, N, C, HxW, G)
        want = torch.ops.aten.native_group_norm_backward(
            t64(dy), t64(x), t64(mean), t64(rstd), t64(np.ones(C) if w is None else w), N, C, HxW, G,
            [True, True, True])
        for got, ref in zip((dx, dg, db), want):
            close(got, ref.numpy(), dtype)


def test_group_norm_mask_and_flat_layouts(backend):
    rng = np.random.default_rng(3)
    dy, x = rand(rng, (2 * 4 * 3,)), rand(rng, (2, 4, 3, 1, 1))  # only numels must match
    mean, rstd = rand(rng, (4,)), rand(rng, (4,), lo=0.5, hi=2)   # read flat as (N, group)
    dx, dg, db = pyaclnn.group_norm_backward(dy, x, mean, rstd, None, 2, 4, 3, 2, (True, False, True))
    assert dg is None and dx.shape == x.shape and db.shape == (4,)
    want = torch.ops.aten.native_group_norm_backward(
        t64(dy.reshape(2, 4, 3)), t64(x.reshape(2, 4, 3)), t64(mean.reshape(2, 2)), t64(rstd.reshape(2, 2)),
        t64(np.ones(4)), 2, 4, 3, 2, [True, False, True])  # gamma None means ones
    close(dx.reshape(2, 4, 3), want[0].numpy(), np.float32)
    close(db, want[2].numpy(), np.float32)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_loss_grad(backend, reduction, weighted):
    rng = np.random.default_rng(4)
    N, C = 6, 5
    for dtype in dtypes_for(backend):
        logits = rng.standard_normal((N, C))
        log_prob = (logits - np.log(np.exp(logits).sum(1, keepdims=True))).astype(dtype)
        target = rng.integers(0, C, N).astype(np.int64)
        target[2] = -100  # ignored
        weight = rng.uniform(0.5, 2, C).astype(np.float32) if weighted else None
        grad_loss = rand(rng, (N,) if reduction == "none" else (), dtype, 0.5, 1.5)
        got = pyaclnn.cross_entropy_loss_grad(grad_loss, log_prob, target, weight, reduction=reduction)
        assert got.dtype == np.dtype(dtype) and got.shape == (N, C)
        close(got, ce_oracle(grad_loss, log_prob, target, weight, reduction, -100), dtype)


def test_cross_entropy_all_ignored_mean_is_nan_like_the_device(backend):
    log_prob = np.log(np.full((3, 4), 0.25, np.float32))
    got = pyaclnn.cross_entropy_loss_grad(np.float32(1), log_prob, np.full(3, -100), reduction="mean")
    assert np.isnan(got).all()  # the device's 0/0; PyTorch returns zeros here (ops.md §3.1)
    assert not np.isnan(ce_oracle(np.float32(1), log_prob, np.full(3, -100), None, "mean", -100)).any()


@pytest.mark.parametrize("shape,wsize", [((4, 3, 5), 3), ((2, 6), 1), ((7,), 1), ((), 1), ((2, 4, 2, 3), 4)])
def test_prelu_backward(backend, shape, wsize):
    rng = np.random.default_rng(5)
    for dtype in dtypes_for(backend):
        x, dy = rand(rng, shape, dtype), rand(rng, shape, dtype)
        x.reshape(-1)[:1] = 0  # x == 0 takes the weight branch (strict > 0)
        w = rand(rng, (wsize,), dtype, 0.1, 0.9)
        gi, gw = pyaclnn.prelu_backward(dy, x, w)
        xt = t64(x).requires_grad_()
        wt = t64(w).requires_grad_()
        F.prelu(xt, wt).backward(t64(dy))
        close(gi, xt.grad.numpy(), dtype)
        close(gw, wt.grad.numpy().reshape(gw.shape), dtype)


def test_prelu_grad_output_broadcasts_to_input(backend):
    rng = np.random.default_rng(6)
    x, dy, w = rand(rng, (3, 4, 5)), rand(rng, (4, 1)), rand(rng, (4,), lo=0.1, hi=0.9)
    gi, gw = pyaclnn.prelu_backward(dy, x, w)
    xt, wt = t64(x).requires_grad_(), t64(w).requires_grad_()
    F.prelu(xt, wt).backward(t64(np.broadcast_to(dy, x.shape)))
    close(gi, xt.grad.numpy(), np.float32)
    close(gw, wt.grad.numpy(), np.float32)


@pytest.mark.parametrize("call", [
    lambda: pyaclnn.mse_loss_backward(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), np.ones(3, np.float32)),
    lambda: pyaclnn.mse_loss_backward(np.ones(2, np.float32), np.ones(2, np.float16), np.ones(2, np.float32)),
    lambda: pyaclnn.mse_loss_backward(np.ones(2, np.float32), None, np.ones(2, np.float32)),
    lambda: pyaclnn.mse_loss_backward(np.ones(2, np.float32), np.ones(2, np.float32), np.ones(2, np.float32), 7),
    lambda: pyaclnn.group_norm_backward(*(np.ones((2, 4, 3), np.float32),) * 2, np.ones(4, np.float32),
                                        np.ones(4, np.float32), None, 2, 4, 3, 3),
    lambda: pyaclnn.group_norm_backward(*(np.ones((2, 4, 3), np.float32),) * 2, np.ones(3, np.float32),
                                        np.ones(4, np.float32), None, 2, 4, 3, 2),
    lambda: pyaclnn.prelu_backward(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), np.ones(2, np.float32)),
    lambda: pyaclnn.prelu_backward(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), None),
    lambda: pyaclnn.cross_entropy_loss_grad(np.float32(1), np.zeros((3, 4), np.float32), np.zeros(3, np.int32)),
    lambda: pyaclnn.cross_entropy_loss_grad(np.float32(1), np.zeros((3, 4), np.float32), np.zeros(2, np.int64)),
])
def test_errors_are_the_same_on_both_backends(use_backend, emulator_home, call):
    caught = {}
    for name in ("numpy", "acl"):
        use_backend(name, home=emulator_home if name == "acl" else None)
        with pytest.raises(pyaclnn.AclError) as info:
            call()
        caught[name] = (type(info.value), info.value.status, info.value.api)
    assert caught["numpy"] == caught["acl"]
