"""Aten-table entries that disagreed with their op sources (issue 24's strict xfails, and what a
sweep found: phase 1 accepting a call that phase 2 then could not compute), checked against
the tests' own expectations (NumPy, torch's public API with int64 indices, autograd), and the
statuses the sources give (hicann/ops-nn e5c3fa9327ea95ba26d06227e746923580d10921,
hicann/ops-math c41933244c31e44fd496e3bb3212164f8c48c214; files named per test).

- int32 indices the sources take, where aten's CPU kernel takes only int64 ones;
- outputMask: an output it leaves out stays unwritten (a later read is the uninitialised-read
  HazardError, as on a device), may be nullptr, and one it asks for may not (161001);
- GatherV2 is TensorFlow's gather; CheckPromoteType's promoted dtype (GeluBackward);
- dtypes aten's CPU kernels lack computed (fp16 through float32, integer unpooling, AddRelu);
- Range/Arange: an integer out reads a step of 0.5 as 0 (161002, not a process killed by SIGFPE);
- a run prepared for one output dtype is not reused for another (MeanV2 fp16, then bf16).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import pyaclnn  # noqa: E402
from aten_support import aten_backend, bf16, call, status_of  # noqa: E402

F32, F16, I32, I64 = np.float32, np.float16, np.int32, np.int64


@pytest.fixture
def aten(use_backend: Callable[..., object], tmp_path: Path) -> object:
    return aten_backend(use_backend, tmp_path)


def rnd(*shape: int, dt: Any = F32, seed: int = 0, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dt)


def close(got: np.ndarray, want: Any, tol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol)


# -- int32 indices: the sources take them, aten's CPU kernels only int64 --------------------------
def test_take_and_put_take_int32_indices(aten: object) -> None:
    """index/gather_v2/op_api/aclnn_take.cpp, index/scatter_nd_update/op_api/aclnn_put.cpp."""
    x, idx = rnd(3, 4), np.array([[0, 5], [11, 3]], I32)
    close(call("Take", x, idx, np.zeros((2, 2), F32)), np.take(x, idx))
    want = x.copy()
    np.put(want, [1, 7], [10.0, 20.0])
    got = call("InplacePut", x.copy(), np.array([1, 7], I32), np.array([10.0, 20.0], F32), False,
               outputs=("selfRef",))
    close(got, want)


def test_index_fill_and_copy_take_int32_indices(aten: object) -> None:
    """index/index_fill_d/op_api/aclnn_index_fill.cpp, index/scatter_update/op_api/aclnn_index_copy.cpp."""
    x = rnd(3, 4)
    want = x.copy()
    want[:, [0, 2]] = 7.0
    close(call("IndexFill", x, 1, np.array([0, 2], I32), 7.0, np.zeros_like(x)), want)
    close(call("InplaceIndexFill", x.copy(), 1, np.array([0, 2], I32), 7.0, outputs=("selfRef",)), want)
    src = rnd(2, 4, seed=1)
    want = x.copy()
    want[[2, 0]] = src
    close(call("InplaceIndexCopy", x.copy(), 0, np.array([2, 0], I32), src, outputs=("selfRef",)), want)


def test_max_unpool2d_takes_int32_indices(aten: object) -> None:
    """index/scatter_elements/op_api/aclnn_max_unpool2d.cpp: int32 and int64 indices."""
    x, idx = rnd(1, 1, 2, 2), np.array([[[[0, 3], [9, 14]]]], I32)
    want = np.zeros(16, F32)
    want[idx.ravel()] = x.ravel()
    close(call("MaxUnpool2d", x, idx, [4, 4], np.zeros((1, 1, 4, 4), F32)), want.reshape(1, 1, 4, 4))


def _pool_case() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x (1, 2, 4, 4), torch's max_pool2d(2) indices as int32, the upstream gradient."""
    x = rnd(1, 2, 4, 4, seed=2)
    _, idx = F.max_pool2d(torch.from_numpy(x), 2, return_indices=True)
    return x, idx.numpy().astype(I32), rnd(1, 2, 2, 2, seed=3)


def _autograd(fn: Callable[[Any], Any], x: np.ndarray, g: np.ndarray) -> np.ndarray:
    t = torch.tensor(x.astype(np.float64), requires_grad=True)
    fn(t).backward(torch.from_numpy(g.astype(np.float64)))
    return t.grad.numpy()


def test_pooling_backwards_take_int32_indices(aten: object) -> None:
    """pooling/max_pool3d_grad_with_argmax/op_api/aclnn_max_pool2d_with_indices_backward.cpp and
    pooling/adaptive_max_pool3d_grad/op_api/aclnn_adaptive_max_pool2d_backward.cpp: int32 indices."""
    x, idx, g = _pool_case()
    want = _autograd(lambda t: F.max_pool2d(t, 2), x, g)
    close(call("MaxPool2dWithIndicesBackward", g, x, idx, [2, 2], [2, 2], [0, 0], [1, 1], False, np.zeros_like(x),
               outputs=("gradInput",)), want)
    close(call("AdaptiveMaxPool2dBackward", g, x, idx, np.zeros_like(x), outputs=("gradInput",)),
          _autograd(lambda t: F.adaptive_max_pool2d(t, 2), x, g))


def test_losses_take_int32_targets(aten: object) -> None:
    """loss/nll_loss_grad/op_api/aclnn_nll_loss_backward.cpp (int32, int64, uint8 targets) and
    loss/multilabel_margin_loss/op_api/aclnn_multilabel_margin_loss.cpp (int32, int64)."""
    x = np.log(rnd(3, 4, lo=0.1, hi=1.0, seed=4))
    t, g = np.array([0, 3, 1], I32), rnd(3, seed=5)
    want = np.zeros_like(x)
    want[np.arange(3), t] = -g  # none: d(-x[i, t_i]) / dx, weight 1
    got = call("NLLLossBackward", g, x, t, None, 0, -100, np.array(3.0, F32), np.zeros_like(x))
    close(got, want)
    y = np.array([[3, 0, -1, 1], [1, 2, 3, -1], [0, -1, 2, 2]], I32)
    want_loss = F.multilabel_margin_loss(torch.from_numpy(x), torch.from_numpy(y.astype(I64)), reduction="none")
    got = call("MultilabelMarginLoss", x, y, 0, np.zeros(3, F32), np.zeros_like(x), outputs=("out",))
    close(got, want_loss.numpy())


# -- outputMask ------------------------------------------------------------------------------------
def _conv_backward(mask: list[bool], grad_weight: Any, grad_bias: Any) -> Any:
    g, x, w = rnd(1, 2, 4, 4, seed=6), rnd(1, 2, 4, 4, seed=7), rnd(2, 2, 3, 3, seed=8)
    return pyaclnn.Op("ConvolutionBackward", g, x, w, [2], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, mask, 0,
                      np.zeros_like(x), grad_weight, grad_bias)


def test_an_output_the_mask_leaves_out_stays_unwritten(aten: object) -> None:
    """convolution_backward_checker.cpp writes only what outputMask asks for: gradWeight's
    device memory, never written, is caught when a later kernel reads it (as on a device);
    gradBias, asked for, is written: its values are gradOutput summed over N, H, W."""
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        gw, gb = pyaclnn.Tensor.empty((2, 2, 3, 3)), pyaclnn.Tensor.empty((2,))
        with _conv_backward([True, False, True], gw, gb) as ex:
            ex.run(stream)
        stream.synchronize()
        close(gb.numpy(), rnd(1, 2, 4, 4, seed=6).astype(np.float64).sum((0, 2, 3)))
        out = pyaclnn.Tensor.empty((2, 2, 3, 3))
        with pytest.raises(pyaclnn.HazardError, match="never written since aclrtMalloc"):
            with pyaclnn.Op("Add", gw, gw, 1.0, out) as add:
                add.run(stream)
            stream.synchronize()


def test_an_output_a_flag_leaves_uncomputed_stays_unwritten(aten: object) -> None:
    """aclnnBatchNormReduceBackward computes gradWeight only where weightG is true
    (norm/sync_batch_norm_backward_reduce/docs/aclnnBatchNormReduceBackward.md): with it false,
    the gradWeight passed is never written, and a later read of it is caught."""
    g, x = rnd(2, 3, 4, seed=17), rnd(2, 3, 4, seed=18)
    mean, invstd, w = rnd(3, seed=19), rnd(3, seed=20, lo=0.5), rnd(3, seed=21)
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        outs = [pyaclnn.Tensor.empty((3,)) for _ in range(4)]
        with pyaclnn.Op("BatchNormReduceBackward", g, x, mean, invstd, w, True, False, True, *outs) as ex:
            ex.run(stream)
        stream.synchronize()
        close(outs[0].numpy(), g.astype(np.float64).sum((0, 2)))
        with pytest.raises(pyaclnn.HazardError, match="never written since aclrtMalloc"):
            with pyaclnn.Op("Add", outs[2], outs[2], 1.0, pyaclnn.Tensor.empty((3,))) as add:
                add.run(stream)
            stream.synchronize()


def test_the_mask_says_which_outputs_may_be_nullptr(aten: object) -> None:
    """An output the mask asks for is required (161001), one it leaves out may be nullptr
    (convolution_backward_checker.cpp CheckNotNull; norm/layer_norm_grad_v3's aclnn_layer_norm_backward.cpp)."""
    def conv_status(mask: list[bool], gw: Any, gb: Any) -> int:
        try:
            with pyaclnn.Device(0):
                _conv_backward(mask, gw, gb).close()
        except pyaclnn.AclError as exc:
            return int(exc.status)
        return 0
    w0 = np.zeros((2, 2, 3, 3), F32)
    assert conv_status([True, False, False], None, None) == 0
    assert conv_status([True, True, False], None, None) == 161001
    assert conv_status([True, False, True], w0, None) == 161001
    x, g = rnd(2, 3, 4, seed=9), rnd(2, 3, 4, seed=10)
    mean, rstd = np.zeros((2, 3, 1), F32), np.ones((2, 3, 1), F32)
    args = (g, x, [4], mean, rstd, np.ones(4, F32), np.zeros(4, F32))
    assert status_of("LayerNormBackward", *args, [True, False, False], np.zeros_like(x), None, None) == 0
    assert status_of("LayerNormBackward", *args, [True, True, False], np.zeros_like(x), None, None) == 161001


# -- GatherV2: TensorFlow's gather ---------------------------------------------------------------
@pytest.mark.parametrize("shape, dim, index", [((3, 4, 2), 1, [[3, 0], [1, 1], [2, 0]]), ((3, 4), -1, [[[1]], [[3]]]),
                                              ((3, 4), 0, 2), ((5,), 0, [4, 0, 4])])
def test_gather_v2_is_tensorflow_gather(aten: object, shape: tuple[int, ...], dim: int, index: Any) -> None:
    """index/gather_v2/op_api/aclnn_gather_v2.cpp CheckOutShape: x.shape[:dim] + index.shape +
    x.shape[dim + 1:], a 0-d index counting as (1,); np.take with a 1-element index for that."""
    x, idx = rnd(*shape), np.array(index, I32)
    want = np.take(x, idx.reshape(idx.shape or (1,)), axis=dim)
    close(call("GatherV2", x, dim, idx, np.zeros(want.shape, F32)), want)


def test_gather_v2_statuses(aten: object) -> None:
    x = rnd(3, 4)
    assert status_of("GatherV2", x, 2, np.array([0], I32), np.zeros((3, 1), F32)) == 161002  # dim out of range
    assert status_of("GatherV2", x, 0, np.array([0], I32), np.zeros((1, 4), F16)) == 161002  # out not self's dtype
    assert status_of("GatherV2", x, 0, np.array([0], F32), np.zeros((1, 4), F32)) == 161002  # a float index
    assert status_of("GatherV2", x, 0, np.array([[0, 1]], I64), np.zeros((1, 2, 4), F32)) == 0


# -- CheckPromoteType ------------------------------------------------------------------------------
def test_gelu_backward_computes_in_the_promoted_dtype(aten: object, use_backend: Callable[..., object],
                                                      tmp_path: Path) -> None:
    """activation/gelu_grad/op_api/aclnn_gelu_backward.cpp: gradOutput and self are checked as
    their promoted dtype (an int32 gradOutput beside a float32 self is float32) and cast to it."""
    x, g = rnd(2, 3, seed=11), np.array([[1, 2, -1], [0, 3, 1]], I32)
    want = _autograd(F.gelu, x, g.astype(F32))
    close(call("GeluBackward", g, x, np.zeros_like(x), outputs=("gradInput",)), want)
    close(call("GeluBackward", g.astype(F16), x, np.zeros_like(x), outputs=("gradInput",)), want, 1e-3)
    assert status_of("GeluBackward", g, g, np.zeros(g.shape, F32)) == 161002  # int32: not in the list
    assert status_of("GeluBackward", x.astype(bool), x, np.zeros_like(x)) == 0  # bool + float32: float32
    aten_backend(use_backend, tmp_path / "910", soc="Ascend910")
    assert status_of("GeluBackward", bf16(x), bf16(x), np.zeros_like(x)) == 161002  # bf16 off DAV_2201


# -- dtypes aten's CPU kernels lack -----------------------------------------------------------------
def test_add_relu_in_the_dtypes_the_source_takes(aten: object) -> None:
    """activation/relu/op_api/aclnn_add_relu.cpp: f32 f16 bf16 i8 u8 i16 i32 i64; an alpha the
    promoted dtype cannot hold (a float beside integers) is 161002 (CheckPromoteType's CanCast)."""
    a, b = rnd(2, 3, seed=12), rnd(2, 3, seed=13)
    want = np.maximum(a.astype(F16).astype(np.float64) + 2 * b.astype(F16).astype(np.float64), 0)
    close(call("AddRelu", a.astype(F16), b.astype(F16), 2, np.zeros((2, 3), F16)), want, 1e-2)
    close(call("AddRelu", bf16(a), bf16(b), 2, np.zeros((2, 3), F32)),
          np.maximum(bf16(a).astype(np.float64) + 2 * bf16(b).astype(np.float64), 0), 2e-2)
    u, v = np.array([1, 200, 3], np.uint8), np.array([2, 30, 4], np.uint8)
    np.testing.assert_array_equal(call("AddRelu", u, v, 1, np.zeros(3, np.uint8)), (u + v).astype(np.uint8))
    i = np.array([1, -5, 3], I32)
    assert status_of("AddRelu", i, i, 0.5, np.zeros(3, I32)) == 161002
    assert status_of("AddRelu", a.astype(np.float64), a.astype(np.float64), 1, np.zeros((2, 3))) == 161002


def test_distances_in_fp16(aten: object) -> None:
    """math/cdist/op_api/aclnn_cdist.cpp and math/pdist/op_api/aclnn_pdist.cpp take fp16 (aten's
    CPU kernels do not): computed in float32 here; Pdist has no bf16."""
    x1, x2 = rnd(3, 4, seed=14).astype(F16), rnd(2, 4, seed=15).astype(F16)
    d = np.sqrt(((x1.astype(np.float64)[:, None] - x2.astype(np.float64)[None]) ** 2).sum(-1))
    close(call("Cdist", x1, x2, 2.0, 0, np.zeros((3, 2), F16)), d, 2e-3)
    iu = np.triu_indices(3, 1)
    self_d = np.sqrt(((x1.astype(np.float64)[:, None] - x1.astype(np.float64)[None]) ** 2).sum(-1))[iu]
    close(call("Pdist", x1, 2.0, np.zeros(3, F16)), self_d, 2e-3)
    assert status_of("Pdist", bf16(x1), 2.0, np.zeros(3, F32)) == 161002


def test_max_unpool3d_of_integers(aten: object) -> None:
    """index/scatter_elements/op_api/aclnn_max_unpool3d.cpp takes int8..int64 data."""
    x = np.array([[[[[5, -3]]]]], I32)
    idx = np.array([[[[[1, 6]]]]], I64)
    want = np.zeros(8, I32)
    want[[1, 6]] = [5, -3]
    got = call("MaxUnpool3d", x, idx, [2, 2, 2], [1, 1, 1], [0, 0, 0], np.zeros((1, 1, 2, 2, 2), I32),
               outputs=("outRef",))
    np.testing.assert_array_equal(got, want.reshape(1, 1, 2, 2, 2))


def test_erfinv_of_integers_is_float32_and_double_is_refused(aten: object) -> None:
    """activation/erfinv/op_api/aclnn_erfinv.cpp: bool and integers computed as float32; no double."""
    x = np.array([0, 1, 0], I32)
    close(call("Erfinv", x, np.zeros(3, F32)), [0.0, np.inf, 0.0])
    assert status_of("Erfinv", x, np.zeros(3, I32)) == 161002  # float32 cannot be cast to int32
    assert status_of("Erfinv", np.zeros(3), np.zeros(3)) == 161002


def test_foreach_v2_sources_exist_on_dav_2201_and_regbase_only(aten: object, use_backend: Callable[..., object],
                                                                tmp_path: Path) -> None:
    """foreach/*/op_host/op_api/aclnn_foreach_*.cpp: 8/16-bit integer lists on Ascend910B; the
    dtype list is empty elsewhere (161002)."""
    x = [np.array([1, -2, 3], np.int8)]
    np.testing.assert_array_equal(call("ForeachAddScalarV2", x, 2, [np.zeros(3, np.int8)])[0], [3, 0, 5])
    aten_backend(use_backend, tmp_path / "910", soc="Ascend910")
    assert status_of("ForeachAddScalarV2", [np.ones(3, F32)], 2.0, [np.zeros(3, F32)]) == 161002


# -- Range/Arange: CheckStepCorrect in out's dtype -----------------------------------------------------
def test_range_reads_the_step_in_outs_dtype(aten: object) -> None:
    """math/range/op_api/aclnn_range.cpp, aclnn_arange.cpp: an integer out reads start, end and
    step ToInt64, so a step of 0.5 is 0, refused (aten's integer kernel divided by it: SIGFPE)."""
    assert status_of("Range", 1.0, 3.0, 0.5, np.zeros(5, I32)) == 161002
    assert status_of("Arange", 0.0, 3.0, 0.5, np.zeros(6, I64)) == 161002
    assert status_of("Arange", 3, 0, 1, np.zeros(3, I64)) == 161002  # bounds against the step's sign
    np.testing.assert_array_equal(call("Range", 1.7, 4.2, 1.0, np.zeros(4, I32)), [1, 2, 3, 4])  # 1..4, closed
    close(call("Range", 1.0, 3.0, 0.5, np.zeros(5, F32)), np.arange(1.0, 3.01, 0.5))


def test_a_run_made_for_one_out_dtype_is_not_reused_for_another(aten: object) -> None:
    """MeanV2 takes torch's dtype argument from out: a call in fp16, then the same in bf16."""
    x = rnd(2, 3, 4, seed=16)
    for cast, tol in ((lambda a: a.astype(F16), 1e-3), (bf16, 1e-2)):
        got = call("MeanV2", cast(x), [0, 2], False, False, cast(np.zeros(3, F32)))
        close(got, cast(x).astype(np.float64).mean((0, 2)), tol)
