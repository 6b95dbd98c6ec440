"""aclnnGroupNormBackward's public face: ``pyaclnn.GroupNormBackward`` (two phases on Tensors),
``pyaclnn.group_norm_backward`` (NumPy in, NumPy out), its documented sample and its benchmark cases."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence, overload

import numpy as np

from ..._core import env as _env
from ..._objects.device import Device
from ..._objects.executor import Executor
from ..._functions.array_types import NumPyIn, NumPyOrTorch, TorchIn
from ..._functions.functional import Array, OutputSpec, _dtype, _shape, call
from ..samples import print_values
from ..._registry.signature import c_values
from ..._objects.tensor import Tensor
from .spec import API, OP, output_shapes

if TYPE_CHECKING:
    import torch

    from ..cases import Case

__all__ = ["GroupNormBackward", "group_norm_backward", "output_mask", "sample", "EXPECTED", "NOTE", "ALIAS",
           "IN_DOCTOR", "bench_case", "small_case"]

_THREE_BOOLS = (bool, bool, bool)


def output_mask(mask: Any, api: str = API) -> tuple[bool, ...] | None:
    """GroupNorm's output_mask as the bools of its aclBoolArray (None is nullptr). Its length is
    the library's check (161002); anything but a sequence of bools is a TypeError here, where
    ``bool(v) for v in True`` used to fail from deep inside and a str passed as all-True."""
    if mask is None:
        return None
    if type(mask) is tuple and tuple(map(type, mask)) == _THREE_BOOLS:  # the usual call, cheaply
        return mask
    fix = "pass a sequence of three bools (gradInput, gradGamma, gradBeta), e.g. (True, True, False)"
    if isinstance(mask, (str, bytes)) or not hasattr(mask, "__iter__"):
        raise TypeError(f"{api}: output_mask must be a sequence of bools, got {type(mask).__name__} {mask!r}; {fix}")
    values = tuple(mask)
    for v in values:
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{api}: output_mask entries must be bools, got {type(v).__name__} {v!r} in "
                            f"{mask!r}; {fix}")
    return tuple(bool(v) for v in values)


class GroupNormBackward(Executor):
    """aclnnGroupNormBackward: gradients of GroupNorm w.r.t. input, gamma and beta.

    The parameters are those of ``pyaclnn.group_norm_backward``, with the three outputs as
    Tensors (None where ``output_mask`` is False) and ``repeatable``.
    """
    op = OP

    def __init__(self, grad_out: Tensor | None, input: Tensor | None, mean: Tensor | None, rstd: Tensor | None,
                 gamma: Tensor | None, N: int, C: int, HxW: int, group: int,
                 output_mask: Sequence[bool] | None = (True, True, True), grad_input: Tensor | None = None,
                 grad_gamma: Tensor | None = None, grad_beta: Tensor | None = None, *,
                 repeatable: bool = False) -> None:
        self._plan((grad_out, input, mean, rstd, gamma, N, C, HxW, group, _mask(output_mask),
                    grad_input, grad_gamma, grad_beta), repeatable)


_mask = output_mask  # the parameters above shadow the name

AllTrue = tuple[Literal[True], Literal[True], Literal[True]]


_TENSORS = ("grad_out", "input", "mean", "rstd", "gamma")


def _plan(backend: Any, args: tuple) -> tuple[tuple, list[OutputSpec | None]]:
    """A first call's C values and outputs (``call``): those the mask asks for."""
    dy, x, m, r, g, N, C, HxW, group, output_mask = args
    mask = _mask(output_mask, API)
    # N, C, HxW, group checked as the int64_t they are (C sizes the outputs): TypeError for "2" or 2.5
    n, c, hxw, grp = c_values(backend.runtime.op_info(OP).signature,
                              (dy, x, m, r, g, N, C, HxW, group, mask, None, None, None))[5:9]
    shapes = output_shapes(_shape(x), None if g is None else _shape(g), c)
    dt = _dtype(dy)
    dtypes = (dt, _dtype(m, dt), _dtype(m, dt))  # 950: dgamma/dbeta follow mean
    specs: list[OutputSpec | None] = [(s, d) if (mask is None or i >= len(mask) or mask[i]) else None
                                      for i, (s, d) in enumerate(zip(shapes, dtypes))]
    return (n, c, hxw, grp, mask), specs


# NumPy in, NumPy out; a torch tensor in, torch out (pyaclnn._functions.array_types); each
# with the default or a literal all-True mask (three outputs) or another (None where False)
@overload
def group_norm_backward(grad_out: NumPyIn, input: NumPyIn,  # type: ignore[overload-overlap]
                        mean: NumPyIn, rstd: NumPyIn, gamma: NumPyIn | None,
                        N: int, C: int, HxW: int, group: int,
                        output_mask: AllTrue = (True, True, True)) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
@overload
def group_norm_backward(grad_out: NumPyIn, input: NumPyIn,  # type: ignore[overload-overlap]
                        mean: NumPyIn, rstd: NumPyIn, gamma: NumPyIn | None,
                        N: int, C: int, HxW: int, group: int,
                        output_mask: Sequence[bool] = ...
                        ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]: ...
@overload
def group_norm_backward(grad_out: TorchIn, input: TorchIn, mean: TorchIn, rstd: TorchIn, gamma: TorchIn | None,
                        N: int, C: int, HxW: int, group: int,
                        output_mask: AllTrue = (True, True, True)
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]: ...
@overload
def group_norm_backward(grad_out: TorchIn, input: TorchIn, mean: TorchIn, rstd: TorchIn, gamma: TorchIn | None,
                        N: int, C: int, HxW: int, group: int,
                        output_mask: Sequence[bool] = ...
                        ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]: ...
@overload
def group_norm_backward(grad_out: Array, input: Array, mean: Array, rstd: Array, gamma: Array | None,
                        N: int, C: int, HxW: int, group: int,
                        output_mask: Sequence[bool] = ...
                        ) -> tuple[NumPyOrTorch | None, NumPyOrTorch | None, NumPyOrTorch | None]: ...


def group_norm_backward(grad_out: Array, input: Array, mean: Array, rstd: Array, gamma: Array | None,
                        N: int, C: int, HxW: int, group: int,
                        output_mask: Sequence[bool] = (True, True, True)
                        ) -> tuple[np.ndarray | torch.Tensor | None, np.ndarray | torch.Tensor | None,
                                   np.ndarray | torch.Tensor | None]:
    """Gradients of GroupNorm (aclnnGroupNormBackward) -> (grad_input, grad_gamma, grad_beta).

    ``grad_out``/``input`` hold ``N*C*HxW`` elements (read as (N, C, HxW)); ``mean``/``rstd`` hold
    ``N*group`` (read as (N, group)); ``gamma`` is (C,) or None (ones). An output whose
    ``output_mask`` entry is False is not computed and returned as None (so with the default
    mask, or a literal ``(True, True, True)``, the three are arrays, as type checkers see).
    ``mean`` and ``rstd`` are used as given (not recomputed), and ``gamma`` enters the group
    sums, as on the device.
    Torch in, torch out: when a tensor argument is a torch tensor, the outputs are torch CPU tensors.

    Args:
        grad_out: the gradient of GroupNorm's output, ``N*C*HxW`` elements (C ``gradOut``).
        input: GroupNorm's input, of the same size and dtype.
        mean: the per-group means of the forward pass, ``N*group`` elements.
        rstd: the per-group reciprocal standard deviations, ``N*group`` elements.
        gamma: the per-channel scale, (C,), or None for ones.
        N: the batch size (C ``int64_t``).
        C: the channels.
        HxW: the elements per channel.
        group: the number of groups; it divides C.
        output_mask: which of grad_input, grad_gamma, grad_beta to compute.

    Returns:
        grad_input: shaped like ``input``; None where ``output_mask[0]`` is False.
        grad_gamma: (C,); None where ``output_mask[1]`` is False.
        grad_beta: (C,); None where ``output_mask[2]`` is False.

    Raises:
        AclnnParamNullptrError: a required tensor is None (161001).
        AclnnParamInvalidError: dtypes, element counts or sizes the library rejects (161002).
        TypeError: an argument of the wrong Python type (a float for ``N``, ``output_mask=True``).

    Examples:
        >>> x = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
        >>> mean, rstd = np.array([[1.5], [5.5]], np.float32), np.ones((2, 1), np.float32)
        >>> dx, dgamma, dbeta = pyaclnn.group_norm_backward(np.ones_like(x), x, mean, rstd, None,
        ...                                                 2, 2, 2, 1)
        >>> dgamma, dbeta
        (array([-4.,  4.], dtype=float32), array([4., 4.], dtype=float32))
    """
    grad_input, grad_gamma, grad_beta = call(OP, API, (grad_out, input, mean, rstd, gamma, N, C, HxW, group, output_mask),
                                             _TENSORS, _plan)
    return grad_input, grad_gamma, grad_beta


# -- the documented sample (python -m pyaclnn samples) ----------------------------------------------
ALIAS = "group_norm"  # its short name on the command line (samples, bench --case)
IN_DOCTOR = True      # documented on every SoC: doctor computes it

_GN_RSTD = 0.2896827  # the sample's rstd (1/std of 1..12, rounded as the page gives it)
# The CANN page prints no output: its formula (shared/reference/ops.md) on the sample's data, by hand.
EXPECTED: dict[str, tuple[float, ...]] = {
    # gradInput = rstd * gamma * (dy - mean(dy) - xhat * mean(dy * xhat)) per group, with
    # xhat = (x - mean) * rstd. The sample's gradOut equals its input, so dy - mean(dy) =
    # x - mean and mean(dy * xhat) = var * rstd: the bracket is (x - mean)(1 - var * rstd^2),
    # zero up to the rounding of the page's rstd (|value| < 4e-7).
    "gradInputResultData": (0.0,) * 24,
    # gradGamma[c] = rstd * sum over n, hw of dy * (x - mean): -262, 10, 538 times rstd.
    "gradGammaOutResultData": (-262 * _GN_RSTD, 10 * _GN_RSTD, 538 * _GN_RSTD),
    # gradBeta[c] = sum over n, hw of dy: 1+2+3+4 + 13+14+15+16 = 68, then 100, 132.
    "gradBetaOutResultData": (68.0, 100.0, 132.0),
}

# Said before the values are printed: the documented data give trivial values.
NOTE = ("the documented data are degenerate for gradInput: gradOut equals input, whose "
        "per-group mean and scale GroupNorm's backward removes, so all 24 gradInput values "
        "are 0 (printed 0.000000 or -0.000000, float32 rounding noise)")


def sample(emit: Callable[[str], None] = print) -> None:
    """The CANN documentation's C++ sample, printed as it prints."""
    N, C, HxW, group = 2, 3, 4, 1
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        grad_out = Tensor.from_numpy(np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4))
        input = Tensor.from_numpy(np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4))
        mean = Tensor.from_numpy(np.array([[6.5], [18.5]], np.float32))
        rstd = Tensor.from_numpy(np.array([[0.2896827], [0.2896827]], np.float32))
        gamma = Tensor.from_numpy(np.ones(3, np.float32))
        grad_input = Tensor.zeros((2, 3, 4), np.float32)
        grad_gamma = Tensor.zeros(3, np.float32)
        grad_beta = Tensor.zeros(3, np.float32)
        GroupNormBackward(grad_out, input, mean, rstd, gamma, N, C, HxW, group, (True, True, True),
                          grad_input, grad_gamma, grad_beta).run(stream)
        stream.synchronize()
        print_values(emit, "gradInputResultData", grad_input)
        print_values(emit, "gradGammaOutResultData", grad_gamma)
        print_values(emit, "gradBetaOutResultData", grad_beta)


# -- benchmark cases (python -m pyaclnn bench) -------------------------------------------------------
def case(N: int, C: int, H: int, W: int, G: int) -> Case:
    """float32 (N, C, H, W) with gamma, all three outputs, against aten's native_group_norm_backward."""
    from ..cases import F32
    from ..cases import Case
    from ..cases import nbytes
    HxW = H * W

    def make(rng: np.random.Generator) -> dict[str, Any]:
        x = rng.standard_normal((N, C, H, W), dtype=F32)
        dy = rng.standard_normal((N, C, H, W), dtype=F32)
        groups = x.reshape(N, G, -1)
        mean = groups.mean(axis=-1, dtype=np.float64)
        rstd = 1.0 / np.sqrt(groups.var(axis=-1, dtype=np.float64) + 1e-5)
        gamma = rng.uniform(0.5, 1.5, C).astype(F32)
        return {"dy": dy, "x": x, "mean": mean.astype(F32), "rstd": rstd.astype(F32), "gamma": gamma}

    def run_pyaclnn(i: dict[str, Any]) -> Any:
        return group_norm_backward(i["dy"], i["x"], i["mean"], i["rstd"], i["gamma"], N, C, HxW, G)

    def run_torch(t: dict[str, Any]) -> Any:
        import torch
        return torch.ops.aten.native_group_norm_backward(t["dy"], t["x"], t["mean"], t["rstd"], t["gamma"],
                                                         N, C, HxW, G, [True, True, True])

    def plan_pyaclnn(t: dict[str, Any], outs: list[Any]) -> Any:
        return GroupNormBackward(t["dy"], t["x"], t["mean"], t["rstd"], t["gamma"], N, C, HxW, G,
                                 (True, True, True), *outs)

    def torch_outputs(t: dict[str, Any]) -> list[Any]:
        import torch
        return [torch.empty_like(t["x"]), torch.empty_like(t["gamma"]), torch.empty_like(t["gamma"])]

    def run_torch_out(t: dict[str, Any], outs: list[Any]) -> Any:
        import torch
        return torch.ops.aten.native_group_norm_backward.out(t["dy"], t["x"], t["mean"], t["rstd"], t["gamma"],
                                                             N, C, HxW, G, [True, True, True],
                                                             out0=outs[0], out1=outs[1], out2=outs[2])

    return Case(ALIAS, f"{OP} N={N} C={C} HxW={HxW} G={G}",
                {"N": N, "C": C, "HxW": HxW, "group": G, "output_mask": [True, True, True]},
                make, run_pyaclnn, ("native_group_norm_backward",), run_torch,
                # read dy, x, mean, rstd, gamma; write grad_input (N*C*HxW), grad_gamma, grad_beta (C).
                # One read of dy and x suffices: a (n, group) slab (C/G*HxW elements) fits in cache,
                # so its sums and its grad_input can be made in the same pass.
                bytes_read=lambda i: nbytes(i["dy"], i["x"], i["mean"], i["rstd"], i["gamma"]),
                bytes_written=lambda i: i["x"].nbytes + 2 * i["gamma"].nbytes,
                steady_outputs=lambda i: [((N, C, H, W), F32), ((C,), F32), ((C,), F32)],
                plan_pyaclnn=plan_pyaclnn, peer_out_ops=("native_group_norm_backward.out",),
                torch_outputs=torch_outputs, run_torch_out=run_torch_out)


def bench_case(quick: bool) -> Case:
    """The large-table case: N=32, C=256, 56x56, 32 groups (--quick: 2x8x4x4, 4 groups)."""
    return case(2, 8, 4, 4, 4) if quick else case(32, 256, 56, 56, 32)


def small_case(elements: int) -> Case:
    """The small-call case of ``elements`` (128: N=2 C=8 HxW=8, 4096: N=4 C=16 HxW=64; 4 groups)."""
    N, C, HxW = (2, 8, 8) if elements == 128 else (4, 16, 64)
    return case(N, C, HxW, 1, 4)
