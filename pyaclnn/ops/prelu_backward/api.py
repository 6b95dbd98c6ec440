"""aclnnPreluBackward's public face: ``pyaclnn.PreluBackward`` (two phases on Tensors),
``pyaclnn.prelu_backward`` (NumPy in, NumPy out), its documented sample and its benchmark cases."""
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
from .spec import API, OP, output_shapes

if TYPE_CHECKING:
    import torch

    from ..cases import Case

__all__ = ["PreluBackward", "prelu_backward", "sample", "EXPECTED", "NOTE", "ALIAS", "IN_DOCTOR",
           "bench_case", "small_case"]


class PreluBackward(Executor):
    """aclnnPreluBackward: gradients of PReLU w.r.t. input and weight (channel dim 1).

    The parameters are those of ``pyaclnn.prelu_backward``, with the outputs ``grad_input`` and
    ``grad_weight`` as Tensors and ``repeatable``.
    """
    op = OP

    def __init__(self, grad_output: Tensor | None, input: Tensor | None, weight: Tensor | None,
                 grad_input: Tensor | None = None, grad_weight: Tensor | None = None, *,
                 repeatable: bool = False) -> None:
        self._plan((grad_output, input, weight, grad_input, grad_weight), repeatable)


_TENSORS = ("grad_output", "input", "weight")


def _plan(backend: Any, args: tuple) -> tuple[tuple, list[OutputSpec]]:
    """A first call's outputs (``call``): gradInput and gradWeight, in ``input``'s dtype."""
    dy, x, w = args
    gi_shape, gw_shape = output_shapes(_shape(x), _shape(w))
    return (), [(gi_shape, _dtype(x)), (gw_shape, _dtype(x))]

# NumPy in, NumPy out; a torch tensor in, torch out (pyaclnn._functions.array_types)
@overload
def prelu_backward(grad_output: NumPyIn, input: NumPyIn,  # type: ignore[overload-overlap]
                   weight: NumPyIn) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def prelu_backward(grad_output: TorchIn, input: TorchIn, weight: TorchIn) -> tuple[torch.Tensor, torch.Tensor]: ...
@overload
def prelu_backward(grad_output: Array, input: Array, weight: Array) -> tuple[NumPyOrTorch, NumPyOrTorch]: ...


def prelu_backward(grad_output: Array, input: Array,
                   weight: Array) -> tuple[np.ndarray | torch.Tensor, np.ndarray | torch.Tensor]:
    """Gradients of PReLU (aclnnPreluBackward) -> (grad_input, grad_weight).

    Channels are dim 1 of ``input`` (a 0-D or 1-D input is one channel); ``weight`` holds one
    value per channel, or a single value for all. ``grad_weight`` is (C,), or ``weight``'s shape
    when it has one element. ``grad_output`` may broadcast to ``input``'s shape. ``x == 0``
    takes the weight branch, as on the device.
    Torch in, torch out: when a tensor argument is a torch tensor, the outputs are torch CPU tensors.

    Args:
        grad_output: the gradient of PReLU's output (C ``gradOutput``).
        input: PReLU's input (C ``self``), of the same dtype.
        weight: the slopes: one per channel, or one for all.

    Returns:
        grad_input: shaped like ``input``.
        grad_weight: (C,), or ``weight``'s shape when it has one element.

    Raises:
        AclnnParamNullptrError: a tensor is None (161001).
        AclnnParamInvalidError: dtypes or shapes the library rejects (161002).

    Examples:
        >>> x = np.array([[-1, 2], [3, -4]], np.float32)
        >>> pyaclnn.prelu_backward(np.ones((2, 2), np.float32), x, np.array([0.25, 0.5], np.float32))
        (array([[0.25, 1.  ],
               [1.  , 0.5 ]], dtype=float32), array([-1., -4.], dtype=float32))
    """
    grad_input, grad_weight = call(OP, API, (grad_output, input, weight), _TENSORS, _plan)
    return grad_input, grad_weight


# -- the documented sample (python -m pyaclnn samples) ----------------------------------------------
ALIAS = "prelu"   # its short name on the command line (samples, bench --case)
IN_DOCTOR = True  # documented on every SoC: doctor computes it

# The CANN page prints no output: its formula (shared/reference/ops.md) on the sample's data, by hand.
# gradInput = gradOutput where input > 0, else weight * gradOutput (input = 0..7, weight 0.5);
# gradWeight = sum of gradOutput * input where input <= 0 (only input 0 is): 0.
EXPECTED: dict[str, tuple[float, ...]] = {"gradInput": (0.5,) + (1.0,) * 7, "gradWeight": (0.0, 0.0)}

# Said before the values are printed: the documented data give trivial values.
NOTE = "the documented data have no negative input, so gradWeight is 0"


def sample(emit: Callable[[str], None] = print) -> None:
    """The CANN documentation's C++ sample, printed as it prints."""
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        input = Tensor.from_numpy(np.arange(8, dtype=np.float32).reshape(4, 2))
        weight = Tensor.from_numpy(np.array([0.5, 0.5], np.float32))
        grad_output = Tensor.from_numpy(np.ones((4, 2), np.float32))
        grad_input = Tensor.zeros((4, 2), np.float32)
        grad_weight = Tensor.zeros(2, np.float32)
        PreluBackward(grad_output, input, weight, grad_input, grad_weight).run(stream)
        stream.synchronize()
        print_values(emit, "gradInput", grad_input)
        print_values(emit, "gradWeight", grad_weight)


# -- benchmark cases (python -m pyaclnn bench) -------------------------------------------------------
def case(shape: tuple[int, ...]) -> Case:
    """float32 ``shape`` with one weight per channel (dim 1), against aten's _prelu_kernel_backward
    and the weight gradient summed to (C,) as autograd's sum_to_size does."""
    from ..cases import F32
    from ..cases import Case
    from ..cases import nbytes
    C = shape[1]
    per_channel = (1, C) + (1,) * (len(shape) - 2)  # the weight as aten's kernel takes it
    other_dims = tuple(d for d in range(len(shape)) if d != 1)

    def make(rng: np.random.Generator) -> dict[str, Any]:
        return {"dy": rng.standard_normal(shape, dtype=F32), "x": rng.standard_normal(shape, dtype=F32),
                "weight": rng.uniform(0.05, 0.3, C).astype(F32)}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        return prelu_backward(i["dy"], i["x"], i["weight"])

    def run_torch(t: dict[str, Any]) -> Any:
        # The kernel returns the weight gradient at the input's shape; autograd then sums it to
        # the weight's shape (sum_to_size). Both are needed for the same two outputs.
        import torch
        gi, gw = torch.ops.aten._prelu_kernel_backward(t["dy"], t["x"], t["weight"].view(per_channel))  # private: aten's kernel
        return gi, gw.sum(dim=other_dims)

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        return PreluBackward(t["dy"], t["x"], t["weight"], *outs)

    return Case(ALIAS, f"{OP} {'x'.join(map(str, shape))}, {C} weights",
                {"shape": shape, "weights": C},
                make, run_pyaclnn, ("_prelu_kernel_backward", "sum"), run_torch,
                # read dy, x, weight; write grad_input, grad_weight (C)
                bytes_read=lambda i: nbytes(i["dy"], i["x"], i["weight"]),
                bytes_written=lambda i: i["x"].nbytes + i["weight"].nbytes,
                # aten has no out= overload of _prelu_kernel_backward: the peer allocates
                steady_outputs=lambda i: [(shape, F32), ((C,), F32)], plan_pyaclnn=plan_pyaclnn)


def bench_case(quick: bool) -> Case:
    """The large-table case: 32x256x56x56, 256 weights (--quick: 2x8x4x4)."""
    return case((2, 8, 4, 4)) if quick else case((32, 256, 56, 56))


def small_case(elements: int) -> Case:
    """The small-call case of ``elements`` (128: 8x16, 4096: 64x64)."""
    return case((8, 16) if elements == 128 else (64, 64))
