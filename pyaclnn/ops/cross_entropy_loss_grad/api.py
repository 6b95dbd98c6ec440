"""aclnnCrossEntropyLossGrad's public face: ``pyaclnn.CrossEntropyLossGrad`` (two phases on Tensors),
``pyaclnn.cross_entropy_loss_grad`` (NumPy in, NumPy out), its documented sample and its benchmark cases."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, overload

import numpy as np

from ..._core import env as _env
from ..._objects.device import Device
from ..._objects.executor import Executor
from ..._functions.array_types import NumPyIn, NumPyOrTorch, TorchIn
from ..._functions.functional import Array, OutputSpec, _dtype, _shape, call
from ..samples import print_values
from ..._objects.tensor import Tensor
from ...errors import AclnnParamInvalidError
from .spec import API, OP

if TYPE_CHECKING:
    import torch

    from ..cases import Case

__all__ = ["CrossEntropyLossGrad", "cross_entropy_loss_grad", "reduction_text", "sample", "EXPECTED", "ALIAS",
           "IN_DOCTOR", "bench_case", "small_case"]

_REDUCTIONS = ("none", "mean", "sum")


def reduction_text(reduction: Any, api: str = API) -> str:
    """'none'/'mean'/'sum' or 0/1/2 -> the char* the C API takes.

    Unknown strings are refused here: on A2/A3 the library would silently treat them as
    'none' (ops.md §3.2), a wrong answer pyaclnn does not give. ``pyaclnn.acl`` passes strings
    through unchanged for exact ports.
    """
    if isinstance(reduction, str) and reduction in _REDUCTIONS:
        return reduction
    if isinstance(reduction, int) and not isinstance(reduction, bool) and 0 <= reduction <= 2:
        return _REDUCTIONS[reduction]
    raise AclnnParamInvalidError(api, f"reduction {reduction!r} is not one of 'none', 'mean', 'sum' (or 0, 1, 2)")


class CrossEntropyLossGrad(Executor):
    """aclnnCrossEntropyLossGrad: gradient of cross-entropy w.r.t. the log-probabilities.

    The parameters are those of ``pyaclnn.cross_entropy_loss_grad``, with the output ``out`` as a
    Tensor (shaped like ``log_prob``) and ``repeatable``.
    """
    op = OP

    def __init__(self, grad_loss: Tensor | None, log_prob: Tensor | None, target: Tensor | None,
                 weight: Tensor | None = None, grad_zloss: Tensor | None = None,
                 lse_for_zloss: Tensor | None = None, reduction: str | int = "mean", ignore_index: int = -100,
                 label_smoothing: float = 0.0, lse_square_scale_for_zloss: float = 0.0,
                 out: Tensor | None = None, *, repeatable: bool = False) -> None:
        self._plan((grad_loss, log_prob, target, weight, grad_zloss, lse_for_zloss, reduction_text(reduction),
                    ignore_index, label_smoothing, lse_square_scale_for_zloss, out), repeatable)


_TENSORS = ("grad_loss", "log_prob", "target", "weight", "grad_zloss", "lse_for_zloss")


def _plan(backend: Any, args: tuple) -> tuple[tuple, list[OutputSpec]]:
    """A first call's C values and output (``call``): xGrad, of logProb's shape and gradLoss's dtype."""
    gl, lp, _t, _w, _gz, _lse, reduction, ignore_index, label_smoothing, lse_square_scale_for_zloss = args
    return ((reduction_text(reduction), ignore_index, label_smoothing, lse_square_scale_for_zloss),
            [(_shape(lp), _dtype(gl, _dtype(lp)))])

# NumPy in, NumPy out; a torch tensor in, torch out (pyaclnn._functions.array_types)
@overload
def cross_entropy_loss_grad(grad_loss: NumPyIn, log_prob: NumPyIn,  # type: ignore[overload-overlap]
                            target: NumPyIn, weight: NumPyIn | None = None,
                            grad_zloss: NumPyIn | None = None, lse_for_zloss: NumPyIn | None = None,
                            reduction: str | int = "mean", ignore_index: int = -100,
                            label_smoothing: float = 0.0, lse_square_scale_for_zloss: float = 0.0) -> np.ndarray: ...
@overload
def cross_entropy_loss_grad(grad_loss: TorchIn, log_prob: TorchIn, target: TorchIn, weight: TorchIn | None = None,
                            grad_zloss: TorchIn | None = None, lse_for_zloss: TorchIn | None = None,
                            reduction: str | int = "mean", ignore_index: int = -100,
                            label_smoothing: float = 0.0, lse_square_scale_for_zloss: float = 0.0) -> torch.Tensor: ...
@overload
def cross_entropy_loss_grad(grad_loss: Array, log_prob: Array, target: Array, weight: Array | None = None,
                            grad_zloss: Array | None = None, lse_for_zloss: Array | None = None,
                            reduction: str | int = "mean", ignore_index: int = -100,
                            label_smoothing: float = 0.0, lse_square_scale_for_zloss: float = 0.0) -> NumPyOrTorch: ...


def cross_entropy_loss_grad(grad_loss: Array, log_prob: Array, target: Array, weight: Array | None = None,
                            grad_zloss: Array | None = None, lse_for_zloss: Array | None = None,
                            reduction: str | int = "mean", ignore_index: int = -100,
                            label_smoothing: float = 0.0,
                            lse_square_scale_for_zloss: float = 0.0) -> np.ndarray | torch.Tensor:
    """Gradient of cross-entropy w.r.t. ``log_prob`` (aclnnCrossEntropyLossGrad).

    ``out[i, j] = exp(log_prob[i, j]) * nll_i - [j == target_i] * nll_i`` with
    ``nll_i = g * w[target_i] * (target_i != ignore_index)``, ``g`` being ``grad_loss[i]`` for
    'none', ``grad_loss[0]`` for 'sum', and ``grad_loss[0] / sum of the non-ignored weights`` for
    'mean' (NaN everywhere when every target is ignored, as on the device). The zloss inputs
    are accepted and have no effect, as documented.

    For 'mean' and 'sum' only ``grad_loss[0]`` is read: on A2/A3 (Ascend910B, Ascend910_93) a
    ``grad_loss`` of N elements is accepted and its other elements are silently ignored, as the
    device does; Ascend950 refuses it (561002). Pass a 0-D ``grad_loss`` there.
    Torch in, torch out: when a tensor argument is a torch tensor, the outputs are torch CPU tensors.

    Args:
        grad_loss: the gradient of the loss: 0-D (or one element) for 'mean' and 'sum', (N,)
            for 'none'; float32, float16 or bfloat16.
        log_prob: the log-probabilities, (N, C), of ``grad_loss``'s dtype.
        target: the class of each row, (N,), int64.
        weight: the class weights, (C,), float32 (also for float16/bfloat16 inputs), or None.
        grad_zloss: accepted, no effect (None).
        lse_for_zloss: accepted, no effect (None).
        reduction: 'none', 'mean' or 'sum', or 0, 1, 2.
        ignore_index: rows whose target is this value contribute nothing.
        label_smoothing: must be 0.0 on A2/A3, where the device has no defined result for
            another value (pyaclnn refuses it, 161002); Ascend950 implements it.
        lse_square_scale_for_zloss: accepted, no effect (0.0).

    Returns:
        A new array shaped like ``log_prob``, of ``grad_loss``'s dtype (a torch tensor when torch went in).

    Raises:
        AclnnParamNullptrError: a required tensor is None, or the SoC has no kernel (161001).
        AclnnParamInvalidError: dtypes the library rejects, an unknown reduction string, or a
            call with no defined result on the device (161002, "pyaclnn refuses"), such as a
            target outside ``[0, C)`` that is not ``ignore_index`` (raised when the kernel runs).
        AclnnInnerTilingError: shapes the operator's tiling rejects (561002).

    Examples:
        >>> log_prob = np.log(np.full((2, 4), 0.25, np.float32))
        >>> pyaclnn.cross_entropy_loss_grad(np.float32(1.0), log_prob, np.array([1, 3], np.int64))
        array([[ 0.125, -0.375,  0.125,  0.125],
               [ 0.125,  0.125,  0.125, -0.375]], dtype=float32)
    """
    (out,) = call(OP, API, (grad_loss, log_prob, target, weight, grad_zloss, lse_for_zloss, reduction, ignore_index,
                            label_smoothing, lse_square_scale_for_zloss), _TENSORS, _plan)
    return out


# -- the sample (python -m pyaclnn samples) ----------------------------------------------------------
ALIAS = "cross_entropy"  # its short name on the command line (samples, bench --case)
IN_DOCTOR = False        # its page documents no sample and not every SoC: doctor leaves it out

# The CANN page has no sample: N = 4, C = 3, mean, ignore_index -100, with a weight. Expected:
# (softmax(logProb) - onehot(target)) * weight[target] / sum(weight[target]), with
# logProb the float32 log_softmax of the sample's logits.
EXPECTED: dict[str, tuple[float, ...]] = {"result": (
    0.0462447779, -0.0742936569, 0.0280488756, 0.0164371109, 0.0181658152, -0.0346029249,
    -0.020827368, 0.00560134194, 0.015226026, 0.070647182, 0.070647182, -0.141294371)}


def sample(emit: Callable[[str], None] = print) -> None:
    """A sample in the style of the CANN C++ samples, printed as they print."""
    logits = np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0], [2.0, -1.0, 0.0], [0.5, 0.5, 1.5]])
    log_softmax = (logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))).astype(np.float32)
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        grad_loss = Tensor.from_numpy(np.array(1.0, np.float32))  # 0-D for "mean"
        log_prob = Tensor.from_numpy(log_softmax)
        target = Tensor.from_numpy(np.array([1, 2, 0, 2], np.int64))
        weight = Tensor.from_numpy(np.array([0.2, 0.3, 0.5], np.float32))
        out = Tensor.zeros((4, 3), np.float32)
        CrossEntropyLossGrad(grad_loss, log_prob, target, weight, reduction="mean", ignore_index=-100,
                             out=out).run(stream)
        stream.synchronize()
        print_values(emit, "result", out)


# -- benchmark cases (python -m pyaclnn bench) -------------------------------------------------------
def case(N: int, C: int) -> Case:
    """float32 (N, C) log-probabilities, mean, int64 targets, no weight, against aten's
    nll_loss_backward then _log_softmax_backward_data (cross_entropy = nll_loss(log_softmax))."""
    from ..cases import F32
    from ..cases import Case
    from ..cases import nbytes

    def make(rng: np.random.Generator) -> dict[str, Any]:
        logits = rng.standard_normal((N, C), dtype=F32)
        logits -= np.log(np.exp(logits).sum(axis=1, dtype=F32, keepdims=True))  # log_softmax, in place
        # grad_loss 0-D (reduction mean); total_weight is aten's (N: no weight, nothing ignored)
        return {"grad_loss": np.array(rng.uniform(0.5, 1.5), F32), "log_prob": logits,
                "target": rng.integers(0, C, N, dtype=np.int64), "total_weight": np.array(N, F32)}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        return cross_entropy_loss_grad(i["grad_loss"], i["log_prob"], i["target"], reduction="mean")

    def run_torch(t: dict[str, Any]) -> Any:
        import torch
        # cross_entropy = nll_loss(log_softmax(z)); its backward is this pair of aten kernels.
        g = torch.ops.aten.nll_loss_backward(t["grad_loss"], t["log_prob"], t["target"], None, 1, -100,
                                             t["total_weight"])
        return torch.ops.aten._log_softmax_backward_data(g, t["log_prob"], 1, torch.float32)  # private: aten's kernel

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        return CrossEntropyLossGrad(t["grad_loss"], t["log_prob"], t["target"], reduction="mean", out=outs[0])

    def torch_outputs(t: dict[str, Any]) -> list[Any]:
        import torch
        # the final gradient, and nll_loss_backward's result (aten's intermediate) before it
        return [torch.empty_like(t["log_prob"]), torch.empty_like(t["log_prob"])]

    def run_torch_out(t: dict[str, Any], outs: list[Any]) -> Any:
        import torch
        g = torch.ops.aten.nll_loss_backward.grad_input(t["grad_loss"], t["log_prob"], t["target"], None, 1,
                                                        -100, t["total_weight"], grad_input=outs[1])
        return torch.ops.aten._log_softmax_backward_data.out(g, t["log_prob"], 1, torch.float32, out=outs[0])  # private: aten's kernel

    return Case(ALIAS, f"{OP} N={N} C={C} mean",
                {"N": N, "C": C, "reduction": "mean", "target_dtype": "int64", "weight": None},
                make, run_pyaclnn, ("nll_loss_backward", "_log_softmax_backward_data"), run_torch,
                # read log_prob, target, grad_loss; write out (N x C)
                bytes_read=lambda i: nbytes(i["log_prob"], i["target"], i["grad_loss"]),
                bytes_written=lambda i: i["log_prob"].nbytes,
                steady_outputs=lambda i: [((N, C), F32)], plan_pyaclnn=plan_pyaclnn,
                peer_out_ops=("nll_loss_backward.grad_input", "_log_softmax_backward_data.out"),
                torch_outputs=torch_outputs, run_torch_out=run_torch_out)


def bench_case(quick: bool) -> Case:
    """The large-table case: N=4096, C=32000 (--quick: 16x100)."""
    return case(16, 100) if quick else case(4096, 32000)


def small_case(elements: int) -> Case:
    """The small-call case of ``elements`` (128: 8x16, 4096: 64x64)."""
    return case(8, 16) if elements == 128 else case(64, 64)
