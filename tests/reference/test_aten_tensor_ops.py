"""The tensor families of the aten tier's table (t_*.py: reductions, shape, index, linear
algebra, creation; issue 24): every entry run through ``pyaclnn.Op`` on the NumPy backend,
most against an expectation written here with NumPy or torch directly (never through the
table), the rest for shape, dtype and finiteness; and a few phase-1 statuses."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pyaclnn  # noqa: E402
from aten_support import aten_backend, bf16, call, status_of  # noqa: E402
from pyaclnn.ops._aten import entries  # noqa: E402

F32, F16, F64, I32, I64, I8, U8, B = np.float32, np.float16, np.float64, np.int32, np.int64, np.int8, np.uint8, np.bool_
RNG = np.random.default_rng(2424)
DT = pyaclnn.DType


@pytest.fixture
def aten(use_backend: Callable[..., object], tmp_path: Path) -> object:
    return aten_backend(use_backend, tmp_path)


def rand(*shape: int, dtype: Any = F32, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype(dtype)


def ints(*shape: int, dtype: Any = I32, lo: int = -5, hi: int = 6) -> np.ndarray:
    return RNG.integers(lo, hi, shape).astype(dtype)


def z(shape: tuple[int, ...] | int, dtype: Any = F32) -> np.ndarray:
    return np.zeros(shape, dtype)


def close(got: np.ndarray, want: Any, dtype: Any = F32, tol: float | None = None) -> None:
    tol = tol or {np.dtype(F32): 1e-5, np.dtype(F64): 1e-10, np.dtype(F16): 2e-3}.get(np.dtype(dtype), 1e-2)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    np.testing.assert_allclose(np.asarray(got, np.float64) if not np.iscomplexobj(got) else got,
                               np.asarray(want, np.float64) if not np.iscomplexobj(want) else want,
                               rtol=tol, atol=tol)


def same(got: np.ndarray, want: Any, dtype: Any | None = None) -> None:
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    np.testing.assert_array_equal(got, want)


TENSOR_FAMILIES = ("t_reduce", "t_shape", "t_index", "t_linalg", "t_create", "t_elem")
OURS = sorted(op for op, e in entries().items() if e.family in TENSOR_FAMILIES)
TESTED: set[str] = set()


def call_lists(op: str, *args: Any, outputs: tuple[str, ...] = ("out",)) -> Any:
    """``call`` for an operator with a tensor-list output: each output read back as a list."""
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        with pyaclnn.Op(op, *args) as ex:
            ex.run(stream)
            stream.synchronize()
            got = tuple([t.numpy() for t in ex[n]] for n in outputs)
    return got[0] if len(got) == 1 else got


def covers(*ops: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Marks the operators a test checks (test_every_entry_is_tested reads it)."""
    TESTED.update(ops)
    return lambda f: f


# -- reductions ---------------------------------------------------------------------------------
@covers("All", "Any", "Amin", "Aminmax", "AminmaxAll", "AminmaxDim", "ArgMax", "ArgMin")
def test_min_max_all_any(aten: object) -> None:
    x = rand(3, 4, 5)
    same(call("All", x > -1, [1], False, z((3, 5), B)), (x > -1).all(1))
    same(call("Any", x > 1.5, [0, 2], True, z((1, 4, 1), B)), (x > 1.5).any((0, 2), keepdims=True))
    close(call("Amin", x, [2], False, z((3, 4))), x.min(2))
    mn, mx = call("Aminmax", x, [0, 1], True, z((1, 1, 5)), z((1, 1, 5)), outputs=("minOut", "maxOut"))
    close(mn, x.min((0, 1), keepdims=True))
    close(mx, x.max((0, 1), keepdims=True))
    i = ints(4, 3, dtype=I8)
    mn, mx = call("AminmaxAll", i, z((), I8), z((), I8), outputs=("minOut", "maxOut"))
    same(mn, i.min(), I8)
    same(mx, i.max(), I8)
    mn, mx = call("AminmaxDim", x, -1, False, z((3, 4)), z((3, 4)), outputs=("minOut", "maxOut"))
    close(mn, x.min(-1))
    close(mx, x.max(-1))
    same(call("ArgMax", x, 1, False, z((3, 5), I64)), x.argmax(1), I64)
    same(call("ArgMin", x, 2, True, z((3, 4, 1), I32)), x.argmin(2)[..., None], I32)
    h = rand(4, 6, dtype=F16)
    same(call("ArgMax", h, 0, False, z(6, I64)), h.argmax(0))


@covers("Argsort", "Cummax", "Cummin", "Cumprod", "InplaceCumprod", "CumsumV2")
def test_sorts_and_scans(aten: object) -> None:
    x = rand(3, 6)
    same(call("Argsort", x, 1, True, z((3, 6), I64)), np.argsort(-x, 1, kind="stable"), I64)
    same(call("Argsort", ints(7, dtype=I8), 0, False, z(7, I64)).shape, (7,))
    v, i = call("Cummax", x, 1, z((3, 6)), z((3, 6), I32), outputs=("valuesOut", "indicesOut"))
    close(v, np.maximum.accumulate(x, 1))
    same(np.take_along_axis(x, i.astype(np.int64), 1), v)
    v, i = call("Cummin", x, 0, z((3, 6)), z((3, 6), I64), outputs=("valuesOut", "indicesOut"))
    close(v, np.minimum.accumulate(x, 0))
    close(call("Cumprod", x, 1, int(DT.FLOAT), z((3, 6))), np.cumprod(x.astype(F64), 1))
    i8 = ints(2, 4, lo=1, hi=4)
    same(call("Cumprod", i8, 0, int(DT.INT64), z((2, 4), I64)), np.cumprod(i8.astype(I64), 0), I64)
    close(call("InplaceCumprod", x, -1, outputs=("input",)), np.cumprod(x.astype(F64), -1))
    c = x.astype(F64)
    close(call("CumsumV2", x, 1, False, False, z((3, 6))), np.cumsum(c, 1))
    close(call("CumsumV2", x, 1, True, False, z((3, 6))), np.cumsum(c, 1) - c)
    close(call("CumsumV2", x, 1, False, True, z((3, 6))), np.cumsum(c[:, ::-1], 1)[:, ::-1])
    close(call("CumsumV2", x, 0, True, True, z((3, 6))), np.cumsum(c[::-1], 0)[::-1] - c)


@covers("LogSumExp", "MeanV2", "ProdDim", "ReduceNansum", "ReduceSum", "StdMeanCorrection", "VarCorrection",
        "VarMean", "Trace")
def test_reductions(aten: object) -> None:
    x = rand(3, 4, 5)
    c = x.astype(F64)
    lse = lambda a, d, k=False: np.log(np.exp(a).sum(d, keepdims=k))  # noqa: E731
    close(call("LogSumExp", x, [1], True, z((3, 1, 5))), lse(c, 1, True))
    close(call("MeanV2", x, [0, 2], False, False, z(4)), c.mean((0, 2)))
    close(call("MeanV2", x, [], False, False, z(())), c.mean())
    close(call("MeanV2", x, [], True, True, z((3, 4, 5))), c)
    close(call("ProdDim", x, 2, False, int(DT.FLOAT), z((3, 4))), c.prod(2))
    b = ints(3, 4, lo=0, hi=2).astype(B)
    same(call("ProdDim", b, 0, True, int(DT.INT64), z((1, 4), I64)), b.prod(0, keepdims=True), I64)
    n = x.copy()
    n[0, 0, :2] = np.nan
    close(call("ReduceNansum", n, [2], False, int(DT.FLOAT), z((3, 4))), np.nansum(n.astype(F64), 2))
    close(call("ReduceSum", x, [0, 1], True, int(DT.FLOAT), z((1, 1, 5))), c.sum((0, 1), keepdims=True))
    i = ints(4, 6, dtype=I8)
    same(call("ReduceSum", i, [1], False, int(DT.INT64), z(4, I64)), i.astype(I64).sum(1), I64)
    s, m = call("StdMeanCorrection", x, [1, 2], 1, False, z(3), z(3), outputs=("stdOut", "meanOut"))
    close(s, c.std((1, 2), ddof=1))
    close(m, c.mean((1, 2)))
    close(call("VarCorrection", x, [0], 0, True, z((1, 4, 5))), c.var(0, keepdims=True))
    s, m = call("StdMeanCorrection", x, [], 0, True, z((1, 1, 1)), z((1, 1, 1)), outputs=("stdOut", "meanOut"))
    close(s, c.std(keepdims=True))
    close(m, c.mean(keepdims=True))
    h = x.astype(F16)
    v, m = call("VarMean", h, [2], 2, False, z((3, 4), F16), z((3, 4), F16), outputs=("varOut", "meanOut"))
    close(v, h.astype(F64).var(2, ddof=2), F16, 5e-3)
    close(m, h.astype(F64).mean(2), F16)
    close(call("Trace", x[0], z(())), np.trace(c[0]))
    same(call("Trace", i, z((), I64)), np.trace(i.astype(I64)))


@covers("Histc", "MaxN", "MinN", "Sum", "SumV2", "GlobalAveragePool", "GlobalMaxPool", "BatchNormStats")
def test_histogram_lists_pools(aten: object) -> None:
    x = rand(50)
    close(call("Histc", x, 8, -2.0, 2.0, z(8)), np.histogram(x, 8, (-2, 2))[0])
    a, b, c = rand(2, 3), rand(1, 3), rand(2, 1)
    close(call("MaxN", [a, b, c], z((2, 3))), np.maximum(np.maximum(a, b), c))
    close(call("MinN", [a, b, c], z((2, 3))), np.minimum(np.minimum(a, b), c))
    close(call("Sum", [a, b, c], z((2, 3))), a.astype(F64) + b + c)
    i = [ints(3, dtype=I32), ints(3, dtype=I32)]
    same(call("SumV2", i, z(3, I32)), i[0] + i[1], I32)
    m = rand(2, 3, 4, 5)
    close(call("GlobalAveragePool", m, z((2, 3, 1, 1))), m.astype(F64).mean((2, 3), keepdims=True))
    close(call("GlobalMaxPool", m.astype(F16), z((2, 3, 1, 1), F16)), m.astype(F16).max((2, 3), keepdims=True), F16)
    mean, invstd = call("BatchNormStats", m, 1e-5, z(3), z(3), outputs=("mean", "invstd"))
    close(mean, m.astype(F64).mean((0, 2, 3)))
    close(invstd, 1 / np.sqrt(m.astype(F64).var((0, 2, 3)) + 1e-5), F32, 1e-4)


# -- shape and movement -------------------------------------------------------------------------
@covers("Cat", "Stack", "ChunkCat", "ChannelShuffle", "Permute", "Repeat", "Roll", "Expand", "Flatten",
        "ConfusionTranspose", "InplaceCopy")
def test_movement(aten: object) -> None:
    a, b = rand(2, 3), rand(4, 3)
    close(call("Cat", [a, b], 0, z((6, 3))), np.concatenate([a, b]))
    i = [ints(2, 3, dtype=I64), ints(2, 3, dtype=I64)]
    same(call("Stack", i, 1, z((2, 2, 3), I64)), np.stack(i, 1), I64)
    x, y = rand(2, 6), rand(2, 4)
    # chunk k of every tensor (split at dim), flattened past dim, side by side at [:, k]
    want = np.stack([np.concatenate([x[:, :3], y[:, :2]], 1), np.concatenate([x[:, 3:], y[:, 2:]], 1)], 1)
    close(call("ChunkCat", [x, y], 1, 2, z((2, 2, 5))), want)
    c = rand(2, 6, 3)
    close(call("ChannelShuffle", c, 3, z((2, 6, 3))), c.reshape(2, 3, 2, 3).transpose(0, 2, 1, 3).reshape(2, 6, 3))
    close(call("Permute", c, [2, 0, 1], z((3, 2, 6))), c.transpose(2, 0, 1))
    same(call("Repeat", i[0], [2, 1, 2], z((2, 2, 6), I64)), np.tile(i[0], (2, 1, 2)))
    close(call("Roll", c, [1, -2], [0, 2], z((2, 6, 3))), np.roll(c, (1, -2), (0, 2)))
    close(call("Roll", c, [4], [], z((2, 6, 3))), np.roll(c.ravel(), 4).reshape(c.shape))
    close(call("Expand", a[:1], [5, 2, 3], z((5, 2, 3))), np.broadcast_to(a[:1], (5, 2, 3)))
    close(call("Flatten", c, 2, z((12, 3))), c.reshape(12, 3))
    close(call("Flatten", c, 0, z((1, 36))), c.reshape(1, 36))
    close(call("ConfusionTranspose", c, [1, 0], [6, 6], False, z((6, 6))), c.reshape(6, 6).T)
    close(call("ConfusionTranspose", c, [0, 2, 1], [2, 18], True, z((2, 18))), c.transpose(0, 2, 1).reshape(2, 18))
    same(call("InplaceCopy", z((2, 3), I32), np.array([1.7, -2.2, 3.0], F32), outputs=("selfRef",)),
         np.broadcast_to(np.array([1, -2, 3]), (2, 3)), I32)


@covers("Slice", "SliceV2", "SplitTensor", "SplitWithSize", "Diag", "DiagFlat", "Im2col", "UnfoldGrad")
def test_slices_splits_diagonals(aten: object) -> None:
    x = rand(5, 7)
    close(call("Slice", x, 1, 1, 6, 2, z((5, 3))), x[:, 1:6:2])
    close(call("SliceV2", x, [0, 2], [4, 100], [0, 1], [3, 2], z((2, 3))), x[0:4:3, 2::2])
    parts = call_lists("SplitTensor", x, 3, 1, [z((5, 3)), z((5, 3)), z((5, 1))])
    for got, want in zip(parts, np.split(x, [3, 6], 1)):
        close(got, want)
    parts = call_lists("SplitWithSize", x, [1, 4], 0, [z((1, 7)), z((4, 7))])
    for got, want in zip(parts, np.split(x, [1], 0)):
        close(got, want)
    close(call("Diag", x, 1, z(5)), np.diag(x, 1))
    v = ints(3, dtype=I32)
    same(call("Diag", v, -1, z((4, 4), I32)), np.diag(v, -1), I32)
    same(call("DiagFlat", v.reshape(3, 1), 0, z((3, 3), I32)), np.diagflat(v), I32)
    img = rand(1, 2, 4, 4)
    got = call("Im2col", img, [2, 2], [1, 1], [0, 0], [2, 2], z((1, 8, 4)))
    want = img.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 3, 5, 2, 4).reshape(1, 8, 4)
    close(got, want)
    g = rand(3, 2)  # unfold(0, size 2, step 1) of a length-4 vector -> 3 windows of 2
    want = np.zeros(4)
    for k in range(3):
        want[k:k + 2] += g[k]
    close(call("UnfoldGrad", g, [4], 0, 2, 1, z(4), outputs=("gradIn",)), want)


@covers("ConstantPadNd", "CircularPad2d", "CircularPad3d", "CircularPad2dBackward", "CircularPad3dBackward",
        "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
        "ReplicationPad3d", "ReflectionPad1dBackward", "ReflectionPad2dBackward", "ReflectionPad3dBackward",
        "ReplicationPad1dBackward", "ReplicationPad2dBackward", "ReplicationPad3dBackward")
@pytest.mark.parametrize("n", [1, 2, 3])
def test_pads_and_their_backwards(aten: object, n: int) -> None:
    shape = (2, 3, 4, 5, 6)[: n + 2]
    x = rand(*shape)
    pad = [1, 2, 2, 1, 0, 1][: 2 * n]
    width = [(0, 0)] * 2 + [(pad[2 * k], pad[2 * k + 1]) for k in range(n)][::-1]  # numpy order: first axis first
    padded = tuple(s + a + b for s, (a, b) in zip(shape, width))
    if n == 1:
        close(call("ConstantPadNd", x, pad, 1.5, z(padded)), np.pad(x, width, constant_values=1.5))
    for kind, mode, tmode in (("Reflection", "reflect", "reflect"), ("Replication", "edge", "replicate"),
                              ("Circular", "wrap", "circular")):
        if kind == "Circular" and n == 1:
            continue
        close(call(f"{kind}Pad{n}d", x, pad, z(padded)), np.pad(x, width, mode=mode))
        g = rand(*padded)
        t = torch.from_numpy(x.astype(F64)).requires_grad_()
        torch.nn.functional.pad(t, pad, mode=tmode).backward(torch.from_numpy(g.astype(F64)))
        got = call(f"{kind}Pad{n}dBackward", g, x, pad, z(shape), outputs=("gradInput",))
        close(got, t.grad.numpy())


# -- filling, masking, searching, in-place comparisons -------------------------------------------
_CMP = {"Eq": np.equal, "Ne": np.not_equal, "Ge": np.greater_equal, "Gt": np.greater, "Le": np.less_equal,
        "Lt": np.less}


@covers(*(f"Inplace{n}{k}" for n in _CMP for k in ("Scalar", "Tensor")))
@pytest.mark.parametrize("name", sorted(_CMP))
def test_inplace_comparisons(aten: object, name: str) -> None:
    x = ints(3, 4, lo=-2, hi=3).astype(F32)
    other = ints(1, 4, lo=-2, hi=3).astype(F32)
    close(call(f"Inplace{name}Scalar", x, 1, outputs=("selfRef",)), _CMP[name](x, 1))
    close(call(f"Inplace{name}Tensor", x, other, outputs=("selfRef",)), _CMP[name](x, other))
    i = ints(5, dtype=I32)
    same(call(f"Inplace{name}Scalar", i, 0, outputs=("selfRef",)), _CMP[name](i, 0), I32)


@covers("InplaceFillScalar", "InplaceFillTensor", "InplaceZero", "InplaceFillDiagonal", "InplaceTril",
        "InplaceTriu", "InplaceMaskedFillScalar", "InplaceMaskedFillTensor", "MaskedScale", "SWhere")
def test_fills_and_masks(aten: object) -> None:
    x = rand(4, 3)
    same(call("InplaceFillScalar", x, 2.5, outputs=("selfRef",)), np.full((4, 3), 2.5, F32), F32)
    same(call("InplaceFillTensor", ints(2, 2, dtype=I64), np.array(7.9, F32), outputs=("selfRef",)),
         np.full((2, 2), 7), I64)
    same(call("InplaceZero", x, outputs=("selfRef",)), np.zeros((4, 3)), F32)
    want = x.copy()
    want[[0, 1, 2], [0, 1, 2]] = 9
    close(call("InplaceFillDiagonal", x, 9.0, False, outputs=("selfRef",)), want)
    tall = rand(7, 3)
    want = tall.copy()
    want[[0, 1, 2, 4, 5, 6], [0, 1, 2, 0, 1, 2]] = -1  # wrap: a new diagonal after N+1 rows
    close(call("InplaceFillDiagonal", tall, -1.0, True, outputs=("selfRef",)), want)
    close(call("InplaceTril", x, 0, outputs=("selfRef",)), np.tril(x))
    close(call("InplaceTriu", x, 1, outputs=("selfRef",)), np.triu(x, 1))
    mask = x > 0
    close(call("InplaceMaskedFillScalar", x, mask, -3.0, outputs=("selfRef",)), np.where(mask, -3, x))
    close(call("InplaceMaskedFillTensor", x, mask[:1], np.array(4.0, F32), outputs=("selfRef",)),
          np.where(mask[:1], 4, x))
    m = mask.astype(U8)
    close(call("MaskedScale", x, m, 2.0, z((4, 3))), x * m * 2)
    y = rand(4, 3)
    close(call("SWhere", mask, x, y[:1], z((4, 3))), np.where(mask, x, y[:1]))


@covers("SearchSorted", "SearchSorteds", "IsInScalarTensor", "IsInTensorScalar", "OneHot", "SortWithIndex")
def test_search_isin_one_hot(aten: object) -> None:
    seq = np.sort(rand(2, 6), 1)
    v = rand(2, 3)
    want = np.stack([np.searchsorted(seq[k], v[k], "right") for k in range(2)])
    same(call("SearchSorted", seq, v, False, True, None, z((2, 3), I64)), want, I64)
    flat = rand(6)
    order = np.argsort(flat).astype(I64)
    same(call("SearchSorted", flat, v, True, False, order, z((2, 3), I32)), np.searchsorted(flat[order], v), I32)
    same(call("SearchSorteds", np.sort(flat), 0.5, False, False, None, z((), I64)), np.searchsorted(np.sort(flat), 0.5))
    t = ints(5, dtype=I32)
    same(call("IsInScalarTensor", 3, t, False, False, z((), B)), np.isin(3, t))
    same(call("IsInTensorScalar", t, 2, False, True, z(5, B)), t != 2)
    idx = np.array([[0, 2], [3, 1]], I64)
    on, off = np.array(5.0, F32), np.array(-1.0, F32)
    want = np.where(idx[..., None] == np.arange(3), 5.0, -1.0)  # class 3 >= numClasses: all off
    close(call("OneHot", idx, 3, on, off, -1, z((2, 2, 3))), want)
    close(call("OneHot", idx, 3, on, off, 0, z((3, 2, 2))), np.moveaxis(want, -1, 0))
    x = rand(3, 5)
    index = np.tile(np.arange(5, dtype=I32), (3, 1)) * 10
    vals, ids = call("SortWithIndex", x, index, -1, True, True, z((3, 5)), z((3, 5), I32),
                     outputs=("valuesOut", "indicesOut"))
    order = np.argsort(-x, 1, kind="stable")
    close(vals, np.take_along_axis(x, order, 1))
    same(ids, order * 10, I32)


# -- linear algebra -----------------------------------------------------------------------------
@covers("Addr", "InplaceAddr", "AddrV2", "InplaceAddrV2", "Ger", "Dot", "Cdist", "CdistBackward", "Pdist",
        "PdistForward", "LinalgCross")
def test_products_and_distances(aten: object) -> None:
    m, u, v = rand(3, 4), rand(3), rand(4)
    want = 0.5 * m.astype(F64) + 2 * np.outer(u, v)
    for op in ("Addr", "AddrV2"):
        close(call(op, m, u, v, 0.5, 2.0, z((3, 4))), want)
        close(call(op, m, u, v, None, None, z((3, 4))), m.astype(F64) + np.outer(u, v))
        close(call(f"Inplace{op}", m, u, v, 0.5, 2.0, outputs=("selfRef",)), want)
    close(call("Ger", u, v, z((3, 4))), np.outer(u, v))
    close(call("Dot", u, u, z(())), u.astype(F64) @ u)
    a, b = rand(2, 5, 3), rand(2, 4, 3)
    d = np.sqrt(((a[:, :, None] - b[:, None]) ** 2).sum(-1))
    close(call("Cdist", a, b, 2.0, 2, z((2, 5, 4))), d, F32, 1e-4)
    d1 = np.abs(a[:, :, None] - b[:, None]).sum(-1)
    close(call("Cdist", a, b, 1.0, 0, z((2, 5, 4))), d1, F32, 1e-4)
    g = rand(2, 5, 4)
    ta = torch.from_numpy(a.astype(F64)).requires_grad_()
    torch.cdist(ta, torch.from_numpy(b.astype(F64)), 2.0).backward(torch.from_numpy(g.astype(F64)))
    close(call("CdistBackward", g, a, b, d.astype(F32), 2.0, z((2, 5, 3))), ta.grad.numpy(), F32, 1e-4)
    x = rand(5, 3)
    pd = [np.abs(x[j] - x[k]).sum() for j in range(5) for k in range(j + 1, 5)]
    close(call("Pdist", x, 1.0, z(10)), pd, F32, 1e-4)
    close(call("PdistForward", x, 1.0, z(10)), pd, F32, 1e-4)
    c1, c2 = rand(4, 3), rand(4, 3)
    close(call("LinalgCross", c1, c2, 1, z((4, 3))), np.cross(c1, c2))


def _spd(n: int) -> np.ndarray:
    a = rand(n, n).astype(F64)
    return (a @ a.T + n * np.eye(n)).astype(F32)


@covers("LinalgCholesky", "LinalgQr", "Qr", "Svd", "Logdet", "Slogdet", "TriangularSolve", "AffineGrid")
def test_decompositions(aten: object) -> None:
    s = _spd(4)
    low = call("LinalgCholesky", s, False, z((4, 4)))
    close(low, np.linalg.cholesky(s.astype(F64)), F32, 1e-4)
    up = call("LinalgCholesky", s, True, z((4, 4)))
    close(up, np.linalg.cholesky(s.astype(F64)).T, F32, 1e-4)
    a = rand(5, 3)
    q, r = call("LinalgQr", a, 0, z((5, 3)), z((3, 3)), outputs=("Q", "R"))
    close(q @ r, a, F32, 1e-4)
    close(np.abs(r), np.abs(np.linalg.qr(a.astype(F64))[1]), F32, 1e-4)
    q, r = call("Qr", a, False, z((5, 5)), z((5, 3)), outputs=("Q", "R"))
    close(q @ q.T, np.eye(5), F32, 1e-4)
    close(q @ r, a, F32, 1e-4)
    sig, u, v = call("Svd", a, False, True, z(3), z((5, 3)), z((3, 3)), outputs=("sigma", "u", "v"))
    close(sig, np.linalg.svd(a.astype(F64), compute_uv=False), F32, 1e-4)
    close(u @ np.diag(sig) @ v.T, a, F32, 1e-4)
    sig, _, _ = call("Svd", a, True, False, z(3), z((1,)), z((1,)), outputs=("sigma", "u", "v"))
    close(sig, np.linalg.svd(a.astype(F64), compute_uv=False), F32, 1e-4)
    close(call("Logdet", s, z(())), np.log(np.linalg.det(s.astype(F64))), F32, 1e-4)
    m = rand(2, 3, 3)
    sign, logabs = call("Slogdet", m, z(2), z(2), outputs=("signOut", "logOut"))
    ws, wl = np.linalg.slogdet(m.astype(F64))
    close(sign, ws)
    close(logabs, wl, F32, 1e-4)
    t = np.triu(rand(3, 3)) + 3 * np.eye(3, dtype=F32)
    rhs = rand(3, 2)
    x, copy = call("TriangularSolve", rhs, t, True, False, False, z((3, 2)), z((3, 3)), outputs=("xOut", "mOut"))
    close(x, np.linalg.solve(t.astype(F64), rhs), F32, 1e-4)
    close(copy, t)
    x, _ = call("TriangularSolve", rhs, t, True, True, False, z((3, 2)), z((3, 3)), outputs=("xOut", "mOut"))
    close(x, np.linalg.solve(t.T.astype(F64), rhs), F32, 1e-4)
    theta = rand(2, 2, 3)
    grid = call("AffineGrid", theta, [2, 1, 3, 4], False, z((2, 3, 4, 2)))
    xs, ys = (2 * np.arange(4) + 1) / 4 - 1, (2 * np.arange(3) + 1) / 3 - 1  # pixel centres (alignCorners false)
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], 1.0), -1)  # (3, 4, 3): x, y, 1
    close(grid, np.einsum("hwk,nck->nhwc", base, theta.astype(F64)), F32, 1e-5)


# -- creation -----------------------------------------------------------------------------------
@covers("Arange", "Range", "Linspace", "LogSpace", "Eye")
def test_creation(aten: object) -> None:
    close(call("Arange", 1.0, 3.0, 0.5, z(4)), np.arange(1, 3, 0.5))
    same(call("Arange", 0, 10, 3, z(4, I64)), np.arange(0, 10, 3), I64)
    close(call("Range", 1.0, 3.0, 0.5, z(5)), [1, 1.5, 2, 2.5, 3])
    close(call("Linspace", -1.0, 1.0, 5, z(5)), np.linspace(-1, 1, 5))
    close(call("Linspace", 0, 10, 4, z(4, F16)), np.linspace(0, 10, 4), F16)
    close(call("LogSpace", 0.0, 2.0, 3, 10.0, z(3), outputs=("result",)), [1, 10, 100], F32, 1e-4)
    close(call("LogSpace", 1.0, 3.0, 3, 2.0, z(3), outputs=("result",)), [2, 4, 8], F32, 1e-4)
    same(call("Eye", 3, 4, z((3, 4), I32)), np.eye(3, 4), I32)
    same(call("Eye", 2, 2, z((2, 2), B)), np.eye(2, dtype=bool))


# -- element-wise ones that came with the list ---------------------------------------------------
@covers("FloorDivide", "FloorDivides", "InplaceFloorDivide", "InplaceFloorDivides", "IsClose", "Complex", "Polar",
        "Real", "RightShift", "RoundDecimals", "Xlog1py", "Ndtri", "AsinWithAgent", "AsinhWithAgent",
        "SqrtBackward")
def test_elementwise(aten: object) -> None:
    a, b = rand(3, 4), rand(1, 4, lo=0.5, hi=2)
    close(call("FloorDivide", a, b, z((3, 4))), np.floor(a / b))
    i = np.array([7, -7, 5, -5], I32)
    same(call("FloorDivide", i, np.array([2, 2, -3, -3], I32), z(4, I32)), np.floor_divide(i, [2, 2, -3, -3]), I32)
    same(call("FloorDivides", i, 2, z(4, I32)), np.floor_divide(i, 2), I32)
    close(call("InplaceFloorDivide", a, b, outputs=("selfRef",)), np.floor(a / b))
    close(call("InplaceFloorDivides", a, 0.5, outputs=("selfRef",)), np.floor(a / 0.5))
    c = a + np.float32(1e-7)
    c[0, 0] = np.nan
    a2 = a.copy()
    a2[0, 0] = np.nan
    same(call("IsClose", a2, c, 1e-5, 1e-8, True, z((3, 4), B)), np.isclose(a2, c, 1e-5, 1e-8, True))
    same(call("IsClose", a2, c, 1e-5, 1e-8, False, z((3, 4), B)), np.isclose(a2, c, 1e-5, 1e-8, False))
    re, im = rand(4), rand(4)
    same(call("Complex", re, im, z(4, np.complex64)), re + 1j * im, np.complex64)
    r, th = rand(4, lo=0, hi=2), rand(4)
    close(call("Polar", r, th, z(4, np.complex64)), r * np.exp(1j * th.astype(F64)), np.complex64, 1e-5)
    close(call("Real", (re + 1j * im).astype(np.complex64), z(4)), re)
    sh = np.array([1, 2, 3, 0], I32)
    same(call("RightShift", np.array([-16, 16, 100, 5], I32), sh, z(4, I32)), np.right_shift([-16, 16, 100, 5], sh))
    x = np.array([1.26, -2.34, 0.125, 12.5], F32)  # no value a float32 product makes a half
    close(call("RoundDecimals", x, 1, z(4)), np.round(x.astype(F64), 1), F32, 1e-6)
    p = rand(5, lo=0.01, hi=0.99)
    from statistics import NormalDist
    close(call("Ndtri", p, z(5)), [NormalDist().inv_cdf(float(v)) for v in p], F32, 1e-4)
    y = rand(5, lo=-0.9, hi=3)
    close(call("Xlog1py", p, y, z(5), outputs=("z",)), p.astype(F64) * np.log1p(y))
    close(call("AsinWithAgent", p, z(5), outputs=("y",)), np.arcsin(p.astype(F64)))
    close(call("AsinWithAgent", np.array([0, 1], I32), z(2), outputs=("y",)), np.arcsin([0, 1]))
    close(call("AsinhWithAgent", a, z((3, 4))), np.arcsinh(a.astype(F64)))
    s, ds = rand(5, lo=0.5, hi=2), rand(5)
    close(call("SqrtBackward", s, ds, z(5), outputs=("z",)), ds / (2 * s.astype(F64)))


@covers("DropoutDoMask", "SignBitsPack", "SignBitsUnpack", "Sinkhorn")
def test_masks_bits_sinkhorn(aten: object) -> None:
    x = rand(3, 50)
    keep = RNG.random(150) < 0.7
    mask = np.packbits(np.concatenate([keep, np.zeros(106, bool)]), bitorder="little")  # 256 bits: 32 bytes
    got = call("DropoutDoMask", x, mask, 0.3, z((3, 50)))
    close(got, np.where(keep.reshape(3, 50), x.astype(F64) / np.float64(np.float32(0.7)), 0), F32, 1e-6)
    close(call("DropoutDoMask", x, mask, 0.0, z((3, 50))), x)
    same(call("DropoutDoMask", x, mask, 1.0, z((3, 50))), np.zeros((3, 50), F32))
    assert status_of("DropoutDoMask", x, mask[:16], 0.3, z((3, 50))) == 161002  # fewer than align(150, 128) / 8
    assert status_of("DropoutDoMask", x, mask, 1.5, z((3, 50))) == 161002
    # the documented sample of torch_npu.npu_sign_bits_pack / npu_sign_bits_unpack (op-plugin docs)
    a = np.array([5, 4, 3, 2, 0, -1, -2, 4, 3, 2, 1, 0, -1, -2], F32)
    same(call("SignBitsPack", a, 2, z((2, 1), U8)), [[159], [15]], U8)
    same(call("SignBitsPack", a.astype(F16), 1, z((1, 2), U8)), [[159, 15]], U8)
    got = call("SignBitsUnpack", np.array([159, 15], U8), 2, int(DT.FLOAT), z((2, 8)))
    same(got, [[1, 1, 1, 1, 1, -1, -1, 1], [1, 1, 1, 1, -1, -1, -1, -1]], F32)
    assert status_of("SignBitsPack", a, 3, z((3, 1), U8)) == 161002  # 2 bytes do not split in 3 rows
    v = rand(40, lo=-1, hi=1)
    packed = call("SignBitsPack", v, 5, z((5, 1), U8))
    same(call("SignBitsUnpack", packed.ravel(), 1, int(DT.FLOAT16), z((1, 40), F16)).ravel(),
         np.where(v >= 0, 1, -1), F16)
    cost = rand(4, 6, lo=0, hi=1)
    c = np.exp(cost.astype(F64))
    d0, d1 = np.ones(4), np.ones(6)
    while True:  # aclnnSinkhorn.md's iteration, in float64
        d0 = 1 / (4 * ((d1 * c).sum(1) + 1e-8))
        new = 1 / (6 * ((d0[:, None] * c).sum(0) + 1e-8))
        err, d1 = np.abs(d1 - new).mean(), new
        if err <= 1e-6:
            break
    close(call("Sinkhorn", cost, 1e-6, z((4, 6)), outputs=("p",)), d1 * c * d0[:, None], F32, 1e-5)
    p = call("Sinkhorn", cost, None, z((4, 6)), outputs=("p",))
    np.testing.assert_allclose(p.sum(0), np.full(6, 1 / 6), atol=1e-4)  # columns balanced


@covers("StridedSlice")
def test_strided_slice(aten: object) -> None:
    x = rand(2, 3, 4, 5)

    def ss(begin: list[int], end: list[int], strides: list[int], masks: tuple[int, ...], want: np.ndarray) -> None:
        close(call("StridedSlice", x, begin, end, strides, *masks, z(want.shape)), want)
    ss([0, 1], [2, 3], [1, 1], (0, 0, 0, 0, 0), x[0:2, 1:3])
    ss([1, 0, -1], [0, 0, 0], [1, 1, -2], (0, 0, 2, 0, 1), x[1, ..., -1:0:-2])  # shrink, ellipsis, backwards
    ss([0, 0, 0], [1, 5, 5], [1, 1, 1], (0, 0, 0, 2, 0), x[0:1, None, 0:5])  # a new axis
    ss([9, 1], [0, -1], [1, 1], (1, 2, 0, 0, 0), x[:0, 1:])  # beginMask on 0, endMask on 1 (end 0 kept)
    ss([-9, 1, 1], [9, 3, 4], [2, 1, 3], (0, 0, 0, 0, 0), x[-9:9:2, 1:3, 1:4:3])  # clamped
    i = ints(6, dtype=I64)
    same(call("StridedSlice", i, [4], [0], [-1], 0, 1, 0, 0, 0, z(5, I64)), i[4::-1], I64)
    assert status_of("StridedSlice", x, [0], [1], [0], 0, 0, 0, 0, 0, z((1, 3, 4, 5))) == 161002  # stride 0


@covers("Scale")
def test_scale(aten: object) -> None:
    x = rand(2, 3, 4, 5)
    s2, b2 = rand(3, 4), rand(3, 4)
    close(call("Scale", x, s2, b2, 1, 2, True, z(x.shape), outputs=("y",)), x * s2[:, :, None] + b2[:, :, None])
    close(call("Scale", x, s2, None, 1, -1, False, z(x.shape), outputs=("y",)), x * s2[:, :, None])
    s3 = rand(4, 5)
    close(call("Scale", x, s3, None, -2, -1, True, z(x.shape), outputs=("y",)), x * s3)
    one = np.array([2.5], F32)
    close(call("Scale", x, one, one, 0, 0, True, z(x.shape), outputs=("y",)), x * 2.5 + 2.5)
    h = x.astype(F16)
    close(call("Scale", h, s2.astype(F16), None, 1, 2, True, z(x.shape, F16), outputs=("y",)),
          h.astype(F64) * s2.astype(F16)[:, :, None], F16)
    assert status_of("Scale", x, s2, None, 1, 1, True, z(x.shape)) == 161002  # numAxes 1: scale (3,)
    assert status_of("Scale", x, s2, None, 1, 2, True, z(x.shape, F16)) == 161002  # y's dtype differs
    assert status_of("Scale", x, s2, rand(4), 1, 2, True, z(x.shape)) == 161002  # bias shaped unlike scale
    assert status_of("Scale", x, s2, None, 4, 2, True, z(x.shape)) == 161002  # axis out of range


@covers("ViewCopy")
def test_view_copy(aten: object) -> None:
    dst, src = rand(3, 4), rand(2, 3)
    m = lambda *v: np.array(v, I64)  # noqa: E731
    # dst's view [[5, 6], [9, 10]] (dst[1:3, 1:3]) <- src's view sizes (2, 2) strides (1, 3): src.T[:2, :2]
    got = call("ViewCopy", dst, m(2, 2), m(4, 1), m(5), src, m(2, 2), m(1, 3), m(0), z((3, 4)), outputs=("dst_out",))
    want = dst.copy()
    want[1:3, 1:3] = src.T[:2, :2]
    same(got, want, F32)
    i = ints(6, dtype=I32)
    got = call("ViewCopy", z(6, I32), m(3), m(2), m(0), i, m(3), m(1), m(3), z(6, I32), outputs=("dst_out",))
    same(got, [i[3], 0, i[4], 0, i[5], 0], I32)
    assert status_of("ViewCopy", dst, m(2, 2), m(4), m(5), src, m(2, 2), m(1, 3), m(0), z((3, 4))) == 161002
    assert status_of("ViewCopy", dst, m(2, 2), m(4, 1), m(5), src.astype(F16), m(2, 2), m(1, 3), m(0),
                     z((3, 4))) == 161002


@covers("Bincount")
def test_bincount(aten: object) -> None:
    v = np.array([1, 3, 3, 0, 5, 3], I64)
    same(call("Bincount", v, None, 0, z(6, I64)), np.bincount(v), I64)
    w = rand(6)
    close(call("Bincount", v, w, 0, z(6)), np.bincount(v, w.astype(F64)))
    same(call("Bincount", v.astype(U8), None, 8, z(8, I32)), np.bincount(v, minlength=8), I32)
    same(call("Bincount", np.zeros(0, I32), None, 3, z(3, I64)), [0, 0, 0], I64)
    assert status_of("Bincount", v, None, 8, z(6, I64)) == 161002  # minlength past out's length
    assert status_of("Bincount", v, w[:3], 0, z(6)) == 161002  # weights not of self's shape
    assert status_of("Bincount", v.astype(F32), None, 0, z(6)) == 161002  # self not an integer


# -- operators of the list the base table (reduce.py, index.py, nn.py...) took first -------------
# Where its entry departed from the op source (each test's docstring cites the file, of
# hicann/ops-math), fixed in the base entry (compose/base.py has the compositions it needed).
def test_base_all_any_empty_dim_reduce_every_axis(aten: object) -> None:
    """math/reduce_all/op_api/aclnn_all.cpp, reduce_any/op_api/aclnn_any.cpp make_dim_mask: an
    empty dim reduces every axis (aten's all.dims reads [] as no axis)."""
    i = ints(2, 3)
    same(call("All", i, [], False, z((), U8)), int(i.all()), U8)
    same(call("Any", i, [], False, z((), B)), i.any())
    same(call("Any", i == 9, [], True, z((1, 1), B)), [[False]])


def test_base_logsumexp_empty_dim_reduces_every_axis(aten: object) -> None:
    """math/reduce_log_sum_exp/op_api/aclnn_logsumexp.cpp (dim->Size() == 0): every axis (aten's
    logsumexp refuses [])."""
    x = rand(2, 3)
    close(call("LogSumExp", x, [], False, z(())), np.log(np.exp(x.astype(F64)).sum()))
    close(call("LogSumExp", x, [], True, z((1, 1))), [[np.log(np.exp(x.astype(F64)).sum())]])


def test_base_fill_tensor_takes_a_one_element_vector(aten: object) -> None:
    """conversion/fill/op_api/aclnn_fill_tensor.cpp CheckShape: value 0-D or 1-D with one element
    (aten's fill.Tensor takes 0-D only); more elements are refused."""
    same(call("InplaceFillTensor", ints(2, 2, dtype=I64), np.array([7.9], F32), outputs=("selfRef",)),
         np.full((2, 2), 7), I64)
    assert status_of("InplaceFillTensor", ints(2, 2), np.array([1.0, 2.0], F32)) == 161002


def test_base_dot_takes_integers(aten: object) -> None:
    """math/dot/op_api/aclnn_dot.cpp ASCEND910B_DTYPE_DTYPE_SUPPORT_LIST has INT8, INT32 and
    UINT8; self, tensor and out of one dtype (OP_CHECK_DTYPE_NOT_SAME)."""
    i = ints(6, dtype=I8, lo=-3, hi=4)
    same(call("Dot", i, i, z((), I8)), np.int8(i.astype(I64) @ i), I8)
    u = ints(5, dtype=U8, lo=0, hi=5)
    same(call("Dot", u, u, z((), U8)), np.uint8(u.astype(I64) @ u), U8)
    assert status_of("Dot", i.astype(I32), i.astype(I32), z((), I64)) == 161002  # out not of self's dtype
    assert status_of("Dot", i.astype(I64), i.astype(I64), z((), I64)) == 161002  # int64: not in its list


def test_base_logsumexp_takes_integers(aten: object) -> None:
    """math/reduce_log_sum_exp/op_api/aclnn_logsumexp.cpp INPUT_DTYPE_SUPPORT_LIST_910B: integers
    and bool too, computed in float32 into a float out (OUTPUT_DTYPE_SUPPORT_LIST: float types)."""
    i = ints(3, 4)
    close(call("LogSumExp", i, [0], False, z(4)), np.log(np.exp(i.astype(F64)).sum(0)))
    b = i > 0
    close(call("LogSumExp", b, [1], False, z(3, F16)), np.log(np.exp(b.astype(F64)).sum(1)), F16)
    assert status_of("LogSumExp", i, [0], False, z(4, I32)) == 161002  # an integer out
    assert status_of("LogSumExp", rand(3, 4).astype(F64), [0], False, z(4, F64)) == 161002  # no double


def test_base_kl_div_reductions(aten: object) -> None:
    """math/kl_div_v2/docs/aclnnKlDiv.md, op_api/aclnn_kl_div.cpp: reduction 3 is batchmean (the
    sum over self.size(0)) and a reduced out has shape (1,); 4 is refused."""
    lp = np.log(rand(2, 3, lo=0.1, hi=1)).astype(F32)
    t = rand(2, 3, lo=0.1, hi=1)
    point = t.astype(F64) * (np.log(t) - lp)
    close(call("KlDiv", lp, t, 0, False, z((2, 3))), point)
    close(call("KlDiv", lp, t, 1, False, z(1)), [point.mean()])
    close(call("KlDiv", lp, t, 2, False, z(1)), [point.sum()])
    close(call("KlDiv", lp, t, 3, False, z(1)), [point.sum() / 2])
    close(call("KlDiv", lp, np.log(t), 2, True, z(1)), [point.sum()], F32, 1e-4)
    assert status_of("KlDiv", lp, t, 4, False, z(1)) == 161002
    assert status_of("KlDiv", lp, t, 2, False, z(2)) == 161002  # two elements for a reduction


# -- second dtypes, statuses, coverage ------------------------------------------------------------
@covers()
def test_second_dtypes(aten: object) -> None:
    """fp16 / bf16 / integer runs of the compositions, against NumPy in float64."""
    h = rand(3, 4, dtype=F16)
    h64 = h.astype(F64)
    close(call("CumsumV2", h, 1, True, False, z((3, 4), F16)), np.cumsum(h64, 1) - h64, F16, 1e-2)
    close(call("MeanV2", h, [1], True, False, z((3, 1), F16)), h64.mean(1, keepdims=True), F16)
    i = ints(3, 4, dtype=I32)
    same(call("CumsumV2", i, 0, False, True, z((3, 4), I32)), np.cumsum(i[::-1], 0)[::-1], I32)
    mn, mx = call("Aminmax", i, [1], False, z(3, I32), z(3, I32), outputs=("minOut", "maxOut"))
    same(mn, i.min(1), I32)
    same(mx, i.max(1), I32)
    b = bf16(rand(2, 3))
    got = call("GlobalAveragePool", b.reshape(1, 2, 3), z((1, 2, 1), b.dtype))
    np.testing.assert_allclose(got.astype(F64).ravel(), b.astype(F64).mean(1), rtol=1e-2)
    same(call("Flatten", i, 1, z((3, 4), I32)), i, I32)
    same(call("SliceV2", i, [1], [3], [1], [1], z((3, 2), I32)), i[:, 1:3], I32)
    same(call("ConfusionTranspose", i, [1, 0], [4, 3], True, z((4, 3), I32)), i.T, I32)
    same(call("MaxN", [i, i[:1]], z((3, 4), I32)), np.maximum(i, i[:1]), I32)
    same(call("Sum", [i.astype(I8), i.astype(I8)], z((3, 4), I8)), 2 * i.astype(I8), I8)
    same(call("SWhere", i > 0, i, -i, z((3, 4), I32)), np.abs(i), I32)
    same(call("CircularPad2d", i.reshape(1, 3, 4), [1, 1, 0, 1], z((1, 4, 6), I32)),
         np.pad(i.reshape(1, 3, 4), [(0, 0), (0, 1), (1, 1)], mode="wrap"), I32)
    same(call("ReduceSum", i > 0, [], False, int(DT.INT64), z((), I64)), (i > 0).sum(), I64)


def test_statuses(aten: object) -> None:
    x = rand(3, 4)
    assert status_of("CumsumV2", x, 1, False, False, z((3, 5))) == 161002  # wrong out shape
    assert status_of("CumsumV2", None, 1, False, False, z((3, 4))) == 161001  # nullptr self
    assert status_of("CumsumV2", x, 2, False, False, z((3, 4))) == 161002  # dim out of range
    assert status_of("MeanV2", x, [0], False, False, z(3)) == 161002
    assert status_of("MeanV2", x, [0], False, False, z(4, F16)) == 161002  # out not of self's dtype
    assert status_of("Aminmax", x, [1], False, z(3), None) == 161001
    assert status_of("SortWithIndex", x, np.zeros((3, 4), I64), -1, False, True, z((3, 4)), z((3, 4), I32)) == 161002
    assert status_of("OneHot", np.zeros(3, F32), 4, np.array(1.0, F32), np.array(0.0, F32), -1, z((3, 4))) == 161002
    assert status_of("Sum", [x, rand(2, 4)], z((3, 4))) == 161002  # shapes that do not broadcast
    assert status_of("SqrtBackward", x, x, z((3, 4))) == 0
    assert status_of("Ndtri", ints(3), z(3)) == 161002  # integers: not in Ndtri's list
    assert status_of("Svd", x.astype(F16), False, True, z(3, F16), z((3, 3), F16), z((4, 3), F16)) == 161002
    # bf16 only on the SoCs that have it (SOCS_BF16)
    assert status_of("CumsumV2", bf16(x), 1, False, False, z((3, 4), bf16(x).dtype)) == 0


def test_bf16_refused_where_the_soc_has_none(use_backend: Callable[..., object], tmp_path: Path) -> None:
    aten_backend(use_backend, tmp_path, soc="Ascend910")
    x = bf16(rand(3, 4))
    assert status_of("CumsumV2", x, 1, False, False, z((3, 4), x.dtype)) == 161002
    # MaskedScale's lists are the RegBase SoCs' only: Ascend910 refuses every dtype
    assert status_of("MaskedScale", rand(3), np.ones(3, U8), 2.0, z(3)) == 161002


def test_every_entry_is_tested() -> None:
    assert len(OURS) >= 30
    assert set(OURS) <= TESTED, sorted(set(OURS) - TESTED)


def test_base_nansum_empty_dim_reduces_every_axis(aten: object) -> None:
    """math/reduce_nansum/op_api/aclnn_reduce_nansum.cpp (dim->Size() == 0): every axis (aten's
    nansum reads [] as no axis)."""
    x = rand(3, 4)
    x[0, 0] = np.nan
    close(call("ReduceNansum", x, [], False, int(DT.FLOAT), z(())), np.nansum(x.astype(F64)))


def test_base_s_where_takes_a_uint8_condition(aten: object) -> None:
    """math/select/op_api/aclnn_s_where.cpp CONDITION_DTYPE_SUPPORT is {BOOL, UINT8}, cast to bool
    (nonzero is true) before SelectV2; aten's where takes a bool condition only."""
    x, y = rand(4, 3), rand(4, 3)
    close(call("SWhere", (x > 0).astype(U8), x, y, z((4, 3))), np.where(x > 0, x, y))
    c = ints(4, 3, dtype=U8, lo=0, hi=4)  # 2, 3: true too
    close(call("SWhere", c, x, y, z((4, 3))), np.where(c != 0, x, y))
    assert status_of("SWhere", c.astype(I32), x, y, z((4, 3))) == 161002


def test_base_round_decimals_takes_integers(aten: object) -> None:
    """math/round/op_api/aclnn_round.cpp ASCEND910B list has INT32 and INT64 (rounding an integer
    is the integer), out of self's dtype (OP_CHECK_DTYPE_NOT_MATCH)."""
    i = np.array([7, -7, 5, -5], I32)
    same(call("RoundDecimals", i, 1, z(4, I32)), i, I32)
    same(call("RoundDecimals", i.astype(I64), -1, z(4, I64)), i, I64)
    same(call("InplaceRoundDecimals", i.copy(), 2, outputs=("selfRef",)), i, I32)
    assert status_of("RoundDecimals", i, 1, z(4, I64)) == 161002
    assert status_of("RoundDecimals", i.astype(I8), 1, z(4, I8)) == 161002  # int8: not in its list


def test_base_cholesky_takes_float16(aten: object) -> None:
    """math/cholesky/op_api/aclnn_linalg_cholesky.cpp: {FLOAT, BF16, FLOAT16} on DAV_2201 and
    DAV_3510 (float16 and bf16 factored in float32), no double; out of self's dtype."""
    s = _spd(3)
    want = np.linalg.cholesky(s.astype(F64))
    close(call("LinalgCholesky", s.astype(F16), False, z((3, 3), F16)), np.linalg.cholesky(s.astype(F16).astype(F64)),
          F16, 1e-2)
    b = bf16(s)
    got = call("LinalgCholesky", b, True, z((3, 3), b.dtype))
    np.testing.assert_allclose(got.astype(F64), want.T, rtol=2e-2, atol=2e-2)
    assert status_of("LinalgCholesky", s.astype(F64), False, z((3, 3), F64)) == 161002
    assert status_of("LinalgCholesky", s, False, z((3, 3), F16)) == 161002


def test_cholesky_exists_only_on_its_socs(use_backend: Callable[..., object], tmp_path: Path) -> None:
    """aclnn_linalg_cholesky.cpp GetDtypeSupportList: NULL_SUPPORT_LIST off DAV_2201/DAV_3510."""
    aten_backend(use_backend, tmp_path, soc="Ascend910")
    assert status_of("LinalgCholesky", _spd(3), False, z((3, 3))) == 161002


def test_base_var_correction_takes_a_nullptr_dim(aten: object) -> None:
    """math/reduce_var/op_api/aclnn_var.cpp, aclnn_var_mean.cpp, reduce_std_v2/op_api/aclnn_std.cpp,
    reduce_std_with_mean/op_api/aclnn_std_mean_correction.cpp: dim may be nullptr (only the
    tensors are checked for nullptr); `dim == nullptr || dim->Size() == 0` reduces every axis."""
    x = rand(3, 4)
    c = x.astype(F64)
    close(call("VarCorrection", x, None, 1, False, z(())), c.var(ddof=1))
    close(call("VarCorrection", x, [], 0, True, z((1, 1))), [[c.var()]])
    s, m = call("StdMeanCorrection", x, None, 1, False, z(()), z(()), outputs=("stdOut", "meanOut"))
    close(s, c.std(ddof=1))
    close(m, c.mean())
    s, m = call("StdMeanCorrection", x, None, 0, True, z((1, 1)), z((1, 1)), outputs=("stdOut", "meanOut"))
    close(s, [[c.std()]])
    close(call("Std", x, None, 1, False, z(())), c.std(ddof=1))
    close(call("Var", x, None, True, False, z(())), c.var(ddof=1))
    v, m = call("VarMean", x, None, 0, False, z(()), z(()), outputs=("varOut", "meanOut"))
    close(v, c.var())
    close(m, c.mean())
    assert status_of("VarCorrection", None, None, 1, False, z(())) == 161001  # self is still required
