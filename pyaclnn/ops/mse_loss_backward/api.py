"""aclnnMseLossBackward's public face: ``pyaclnn.MseLossBackward`` (two phases on Tensors),
``pyaclnn.mse_loss_backward`` (NumPy in, NumPy out), its documented sample and its benchmark cases."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, overload

import numpy as np

from ..._core import env as _env
from ..._objects.device import Device
from ..._objects.executor import Executor
from ..samples import print_values
from ..._functions.array_types import NumPyIn, NumPyOrTorch, TorchIn
from ..._functions.functional import Array, OutputSpec, _dtype, _shape, call
from ..._objects.tensor import Tensor
from ...errors import AclnnParamInvalidError
from .spec import API, OP, out_shape

if TYPE_CHECKING:
    import torch

    from ..cases import Case

__all__ = ["MseLossBackward", "mse_loss_backward", "reduction_code", "sample", "EXPECTED", "ALIAS", "IN_DOCTOR",
           "bench_case", "small_case"]

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def reduction_code(reduction: Any, api: str = API) -> int:
    """'none'/'mean'/'sum' or 0/1/2 -> the int64 the C API takes (other ints go to the library)."""
    if isinstance(reduction, str):
        if reduction not in _REDUCTIONS:
            raise AclnnParamInvalidError(api, f"reduction {reduction!r} is not one of 'none', 'mean', 'sum'")
        return _REDUCTIONS[reduction]
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(f"{api}: reduction must be 'none', 'mean', 'sum' or the int64_t 0, 1, 2; got "
                        f"{type(reduction).__name__} {reduction!r}")
    return int(reduction)


class MseLossBackward(Executor):
    """aclnnMseLossBackward: out = (input - target) * grad_output * (2/input.numel() if mean else 2).

    Args:
        grad_output: C ``gradOutput``.
        input: C ``self``.
        target: C ``target``.
        reduction: 'none', 'mean', 'sum' or 0, 1, 2.
        out: the output Tensor, of the broadcast shape.
        repeatable: make the executor runnable many times.
    """
    op = OP

    def __init__(self, grad_output: Tensor | None, input: Tensor | None, target: Tensor | None,
                 reduction: str | int = "mean", out: Tensor | None = None, *, repeatable: bool = False) -> None:
        self._plan((grad_output, input, target, reduction_code(reduction), out), repeatable)


_TENSORS = ("grad_output", "input", "target")


def _plan(backend: Any, args: tuple) -> tuple[tuple, list[OutputSpec]]:
    """A first call's C values and output (``call``): the reduction's int64, the broadcast shape."""
    g, x, y, reduction = args
    return (reduction_code(reduction),), [(out_shape(_shape(g), _shape(x), _shape(y)), _dtype(x))]

# NumPy in, NumPy out; a torch tensor in, torch out (pyaclnn._functions.array_types)
@overload
def mse_loss_backward(grad_output: NumPyIn, input: NumPyIn, target: NumPyIn,  # type: ignore[overload-overlap]
                      reduction: str | int = "mean") -> np.ndarray: ...
@overload
def mse_loss_backward(grad_output: TorchIn, input: TorchIn, target: TorchIn,
                      reduction: str | int = "mean") -> torch.Tensor: ...
@overload
def mse_loss_backward(grad_output: Array, input: Array, target: Array,
                      reduction: str | int = "mean") -> NumPyOrTorch: ...


def mse_loss_backward(grad_output: Array, input: Array, target: Array,
                      reduction: str | int = "mean") -> np.ndarray | torch.Tensor:
    """Gradient of MSE loss w.r.t. ``input`` (aclnnMseLossBackward).

    ``out = (input - target) * grad_output * cof``, broadcast over the three, with
    ``cof = 2 / input.size`` for 'mean' (the size of ``input`` itself, as the device does) and
    ``2`` for 'none' and 'sum'. Returns an array of the broadcast shape and ``input``'s dtype.
    Torch in, torch out: when a tensor argument is a torch tensor, the outputs are torch CPU tensors.

    Args:
        grad_output: the gradient of the loss (C ``gradOutput``): an array, ``pyaclnn.Tensor``
            or torch CPU tensor of float32, float16 or bfloat16.
        input: the prediction (C ``self``), of the same dtype.
        target: the target, of the same dtype; the three broadcast together.
        reduction: 'none', 'mean' or 'sum', or the C ``int64_t`` 0, 1 or 2.

    Returns:
        A new array of the broadcast shape and ``input``'s dtype (a torch tensor when torch went in).

    Raises:
        AclnnParamNullptrError: a tensor is None (161001).
        AclnnParamInvalidError: dtypes differ or are not supported on the SoC, shapes do not
            broadcast, or ``reduction`` is not one of the three (161002).
        TypeError: an argument is not an array of numbers, or ``reduction`` is neither str nor int.

    Examples:
        >>> g = np.array([[0, 1], [2, 3]], np.float32)
        >>> pyaclnn.mse_loss_backward(g, g, np.ones((2, 2), np.float32), reduction="mean")
        array([[-0.,  0.],
               [ 1.,  3.]], dtype=float32)
    """
    (out,) = call(OP, API, (grad_output, input, target, reduction), _TENSORS, _plan)
    return out


# -- the documented sample (python -m pyaclnn samples) ----------------------------------------------
ALIAS = "mse"        # its short name on the command line (samples, bench --case)
IN_DOCTOR = True     # documented on every SoC: doctor computes it

# The CANN page prints no output: its formula (shared/reference/ops.md) on the sample's data, by hand.
# mean reduction: gradOutput * 2 * (self - target) / numel, gradOutput = self = [0, 1, 2, 3],
# target = 1, numel = 4.
EXPECTED: dict[str, tuple[float, ...]] = {"result": (0.0, 0.0, 1.0, 3.0)}


def sample(emit: Callable[[str], None] = print) -> None:
    """The CANN documentation's C++ sample, printed as it prints."""
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        grad_output = Tensor.from_numpy(np.array([[0, 1], [2, 3]], np.float32))
        input = Tensor.from_numpy(np.array([[0, 1], [2, 3]], np.float32))
        target = Tensor.from_numpy(np.ones((2, 2), np.float32))
        out = Tensor.zeros((2, 2), np.float32)
        MseLossBackward(grad_output, input, target, "mean", out).run(stream)
        stream.synchronize()
        print_values(emit, "result", out)


# -- benchmark cases (python -m pyaclnn bench) -------------------------------------------------------
def case(shape: tuple[int, ...]) -> Case:
    """Reduction none on three float32 inputs of ``shape``, against aten's mse_loss_backward."""
    from ..cases import F32
    from ..cases import Case
    from ..cases import nbytes

    def make(rng: np.random.Generator) -> dict[str, Any]:
        return {k: rng.standard_normal(shape, dtype=F32) for k in ("grad", "x", "y")}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        return mse_loss_backward(i["grad"], i["x"], i["y"], "none")

    def run_torch(t: dict[str, Any]) -> Any:
        import torch
        return torch.ops.aten.mse_loss_backward(t["grad"], t["x"], t["y"], 0)  # 0: reduction none

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        return MseLossBackward(t["grad"], t["x"], t["y"], "none", outs[0])

    def torch_outputs(t: dict[str, Any]) -> list[Any]:
        import torch
        return [torch.empty_like(t["x"])]

    def run_torch_out(t: dict[str, Any], outs: list[Any]) -> Any:
        import torch
        return torch.ops.aten.mse_loss_backward.grad_input(t["grad"], t["x"], t["y"], 0, grad_input=outs[0])

    n = math.prod(shape)
    return Case(ALIAS, f"{OP} none, {n} elements", {"shape": shape, "reduction": "none"},
                make, run_pyaclnn, ("mse_loss_backward",), run_torch,
                # read grad, x, y; write out
                bytes_read=lambda i: nbytes(i["grad"], i["x"], i["y"]),
                bytes_written=lambda i: i["x"].nbytes,
                steady_outputs=lambda i: [(shape, F32)], plan_pyaclnn=plan_pyaclnn,
                peer_out_ops=("mse_loss_backward.grad_input",), torch_outputs=torch_outputs,
                run_torch_out=run_torch_out)


def bench_case(quick: bool) -> Case:
    """The large-table case: 2^24 elements (--quick: 64x64)."""
    return case((64, 64) if quick else (4096, 4096))


def small_case(elements: int) -> Case:
    """The small-call case of ``elements`` (128: 8x16, 4096: 64x64)."""
    return case((8, 16) if elements == 128 else (64, 64))
