"""The aten tier's other families (reduce, index, nn, activation, loss, backward tables) against the
tests' own expressions: NumPy where it is short, else torch's public API (torch.nn.functional,
autograd for the gradients), never the table's aten overloads."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pyaclnn  # noqa: E402
from aten_support import aten_backend, call, status_of  # noqa: E402

F = torch.nn.functional
F32, I32, I64 = np.float32, np.int32, np.int64
D = pyaclnn.DType
RNG = np.random.default_rng(11)


@pytest.fixture
def aten(use_backend: Callable[..., object], tmp_path: Path) -> object:
    return aten_backend(use_backend, tmp_path)


def rand(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype(F32)


def near(got: np.ndarray, want: object, tol: float = 1e-5) -> None:
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol)


def grad_of(fn: Callable[..., object], *xs: np.ndarray, g: np.ndarray | None = None) -> list[np.ndarray]:
    """d(sum(fn(*xs) * g))/d(xs), by autograd."""
    ts = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    y = fn(*ts)
    gt = torch.ones_like(y) if g is None else torch.tensor(g, dtype=torch.float64)
    return [t.numpy() for t in torch.autograd.grad(y, ts, gt)]


# -- reductions and sorts ------------------------------------------------------------------------
def test_reductions_along_dims(aten: object) -> None:
    x = rand(3, 4, 5)
    x64 = x.astype(np.float64)
    near(call("Amin", x, [0, 2], True, np.zeros((1, 4, 1), F32)), x64.min((0, 2), keepdims=True))
    b = x > 0
    near(call("All", b, [1], False, np.zeros((3, 5), bool)), b.all(1))
    near(call("Any", b, [0, 1], True, np.zeros((1, 1, 5), bool)), b.any((0, 1), keepdims=True))
    near(call("LogSumExp", x, [2], False, np.zeros((3, 4), F32)), np.log(np.exp(x64).sum(2)))
    near(call("Trace", x[0], np.zeros((), F32)), np.trace(x64[0]))
    var, mean = call("VarMean", x, [1], 0, False, np.zeros((3, 5), F32), np.zeros((3, 5), F32),
                     outputs=("varOut", "meanOut"))
    near(var, x64.var(1))
    near(mean, x64.mean(1))
    near(call("LinalgVectorNorm", x, 1.0, [2], False, int(D.FLOAT), np.zeros((3, 4), F32)), np.abs(x64).sum(2))
    near(call("ProdDim", x, 1, False, int(D.DOUBLE), np.zeros((3, 5), np.float64)), x64.prod(1))


def test_arg_and_index_outputs_in_int32(aten: object) -> None:
    x = RNG.permutation(20).astype(F32).reshape(4, 5)
    np.testing.assert_array_equal(call("ArgMax", x, 1, False, np.zeros(4, I32)), x.argmax(1))
    np.testing.assert_array_equal(call("ArgMin", x, 0, True, np.zeros((1, 5), I64)), x.argmin(0)[None])
    v, i = call("MaxDim", x, 1, False, np.zeros(4, F32), np.zeros(4, I32), outputs=("out", "indices"))
    np.testing.assert_array_equal(v, x.max(1))
    np.testing.assert_array_equal(i, x.argmax(1))
    v, i = call("MinDim", x, 0, False, np.zeros(5, F32), np.zeros(5, I64), outputs=("out", "indices"))
    np.testing.assert_array_equal(i, x.argmin(0))
    mn, mx = call("AminmaxDim", x, 1, True, np.zeros((4, 1), F32), np.zeros((4, 1), F32), outputs=("minOut", "maxOut"))
    np.testing.assert_array_equal(mn[:, 0], x.min(1))
    np.testing.assert_array_equal(mx[:, 0], x.max(1))
    np.testing.assert_array_equal(call("Argsort", x, 1, True, np.zeros((4, 5), I64)), np.argsort(-x, 1, kind="stable"))
    v, i = call("Kthvalue", x, 2, 1, False, np.zeros(4, F32), np.zeros(4, I64), outputs=("valuesOut", "indicesOut"))
    np.testing.assert_array_equal(v, np.sort(x, 1)[:, 1])
    np.testing.assert_array_equal(i, np.argsort(x, 1)[:, 1])
    v, i = call("Cummax", x, 1, np.zeros_like(x), np.zeros((4, 5), I32), outputs=("valuesOut", "indicesOut"))
    np.testing.assert_array_equal(v, np.maximum.accumulate(x, 1))
    v = call("Median", np.array([3.0, 1.0, 4.0, 2.0], F32), np.zeros((), F32), outputs=("valuesOut",))
    assert v == 2.0  # the lower middle value
    got = call("NanMedian", np.array([np.nan, 3.0, 1.0, 2.0], F32), np.zeros((), F32))
    assert got == 2.0


def test_cumprod_takes_its_dim_as_a_scalar(aten: object) -> None:
    x = rand(2, 3)
    near(call("Cumprod", x, 1, int(D.FLOAT), np.zeros_like(x)), np.cumprod(x.astype(np.float64), 1))


# -- indexing and creation -----------------------------------------------------------------------
def test_gather_scatter_index(aten: object) -> None:
    x = rand(3, 4)
    idx = RNG.integers(0, 4, (3, 2)).astype(I64)
    near(call("Gather", x, 1, idx, np.zeros((3, 2), F32)), np.take_along_axis(x, idx, 1))
    sel = np.array([2, 0], I32)
    near(call("IndexSelect", x, 0, sel, np.zeros((2, 4), F32)), x[sel])
    near(call("Take", x, np.array([[0, 11]], I64), np.zeros((1, 2), F32)), x.reshape(-1)[[[0, 11]]])
    src = rand(3, 2)
    want = x.astype(np.float64).copy()
    for r in range(3):
        for c in range(2):
            want[r, idx[r, c]] += src[r, c]
    near(call("ScatterAdd", x, 1, idx, src, np.zeros_like(x)), want)
    want = x.astype(np.float64).copy()
    np.add.at(want, (slice(None), [1, 3]), 2 * rand(3, 2) * 0)  # (shape check of the oracle)
    source = rand(3, 2)
    want = x.astype(np.float64).copy()
    want[:, 1] += 2 * source[:, 0]
    want[:, 3] += 2 * source[:, 1]
    near(call("IndexAdd", x, 1, np.array([1, 3], I64), source, 2.0, np.zeros_like(x)), want)
    want = x.copy()
    want[:, [0, 2]] = -1
    near(call("IndexFill", x, 1, np.array([0, 2], I64), -1.0, np.zeros_like(x)), want)
    rows, cols = np.array([0, 2], I64), np.array([1, 3], I64)
    near(call("Index", x, [rows, cols], np.zeros(2, F32)), x[rows, cols])
    assert status_of("Index", x, [x > 0], np.zeros(3, F32)) == 161002  # a bool mask: data-dependent
    w = rand(5, 3)
    near(call("Embedding", w, np.array([[4, 0]], I64), np.zeros((1, 2, 3), F32)), w[[[4, 0]]])


def test_shape_operators(aten: object) -> None:
    x = rand(2, 3, 4)
    near(call("Flip", x, [0, 2], np.zeros_like(x)), x[::-1, :, ::-1])
    near(call("Roll", x, [1, -1], [1, 2], np.zeros_like(x)), np.roll(x, (1, -1), (1, 2)))
    near(call("Repeat", x[0], [2, 1, 2], np.zeros((2, 3, 8), F32)), np.tile(x[0], (2, 1, 2)))
    near(call("Expand", x[:, :1], [2, 5, 4], np.zeros((2, 5, 4), F32)), np.broadcast_to(x[:, :1], (2, 5, 4)))
    near(call("Permute", x, [2, 0, 1], np.zeros((4, 2, 3), F32)), x.transpose(2, 0, 1))
    near(call("Slice", x, 2, 1, 4, 2, np.zeros((2, 3, 2), F32)), x[:, :, 1:4:2])
    near(call("Stack", [x[0], x[1]], 1, np.zeros((3, 2, 4), F32)), np.stack([x[0], x[1]], 1))
    parts = call("SplitTensor", x, 3, 2, [np.zeros((2, 3, 3), F32), np.zeros((2, 3, 1), F32)])
    near(parts[0], x[:, :, :3])
    near(parts[1], x[:, :, 3:])
    near(call("Diag", x[0], 1, np.zeros(3, F32)), np.diag(x[0], 1))
    near(call("DiagFlat", x[0, 0], -1, np.zeros((5, 5), F32)), np.diagflat(x[0, 0], -1))
    near(call("ConstantPadNd", x[0], [1, 2], 9.0, np.zeros((3, 7), F32)),
         np.pad(x[0], ((0, 0), (1, 2)), constant_values=9.0))
    assert status_of("Permute", x, [2, 0, 1], np.zeros((2, 3, 4), F32)) == 161002


def test_creation_in_outs_dtype(aten: object) -> None:
    np.testing.assert_array_equal(call("Arange", 1, 10, 3, np.zeros(3, I32)), [1, 4, 7])
    near(call("Arange", 0.0, 1.0, 0.25, np.zeros(4, F32)), [0, 0.25, 0.5, 0.75])
    np.testing.assert_array_equal(call("Range", 1, 4, 1, np.zeros(4, I64)), [1, 2, 3, 4])  # end included
    near(call("Linspace", 0.0, 1.0, 5, np.zeros(5, F32)), np.linspace(0, 1, 5))
    near(call("LogSpace", 0.0, 2.0, 3, 10.0, np.zeros(3, F32), outputs=("result",)), [1, 10, 100])
    np.testing.assert_array_equal(call("Eye", 2, 3, np.zeros((2, 3), I32)), np.eye(2, 3))
    assert status_of("Arange", 0, 10, 1, np.zeros(9, F32)) == 161002  # out must hold exactly 10


def test_search_and_histogram(aten: object) -> None:
    bounds = np.array([1.0, 3.0, 5.0], F32)
    x = np.array([0.0, 1.0, 4.0, 6.0], F32)
    np.testing.assert_array_equal(call("Bucketize", x, bounds, True, False, np.zeros(4, I32)),
                                  np.searchsorted(bounds, x, side="left"))
    np.testing.assert_array_equal(call("SearchSorted", bounds, x, False, True, None, np.zeros(4, I64)),
                                  np.searchsorted(bounds, x, side="right"))
    h = call("Histc", np.array([0.5, 1.5, 1.7, 3.9], F32), 4, 0.0, 4.0, np.zeros(4, F32))
    np.testing.assert_array_equal(h, [1, 2, 0, 1])


def test_in_place_index_and_fill_forms(aten: object) -> None:
    def inplace(op: str, x: np.ndarray, *rest: object) -> np.ndarray:
        with pyaclnn.Device(0) as device, device.create_stream() as stream:
            t = pyaclnn.Tensor.from_numpy(x)
            with pyaclnn.Op(op, t, *rest) as ex:
                ex.run(stream)
            stream.synchronize()
            return t.numpy()
    x = rand(3, 3)
    mask = x > 0
    near(inplace("InplaceMaskedFillScalar", x, mask, 7.0), np.where(mask, 7.0, x))
    near(inplace("InplaceFillScalar", x, 2.5), np.full((3, 3), 2.5))
    near(inplace("InplaceZero", x), np.zeros((3, 3)))
    near(inplace("InplaceCopy", x, np.arange(3, dtype=I32)), np.broadcast_to(np.arange(3.0), (3, 3)))
    near(inplace("InplaceTriu", x, 0), np.triu(x))
    want = x.copy()
    np.fill_diagonal(want, -2.0)
    near(inplace("InplaceFillDiagonal", x, -2.0, False), want)
    want = x.copy()
    want[[2, 0]] = np.ones((2, 3))
    near(inplace("InplaceIndexCopy", x, 0, np.array([2, 0], I64), np.ones((2, 3), F32)), want)
    want = x.copy().reshape(-1)
    want[[0, 4]] += [10.0, 20.0]
    near(inplace("InplacePut", x, np.array([0, 4], I64), np.array([10.0, 20.0], F32), True), want.reshape(3, 3))


# -- layers ---------------------------------------------------------------------------------------
def test_matrix_products_with_beta_and_alpha(aten: object) -> None:
    s, a, b = rand(3, 5), rand(3, 4), rand(4, 5)
    near(call("Addmm", s, a, b, 0.5, 2.0, np.zeros((3, 5), F32), 0), 0.5 * s + 2 * (a.astype(np.float64) @ b))
    v = rand(4)
    # Addmv takes alpha before beta in C
    near(call("Addmv", s[:, 0], a, v, 2.0, 0.5, np.zeros(3, F32), 0), 0.5 * s[:, 0] + 2 * (a.astype(np.float64) @ v))
    m1, m2 = rand(2, 3, 4), rand(4, 2)
    near(call("Matmul", m1, m2, np.zeros((2, 3, 2), F32), 0), m1.astype(np.float64) @ m2)
    near(call("Dot", v, v, np.zeros((), F32)), v.astype(np.float64) @ v)
    near(call("Addr", s[:, :4], s[:, 0], v, None, None, np.zeros((3, 4), F32)), s[:, :4] + np.outer(s[:, 0], v))
    bs, b1, b2 = rand(2, 3, 5), rand(2, 3, 4), rand(2, 4, 5)
    near(call("Baddbmm", bs, b1, b2, 1.0, 1.0, np.zeros((2, 3, 5), F32), 0), bs + b1.astype(np.float64) @ b2)


def test_group_norm(aten: object) -> None:
    x, g, b = rand(2, 4, 3), rand(4), rand(4)
    out, mean, rstd = call("GroupNorm", x, g, b, 2, 4, 3, 2, 1e-5, np.zeros_like(x), np.zeros((2, 2), F32),
                           np.zeros((2, 2), F32), outputs=("out", "meanOut", "rstdOut"))
    near(out, F.group_norm(torch.tensor(x, dtype=torch.float64), 2, torch.tensor(g, dtype=torch.float64),
                           torch.tensor(b, dtype=torch.float64), 1e-5), 1e-4)
    grouped = x.astype(np.float64).reshape(2, 2, -1)
    near(mean, grouped.mean(-1))
    near(rstd, 1 / np.sqrt(grouped.var(-1) + 1e-5), 1e-4)


def test_pooling(aten: object) -> None:
    x = rand(1, 2, 6, 6)
    t = torch.tensor(x)
    near(call("AdaptiveAvgPool2d", x, [3, 2], np.zeros((1, 2, 3, 2), F32)), F.adaptive_avg_pool2d(t, (3, 2)))
    near(call("AvgPool2d", x, [3, 3], [2, 2], [1, 1], False, True, 0, 0, np.zeros((1, 2, 3, 3), F32)),
         F.avg_pool2d(t, 3, 2, 1))
    near(call("AvgPool2d", x, [2, 2], [2, 2], [0, 0], False, True, 3, 0, np.zeros((1, 2, 3, 3), F32)),
         F.avg_pool2d(t, 2, 2, divisor_override=3))
    out, idx = call("MaxPool2dWithIndices", x, [2, 2], [2, 2], [0, 0], [1, 1], False, np.zeros((1, 2, 3, 3), F32),
                    np.zeros((1, 2, 3, 3), I32), outputs=("out", "indices"))
    want, want_idx = F.max_pool2d(t, 2, 2, return_indices=True)
    near(out, want)
    np.testing.assert_array_equal(idx, want_idx.numpy())
    out, idx = call("AdaptiveMaxPool2d", x, [2, 2], np.zeros((1, 2, 2, 2), F32), np.zeros((1, 2, 2, 2), I64),
                    outputs=("outputOut", "indicesOut"))
    near(out, F.adaptive_max_pool2d(t, 2))


def test_convolution_and_im2col(aten: object) -> None:
    x, w, b = rand(1, 2, 5, 5), rand(3, 2, 3, 3), rand(3)
    t = [torch.tensor(a) for a in (x, w, b)]
    near(call("Convolution", x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, np.zeros((1, 3, 5, 5), F32), 0,
              outputs=("output",)), F.conv2d(t[0], t[1], t[2], padding=1), 1e-4)
    near(call("Convolution", x, w, None, [2, 2], [0, 0], [1, 1], False, [0, 0], 1, np.zeros((1, 3, 2, 2), F32), 0,
              outputs=("output",)), F.conv2d(t[0], t[1], stride=2), 1e-4)
    near(call("Im2col", x, [2, 2], [1, 1], [0, 0], [1, 1], np.zeros((1, 8, 16), F32)), F.unfold(t[0], 2))


def test_padding_and_resampling(aten: object) -> None:
    x = rand(1, 1, 3, 4)
    t = torch.tensor(x)
    near(call("ReflectionPad2d", x, [1, 1, 2, 0], np.zeros((1, 1, 5, 6), F32)), F.pad(t, (1, 1, 2, 0), "reflect"))
    near(call("ReplicationPad1d", x[0], [2, 1], np.zeros((1, 3, 7), F32)), F.pad(t[0], (2, 1), "replicate"))
    near(call("UpsampleNearest2d", x, [6, 8], np.zeros((1, 1, 6, 8), F32)), F.interpolate(t, (6, 8)))
    near(call("UpsampleBilinear2d", x, [5, 7], True, 0.0, 0.0, np.zeros((1, 1, 5, 7), F32)),
         F.interpolate(t, (5, 7), mode="bilinear", align_corners=True))
    near(call("UpsampleBicubic2d", x, [5, 7], False, 0.0, 0.0, np.zeros((1, 1, 5, 7), F32)),
         F.interpolate(t, (5, 7), mode="bicubic", align_corners=False), 1e-4)
    grid = rand(1, 2, 2, 2, lo=-1, hi=1)
    near(call("GridSampler2D", x, grid, 0, 0, False, np.zeros((1, 1, 2, 2), F32)),
         F.grid_sample(t, torch.tensor(grid), "bilinear", "zeros", align_corners=False))


def test_activations_and_distances(aten: object) -> None:
    x = rand(3, 4)
    t = torch.tensor(x)
    near(call("Celu", x, 0.5, np.zeros_like(x)), F.celu(t, 0.5))
    near(call("Selu", x, np.zeros_like(x)), F.selu(t))
    near(call("LogSigmoid", x, np.zeros_like(x)), F.logsigmoid(t))
    near(call("Hardshrink", x, 0.5, np.zeros_like(x)), np.where(np.abs(x) > 0.5, x, 0))
    near(call("Softshrink", x, 0.5, np.zeros_like(x)), np.sign(x) * np.maximum(np.abs(x) - 0.5, 0))
    near(call("Hardtanh", x, -0.5, 0.5, np.zeros_like(x)), np.clip(x, -0.5, 0.5))
    near(call("Threshold", x, 0.1, 20.0, np.zeros_like(x)), np.where(x > 0.1, x, 20.0))
    near(call("Glu", x, 1, np.zeros((3, 2), F32)), x[:, :2] / (1 + np.exp(-x[:, 2:].astype(np.float64))))
    near(call("Pdist", x, 2.0, np.zeros(3, F32)), F.pdist(t))
    near(call("Cdist", x, x[:2], 2.0, 0, np.zeros((3, 2), F32)), torch.cdist(t, t[:2]), 1e-4)


# -- losses ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_losses(aten: object, reduction: int) -> None:
    name = ("none", "mean", "sum")[reduction]
    x, y = rand(4, 3), rand(4, 3)
    tx, ty = torch.tensor(x), torch.tensor(y)
    shape = (4, 3) if reduction == 0 else ()
    near(call("MseLoss", x, y, reduction, np.zeros(shape, F32)), F.mse_loss(tx, ty, reduction=name))
    near(call("L1Loss", x, y, reduction, np.zeros(shape, F32)), F.l1_loss(tx, ty, reduction=name))
    near(call("SmoothL1Loss", x, y, reduction, 0.5, np.zeros(shape, F32), outputs=("result",)),
         F.smooth_l1_loss(tx, ty, reduction=name, beta=0.5))
    p, q = rand(4, 3, lo=0.05, hi=0.95), rand(4, 3, lo=0, hi=1)
    near(call("BinaryCrossEntropy", p, q, None, reduction, np.zeros(shape, F32)),
         F.binary_cross_entropy(torch.tensor(p), torch.tensor(q), reduction=name))
    near(call("BinaryCrossEntropyWithLogits", x, q, None, None, reduction, np.zeros(shape, F32)),
         F.binary_cross_entropy_with_logits(tx, torch.tensor(q), reduction=name))
    target = np.array([0, 2, 1, 2], I64)
    logp = F.log_softmax(tx, 1)
    out, total = call("NLLLoss", logp.numpy(), target, np.ones(3, F32), reduction, -100,
                      np.zeros((4,) if reduction == 0 else (), F32), np.zeros((), F32),
                      outputs=("out", "totalWeightOut"))
    near(out, F.nll_loss(logp, torch.tensor(target), reduction=name))
    if reduction:
        assert float(total) == 4.0  # the weights of the 4 targets  # one-element outs of rank 1 too (aclnn_nll_loss.cpp's "single element" check)
        out, total = call("NLLLoss", logp.numpy(), target, np.ones(3, F32), reduction, -100, np.zeros(1, F32),
                          np.zeros(1, F32), outputs=("out", "totalWeightOut"))
        near(out[0], F.nll_loss(logp, torch.tensor(target), reduction=name))
        assert status_of("NLLLoss", logp.numpy(), target, np.ones(3, F32), reduction, -100, np.zeros((1, 1), F32),
                         np.zeros(1, F32)) == 161002
    assert status_of("NLLLoss", logp.numpy(), target, None, reduction, -100, np.zeros(4, F32), np.zeros(1, F32)) \
        == 161001  # weight is required


def test_a_reduction_aten_does_not_have_is_refused(aten: object) -> None:
    x = rand(2, 2)
    assert status_of("KlDiv", x, x, 4, False, np.zeros((), F32)) == 161002  # 3 is batchmean (aclnn_kl_div.cpp)
    assert status_of("MseLoss", x, x, 5, np.zeros((), F32)) == 161002


# -- gradients (autograd as the oracle) ---------------------------------------------------------
def test_activation_gradients(aten: object) -> None:
    x, g = rand(3, 4), rand(3, 4)
    for op, fn, out in (("GeluBackward", F.gelu, "gradInput"), ("SiluBackward", F.silu, "gradInput"),
                        ("MishBackward", F.mish, "gradInput"), ("HardswishBackward", F.hardswish, "out"),
                        ("HardsigmoidBackward", F.hardsigmoid, "out")):
        near(call(op, g, x, np.zeros_like(x), outputs=(out,)), grad_of(fn, x, g=g)[0], 1e-5)
    y = np.tanh(x)
    near(call("TanhBackward", g, y, np.zeros_like(x), outputs=("gradInput",)), g * (1 - y.astype(np.float64) ** 2))
    near(call("LeakyReluBackward", g, x, 0.1, False, np.zeros_like(x)),
         grad_of(lambda v: F.leaky_relu(v, 0.1), x, g=g)[0])
    near(call("SoftplusBackward", g, x, 2.0, 5.0, np.zeros_like(x), outputs=("gradInput",)),
         grad_of(lambda v: F.softplus(v, 2.0, 5.0), x, g=g)[0])
    near(call("GeluBackwardV2", g, x, "tanh", np.zeros_like(x), outputs=("gradInput",)),
         grad_of(lambda v: F.gelu(v, approximate="tanh"), x, g=g)[0], 1e-5)


def test_loss_and_layer_gradients(aten: object) -> None:
    x, y = rand(4, 3), rand(4, 3)
    near(call("SmoothL1LossBackward", np.array(1.0, F32), x, y, 1, 1.0, np.zeros_like(x), outputs=("gradInput",)),
         grad_of(lambda a: F.smooth_l1_loss(a, torch.tensor(y, dtype=torch.float64)), x)[0])
    xi, w = rand(1, 2, 5, 5), rand(3, 2, 3, 3)
    go = rand(1, 3, 5, 5)
    gi, gw, gb = call("ConvolutionBackward", go, xi, w, [3], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                      [True, True, True], 0, np.zeros_like(xi), np.zeros_like(w), np.zeros(3, F32),
                      outputs=("gradInput", "gradWeight", "gradBias"))
    want = grad_of(lambda a, k: F.conv2d(a, k, padding=1), xi, w, g=go)
    near(gi, want[0], 1e-4)
    near(gw, want[1], 1e-4)
    near(gb, go.astype(np.float64).sum((0, 2, 3)), 1e-4)
    x4 = rand(1, 1, 4, 4)
    g2 = rand(1, 1, 2, 2)
    near(call("AvgPool2dBackward", g2, x4, [2, 2], [2, 2], [0, 0], False, True, 0, 0, np.zeros_like(x4),
              outputs=("gradInput",)), grad_of(lambda a: F.avg_pool2d(a, 2), x4, g=g2)[0])
    g4 = rand(1, 1, 4, 4)
    near(call("UpsampleNearest2dBackward", g4, [4, 4], [1, 1, 2, 2], 0.0, 0.0, np.zeros((1, 1, 2, 2), F32),
              outputs=("gradInput",)), grad_of(lambda a: F.interpolate(a, (4, 4)), rand(1, 1, 2, 2), g=g4)[0])
    gp = rand(1, 1, 6)
    x3 = x4[0, :, :1, :]  # (1, 1, 4)
    near(call("ReflectionPad1dBackward", gp, x3, [1, 1], np.zeros_like(x3), outputs=("gradInput",)),
         grad_of(lambda a: F.pad(a, (1, 1), "reflect"), x3, g=gp)[0])


def test_layer_norm_backward_with_an_output_mask(aten: object) -> None:
    x, w, b, g = rand(2, 3), rand(3), rand(3), rand(2, 3)
    xt = torch.tensor(x, dtype=torch.float64)
    mean = xt.mean(-1, keepdim=True)
    rstd = 1 / torch.sqrt(xt.var(-1, unbiased=False, keepdim=True) + 1e-5)
    gi, gw, gb = call("LayerNormBackward", g, x, [3], mean.float().numpy(), rstd.float().numpy(), w, b,
                      [True, True, False], np.zeros_like(x), np.zeros(3, F32), np.full(3, 7.0, F32),
                      outputs=("gradInputOut", "gradWeightOut", "gradBiasOut"))
    want = grad_of(lambda a, ww: F.layer_norm(a, (3,), ww, torch.tensor(b, dtype=torch.float64), 1e-5), x, w, g=g)
    near(gi, want[0], 1e-4)
    near(gw, want[1], 1e-4)
    np.testing.assert_array_equal(gb, np.full(3, 7.0))  # not asked for: left as it was


# -- foreach ----------------------------------------------------------------------------------------
def test_foreach_lists(aten: object) -> None:
    xs, ys = [rand(2, 3), rand(4)], [rand(2, 3), rand(4)]
    outs = [np.zeros((2, 3), F32), np.zeros(4, F32)]
    got = call("ForeachAddListV2", xs, ys, 2.0, outs)
    for g, x, y in zip(got, xs, ys):
        near(g, x + 2 * y.astype(np.float64))
    for g, x in zip(call("ForeachMulScalarV2", xs, -1.5, outs), xs):
        near(g, -1.5 * x.astype(np.float64))
    for g, x in zip(call("ForeachMaximumScalarV2", xs, 0.0, outs), xs):
        near(g, np.maximum(x, 0))
    pos = [np.abs(x) for x in xs]
    for g, x in zip(call("ForeachSqrt", pos, outs), pos):
        near(g, np.sqrt(x.astype(np.float64)))
    for g, x, y in zip(call("ForeachLerpScalar", xs, ys, 0.25, outs), xs, ys):
        near(g, x + 0.25 * (y - x.astype(np.float64)))
    assert status_of("ForeachMulList", xs, ys, outs[:1]) == 161002          # out holds one tensor too few
    assert status_of("ForeachMulList", xs, ys, [outs[1], outs[0]]) == 161002  # shapes in the wrong order


# -- more element-wise, reductions, indexing, linear algebra -----------------------------------------
def test_shifts_rounding_and_special_functions(aten: object) -> None:
    i = np.array([1, 2, -8, 5], I32)
    np.testing.assert_array_equal(call("LeftShift", i, np.array([1, 2, 0, 3], I32), np.zeros(4, I32)),
                                  np.left_shift(i, [1, 2, 0, 3]))
    np.testing.assert_array_equal(call("LeftShifts", i, 2, np.zeros(4, I32)), np.left_shift(i, 2))
    np.testing.assert_array_equal(call("RightShift", i, np.array([1, 1, 2, 0], I32), np.zeros(4, I32)),
                                  np.right_shift(i, [1, 1, 2, 0]))
    x = np.array([1.2345, -2.5678, 3.14159], F32)
    near(call("RoundDecimals", x, 2, np.zeros(3, F32)), np.round(x, 2))
    a, b = np.array([0.0, 1.0, 2.0], F32), np.array([3.0, 0.5, 4.0], F32)
    near(call("XLogYScalarOther", a, 2.0, np.zeros(3, F32)), np.where(a == 0, 0, a * np.log(2.0)))
    near(call("XLogYScalarSelf", 3.0, b, np.zeros(3, F32)), 3.0 * np.log(b.astype(np.float64)))
    near(call("Xlog1py", a, b, np.zeros(3, F32), outputs=("z",)), np.where(a == 0, 0, a * np.log1p(b)))
    p = np.array([0.1, 0.5, 0.975], F32)
    z = call("Ndtri", p, np.zeros(3, F32))
    near(0.5 * (1 + np.vectorize(__import__("math").erf)(z.astype(np.float64) / np.sqrt(2))), p)  # Phi(ndtri(p)) = p
    near(call("AddRelu", a - 1.5, b, 0.5, np.zeros(3, F32)), np.maximum(a - 1.5 + 0.5 * b, 0))
    cond = np.array([True, False, True])
    near(call("SWhere", cond, a, b, np.zeros(3, F32)), np.where(cond, a, b))
    np.testing.assert_array_equal(call("IsInTensorScalar", i, 2, False, False, np.zeros(4, bool)), i == 2)
    np.testing.assert_array_equal(call("IsInScalarTensor", 5, i, False, True, np.zeros((), bool)), 5 not in i)


def test_more_reductions(aten: object) -> None:
    x = rand(3, 4)
    x64 = x.astype(np.float64)
    mn, mx = call("AminmaxAll", x, np.zeros((), F32), np.zeros((), F32), outputs=("minOut", "maxOut"))
    assert mn == x.min() and mx == x.max()
    y = x.copy()
    y[0, 0] = np.nan
    near(call("ReduceNansum", y, [1], False, int(D.FLOAT), np.zeros(3, F32)), np.nansum(y.astype(np.float64), 1))
    near(call("VarCorrection", x, [0], 2, True, np.zeros((1, 4), F32)), x64.var(0, ddof=2, keepdims=True))
    s, m = call("StdMeanCorrection", x, [1], 1, False, np.zeros(3, F32), np.zeros(3, F32), outputs=("stdOut", "meanOut"))
    near(s, x64.std(1, ddof=1))
    near(m, x64.mean(1))


def test_more_indexing(aten: object) -> None:
    x = rand(2, 6)
    parts = call("SplitWithSize", x, [1, 3, 2], 1, [np.zeros((2, 1), F32), np.zeros((2, 3), F32), np.zeros((2, 2), F32)])
    for got, want in zip(parts, np.split(x, [1, 4], 1)):
        near(got, want)
    a, b = rand(2, 4), rand(2, 6)
    got = call("ChunkCat", [a, b], 1, 2, np.zeros((2, 2, 5), F32))  # each cut in 2 along dim 1
    # (2, 2 chunks, 2 + 3 columns): chunk k holds chunk k of every tensor, side by side
    near(got, np.stack([np.concatenate([a[:, :2], b[:, :3]], 1), np.concatenate([a[:, 2:], b[:, 3:]], 1)], 1))
    near(call("RepeatInterleaveIntWithDim", x, 2, 0, 4, np.zeros((4, 6), F32)), np.repeat(x, 2, 0))
    seq = np.array([1.0, 3.0, 5.0], F32)
    np.testing.assert_array_equal(call("SearchSorteds", seq, 3.0, False, True, None, np.zeros((), I64)),
                                  np.searchsorted(seq, 3.0, side="right"))
    want = x.copy()
    want[[0, 1], [2, 2]] += np.array([1.0, 2.0], F32)
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        t = pyaclnn.Tensor.from_numpy(x)
        with pyaclnn.Op("IndexPutImpl", t, [np.array([0, 1], I64), np.array([2, 2], I64)], np.array([1.0, 2.0], F32),
                        True, False) as ex:
            ex.run(stream)
        stream.synchronize()
        near(t.numpy(), want)
    p = rand(1, 1, 2, 3)
    near(call("CircularPad2d", p, [1, 1, 1, 0], np.zeros((1, 1, 3, 5), F32)), np.pad(p, ((0, 0), (0, 0), (1, 0), (1, 1)), "wrap"))
    pooled, idx = F.max_pool2d(torch.tensor(rand(1, 1, 4, 4)), 2, return_indices=True)
    unpooled = call("MaxUnpool2d", pooled.numpy(), idx.numpy(), [4, 4], np.zeros((1, 1, 4, 4), F32))
    want = np.zeros(16, F32)
    want[idx.numpy().reshape(-1)] = pooled.numpy().reshape(-1)
    near(unpooled, want.reshape(1, 1, 4, 4))


def test_linear_algebra(aten: object) -> None:
    m = rand(3, 3) + 3 * np.eye(3, dtype=F32)
    spd = (m @ m.T).astype(F32)
    near(call("Inverse", m, np.zeros_like(m)), np.linalg.inv(m.astype(np.float64)), 1e-4)
    near(call("Logdet", spd, np.zeros((), F32)), np.log(np.linalg.det(spd.astype(np.float64))), 1e-4)
    sign, log = call("Slogdet", m, np.zeros((), F32), np.zeros((), F32), outputs=("signOut", "logOut"))
    want_sign, want_log = np.linalg.slogdet(m.astype(np.float64))
    assert sign == want_sign
    near(log, want_log, 1e-4)
    near(call("LinalgCholesky", spd, False, np.zeros_like(spd)), np.linalg.cholesky(spd.astype(np.float64)), 1e-4)
    tri = np.triu(m)
    rhs = rand(3, 2)
    x, copy = call("TriangularSolve", rhs, tri, True, False, False, np.zeros((3, 2), F32), np.zeros((3, 3), F32),
                   outputs=("xOut", "mOut"))
    near(tri.astype(np.float64) @ x, rhs, 1e-4)
    near(copy, tri)
    r = rand(3, 4)
    norms = np.linalg.norm(r.astype(np.float64), axis=1, keepdims=True)
    near(call("Renorm", r, 2.0, 0, 1.0, np.zeros_like(r)), np.where(norms > 1.0, r / (norms + 1e-7), r), 1e-5)


def test_softmax_and_selu_gradients(aten: object) -> None:
    x, g = rand(3, 4), rand(3, 4)
    y = F.softmax(torch.tensor(x), 1).numpy()
    near(call("SoftmaxBackward", g, y, 1, np.zeros_like(x)), grad_of(lambda v: F.softmax(v, 1), x, g=g)[0], 1e-5)
    ly = F.log_softmax(torch.tensor(x), 1).numpy()
    near(call("LogSoftmaxBackward", g, ly, 1, np.zeros_like(x)), grad_of(lambda v: F.log_softmax(v, 1), x, g=g)[0],
         1e-5)
    sy = F.selu(torch.tensor(x)).numpy()
    near(call("SeluBackward", g, sy, np.zeros_like(x), outputs=("gradInput",)), grad_of(F.selu, x, g=g)[0], 1e-5)
    a, b = rand(3, 2), rand(4, 2)
    d = torch.cdist(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))
    gd = rand(3, 4)
    near(call("CdistBackward", gd, a, b, d.float().numpy(), 2.0, np.zeros_like(a)),
         grad_of(lambda u: torch.cdist(u, torch.tensor(b, dtype=torch.float64)), a, g=gd)[0], 1e-4)
