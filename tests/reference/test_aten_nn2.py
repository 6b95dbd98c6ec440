"""The aten tier's nn2 families (nn2_*.py: list nn2 of issue 24) through pyaclnn.Op on the NumPy
backend, against the tests' own expectations: NumPy loops and formulas, or torch's public API
(torch.nn.functional, autograd for the gradients), never the table's aten overloads or
compose/nn2.py's functions."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pyaclnn  # noqa: E402
from aten_support import aten_backend, bf16, call, status_of  # noqa: E402

F = torch.nn.functional
F32, F16, I32, I64 = np.float32, np.float16, np.int32, np.int64
RNG = np.random.default_rng(24)


@pytest.fixture
def aten(use_backend: Callable[..., object], tmp_path: Path) -> object:
    return aten_backend(use_backend, tmp_path)


def rand(*shape: int, lo: float = -2.0, hi: float = 2.0, dtype: type = F32) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype(dtype)


def near(got: np.ndarray, want: object, tol: float = 1e-5) -> None:
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol)


def t64(x: np.ndarray) -> object:
    return torch.tensor(np.asarray(x, np.float64))


def vjp(fn: Callable[..., object], g: np.ndarray, *xs: np.ndarray, wrt: int = 0) -> np.ndarray:
    """d(sum(fn(*xs) * g))/d(xs[wrt]) by autograd, in float64."""
    ts = [torch.tensor(np.asarray(x, np.float64), requires_grad=(i == wrt)) for i, x in enumerate(xs)]
    y = fn(*ts)
    return torch.autograd.grad(y, ts[wrt], t64(g).reshape(y.shape))[0].numpy()  # type: ignore[no-any-return]


# -- loss and activation gradients -----------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:reduction. .mean. divides")  # torch's kl_div notice
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_loss_gradients(aten: object, reduction: int) -> None:
    x, y = rand(3, 4), rand(3, 4)
    names = ("none", "mean", "sum")[reduction]
    g = rand(3, 4) if reduction == 0 else rand(1).reshape(())
    near(call("L1LossBackward", g, x, y, reduction, np.zeros_like(x), outputs=("gradInput",)),
         np.sign(x - y) * g / (x.size if reduction == 1 else 1), 1e-5)
    p = rand(3, 4, lo=0.1, hi=1.0)
    for log_target in (False, True):
        tt = np.log(p) if log_target else p
        near(call("KlDivBackward", g, x, tt, reduction, log_target, np.zeros_like(x)),
             vjp(lambda a: F.kl_div(a, t64(tt), reduction=names, log_target=log_target), g, x), 1e-5)
        near(call("KlDivTargetBackward", g, x, tt, reduction, log_target, np.zeros_like(x), outputs=("gradTarget",)),
             vjp(lambda a, b: F.kl_div(a, b, reduction=names, log_target=log_target), g, x, tt, wrt=1), 1e-5)
    assert status_of("L1LossBackward", g, x, y, 3, np.zeros_like(x)) == 161002


def test_nll_loss2d_backward(aten: object) -> None:
    x = rand(2, 3, 4, 5)
    target = RNG.integers(0, 3, (2, 4, 5)).astype(I64)
    w = rand(3, lo=0.5, hi=1.5)
    want = vjp(lambda a: F.nll_loss(a, torch.tensor(target), weight=t64(w), reduction="sum"),
               np.ones((), F32), x)
    total = np.zeros((), F32)
    got = call("NLLLoss2dBackward", np.ones((), F32), x, target, w, 2, -100, total, np.zeros_like(x))
    near(got, want)
    assert status_of("NLLLoss2dBackward", np.ones((), F32), x, target, w, 2, -100, total,
                     np.zeros((2, 3, 4), F32)) == 161002


def test_activation_gradients(aten: object) -> None:
    x, g = rand(3, 5), rand(3, 5)
    out, buf = call("LogSigmoidForward", x, np.zeros_like(x), np.zeros_like(x), outputs=("out", "buffer"))
    near(out, -np.log1p(np.exp(-x.astype(np.float64))))
    near(call("LogSigmoidBackward", g, x, buf, np.zeros_like(x), outputs=("gradInput",)), vjp(F.logsigmoid, g, x))
    y = F.softmax(torch.tensor(x), 1).numpy()
    near(call("SoftmaxBackward", g, y, 1, np.zeros_like(x)), vjp(lambda t: F.softmax(t, 1), g, x), 1e-5)
    ly = F.log_softmax(torch.tensor(x), 0).numpy()
    near(call("LogSoftmaxBackward", g, ly, 0, np.zeros_like(x)), vjp(lambda t: F.log_softmax(t, 0), g, x), 1e-5)
    r = F.selu(torch.tensor(x)).numpy()
    near(call("SeluBackward", g, r, np.zeros_like(x), outputs=("gradInput",)), vjp(F.selu, g, x), 1e-5)
    near(call("SoftsignBackward", g, x, np.zeros_like(x)), vjp(F.softsign, g, x))
    for beta in (None, 1.7):
        b = 1.0 if beta is None else beta
        near(call("SwishBackward", g, x, beta, np.zeros_like(x), outputs=("gradInput",)),
             vjp(lambda t: t * torch.sigmoid(b * t), g, x), 1e-5)
        near(call("Swish", x, beta, np.zeros_like(x)), x / (1 + np.exp(-b * x.astype(np.float64))), 1e-5)
    assert status_of("SoftmaxBackward", g, y, 2, np.zeros_like(x)) == 161002  # dim out of range


# -- pooling and unpooling ------------------------------------------------------------------------
def test_max_pool3d_with_argmax_and_its_gradient(aten: object) -> None:
    x = rand(1, 2, 4, 4, 4)
    t = torch.tensor(x)
    want, idx = F.max_pool3d(t, 2, 2, return_indices=True)
    out, ind = call("MaxPool3dWithArgmax", x, [2], [2], [0], [1], False, np.zeros((1, 2, 2, 2, 2), F32),
                    np.zeros((1, 2, 2, 2, 2), I32), outputs=("out", "indices"))
    near(out, want)
    np.testing.assert_array_equal(ind, idx.numpy())
    g = rand(1, 2, 2, 2, 2)
    got = call("MaxPool3dWithArgmaxBackward", g, x, ind, [2], [2], [0], [1], False, np.zeros_like(x),
               outputs=("gradInput",))
    near(got, vjp(lambda a: F.max_pool3d(a, 2, 2), g, x))


def test_max_unpool3d_and_the_unpool_gradients(aten: object) -> None:
    x = rand(1, 2, 4, 4)
    pooled, idx = F.max_pool2d(torch.tensor(x), 2, return_indices=True)
    p = pooled.numpy()
    g = rand(1, 2, 4, 4)
    gathered = np.take_along_axis(g.reshape(1, 2, 16), idx.numpy().reshape(1, 2, 4), 2).reshape(p.shape)
    near(call("MaxUnpool2dBackward", g, p, idx.numpy(), [4, 4], np.zeros_like(p)), gathered)
    x3 = rand(1, 1, 4, 4, 4)
    p3, i3 = F.max_pool3d(torch.tensor(x3), 2, return_indices=True)
    want3 = F.max_unpool3d(p3, i3, 2, output_size=[4, 4, 4]).numpy()
    near(call("MaxUnpool3d", p3.numpy(), i3.numpy().astype(I32), [4, 4, 4], [2, 2, 2], [0, 0, 0],
              np.zeros_like(x3), outputs=("outRef",)), want3)
    g3 = rand(1, 1, 4, 4, 4)
    want_g3 = vjp(lambda a: F.max_unpool3d(a, i3, 2, output_size=[4, 4, 4]), g3, p3.numpy())
    near(call("MaxUnpool3dBackward", g3, p3.numpy(), i3.numpy(), [4, 4, 4], [2, 2, 2], [0, 0, 0],
              np.zeros(p3.shape, F32)), want_g3)
    assert status_of("MaxUnpool3d", p3.numpy(), None, [4, 4, 4], [2, 2, 2], [0, 0, 0], np.zeros_like(x3)) == 161001
    assert status_of("MaxUnpool2dBackward", g, p, idx.numpy(), [5, 4], np.zeros_like(p)) == 161002


# -- scatter, repeat_interleave, renorm ------------------------------------------------------------
def scatter_loop(x: np.ndarray, dim: int, idx: np.ndarray, src: object, op: Callable[..., object] | None) -> np.ndarray:
    out = x.astype(np.float64).copy()
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[dim] = idx[pos]
        v = src[pos] if isinstance(src, np.ndarray) else src
        out[tuple(target)] = v if op is None else op(out[tuple(target)], v)
    return out


@pytest.mark.parametrize("reduce, fn", [(0, None), (1, np.add), (2, np.multiply)])
def test_scatter_forms(aten: object, reduce: int, fn: Callable[..., object] | None) -> None:
    x = rand(3, 4)
    idx = np.array([[0, 2], [1, 3], [3, 0]], I64)
    src = rand(3, 2)
    want = scatter_loop(x, 1, idx, src, fn)
    near(call("Scatter", x, 1, idx, src, reduce, np.zeros_like(x)), want)
    near(call("InplaceScatter", x.copy(), 1, idx.astype(I32), src, reduce, outputs=("selfRef",)), want)
    want_v = scatter_loop(x, 1, idx, 1.5, fn)
    near(call("ScatterValue", x, 1, idx, 1.5, reduce, np.zeros_like(x)), want_v)
    near(call("InplaceScatterValue", x.copy(), 1, idx, 1.5, reduce, outputs=("selfRef",)), want_v)


@pytest.mark.parametrize("reduce, fn", [(0, None), (1, np.add), (2, np.multiply), (3, np.maximum), (4, np.minimum)])
def test_scatter_reduce(aten: object, reduce: int, fn: Callable[..., object] | None) -> None:
    x = rand(4, 3)
    idx = np.array([[0, 1, 0], [0, 1, 2], [3, 3, 3]], I64)
    src = rand(3, 3)
    want = scatter_loop(x, 0, idx, src, fn)
    near(call("ScatterReduce", x, 0, idx, src, reduce, True, np.zeros_like(x)), want)
    near(call("InplaceScatterReduce", x.copy(), 0, idx, src, reduce, True, outputs=("selfRef",)), want)


def test_scatter_reduce_mean_and_bad_reduce(aten: object) -> None:
    x = rand(4)
    idx = np.array([0, 0, 2], I64)
    src = rand(3)
    want = x.astype(np.float64).copy()
    want[0] = (x[0] + src[0] + src[1]) / 3
    want[2] = (x[2] + src[2]) / 2
    near(call("ScatterReduce", x, 0, idx, src, 5, True, np.zeros_like(x)), want, 1e-6)
    want[0] = (src[0] + src[1]) / 2
    want[2] = src[2]
    near(call("ScatterReduce", x, 0, idx, src, 5, False, np.zeros_like(x)), want, 1e-6)
    assert status_of("ScatterReduce", x, 0, idx, src, 6, True, np.zeros_like(x)) == 161002
    assert status_of("Scatter", x, 0, idx, src, 3, np.zeros_like(x)) == 161002
    assert status_of("Scatter", x, 0, idx, src, 0, np.zeros(5, F32)) == 161002
    assert status_of("Scatter", x, 0, None, src, 0, np.zeros_like(x)) == 161001


def test_repeat_interleave_forms(aten: object) -> None:
    x = rand(2, 3)
    r = np.array([1, 0, 2], I64)
    near(call("RepeatInterleaveWithDim", x, r, 1, 3, np.zeros((2, 3), F32)), np.repeat(x, r, axis=1))
    near(call("RepeatInterleave", x, np.array(2, I64), 12, np.zeros(12, F32)), np.repeat(x.reshape(-1), 2))
    near(call("RepeatInterleaveInt", x, 3, 18, np.zeros(18, F32)), np.repeat(x.reshape(-1), 3))
    got = call("RepeatInterleaveIntWithDim", x.astype(I32), 2, 0, 4, np.zeros((4, 3), I32))
    np.testing.assert_array_equal(got, np.repeat(x.astype(I32), 2, axis=0))
    np.testing.assert_array_equal(call("RepeatInterleaveTensor", np.array([2, 0, 1], I32), 3, np.zeros(3, I32)),
                                  [0, 0, 2])
    assert status_of("RepeatInterleaveInt", x, 3, 18, np.zeros(17, F32)) == 161002


def test_softsign_and_shrink(aten: object) -> None:
    x = rand(3, 4)
    near(call("Softsign", x, np.zeros_like(x)), x / (1 + np.abs(x)))
    near(call("Softsign", bf16(x), np.zeros(x.shape, bf16(x).dtype)).astype(F32), x / (1 + np.abs(x)), 2e-2)
    want_s = np.where(x > 0.5, x - 0.25, np.where(x < -0.5, x + 0.25, 0))
    near(call("Shrink", x, 0.5, 0.25, np.zeros_like(x)), want_s)
    near(call("Shrink", x.astype(F16), 0.5, 0.25, np.zeros(x.shape, F16)), want_s, 2e-3)


def test_layer_norm_with_impl_mode(aten: object) -> None:
    x = rand(2, 3, 4)
    w, b = rand(4), rand(4)
    out, mean, rstd = call("LayerNormWithImplMode", x, [4], w, b, 1e-5, np.zeros_like(x), np.zeros((2, 3, 1), F32),
                           np.zeros((2, 3, 1), F32), 0, outputs=("out", "meanOutOptional", "rstdOutOptional"))
    x64 = x.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    var = x64.var(-1, keepdims=True)
    near(out, (x64 - mu) / np.sqrt(var + 1e-5) * w + b, 1e-5)
    near(mean, mu)
    near(rstd, 1 / np.sqrt(var + 1e-5), 1e-4)


def test_scatter_nd_forms(aten: object) -> None:
    data = rand(4, 3)
    idx = np.array([[2], [0]], I64)
    upd = rand(2, 3)
    want = data.copy()
    want[2], want[0] = upd[0], upd[1]
    near(call("ScatterNd", data, idx, upd, np.zeros_like(data)), want)
    near(call("ScatterNdUpdate", data.copy(), idx.astype(I32), upd, outputs=("varRef",)), want)
    pts = np.array([[1, 2], [3, 0]], I64)
    vals = rand(2)
    want = data.copy()
    want[1, 2], want[3, 0] = vals
    near(call("ScatterNd", data, pts, vals, np.zeros_like(data)), want)
    assert status_of("ScatterNd", data, idx, rand(2, 2), np.zeros_like(data)) == 161002
    assert status_of("ScatterNd", data, idx, upd, np.zeros((4, 4), F32)) == 161002


def test_softmax_cross_entropy_with_logits(aten: object) -> None:
    x = rand(3, 5)
    y = F.softmax(torch.tensor(rand(3, 5)), 1).numpy()
    x64 = x.astype(np.float64)
    p = np.exp(x64 - x64.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    loss, back = call("SoftmaxCrossEntropyWithLogits", x, y, np.zeros(3, F32), np.zeros_like(x),
                      outputs=("loss", "backprop"))
    near(loss, -(y * np.log(p)).sum(1), 1e-5)
    near(back, p - y, 1e-6)
    loss16, _ = call("SoftmaxCrossEntropyWithLogits", x.astype(F16), y.astype(F16), np.zeros(3, F16),
                     np.zeros(x.shape, F16), outputs=("loss", "backprop"))
    near(loss16, -(y * np.log(p)).sum(1), 2e-2)
    assert status_of("SoftmaxCrossEntropyWithLogits", x, y, np.zeros(5, F32), np.zeros_like(x)) == 161002


def test_tf_scatter_add_both_forms(aten: object) -> None:
    var = rand(4, 3)
    idx = np.array([1, 3, 1], I64)  # scatter_add along dim 0: updates (3, 3), the repeated row accumulates
    upd = rand(3, 3)
    want = var.astype(np.float64).copy()
    np.add.at(want, idx, upd)
    near(call("TfScatterAdd", var.copy(), idx, upd, outputs=("varRef",)), want, 1e-6)
    pts = np.array([[0, 1], [0, 1], [2, 2]], I32)  # scatter_nd_add: updates (3,)
    vals = rand(3)
    want = var.astype(np.float64).copy()
    np.add.at(want, (pts[:, 0], pts[:, 1]), vals)
    near(call("TfScatterAdd", var.copy(), pts, vals, outputs=("varRef",)), want, 1e-6)
    got = call("TfScatterAdd", var.astype(I32), idx, upd.astype(I32), outputs=("varRef",))
    want_i = var.astype(I32).copy()
    np.add.at(want_i, idx, upd.astype(I32))
    np.testing.assert_array_equal(got, want_i)
    assert status_of("TfScatterAdd", var.copy(), idx, rand(2, 3)) == 161002
    assert status_of("TfScatterAdd", var.copy(), idx, upd.astype(F16)) == 161002


def test_modulate(aten: object) -> None:
    x, sc, sh = rand(2, 3, 4), rand(2, 4), rand(2, 1, 4)
    near(call("Modulate", x, sc, sh, np.zeros_like(x)), x * (1 + sc[:, None, :]) + sh, 1e-6)
    near(call("Modulate", x, None, sh, np.zeros_like(x)), x + sh, 1e-6)
    near(call("Modulate", x.astype(F16), sc.astype(F16), None, np.zeros(x.shape, F16)), x * (1 + sc[:, None, :]), 1e-2)
    assert status_of("Modulate", x, rand(3, 4), sh, np.zeros_like(x)) == 161002


def lstm_oracle(gates: np.ndarray, cx: np.ndarray) -> tuple[object, object, object, object]:
    """torch's LSTM cell (torch._VF.lstm_cell, gate order i, f, g, o) on pre-computed gates: an
    identity input weight, a zero hidden weight."""
    n4 = gates.shape[1]
    g = torch.tensor(gates.astype(np.float64), requires_grad=True)
    c = torch.tensor(cx.astype(np.float64), requires_grad=True)
    h0 = torch.zeros(cx.shape, dtype=torch.float64)
    hy, cy = torch._VF.lstm_cell(g, (h0, c), torch.eye(n4, dtype=torch.float64),
                                  torch.zeros(n4, cx.shape[1], dtype=torch.float64))
    return hy, cy, g, c


def test_thnn_fused_lstm_cell_and_its_gradient(aten: object) -> None:
    b, h = 3, 2
    ig, hg, cx = rand(b, 4 * h), rand(b, 4 * h), rand(b, h)
    bi, bh = rand(4 * h), rand(4 * h)
    hy, cy, st = call("ThnnFusedLstmCell", ig, hg, cx, bi, bh, np.zeros((b, h), F32), np.zeros((b, h), F32),
                      np.zeros((b, 4 * h), F32), outputs=("hyOut", "cyOut", "storageOut"))
    want_hy, want_cy, g, c = lstm_oracle(ig + hg + bi + bh, cx)
    near(hy, want_hy, 1e-5)
    near(cy, want_cy, 1e-5)
    gh, gc = rand(b, h), rand(b, h)
    d_gates, d_cx = torch.autograd.grad((want_hy * t64(gh)).sum() + (want_cy * t64(gc)).sum(), [g, c],
                                        retain_graph=True)
    grads, gcx, gb = call("ThnnFusedLstmCellBackward", gh, gc, cx, cy, st, True, np.zeros((b, 4 * h), F32),
                          np.zeros((b, h), F32), np.zeros(4 * h, F32), outputs=("gradGatesOut", "gradCxOut",
                                                                                  "gradBiasOut"))
    near(grads, d_gates, 1e-5)
    near(gcx, d_cx, 1e-5)
    near(gb, d_gates.sum(0), 1e-5)
    d_gates_h, = torch.autograd.grad((want_hy * t64(gh)).sum(), [g])
    grads, _, gb = call("ThnnFusedLstmCellBackward", gh, None, cx, cy, st, False, np.zeros((b, 4 * h), F32),
                        np.zeros((b, h), F32), np.full(4 * h, 7, F32), outputs=("gradGatesOut", "gradCxOut",
                                                                                 "gradBiasOut"))
    near(grads, d_gates_h, 1e-5)
    assert (gb == 7).all()  # hasBias false: gradBiasOut not written
    h16 = call("ThnnFusedLstmCell", ig.astype(F16), hg.astype(F16), cx.astype(F16), None, None,
               np.zeros((b, h), F16), np.zeros((b, h), F16), np.zeros((b, 4 * h), F16), outputs=("hyOut",))
    near(h16, lstm_oracle(ig + hg, cx)[0], 1e-2)
    assert status_of("ThnnFusedLstmCell", ig, hg, cx, bi, None, np.zeros((b, h), F32), np.zeros((b, h), F32),
                     np.zeros((b, 4 * h), F32)) == 161002


def test_relu_grad_v4(aten: object) -> None:
    g = rand(3, 4)
    mask = (rand(3, 4) > 0).astype(np.uint8)
    near(call("ReluGradV4", g, mask, 0, np.zeros_like(g)), np.where(mask != 0, g, 0))
    got = call("ReluGradV4", g.astype(I32), mask, 0, np.zeros(g.shape, I32))
    np.testing.assert_array_equal(got, np.where(mask != 0, g.astype(I32), 0))
    assert status_of("ReluGradV4", g, mask, 1, np.zeros_like(g)) == 161002
    assert status_of("ReluGradV4", g, mask.astype(F32), 0, np.zeros_like(g)) == 161002


def test_sync_batch_norm_gather_stats(aten: object) -> None:
    x = [rand(5, 3), rand(7, 3)]  # two devices' batches of 3 channels
    total = np.stack([a.sum(0) for a in x])
    square = np.stack([(a.astype(np.float64) ** 2).sum(0) for a in x]).astype(F32)
    count = np.array([5, 7], I32)
    rm, rv = rand(3), rand(3, lo=0.5, hi=1.5)
    mean, invstd, m2, v2 = call("SyncBatchNormGatherStats", total, square, count, rm.copy(), rv.copy(), 0.1, 1e-5,
                                np.zeros(3, F32), np.zeros(3, F32), outputs=("batchMean", "batchInvstd", "mean",
                                                                             "variance"))
    allx = np.concatenate(x).astype(np.float64)
    near(mean, allx.mean(0), 1e-5)
    near(invstd, 1 / np.sqrt(allx.var(0) + 1e-5), 1e-4)
    near(m2, 0.9 * rm + 0.1 * allx.mean(0), 1e-5)
    near(v2, 0.9 * rv + 0.1 * allx.var(0, ddof=1), 1e-5)
    assert status_of("SyncBatchNormGatherStats", total, square, np.array([5], I32), rm.copy(), rv.copy(), 0.1, 1e-5,
                     np.zeros(3, F32), np.zeros(3, F32)) == 161002


def test_instance_norm_both_layouts(aten: object) -> None:
    x = rand(2, 3, 4, 5)
    gamma, beta = rand(3), rand(3)
    want = F.instance_norm(t64(x), weight=t64(gamma), bias=t64(beta), eps=1e-5)
    x64 = x.astype(np.float64)
    y, mean, var = call("InstanceNorm", x, gamma, beta, "NCHW", 1e-5, np.zeros_like(x), np.zeros((2, 3, 1, 1), F32),
                        np.zeros((2, 3, 1, 1), F32), outputs=("y", "mean", "variance"))
    near(y, want, 1e-4)
    near(mean, x64.mean((2, 3), keepdims=True))
    near(var, x64.var((2, 3), keepdims=True), 1e-5)
    xh = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    y, mean = call("InstanceNorm", xh, gamma, beta, "NHWC", 1e-5, np.zeros_like(xh), np.zeros((2, 1, 1, 3), F32),
                   np.zeros((2, 1, 1, 3), F32), outputs=("y", "mean"))
    near(y, want.numpy().transpose(0, 2, 3, 1), 1e-4)
    near(mean, x64.mean((2, 3)).reshape(2, 1, 1, 3))
    y16 = call("InstanceNorm", x.astype(F16), gamma.astype(F16), beta.astype(F16), "NCHW", 1e-5,
               np.zeros(x.shape, F16), np.zeros((2, 3, 1, 1), F16), np.zeros((2, 3, 1, 1), F16), outputs=("y",))
    near(y16, want, 3e-2)
    assert status_of("InstanceNorm", x, gamma, beta, "NCDHW", 1e-5, np.zeros_like(x), np.zeros((2, 3, 1, 1), F32),
                     np.zeros((2, 3, 1, 1), F32)) == 161002
    assert status_of("InstanceNorm", x, gamma, beta, "NCHW", 1e-5, np.zeros_like(x), np.zeros((2, 3, 1), F32),
                     np.zeros((2, 3, 1, 1), F32)) == 161002


def test_max_pool_v3_pads_with_minus_infinity(aten: object) -> None:
    x = rand(1, 2, 5, 6)
    got = call("MaxPoolV3", x, [1, 1, 3, 2], [1, 1, 2, 2], [1, 0, 0, 1], 0, np.zeros((1, 2, 2, 3), F32))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 1)), constant_values=-np.inf)
    want = np.array([[[[xp[0, c, 2 * i:2 * i + 3, 2 * j:2 * j + 2].max() for j in range(3)] for i in range(2)]
                      for c in range(2)]])
    near(got, want)
    # ceil mode: rows (5 + 1 - 3 + 1) // 2 + 1 = 3, the third window starts at 4 < 5 + 1: kept; columns
    # (6 + 1 - 2 + 1) // 2 + 1 = 4, the fourth starts at 6, not < 6 + 0: dropped (3)
    got = call("MaxPoolV3", x, [1, 1, 3, 2], [1, 1, 2, 2], [1, 0, 0, 1], 1, np.zeros((1, 2, 3, 3), F32))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 0)), constant_values=-np.inf)
    want = np.array([[[[xp[0, c, 2 * i:2 * i + 3, 2 * j:2 * j + 2].max() for j in range(3)] for i in range(3)]
                      for c in range(2)]])
    near(got, want)
    want16 = np.array([[[[x[0, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2].max() for j in range(3)] for i in range(2)]
                        for c in range(2)]])
    near(call("MaxPoolV3", x.astype(F16), [1, 1, 2, 2], [1, 1, 2, 2], None, None, np.zeros((1, 2, 2, 3), F16)),
         want16, 1e-3)
    assert status_of("MaxPoolV3", x, [1, 1, 3, 2], [1, 1, 2, 2], [1, 0, 0, 1], 0, np.zeros((1, 2, 3, 3), F32)) == 161002
    assert status_of("MaxPoolV3", x, [3, 2], [2, 2], None, None, np.zeros((1, 2, 2, 3), F32)) == 161002


def test_max_pool_onnx_pads(aten: object) -> None:
    x = rand(2, 5, 6)  # CHW
    # pads (top, left, bottom, right) = (1, 0, 0, 1), kernel 3x2, strides 2
    got = call("MaxPool", x, [3, 2], [2], 0, [1, 0, 0, 1], [1], 0, np.zeros((2, 2, 3), F32))
    xp = np.pad(x, ((0, 0), (1, 0), (0, 1)), constant_values=-np.inf)
    want = np.array([[[xp[c, 2 * i:2 * i + 3, 2 * j:2 * j + 2].max() for j in range(3)] for i in range(2)]
                     for c in range(2)])
    near(got, want)
    x4 = rand(1, 1, 4, 4).astype(F16)
    got = call("MaxPool", x4, [2], [], 0, [], [], 1, np.zeros((1, 1, 3, 3), F16))  # strides default 1
    want = np.array([[[[x4[0, 0, i:i + 2, j:j + 2].max() for j in range(3)] for i in range(3)]]])
    near(got, want)
    assert status_of("MaxPool", x, [3, 2], [2], 1, [1, 0, 0, 1], [1], 0, np.zeros((2, 2, 3), F32)) == 161002
    assert status_of("MaxPool", x, [3, 2], [2], 0, [1, 0, 0, 1], [2], 0, np.zeros((2, 2, 3), F32)) == 161002
    assert status_of("MaxPool", x.astype(I32), [3, 2], [2], 0, [1], [1], 0, np.zeros((2, 3, 3), I32)) == 161002
