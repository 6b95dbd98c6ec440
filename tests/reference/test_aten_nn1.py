"""The aten tier's ops-nn entries, first half of the alphabet (the nn_* families: issue 24), through
``pyaclnn.Op`` on the NumPy backend; and the entries other families have for the same operators
(OVERLAP), against the same oracles.

Every entry of those families runs here on small valid inputs, in float32 and in one other
dtype it accepts. Expected values are the test's own: torch's public functions (torch.nn.functional,
torch.optim) and autograd for the backward forms (the gradient of the forward function, never
the aten ``*_backward`` overload the table names), or NumPy; the entries without one are checked
for shape, dtype and finite values.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import pyaclnn  # noqa: E402
from aten_support import aten_backend, bf16, status_of  # noqa: E402
from pyaclnn.ops._aten import entries  # noqa: E402

F32, F16, I32, I64 = np.float32, np.float16, np.int32, np.int64
FAMILIES = ("nn_norm", "nn_conv", "nn_loss", "nn_mm", "nn_index", "nn_foreach", "nn_optim", "nn_fused", "nn_quant")


@pytest.fixture
def aten(use_backend: Callable[..., object], tmp_path: Path) -> object:
    return aten_backend(use_backend, tmp_path)


def rnd(*shape: int, dt: Any = F32, lo: float = -2.0, hi: float = 2.0, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).uniform(lo, hi, shape).astype(dt)


def t64(a: np.ndarray, grad: bool = False) -> Any:
    """A float64 torch tensor of ``a`` (the oracle computes in float64)."""
    return torch.tensor(np.asarray(a, np.float64), requires_grad=grad)


def vjp(fn: Callable[..., Any], g: np.ndarray, *xs: np.ndarray) -> list[Any]:
    """The gradients of ``fn`` at ``xs`` against upstream ``g``: autograd, the oracle of a backward."""
    ts = [t64(x, True) for x in xs]
    out = fn(*ts)
    grads = torch.autograd.grad(out, ts, t64(g), allow_unused=True)
    return [None if gr is None else gr.numpy() for gr in grads]


def run(op: str, *args: Any, outputs: tuple[str, ...]) -> list[Any]:
    """``pyaclnn.Op(op, *args)`` run and read back: each named output an array (a list for a list)."""
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        with pyaclnn.Op(op, *args) as ex:
            ex.run(stream)
            stream.synchronize()
            got = []
            for n in outputs:
                o = ex[n]
                got.append(None if o is None else [t.numpy() for t in o] if isinstance(o, (list, tuple))
                           else o.numpy())
    return got


class Case(NamedTuple):
    args: tuple
    outputs: tuple[str, ...]
    want: list[Any] | None = None   # expected per output (None: shape, dtype, finite values only)


def sc(v: float, dt: Any) -> float | int:
    """A scalar argument of the data's kind (an integer for integer data)."""
    return int(v) if np.issubdtype(dt, np.integer) else v


def z(a: np.ndarray, dt: Any = None) -> np.ndarray:
    return np.zeros(a.shape, dt or a.dtype)


def zs(shape: tuple[int, ...], dt: Any = F32) -> np.ndarray:
    return np.zeros(shape, dt)


# -- the cases: op -> (dtype -> Case) -------------------------------------------------------------
CASES: dict[str, Callable[[Any], Case]] = {}


def case(op: str) -> Callable[[Callable[[Any], Case]], Callable[[Any], Case]]:
    def put(fn: Callable[[Any], Case]) -> Callable[[Any], Case]:
        CASES[op] = fn
        return fn
    return put


def unary(op: str, fn: Callable[[Any], Any] | None, out: str = "out", lo: float = -4, hi: float = 4,
          extra: tuple = (), inplace: str = "", out_dt: Any = None) -> None:
    def make(dt: Any) -> Case:
        x = rnd(3, 5, dt=dt, lo=lo, hi=hi)
        want = None if fn is None else [fn(t64(x)).numpy()]
        if inplace:
            return Case((x.copy(), *extra), (inplace,), want)
        return Case((x, *extra, z(x, out_dt)), (out,), want)
    CASES[op] = make


# activations
unary("Celu", lambda t: F.celu(t, 1.5), extra=(1.5,))
unary("InplaceCelu", lambda t: F.celu(t, 0.5), extra=(0.5,), inplace="selfRef")
unary("EluV2", lambda t: 1.5 * torch.where(t > 0, t, 2.0 * torch.expm1(0.5 * t)), extra=(2.0, 1.5, 0.5))
unary("InplaceElu", lambda t: F.elu(t, 0.7), extra=(0.7, 1.0, 1.0), inplace="selfRef")
unary("Erfinv", torch.erfinv, lo=-0.99, hi=0.99, out_dt=F32)
unary("InplaceErfinv", torch.erfinv, lo=-0.99, hi=0.99, inplace="selfRef")
unary("Hardshrink", lambda t: F.hardshrink(t, 0.8), extra=(0.8,))
unary("HardsigmoidV2", F.hardsigmoid)
unary("InplaceHardsigmoid", F.hardsigmoid, inplace="self")
unary("InplaceHardsigmoidV2", F.hardsigmoid, inplace="self")
unary("InplaceHardswish", F.hardswish, inplace="self")
unary("InplaceLeakyRelu", lambda t: F.leaky_relu(t, 0.3), extra=(0.3,), inplace="selfRef")
unary("Flip", lambda t: torch.flip(t, [0, 1]), extra=([0, -1],))


def backward(op: str, fwd: Callable[[Any], Any], extra: tuple = (), out: str = "out", lo: float = -4,
             hi: float = 4, mid: tuple = ()) -> None:
    """op(gradOutput, self, *extra, out) against autograd of ``fwd`` (``mid``: arguments between)."""
    def make(dt: Any) -> Case:
        g, x = rnd(3, 5, dt=dt, seed=1), rnd(3, 5, dt=dt, lo=lo, hi=hi)
        return Case((g, x, *extra, z(x)), (out,), [vjp(fwd, g, x)[0]])
    CASES[op] = make


backward("GeluBackward", F.gelu, out="gradInput")
backward("GeluBackwardV2", lambda t: F.gelu(t, approximate="tanh"), extra=("tanh",), out="gradInput")
backward("HardsigmoidBackward", F.hardsigmoid)
backward("HardswishBackward", F.hardswish)
backward("HardshrinkBackward", lambda t: F.hardshrink(t, 0.5), extra=(0.5,), out="gradInput")
backward("HardtanhBackward", lambda t: F.hardtanh(t, -1.0, 2.0), extra=(-1.0, 2.0))


@case("EluBackward")
def _elu_backward(dt: Any) -> Case:
    g, x = rnd(3, 4, dt=dt, seed=2), rnd(3, 4, dt=dt)
    want = vjp(lambda t: 1.2 * torch.where(t > 0, t, 0.8 * torch.expm1(0.5 * t)), g, x)[0]
    return Case((g, 0.8, 1.2, 0.5, False, x, z(x)), ("gradInput",), [want])


@case("AddRelu")
def _add_relu(dt: Any) -> Case:
    a, b = rnd(2, 3, dt=dt), rnd(3, dt=dt, seed=3)
    # alpha of the data's kind: a float alpha beside integers is 161002 (test_aten_table_fixes.py)
    return Case((a, b, sc(2.0, dt), zs((2, 3), dt)), ("out",), [torch.relu(t64(a) + 2 * t64(b)).numpy()])


@case("InplaceAddRelu")
def _inplace_add_relu(dt: Any) -> Case:
    a, b = rnd(2, 3, dt=dt), rnd(2, 3, dt=dt, seed=3)
    return Case((a.copy(), b, sc(2.0, dt)), ("selfRef",), [torch.relu(t64(a) + 2 * t64(b)).numpy()])


@case("Glu")
def _glu(dt: Any) -> Case:
    x = rnd(4, 6, dt=dt)
    return Case((x, 1, zs((4, 3), dt)), ("out",), [F.glu(t64(x), 1).numpy()])


@case("GluBackward")
def _glu_backward(dt: Any) -> Case:
    g, x = rnd(2, 3, dt=dt, seed=4), rnd(4, 3, dt=dt)
    return Case((g, x, 0, z(x)), ("out",), [vjp(lambda t: F.glu(t, 0), g, x)[0]])


@case("Heaviside")
def _heaviside(dt: Any) -> Case:
    x = np.array([[-1.5, 0.0, 2.0], [0.0, 3.0, -0.1]], dt)
    v = np.array([0.5, 0.25, 0.75], dt)
    return Case((x, v, z(x)), ("out",), [np.array([[0, 0.25, 1], [0.5, 1, 0]])])


# norms
@case("BatchNorm")
def _batch_norm(dt: Any) -> Case:
    x, w, b = rnd(4, 3, 5, dt=dt), rnd(3, dt=dt, lo=0.5), rnd(3, dt=dt, seed=5)
    want = F.batch_norm(t64(x), None, None, t64(w), t64(b), True, 0.1, 1e-5).numpy()
    mean = x.astype(np.float64).mean((0, 2))
    invstd = 1 / np.sqrt(x.astype(np.float64).var((0, 2)) + 1e-5)
    return Case((x, w, b, np.zeros(3, dt), np.ones(3, dt), True, 0.1, 1e-5, z(x), zs((3,), dt), zs((3,), dt)),
                ("output", "saveMean", "saveInvstd"), [want, mean, invstd])


def _bn_backward(op: str, extra: tuple) -> None:
    def make(dt: Any) -> Case:
        g, x, w = rnd(4, 3, 5, dt=dt, seed=6), rnd(4, 3, 5, dt=dt), rnd(3, dt=dt, lo=0.5)
        x64 = x.astype(np.float64)
        mean, invstd = x64.mean((0, 2)), 1 / np.sqrt(x64.var((0, 2)) + 1e-5)
        want = vjp(lambda t, wt: F.batch_norm(t, None, None, wt, None, True, 0.1, 1e-5), g, x, w)
        args = (g, x, w, np.zeros(3, dt), np.ones(3, dt), mean.astype(dt), invstd.astype(dt), True, 1e-5,
                [True, True, True], *extra, z(x), zs((3,), dt), zs((3,), dt))
        return Case(args, ("gradInput", "gradWeight", "gradBias"), [want[0], want[1], g.astype(np.float64).sum((0, 2))])
    CASES[op] = make


_bn_backward("BatchNormBackward", ())
_bn_backward("FastBatchNormBackward", (1,))


@case("GroupNorm")
def _group_norm(dt: Any) -> Case:
    x, w, b = rnd(2, 4, 3, dt=dt), rnd(4, dt=dt, lo=0.5), rnd(4, dt=dt, seed=7)
    g = x.astype(np.float64).reshape(2, 2, 6)
    return Case((x, w, b, 2, 4, 3, 2, 1e-5, z(x), zs((2, 2), dt), zs((2, 2), dt)), ("out", "meanOut", "rstdOut"),
                [F.group_norm(t64(x), 2, t64(w), t64(b), 1e-5).numpy(), g.mean(2), 1 / np.sqrt(g.var(2) + 1e-5)])


@case("FastLayerNorm")
def _fast_layer_norm(dt: Any) -> Case:
    x, w, b = rnd(2, 3, 4, dt=dt), rnd(4, dt=dt), rnd(4, dt=dt, seed=8)
    return Case((x, [4], w, b, 1e-5, z(x), zs((2, 3, 1), dt), zs((2, 3, 1), dt)),
                ("out", "meanOutOptional", "rstdOutOptional"),
                [F.layer_norm(t64(x), [4], t64(w), t64(b), 1e-5).numpy(), x.astype(np.float64).mean(-1, keepdims=True),
                 1 / np.sqrt(x.astype(np.float64).var(-1, keepdims=True) + 1e-5)])


# convolutions, samplers
@case("Convolution")
def _convolution(dt: Any) -> Case:
    x, w, b = rnd(1, 4, 6, 6, dt=dt), rnd(6, 2, 3, 3, dt=dt, seed=9), rnd(6, dt=dt)
    want = F.conv2d(t64(x), t64(w), t64(b), stride=2, padding=1, dilation=1, groups=2).numpy()
    return Case((x, w, b, [2, 2], [1, 1], [1, 1], False, [0, 0], 2, zs(want.shape, dt), 0), ("output",), [want])


@case("ConvolutionBackward")
def _convolution_backward(dt: Any) -> Case:
    x, w = rnd(2, 3, 5, 5, dt=dt), rnd(4, 3, 3, 3, dt=dt, seed=10)
    g = rnd(2, 4, 5, 5, dt=dt, seed=11)
    gx, gw = vjp(lambda a, b: F.conv2d(a, b, padding=1), g, x, w)
    args = (g, x, w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True], 0, z(x), z(w), zs((4,), dt))
    return Case(args, ("gradInput", "gradWeight", "gradBias"), [gx, gw, g.astype(np.float64).sum((0, 2, 3))])


@case("ConvTbc")
def _conv_tbc(dt: Any) -> Case:
    x, w, b = rnd(7, 2, 3, dt=dt), rnd(3, 3, 4, dt=dt, seed=12), rnd(4, dt=dt)
    # time-batch-channel: conv1d over time of the (batch, channel, time) view, weight (out, in, k)
    want = F.conv1d(t64(x).permute(1, 2, 0), t64(w).permute(2, 1, 0), t64(b), padding=1).permute(2, 0, 1).numpy()
    return Case((x, w, b, 1, zs(want.shape, dt), 0), ("output",), [want])


@case("ConvTbcBackward")
def _conv_tbc_backward(dt: Any) -> Case:
    x, w, b = rnd(7, 2, 3, dt=dt), rnd(3, 3, 4, dt=dt, seed=12), rnd(4, dt=dt)
    g = rnd(7, 2, 4, dt=dt, seed=13)
    fwd = lambda a, c, d: F.conv1d(a.permute(1, 2, 0), c.permute(2, 1, 0), d, padding=1).permute(2, 0, 1)  # noqa: E731
    want = vjp(fwd, g, x, w, b)
    return Case((g, x, w, b, 1, 0, z(x), z(w), z(b)), ("gradInput", "gradWeight", "gradBias"), want)


@case("Im2colBackward")
def _im2col_backward(dt: Any) -> Case:
    cols = rnd(1, 2 * 4, 9, dt=dt)
    want = F.fold(t64(cols), (4, 4), (2, 2), dilation=1, padding=0, stride=1).numpy()
    return Case((cols, [4, 4], [2, 2], [1, 1], [0, 0], [1, 1], zs((1, 2, 4, 4), dt)), ("out",), [want])


def _sampler(op: str, nd: int) -> None:
    def make(dt: Any) -> Case:
        x = rnd(1, 2, *([4] * nd), dt=dt)
        grid = rnd(1, *([3] * nd), nd, dt=dt, lo=-1.1, hi=1.1)
        want = F.grid_sample(t64(x), t64(grid), "bilinear", "border", align_corners=False).numpy()
        return Case((x, grid, 0, 1, False, zs(want.shape, dt)), ("out",), [want])
    CASES[op] = make


_sampler("GridSampler2D", 2)
_sampler("GridSampler3D", 3)


def _sampler_backward(op: str, nd: int) -> None:
    def make(dt: Any) -> Case:
        x = rnd(1, 2, *([4] * nd), dt=dt)
        grid = rnd(1, *([3] * nd), nd, dt=dt, lo=-0.9, hi=0.9)
        g = rnd(1, 2, *([3] * nd), dt=dt, seed=14)
        want = vjp(lambda a, b: F.grid_sample(a, b, "bilinear", "zeros", align_corners=True), g, x, grid)
        return Case((g, x, grid, 0, 0, True, [True, True], z(x), z(grid)), ("inputGrad", "gridGrad"), want)
    CASES[op] = make


_sampler_backward("GridSampler2DBackward", 2)
_sampler_backward("GridSampler3DBackward", 3)


# pooling
def _adaptive_avg(op: str, nd: int) -> None:
    def make(dt: Any) -> Case:
        x = rnd(2, 3, *([5] * nd), dt=dt)
        fn = F.adaptive_avg_pool2d if nd == 2 else F.adaptive_avg_pool3d
        want = fn(t64(x), [3] * nd).numpy()
        return Case((x, [3] * nd, zs(want.shape, dt)), ("out",), [want])
    CASES[op] = make

    def back(dt: Any) -> Case:
        x, g = rnd(2, 3, *([5] * nd), dt=dt), rnd(2, 3, *([3] * nd), dt=dt, seed=15)
        fn = F.adaptive_avg_pool2d if nd == 2 else F.adaptive_avg_pool3d
        return Case((g, x, z(x)), ("out",), [vjp(lambda t: fn(t, [3] * nd), g, x)[0]])
    CASES[op + "Backward"] = back


_adaptive_avg("AdaptiveAvgPool2d", 2)
_adaptive_avg("AdaptiveAvgPool3d", 3)


def _adaptive_max(op: str, nd: int, index_dt: Any) -> None:
    fn = F.adaptive_max_pool2d if nd == 2 else F.adaptive_max_pool3d

    def make(dt: Any) -> Case:
        x = rnd(1, 2, *([5] * nd), dt=dt)
        want, idx = fn(t64(x), [2] * nd, return_indices=True)
        shape = tuple(want.shape)
        return Case((x, [2] * nd, zs(shape, dt), zs(shape, index_dt)), ("outputOut", "indicesOut"),
                    [want.numpy(), idx.numpy()])
    CASES[op] = make

    def back(dt: Any) -> Case:
        x, g = rnd(1, 2, *([5] * nd), dt=dt), rnd(1, 2, *([2] * nd), dt=dt, seed=16)
        _, idx = fn(t64(x), [2] * nd, return_indices=True)
        return Case((g, x, idx.numpy().astype(I32), z(x)), ("gradInput",),
                    [vjp(lambda t: fn(t, [2] * nd), g, x)[0]])
    CASES[op + "Backward"] = back


_adaptive_max("AdaptiveMaxPool2d", 2, I64)
_adaptive_max("AdaptiveMaxPool3d", 3, I32)


@case("AvgPool2d")
def _avg_pool2d(dt: Any) -> Case:
    x = rnd(1, 2, 6, 6, dt=dt)
    want = F.avg_pool2d(t64(x), 3, 2, 1, ceil_mode=True, count_include_pad=False).numpy()
    return Case((x, [3, 3], [2, 2], [1, 1], True, False, 0, 0, zs(want.shape, dt)), ("out",), [want])


@case("AvgPool2dBackward")
def _avg_pool2d_backward(dt: Any) -> Case:
    x = rnd(1, 2, 6, 6, dt=dt)
    g = rnd(1, 2, 3, 3, dt=dt, seed=17)
    want = vjp(lambda t: F.avg_pool2d(t, 2, 2, 0, divisor_override=3), g, x)[0]
    return Case((g, x, [2, 2], [2, 2], [0, 0], False, True, 3, 0, z(x)), ("gradInput",), [want])


@case("AvgPool3d")
def _avg_pool3d(dt: Any) -> Case:
    x = rnd(1, 2, 4, 4, 4, dt=dt)
    want = F.avg_pool3d(t64(x), 2, 2, 1, count_include_pad=True).numpy()
    return Case((x, [2, 2, 2], [2, 2, 2], [1, 1, 1], False, True, 0, zs(want.shape, dt)), ("out",), [want])


@case("AvgPool3dBackward")
def _avg_pool3d_backward(dt: Any) -> Case:
    x = rnd(1, 2, 4, 4, 4, dt=dt)
    g = rnd(1, 2, 2, 2, 2, dt=dt, seed=18)
    want = vjp(lambda t: F.avg_pool3d(t, 2, 2, 0), g, x)[0]
    return Case((g, x, [2], [], [0], False, True, 0, z(x)), ("output",), [want])


# losses
@case("BinaryCrossEntropy")
def _bce(dt: Any) -> Case:
    p, y, w = rnd(3, 4, dt=dt, lo=0.05, hi=0.95), rnd(3, 4, dt=dt, lo=0, hi=1, seed=19), rnd(3, 4, dt=dt, lo=0.5)
    want = F.binary_cross_entropy(t64(p), t64(y), t64(w), reduction="mean").numpy()
    return Case((p, y, w, 1, zs((), dt)), ("out",), [want])


@case("BinaryCrossEntropyBackward")
def _bce_backward(dt: Any) -> Case:
    p, y = rnd(3, 4, dt=dt, lo=0.05, hi=0.95), rnd(3, 4, dt=dt, lo=0, hi=1, seed=19)
    g = rnd(3, 4, dt=dt, seed=20)
    want = vjp(lambda t: F.binary_cross_entropy(t, t64(y), reduction="none"), g, p)[0]
    return Case((g, p, y, None, 0, z(p)), ("out",), [want])


@case("BinaryCrossEntropyWithLogits")
def _bce_logits(dt: Any) -> Case:
    x, y = rnd(3, 4, dt=dt), rnd(3, 4, dt=dt, lo=0, hi=1, seed=21)
    pw = rnd(4, dt=dt, lo=0.5)
    want = F.binary_cross_entropy_with_logits(t64(x), t64(y), pos_weight=t64(pw), reduction="sum").numpy()
    return Case((x, y, None, pw, 2, zs((), dt)), ("out",), [want])


# matrix products
@case("Addmm")
def _addmm(dt: Any) -> Case:
    s, a, b = rnd(1, 4, dt=dt), rnd(3, 5, dt=dt, seed=22), rnd(5, 4, dt=dt, seed=23)
    return Case((s, a, b, 0.5, 2.0, zs((3, 4), dt), 1), ("out",),
                [0.5 * s.astype(np.float64) + 2 * a.astype(np.float64) @ b])


@case("InplaceAddmm")
def _inplace_addmm(dt: Any) -> Case:
    s, a, b = rnd(3, 4, dt=dt), rnd(3, 5, dt=dt, seed=22), rnd(5, 4, dt=dt, seed=23)
    return Case((s.copy(), a, b, 1.0, 1.0, 0), ("selfRef",), [s.astype(np.float64) + a.astype(np.float64) @ b])


@case("Addbmm")
def _addbmm(dt: Any) -> Case:
    s, a, b = rnd(3, 4, dt=dt), rnd(2, 3, 5, dt=dt, seed=24), rnd(2, 5, 4, dt=dt, seed=25)
    return Case((s, a, b, 2.0, 0.5, zs((3, 4), dt), 0), ("out",),
                [2 * s.astype(np.float64) + 0.5 * (a.astype(np.float64) @ b).sum(0)])


@case("InplaceAddbmm")
def _inplace_addbmm(dt: Any) -> Case:
    s, a, b = rnd(3, 4, dt=dt), rnd(2, 3, 5, dt=dt, seed=24), rnd(2, 5, 4, dt=dt, seed=25)
    return Case((s.copy(), a, b, 1.0, 1.0, 0), ("selfRef",), [s.astype(np.float64) + (a.astype(np.float64) @ b).sum(0)])


@case("Baddbmm")
def _baddbmm(dt: Any) -> Case:
    s, a, b = rnd(1, 3, 4, dt=dt), rnd(2, 3, 5, dt=dt, seed=26), rnd(2, 5, 4, dt=dt, seed=27)
    return Case((s, a, b, 0.5, 1.5, zs((2, 3, 4), dt), 0), ("out",),
                [0.5 * s.astype(np.float64) + 1.5 * (a.astype(np.float64) @ b)])


@case("InplaceBaddbmm")
def _inplace_baddbmm(dt: Any) -> Case:
    s, a, b = rnd(2, 3, 4, dt=dt), rnd(2, 3, 5, dt=dt, seed=26), rnd(2, 5, 4, dt=dt, seed=27)
    return Case((s.copy(), a, b, 1.0, 1.0, 0), ("selfRef",), [s.astype(np.float64) + a.astype(np.float64) @ b])


@case("Addmv")
def _addmv(dt: Any) -> Case:
    s, m, v = rnd(3, dt=dt), rnd(3, 4, dt=dt, seed=28), rnd(4, dt=dt, seed=29)
    return Case((s, m, v, 2.0, 0.5, zs((3,), dt), 0), ("out",), [0.5 * s.astype(np.float64) + 2 * m.astype(np.float64) @ v])


@case("Einsum")
def _einsum(dt: Any) -> Case:
    a, b = rnd(3, dt=dt), rnd(4, dt=dt, seed=30)
    return Case(([a, b], "a,b->ab", zs((3, 4), dt)), ("output",), [np.outer(a.astype(np.float64), b)])


# indexing, embedding
@case("Gather")
def _gather(dt: Any) -> Case:
    x, i = rnd(3, 4, dt=dt), np.array([[0, 2, 1, 0], [2, 2, 0, 1]], I32)
    return Case((x, 0, i, zs((2, 4), dt)), ("out",), [np.take_along_axis(x, i, 0)])


@case("IndexSelect")
def _index_select(dt: Any) -> Case:
    x, i = rnd(3, 4, dt=dt), np.array([3, 0, 3], I64)
    return Case((x, 1, i, zs((3, 3), dt)), ("out",), [x[:, i]])


@case("Index")
def _index(dt: Any) -> Case:
    x = rnd(3, 4, dt=dt)
    i, j = np.array([2, 0], I64), np.array([1, 3], I32)
    return Case((x, [i, j], zs((2,), dt)), ("out",), [x[i, j]])


def _index_add(op: str, extra: tuple) -> None:
    def make(dt: Any) -> Case:
        x, s, i = rnd(4, 3, dt=dt), rnd(3, 3, dt=dt, seed=31), np.array([0, 2, 0], I32)
        want = x.astype(np.float64).copy()
        np.add.at(want, i, 2 * s.astype(np.float64))
        return Case((x, 0, i, s, sc(2.0, dt), *extra, z(x)), ("out",), [want])
    CASES[op] = make


_index_add("IndexAdd", ())
_index_add("IndexAddV2", (1,))


@case("IndexCopy")
def _index_copy(dt: Any) -> Case:
    x, s, i = rnd(4, 3, dt=dt), rnd(4, 2, dt=dt, seed=32), np.array([2, 0], I32)
    want = x.copy()
    want[:, i] = s
    return Case((x, 1, i, s, z(x)), ("outRef", "selfRef"), [want, x])  # selfRef read, never written


@case("InplaceIndexCopy")
def _inplace_index_copy(dt: Any) -> Case:
    x, s, i = rnd(4, 3, dt=dt), rnd(2, 3, dt=dt, seed=33), np.array([3, 1], I32)
    want = x.copy()
    want[i] = s
    return Case((x.copy(), 0, i, s), ("selfRef",), [want])


def _index_fill(op: str, as_list: bool, inplace: bool) -> None:
    def make(dt: Any) -> Case:
        x = rnd(3, 4, dt=dt)
        i = [0, 2] if as_list else np.array([0, 2], I32)
        want = x.copy()
        want[:, [0, 2]] = 1.5
        if inplace:
            return Case((x.copy(), 1, i, 1.5), ("selfRef",), [want])
        return Case((x, 1, i, 1.5, z(x)), ("out",), [want])
    CASES[op] = make


_index_fill("IndexFill", False, False)
_index_fill("InplaceIndexFill", False, True)
_index_fill("IndexFillTensor", True, False)
_index_fill("InplaceIndexFillTensor", True, True)


@case("IndexPutImpl")
def _index_put(dt: Any) -> Case:
    x, v = rnd(3, 4, dt=dt), rnd(3, 4, dt=dt, seed=34)[:2]
    i = np.array([2, 2], I64)
    want = x.astype(np.float64).copy()
    np.add.at(want, i, v.astype(np.float64))
    return Case((x.copy(), [i], v, True, False), ("selfRef",), [want])


@case("Embedding")
def _embedding(dt: Any) -> Case:
    w, i = rnd(5, 3, dt=dt), np.array([[4, 0], [1, 1]], I32)
    return Case((w, i, zs((2, 2, 3), dt)), ("out",), [w[i]])


@case("EmbeddingDenseBackward")
def _embedding_dense_backward(dt: Any) -> Case:
    g, i = rnd(2, 3, 4, dt=dt), np.array([[0, 2, 2], [4, 0, 1]], I32)
    want = vjp(lambda w: F.embedding(torch.tensor(i, dtype=torch.int64), w, padding_idx=1), g, np.zeros((5, 4)))[0]
    return Case((g, i, 5, 1, False, zs((5, 4), dt)), ("out",), [want])


@case("EmbeddingRenorm")
def _embedding_renorm(dt: Any) -> Case:
    w, i = rnd(5, 3, dt=dt, lo=-3, hi=3), np.array([1, 3], I64)
    want = w.astype(np.float64).copy()
    for r in (1, 3):
        norm = np.sqrt((want[r] ** 2).sum())
        if norm > 1.0:
            want[r] *= 1.0 / (norm + 1e-7)
    return Case((w.copy(), i, 1.0, 2.0), ("selfRef",), [want])


@case("Bucketize")
def _bucketize(dt: Any) -> Case:
    x = np.array([[0, 1, 2.5], [3, 5, 9]], dt)
    bounds = np.array([1, 3, 5], dt)
    return Case((x, bounds, True, True, zs((2, 3), I32)), ("out",), [np.searchsorted(bounds, x, side="right")])


# foreach
def _lists(dt: Any, n: int = 2, seed: int = 0, lo: float = -2, hi: float = 2) -> list[np.ndarray]:
    return [rnd(2, 3, dt=dt, seed=seed, lo=lo, hi=hi), rnd(4, dt=dt, seed=seed + 1, lo=lo, hi=hi)][:n]


def foreach(op: str, n_in: int, extra: tuple, fn: Callable[..., Any], lo: float = -2) -> None:
    def make(dt: Any) -> Case:
        ins = [_lists(dt, seed=10 * k, lo=lo) for k in range(n_in)]
        want = [fn(*[t64(lst[j]) for lst in ins]).numpy() for j in range(2)]
        return Case((*ins, *[sc(e, dt) for e in extra], [z(a) for a in ins[0]]), ("out",), [want])
    CASES[op] = make


foreach("ForeachAddListV2", 2, (2.0,), lambda a, b: a + 2 * b)
foreach("ForeachAddScalarV2", 1, (1.5,), lambda a: a + 1.5)
foreach("ForeachSubListV2", 2, (0.5,), lambda a, b: a - 0.5 * b)
foreach("ForeachSubScalarV2", 1, (1.5,), lambda a: a - 1.5)
foreach("ForeachMulList", 2, (), lambda a, b: a * b)
foreach("ForeachMulScalarV2", 1, (3.0,), lambda a: a * 3)
foreach("ForeachDivList", 2, (), lambda a, b: a / b, lo=0.5)
foreach("ForeachDivScalarV2", 1, (4.0,), lambda a: a / 4)
foreach("ForeachAddcdivScalarV2", 3, (0.5,), lambda a, b, c: a + 0.5 * b / c, lo=0.5)
foreach("ForeachAddcmulScalarV2", 3, (0.5,), lambda a, b, c: a + 0.5 * b * c)
foreach("ForeachLerpList", 3, (), lambda a, b, w: a + w * (b - a))
foreach("ForeachLerpScalar", 2, (0.25,), lambda a, b: a + 0.25 * (b - a))
foreach("ForeachMaximumScalarV2", 1, (0.5,), lambda a: torch.clamp(a, min=0.5))
foreach("ForeachMinimumScalarV2", 1, (0.5,), lambda a: torch.clamp(a, max=0.5))
foreach("ForeachPowScalarV2", 1, (2.0,), lambda a: a * a)
foreach("ForeachSqrt", 1, (), torch.sqrt, lo=0.1)


@case("ForeachDivScalar")
def _foreach_div_scalar(dt: Any) -> Case:
    xs = _lists(dt)
    return Case((xs, np.array(4.0, dt), [z(a) for a in xs]), ("out",), [[a.astype(np.float64) / 4 for a in xs]])


@case("ForeachAddcdivScalarList")
def _foreach_addcdiv_list(dt: Any) -> Case:
    a, b, c = _lists(dt), _lists(dt, seed=5), _lists(dt, seed=9, lo=0.5)
    s = np.array([0.5, -2.0], dt)
    want = [a[j].astype(np.float64) + float(s[j]) * b[j].astype(np.float64) / c[j] for j in range(2)]
    return Case((a, b, c, s, [z(x) for x in a]), ("out",), [want])


@case("ForeachCopy")
def _foreach_copy(dt: Any) -> Case:
    xs = _lists(dt)
    return Case((xs, [z(a, F32) for a in xs]), ("out",), [[a.astype(np.float64) for a in xs]])


# fused optimizers: torch.optim's single-tensor implementations as the oracle
@case("FusedAdamw")
def _fused_adamw(dt: Any) -> Case:
    ps, gs = _lists(dt, seed=40), _lists(dt, seed=41)
    ms, vs = _lists(dt, seed=42), [np.abs(a) for a in _lists(dt, seed=43)]
    maxs = [v + np.asarray(0.5, dt) for v in vs]
    steps = [np.array([3.0], F32), np.array([3.0], F32)]
    params = [t64(p).clone() for p in ps]
    opt = torch.optim.AdamW(params, lr=0.1, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01, amsgrad=True,
                            foreach=False)
    for p, g, m, v, mx in zip(params, gs, ms, vs, maxs):
        p.grad = t64(g)
        opt.state[p] = {"step": torch.tensor(2.0, dtype=torch.float64), "exp_avg": t64(m), "exp_avg_sq": t64(v),
                        "max_exp_avg_sq": t64(mx)}
    opt.step()
    want_p = [p.detach().numpy() for p in params]
    want_m = [opt.state[p]["exp_avg"].numpy() for p in params]
    want_v = [opt.state[p]["exp_avg_sq"].numpy() for p in params]
    args = ([p.copy() for p in ps], gs, [m.copy() for m in ms], [v.copy() for v in vs], [x.copy() for x in maxs],
            steps, None, None, 0.1, 0.9, 0.99, 0.01, 1e-8, True, False)
    return Case(args, ("paramsRef", "expAvgsRef", "expAvgSqsRef"), [want_p, want_m, want_v])


@case("FusedSgd")
def _fused_sgd(dt: Any) -> Case:
    ps, gs, bufs = _lists(dt, seed=50), _lists(dt, seed=51), _lists(dt, seed=52)
    params = [t64(p).clone() for p in ps]
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01, nesterov=False,
                          foreach=False)
    for p, g, b in zip(params, gs, bufs):
        p.grad = t64(g)
        opt.state[p] = {"momentum_buffer": t64(b)}
    opt.step()
    want_p = [p.detach().numpy() for p in params]
    want_b = [opt.state[p]["momentum_buffer"].numpy() for p in params]
    args = ([p.copy() for p in ps], [g.copy() for g in gs], [b.copy() for b in bufs], None, 0.01, 0.9, 0.1, 0.1,
            False, False, False)
    return Case(args, ("paramsRef", "momentumBufferListOptionalRef"), [want_p, want_b])


# -- compositions (nn_fused) and fake quantisation (nn_quant) -------------------------------------
unary("FastGelu", lambda t: t * torch.sigmoid(1.702 * t))
unary("FastGeluV2", lambda t: t * (torch.sign(t) * (-0.1444 * (torch.clamp((0.7071 * t).abs(), max=1.769) - 1.769) ** 2
                                                    + 0.5) + 0.5))
backward("FastGeluBackward", lambda t: t * torch.sigmoid(1.702 * t), out="gradInput")


@case("FusedBiasLeakyRelu")
def _fused_bias_leaky_relu(dt: Any) -> Case:
    x, b = rnd(3, 4, dt=dt), rnd(3, 4, dt=dt, seed=60)
    return Case((x, b, 0.2, 1.5, z(x)), ("out",), [1.5 * F.leaky_relu(t64(x) + t64(b), 0.2).numpy()])


def _geglu(op: str, v3: bool) -> None:
    def make(dt: Any) -> Case:
        x = rnd(3, 8, dt=dt)
        a, b = t64(x).chunk(2, -1)
        left = (True,) if v3 else ()
        if v3:
            want = [(F.gelu(a, approximate="tanh") * b).numpy(), F.gelu(a, approximate="tanh").numpy()]
            return Case((x, -1, 1, *left, zs((3, 4), dt), zs((3, 4), dt)), ("out", "outGelu"), want)
        return Case((x, -1, 0, zs((3, 4), dt), zs((3, 4), dt)), ("out", "outGelu"), [(a * F.gelu(b)).numpy(),
                                                                                     F.gelu(b).numpy()])
    CASES[op] = make

    def back(dt: Any) -> Case:
        x, g = rnd(4, 6, dt=dt), rnd(2, 6, dt=dt, seed=61)
        if v3:
            fwd = lambda t: F.gelu(t.chunk(2, 0)[0]) * t.chunk(2, 0)[1]  # noqa: E731
            gelu = F.gelu(t64(x).chunk(2, 0)[0]).numpy().astype(dt)
            return Case((g, x, gelu, 0, 0, True, z(x)), ("gradInput",), [vjp(fwd, g, x)[0]])
        fwd = lambda t: t.chunk(2, 0)[0] * F.gelu(t.chunk(2, 0)[1], approximate="tanh")  # noqa: E731
        gelu = F.gelu(t64(x).chunk(2, 0)[1], approximate="tanh").numpy().astype(dt)
        return Case((g, x, gelu, 0, 1, z(x)), ("gradInput",), [vjp(fwd, g, x)[0]])
    CASES[op.replace("V3", "") + "Backward" if not v3 else "GeGluV3Backward"] = back


_geglu("GeGlu", False)
_geglu("GeGluV3", True)


@case("Gemm")
def _gemm(dt: Any) -> Case:
    a, b, c = rnd(5, 3, dt=dt), rnd(4, 5, dt=dt, seed=62), rnd(3, 4, dt=dt, seed=63)
    return Case((a, b, c, 2.0, 0.5, 1, 1, zs((3, 4), dt), 0), ("out",),
                [2 * a.astype(np.float64).T @ b.astype(np.float64).T + 0.5 * c])


@case("ConvDepthwise2d")
def _conv_depthwise2d(dt: Any) -> Case:
    x, w, b = rnd(1, 3, 6, 6, dt=dt), rnd(6, 1, 3, 3, dt=dt, seed=64), rnd(6, dt=dt)
    want = F.conv2d(t64(x), t64(w), t64(b), 1, 1, 1, groups=3).numpy()
    return Case((x, w, [3, 3], b, [1, 1], [1, 1], [1, 1], zs(want.shape, dt), 0), ("out",), [want])


@case("AddRmsNorm")
def _add_rms_norm(dt: Any) -> Case:
    a, b, g = rnd(2, 3, 4, dt=dt), rnd(2, 3, 4, dt=dt, seed=65), rnd(4, dt=dt, seed=66)
    x = t64(a) + t64(b)
    rstd = 1 / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-6)
    return Case((a, b, g, 1e-6, z(a), zs((2, 3, 1)), z(a)), ("yOut", "rstdOut", "xOut"),
                [(x * rstd * t64(g)).numpy(), rstd.numpy(), x.numpy()])


def _gn_silu(op: str, extra: tuple, silu: bool) -> None:
    def make(dt: Any) -> Case:
        x, w, b = rnd(2, 4, 3, dt=dt), rnd(4, dt=dt, lo=0.5), rnd(4, dt=dt, seed=67)
        y = F.group_norm(t64(x), 2, t64(w), t64(b), 1e-5)
        gr = x.astype(np.float64).reshape(2, 2, 6)
        return Case((x, w, b, 2, 1e-5, *extra, z(x), zs((2, 2), dt), zs((2, 2), dt)), ("out", "meanOut", "rstdOut"),
                    [(F.silu(y) if silu else y).numpy(), gr.mean(2), 1 / np.sqrt(gr.var(2) + 1e-5)])
    CASES[op] = make


_gn_silu("GroupNormSilu", (), True)
_gn_silu("GroupNormSiluV2", (False,), False)


def _sync_bn_stats(dt: Any) -> tuple[np.ndarray, ...]:
    x = rnd(4, 3, 5, dt=dt)
    x64 = x.astype(np.float64)
    return x, x64.mean((0, 2)).astype(dt), (1 / np.sqrt(x64.var((0, 2)) + 1e-5)).astype(dt)


@case("BatchNormElemt")
def _bn_elemt(dt: Any) -> Case:
    x, mean, invstd = _sync_bn_stats(dt)
    w, b = rnd(3, dt=dt, lo=0.5), rnd(3, dt=dt, seed=68)
    want = F.batch_norm(t64(x), t64(mean), 1 / t64(invstd) ** 2, t64(w), t64(b), False, 0.0, 0.0).numpy()
    return Case((x, w, b, mean, invstd, 1e-5, z(x)), ("output",), [want])


@case("BatchNormElemtBackward")
def _bn_elemt_backward(dt: Any) -> Case:
    x, mean, invstd = _sync_bn_stats(dt)
    w, g = rnd(3, dt=dt, lo=0.5), rnd(4, 3, 5, dt=dt, seed=69)
    g64, xm = g.astype(np.float64), x.astype(np.float64) - mean.astype(np.float64)[:, None]
    sum_dy, sum_dy_xmu = g64.sum((0, 2)), (g64 * xm).sum((0, 2))
    # the training-mode batch-norm gradient, split into per-device counts 12 + 8 = 20
    want = vjp(lambda t: F.batch_norm(t, None, None, t64(w), None, True, 0.1, 1e-5), g, x)[0]
    return Case((g, x, mean, invstd, w, sum_dy.astype(dt), sum_dy_xmu.astype(dt), np.array([12, 8], I32), z(x)),
                ("gradInput",), [want])


@case("BatchNormReduce")
def _bn_reduce(dt: Any) -> Case:
    x = rnd(2, 3, 4, 5, dt=dt)
    x64 = x.astype(np.float64)
    return Case((x, zs((3,)), zs((3,))), ("sum", "squareSum"), [x64.sum((0, 2, 3)), (x64 ** 2).sum((0, 2, 3))])


@case("BatchNormReduceBackward")
def _bn_reduce_backward(dt: Any) -> Case:
    x, mean, invstd = _sync_bn_stats(dt)
    w, g = rnd(3, dt=dt, lo=0.5), rnd(4, 3, 5, dt=dt, seed=70)
    _, gw = vjp(lambda t, wt: F.batch_norm(t, None, None, wt, None, True, 0.1, 1e-5), g, x, w)
    g64, xm = g.astype(np.float64), x.astype(np.float64) - mean.astype(np.float64)[:, None]
    return Case((g, x, mean, invstd, w, True, True, True, zs((3,), dt), zs((3,), dt), zs((3,), dt), zs((3,), dt)),
                ("sumDy", "sumDyXmu", "gradWeight", "gradBias"),
                [g64.sum((0, 2)), (g64 * xm).sum((0, 2)), gw, g64.sum((0, 2))])


@case("GatherV2")
def _gather_v2(dt: Any) -> Case:
    x, i = rnd(3, 4, 2, dt=dt), np.array([[3, 0], [1, 1], [2, 0]], I32)
    return Case((x, 1, i, zs((3, 3, 2, 2), dt)), ("out",), [np.take(x, i, axis=1)])


def _bce_logits_grad(op: str, out: str, wrt_target: bool) -> None:
    def make(dt: Any) -> Case:
        x, y = rnd(3, 4, dt=dt), rnd(3, 4, dt=dt, lo=0, hi=1, seed=71)
        w, pw, g = rnd(3, 4, dt=dt, lo=0.5), rnd(4, dt=dt, lo=0.5, seed=72), rnd(dt=dt, seed=73)
        def loss(a: Any, b: Any) -> Any:
            return F.binary_cross_entropy_with_logits(a, b, t64(w), pos_weight=t64(pw), reduction="mean")
        want = vjp(loss, g, x, y)[1 if wrt_target else 0]
        return Case((g, x, y, w, pw, 1, z(x)), (out,), [want])
    CASES[op] = make


_bce_logits_grad("BinaryCrossEntropyWithLogitsBackward", "out", False)
_bce_logits_grad("BinaryCrossEntropyWithLogitsTargetBackward", "gradTarget", True)


@case("FakeQuantPerChannelAffineCachemask")
def _fake_quant_per_channel(dt: Any) -> Case:
    x = rnd(3, 4, dt=dt, lo=-3, hi=3)
    scale, zp = np.array([0.1, 0.25, 0.05], dt), np.array([0, 3, -2], I32)
    want, mask = torch.fake_quantize_per_channel_affine(t64(x).float(), torch.tensor(scale, dtype=torch.float32),
                                                        torch.tensor(zp), 0, -8, 7), None
    q = np.rint(x.astype(F32) / scale.astype(F32)[:, None]) + zp[:, None]
    mask = (q >= -8) & (q <= 7)
    return Case((x, scale, zp, 0, -8, 7, z(x), z(x, bool)), ("out", "mask"), [want.numpy(), mask])


@case("FakeQuantPerTensorAffineCachemask")
def _fake_quant_per_tensor(dt: Any) -> Case:
    x = rnd(3, 4, dt=dt, lo=-3, hi=3)
    want = torch.fake_quantize_per_tensor_affine(t64(x).float(), 0.2, 1, -8, 7).numpy()
    q = np.rint(x.astype(F32) / F32(0.2)) + 1
    return Case((x, np.array([0.2], dt), np.array([1], I32), 1.0, -8, 7, z(x), z(x, bool)), ("out", "mask"),
                [want, (q >= -8) & (q <= 7)])


@case("ForeachAddList")
def _foreach_add_list(dt: Any) -> Case:
    a, b = _lists(dt), _lists(dt, seed=7)
    alpha = np.array([sc(2.0, dt)], F32 if dt in (F16, F32) or not np.issubdtype(dt, np.integer) else I32)
    want = [a[j].astype(np.float64) + 2.0 * b[j].astype(np.float64) for j in range(2)]
    return Case((a, b, alpha, [z(x) for x in a]), ("out",), [want])


@case("ForeachAddcdivScalar")
def _foreach_addcdiv_scalar(dt: Any) -> Case:
    a, b, c = _lists(dt), _lists(dt, seed=5), _lists(dt, seed=9, lo=0.5)
    want = [a[j].astype(np.float64) - 1.5 * b[j].astype(np.float64) / c[j] for j in range(2)]
    return Case((a, b, c, np.array([-1.5], F32), [z(x) for x in a]), ("out",), [want])


@case("ApplyGradientDescent")
def _apply_gradient_descent(dt: Any) -> Case:
    v, d = rnd(3, 4, dt=dt), rnd(3, 4, dt=dt, seed=80)
    return Case((v.copy(), np.array([0.25], dt), d), ("var",), [v.astype(np.float64) - 0.25 * d.astype(np.float64)])


def _adamw_oracle(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, mx: np.ndarray | None, t: int,
                  amsgrad: bool) -> list[np.ndarray]:
    """torch.optim.AdamW's single-tensor step t (state: step t - 1): param, exp_avg, exp_avg_sq, max."""
    param = t64(p).clone()
    opt = torch.optim.AdamW([param], lr=0.05, betas=(0.9, 0.99), eps=1e-6, weight_decay=0.1, amsgrad=amsgrad,
                            foreach=False)
    param.grad = t64(g)
    state = {"step": torch.tensor(float(t - 1), dtype=torch.float64), "exp_avg": t64(m), "exp_avg_sq": t64(v)}
    if amsgrad:
        state["max_exp_avg_sq"] = t64(mx)
    opt.state[param] = state
    opt.step()
    st = opt.state[param]
    return [param.detach().numpy(), st["exp_avg"].numpy(), st["exp_avg_sq"].numpy()] + \
        ([st["max_exp_avg_sq"].numpy()] if amsgrad else [])


@case("ApplyAdamW")
def _apply_adam_w(dt: Any) -> Case:
    p, g, m = rnd(3, 4, dt=dt), rnd(3, 4, dt=dt, seed=81), rnd(3, 4, dt=dt, seed=82)
    v = np.abs(rnd(3, 4, dt=dt, seed=83))
    t = 4
    one = lambda x: np.array([x], dt)  # noqa: E731
    args = (p.copy(), m.copy(), v.copy(), one(0.9 ** (t - 1)), one(0.99 ** (t - 1)), one(0.05), one(0.1), one(0.9),
            one(0.99), one(1e-6), g, None, False, False)
    return Case(args, ("varRef", "mRef", "vRef"), _adamw_oracle(p, g, m, v, None, t, False))


@case("ApplyAdamWV2")
def _apply_adam_w_v2(dt: Any) -> Case:
    p, g, m = rnd(3, 4, dt=dt), rnd(3, 4, dt=dt, seed=84), rnd(3, 4, dt=dt, seed=85)
    v = np.abs(rnd(3, 4, dt=dt, seed=86))
    mx = v + np.asarray(0.25, dt)
    args = (p.copy(), m.copy(), v.copy(), mx.copy(), g, np.array([5], I64), 0.05, 0.9, 0.99, 0.1, 1e-6, True, False)
    return Case(args, ("varRef", "mRef", "vRef", "maxGradNormOptionalRef"), _adamw_oracle(p, g, m, v, mx, 5, True))


@case("AscendAntiQuant")
def _ascend_anti_quant(dt: Any) -> Case:
    x = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    scale, offset = np.array([0.5, 0.25, 2.0, 1.0], F32), np.array([1.0, -2.0, 0.0, 3.0], F32)
    out = np.zeros((3, 4), F16)
    return Case((x, scale, offset, 1, True, out), ("y",), [(x.astype(np.float64) + offset) * scale * scale])


@case("ApplyAdamD")
def _apply_adam_d(dt: Any) -> Case:
    p, g, m = rnd(3, 4, dt=dt), rnd(3, 4, dt=dt, seed=87), rnd(3, 4, dt=dt, seed=88)
    v = np.abs(rnd(3, 4, dt=dt, seed=89))
    t, eps = 3, 1e-4
    # torch.optim.Adam is TensorFlow's Adam with epsilon scaled by sqrt(1 - beta2^t)
    param = t64(p).clone()
    opt = torch.optim.Adam([param], lr=0.05, betas=(0.9, 0.99), eps=eps / np.sqrt(1 - 0.99 ** t), foreach=False)
    param.grad = t64(g)
    opt.state[param] = {"step": torch.tensor(float(t - 1), dtype=torch.float64), "exp_avg": t64(m),
                        "exp_avg_sq": t64(v)}
    opt.step()
    want = [param.detach().numpy(), opt.state[param]["exp_avg"].numpy(), opt.state[param]["exp_avg_sq"].numpy()]
    one = lambda x: np.array([x], dt)  # noqa: E731
    args = (p, m, v, one(0.9 ** t), one(0.99 ** t), one(0.05), one(0.9), one(0.99), one(eps), g, False, False,
            z(p), z(m), z(v))
    return Case(args, ("varOut", "mOut", "vOut"), want)


def _ada_layer_norm(op: str, v2: bool) -> None:
    def make(dt: Any) -> Case:
        x, sc_, sh = rnd(2, 3, 4, dt=dt), rnd(2, 4, dt=dt, seed=90), rnd(2, 1, 4, dt=dt, seed=91)
        w, b = rnd(4, dt=dt, seed=92), rnd(4, dt=dt, seed=93)
        y = F.layer_norm(t64(x), [4], t64(w), t64(b), 1e-5) * (1 + t64(sc_)[:, None]) + t64(sh)
        if not v2:
            return Case((x, sc_, sh, w, b, 1e-5, z(x)), ("out",), [y.numpy()])
        x64 = x.astype(np.float64)
        mean, rstd = x64.mean(-1, keepdims=True), 1 / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
        return Case((x, sc_, sh, w, b, 1e-5, z(x), zs((2, 3, 1), dt), zs((2, 3, 1), dt)),
                    ("out", "meanOutOptional", "rstdOutOptional"), [y.numpy(), mean, rstd])
    CASES[op] = make


_ada_layer_norm("AdaLayerNorm", False)
_ada_layer_norm("AdaLayerNormV2", True)


# -- the tests ------------------------------------------------------------------------------------
MINE = sorted(op for op, e in entries().items() if e.family in FAMILIES)
OTHER = {"Erfinv": I32, "InplaceErfinv": F16, "AddRelu": I32, "Addmv": I32, "Einsum": I32, "Gather": I64,
         "IndexSelect": I32, "Index": I64, "IndexAdd": I32, "IndexAddV2": I64, "IndexCopy": I64,
         "InplaceIndexCopy": np.int8, "IndexFill": I32, "InplaceIndexFill": I64, "IndexFillTensor": np.int16,
         "InplaceIndexFillTensor": I32, "IndexPutImpl": I32, "Embedding": I64, "Flip": I32, "Bucketize": I32,
         "ForeachAddListV2": I32, "ForeachAddScalarV2": np.int8, "ForeachMulList": np.int16,
         "ForeachMulScalarV2": I32, "ForeachCopy": I64, "Glu": np.float64, "GluBackward": np.float64,
         "GridSampler2D": np.float64, "GridSampler3DBackward": np.float64, "InplaceAddRelu": I32,
         "ForeachMaximumScalarV2": I32, "ForeachAddcmulScalarV2": I32, "ForeachAddList": I32,
         "AscendAntiQuant": F32}


# operators of this half of the list whose entries other families have (their entries, these oracles)
OVERLAP = sorted(set(CASES) - set(MINE))
def test_every_entry_has_a_case() -> None:
    assert set(MINE) <= set(CASES)
    assert len(MINE) >= 40
    with_oracle = [op for op in MINE if CASES[op](F32).want is not None]
    assert len(with_oracle) >= len(MINE) // 3


def _close(got: Any, want: Any, dt: Any, tol: float) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, dt, tol)
        return
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("op", MINE + OVERLAP)
def test_float32_against_the_oracle(aten: object, op: str) -> None:
    c = CASES[op](F32)
    got = run(op, *c.args, outputs=c.outputs)
    if c.want is None:
        for g in got:
            assert np.isfinite(np.asarray(g, np.float64)).all()
        return
    for g, w in zip(got, c.want):
        _close(g, w, F32, 2e-4)


@pytest.mark.parametrize("op", MINE + OVERLAP)
def test_another_dtype_runs(aten: object, op: str) -> None:
    """fp16 (or the integer or float64 dtype the entry takes): runs, writes every output in its
    dtype and shape, finite where the float32 oracle is."""
    dt = OTHER.get(op, F16)
    c = CASES[op](dt)
    got = run(op, *c.args, outputs=c.outputs)
    ref = CASES[op](F32)
    want = ref.want or run(op, *ref.args, outputs=ref.outputs)
    for g, w in zip(got, want):
        gs, ws = (g, w) if isinstance(g, list) else ([g], [w])
        for a, b in zip(gs, ws):
            assert a.shape == np.shape(b)
            if a.dtype.kind == "f":
                assert np.isfinite(a.astype(np.float64)).all() == np.isfinite(np.asarray(b, np.float64)).all()
    if dt == F16 and c.want is not None and op not in LOOSE_F16:
        for g, w in zip(got, c.want):
            _close(g, w, F16, 2e-2)


LOOSE_F16 = {"FusedAdamw", "FusedSgd", "BatchNormBackward", "FastBatchNormBackward", "ConvolutionBackward",
             "ConvTbcBackward", "GridSampler2DBackward", "GridSampler3DBackward", "EmbeddingRenorm", "Erfinv",
             "InplaceErfinv", "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits", "GroupNorm", "BatchNorm",
             "FastLayerNorm", "Addbmm", "InplaceAddbmm", "Baddbmm", "InplaceBaddbmm", "Addmm", "InplaceAddmm",
             "Addmv", "Convolution", "ConvTbc", "AvgPool2dBackward", "EmbeddingDenseBackward"}


def test_bf16_where_the_soc_has_it(aten: object, use_backend: Callable[..., object], tmp_path: Path) -> None:
    x = bf16(rnd(3, 4))
    got = run("Celu", x, 1.0, np.zeros_like(x), outputs=("out",))[0]
    np.testing.assert_allclose(got.astype(np.float64), F.celu(t64(x.astype(F32))).numpy(), rtol=2e-2, atol=2e-2)
    aten_backend(use_backend, tmp_path / "910", soc="Ascend910")
    assert status_of("Celu", x, 1.0, np.zeros_like(x)) == 161002


# -- the statuses ---------------------------------------------------------------------------------
def test_a_wrong_out_shape_is_161002(aten: object) -> None:
    x = rnd(2, 3, 4, 4)
    assert status_of("AdaptiveAvgPool2d", x, [2, 2], zs((2, 3, 2, 3))) == 161002
    assert status_of("AdaptiveAvgPool2d", x, [2, 2], zs((2, 3, 2, 2))) == 0
    assert status_of("Glu", rnd(4, 6), 1, zs((4, 6))) == 161002       # half of dim 1: (4, 3)
    assert status_of("Addmm", rnd(3, 4), rnd(3, 5), rnd(5, 4), 1.0, 1.0, zs((4, 3)), 0) == 161002
    assert status_of("ForeachMulList", [rnd(2, 3)], [rnd(2, 3)], [zs((3, 2))]) == 161002
    assert status_of("BinaryCrossEntropy", rnd(3, lo=0.1, hi=0.9), rnd(3, lo=0, hi=1), None, 1, zs((3,))) == 161002


def test_nullptr_of_a_required_tensor_is_161001(aten: object) -> None:
    x = rnd(3, 4)
    assert status_of("Celu", None, 1.0, z(x)) == 161001
    assert status_of("GeluBackward", x, None, z(x)) == 161001
    assert status_of("Gather", x, 0, None, z(x)) == 161001
    assert status_of("Addmm", x, x, None, 1.0, 1.0, z(x), 0) == 161001
    assert status_of("Convolution", rnd(1, 1, 4, 4), rnd(1, 1, 3, 3), None, [1, 1], [0, 0], [1, 1], False, [0, 0],
                     1, zs((1, 1, 2, 2)), 0) == 0  # bias may be nullptr
    assert status_of("BinaryCrossEntropy", x, x, None, 0, z(x)) == 0  # weight may be nullptr


def test_index_dtypes_are_checked_apart_from_the_data(aten: object) -> None:
    x = rnd(3, 4)
    assert status_of("Gather", x, 0, np.zeros((1, 4), F32), zs((1, 4))) == 161002  # a float index
    assert status_of("Gather", x, 0, np.zeros((1, 4), I32), zs((1, 4))) == 0
    assert status_of("Embedding", x, np.zeros(2, np.int16), zs((2, 4))) == 161002
    assert status_of("Index", x, [np.ones(3, bool)], zs((3, 4))) == 161002  # a mask: data-dependent shape


def test_backward_output_masks_leave_outputs_unwritten(aten: object) -> None:
    g, x = rnd(2, 3, 5, 5, seed=3), rnd(2, 3, 5, 5)
    w = rnd(3, 3, 3, 3, seed=4)
    marker = np.full(w.shape, 7.0, F32)
    gx, gw, gb = run("ConvolutionBackward", g, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                     [True, False, False], 0, z(x), marker, None, outputs=("gradInput", "gradWeight", "gradBias"))
    assert gb is None and (gw == 7.0).all()
    _close(gx, vjp(lambda a: F.conv2d(a, t64(w), padding=1), g, x)[0], F32, 2e-4)


def test_batch_norm_updates_running_stats_in_place_and_eval_leaves_saved_stats(aten: object) -> None:
    x, w, b = rnd(4, 3, 5), rnd(3, lo=0.5), rnd(3, seed=5)
    rm, rv = rnd(3, seed=6), rnd(3, lo=0.5, seed=7)
    want_m, want_v = t64(rm).clone(), t64(rv).clone()
    F.batch_norm(t64(x), want_m, want_v, t64(w), t64(b), True, 0.3, 1e-5)
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        trm, trv = pyaclnn.Tensor.from_numpy(rm.copy()), pyaclnn.Tensor.from_numpy(rv.copy())
        with pyaclnn.Op("BatchNorm", x, w, b, trm, trv, True, 0.3, 1e-5, z(x), zs((3,)), zs((3,))) as ex:
            ex.run(stream)
        stream.synchronize()
        _close(trm.numpy(), want_m.numpy(), F32, 1e-5)
        _close(trv.numpy(), want_v.numpy(), F32, 1e-5)
    saved = np.full(3, 9.0, F32)
    out, s_mean = run("BatchNorm", x, w, b, rm, rv, False, 0.3, 1e-5, z(x), saved, None,
                      outputs=("output", "saveMean"))
    _close(out, F.batch_norm(t64(x), t64(rm), t64(rv), t64(w), t64(b), False).numpy(), F32, 2e-4)
    assert (s_mean == 9.0).all()


def test_hardshrink_backward_takes_a_negative_lambda_as_zero(aten: object) -> None:
    x = np.array([-1.0, 0.0, 2.0], F32)
    g = np.ones(3, F32)
    got = run("HardshrinkBackward", g, x, -0.5, z(x), outputs=("gradInput",))[0]
    np.testing.assert_array_equal(got, [1.0, 0.0, 1.0])  # λ = 0: the gradient stops at x == 0 only


def test_avg_pool_divisor_override_zero_means_unset(aten: object) -> None:
    x = rnd(1, 1, 4, 4)
    got = run("AvgPool2d", x, [2], [], [0], False, True, 0, 0, zs((1, 1, 2, 2)), outputs=("out",))[0]
    _close(got, F.avg_pool2d(t64(x), 2).numpy(), F32, 1e-5)
    got = run("AvgPool2d", x, [2], [], [0], False, True, 3, 0, zs((1, 1, 2, 2)), outputs=("out",))[0]
    _close(got, F.avg_pool2d(t64(x), 2, divisor_override=3).numpy(), F32, 1e-5)
