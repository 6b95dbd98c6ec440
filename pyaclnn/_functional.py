"""NumPy in, NumPy out: one call runs one operator on the active backend.

Inputs may be any-strided NumPy arrays (passed with their strides, not copied first), pyaclnn
Tensors, or anything with ``__dlpack__`` or ``__array__`` (a torch CPU tensor is viewed
without a copy, bfloat16 included; one with ``requires_grad=True`` is read as detached);
outputs are new NumPy arrays. Outputs start as zeros, so where the library
writes nothing (empty inputs) the result is zeros rather than garbage. Validation is the
library's own (the NumPy backend runs the shared op specs; the device judges on acl), so
both backends raise the same error class and status for the same call.
"""
from __future__ import annotations

from typing import Any, Literal, Sequence, overload

import numpy as np

from . import _backend
from ._executor import ce_reduction, mse_reduction
from ._interop import host_array
from ._hostcall import run_host
from ._spec import group_norm_backward as _gn
from ._spec import mse_loss_backward as _mse
from ._spec import prelu_backward as _prelu
from ._tensor import Tensor

__all__ = ["mse_loss_backward", "group_norm_backward", "cross_entropy_loss_grad", "prelu_backward"]

Array = Any  # np.ndarray, a pyaclnn Tensor, a DLPack tensor (torch...) or anything np.asarray takes


def _arg(x: Any) -> Any:
    if x is None or type(x) is np.ndarray or isinstance(x, (np.ndarray, Tensor)):
        return x
    return host_array(x)


def _shape(x: Any) -> tuple[int, ...]:
    return () if x is None else tuple(x.shape)


def _dtype(x: Any, default: Any = np.float32) -> np.dtype:
    return np.dtype(default) if x is None else np.dtype(x.dtype)


def mse_loss_backward(grad_output: Array, input: Array, target: Array, reduction: str | int = "mean") -> np.ndarray:
    """Gradient of MSE loss w.r.t. ``input`` (aclnnMseLossBackward).

    ``out = (input - target) * grad_output * cof``, broadcast over the three, with
    ``cof = 2 / input.size`` for 'mean' (the size of ``input`` itself, as the device does) and
    ``2`` for 'none' and 'sum'. Returns an array of the broadcast shape and ``input``'s dtype.
    """
    r = mse_reduction(reduction)
    g, x, y = _arg(grad_output), _arg(input), _arg(target)
    backend = _backend.current()
    out = backend.new_output(_mse.out_shape(_shape(g), _shape(x), _shape(y)), _dtype(x))
    run_host(backend, "MseLossBackward", (g, x, y, r, out))
    return out


AllTrue = tuple[Literal[True], Literal[True], Literal[True]]


@overload
def group_norm_backward(grad_out: Array, input: Array, mean: Array, rstd: Array, gamma: Array | None,
                        N: int, C: int, HxW: int, group: int,
                        output_mask: AllTrue = (True, True, True)) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
@overload
def group_norm_backward(grad_out: Array, input: Array, mean: Array, rstd: Array, gamma: Array | None,
                        N: int, C: int, HxW: int, group: int,
                        output_mask: Sequence[bool] = ...
                        ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]: ...


def group_norm_backward(grad_out: Array, input: Array, mean: Array, rstd: Array, gamma: Array | None,
                        N: int, C: int, HxW: int, group: int,
                        output_mask: Sequence[bool] = (True, True, True)
                        ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Gradients of GroupNorm (aclnnGroupNormBackward) -> (grad_input, grad_gamma, grad_beta).

    ``grad_out``/``input`` hold N*C*HxW elements (read as (N, C, HxW)); ``mean``/``rstd`` hold
    N*group (read as (N, group)); ``gamma`` is (C,) or None (ones). An output whose
    ``output_mask`` entry is False is not computed and returned as None (so with the default
    mask, or a literal ``(True, True, True)``, the three are arrays, as type checkers see).
    """
    dy, x, m, r, g = _arg(grad_out), _arg(input), _arg(mean), _arg(rstd), _arg(gamma)
    mask = tuple(bool(v) for v in output_mask)
    shapes = _gn.output_shapes(_shape(x), None if g is None else _shape(g), int(C))
    dt = _dtype(dy)
    dtypes = (dt, _dtype(m, dt), _dtype(m, dt))  # 950: dgamma/dbeta follow mean
    backend = _backend.current()
    outs = [backend.new_output(s, d) if (i >= len(mask) or mask[i]) else None
            for i, (s, d) in enumerate(zip(shapes, dtypes))]
    run_host(backend, "GroupNormBackward", (dy, x, m, r, g, int(N), int(C), int(HxW), int(group), mask, *outs))
    grad_input, grad_gamma, grad_beta = outs
    return grad_input, grad_gamma, grad_beta


def cross_entropy_loss_grad(grad_loss: Array, log_prob: Array, target: Array, weight: Array | None = None,
                            grad_zloss: Array | None = None, lse_for_zloss: Array | None = None,
                            reduction: str | int = "mean", ignore_index: int = -100,
                            label_smoothing: float = 0.0, lse_square_scale_for_zloss: float = 0.0) -> np.ndarray:
    """Gradient of cross-entropy w.r.t. ``log_prob`` (aclnnCrossEntropyLossGrad).

    ``out[i, j] = exp(log_prob[i, j]) * nll_i - [j == target_i] * nll_i`` with
    ``nll_i = g * w[target_i] * (target_i != ignore_index)``, ``g`` being ``grad_loss[i]`` for
    'none', ``grad_loss[0]`` for 'sum', and ``grad_loss[0] / sum of the non-ignored weights`` for
    'mean' (NaN everywhere when every target is ignored, as on the device). The zloss inputs
    are accepted and have no effect, as documented.
    """
    red = ce_reduction(reduction)
    gl, lp, t, w = _arg(grad_loss), _arg(log_prob), _arg(target), _arg(weight)
    gz, lse = _arg(grad_zloss), _arg(lse_for_zloss)
    backend = _backend.current()
    out = backend.new_output(_shape(lp), _dtype(gl, _dtype(lp)))
    run_host(backend, "CrossEntropyLossGrad", (gl, lp, t, w, gz, lse, red, int(ignore_index),
                                              float(label_smoothing), float(lse_square_scale_for_zloss), out))
    return out


def prelu_backward(grad_output: Array, input: Array, weight: Array) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of PReLU (aclnnPreluBackward) -> (grad_input, grad_weight).

    Channels are dim 1 of ``input`` (a 0-D or 1-D input is one channel); ``weight`` holds one
    value per channel, or a single value for all. ``grad_weight`` is (C,), or ``weight``'s shape
    when it has one element. ``grad_output`` may broadcast to ``input``'s shape.
    """
    dy, x, w = _arg(grad_output), _arg(input), _arg(weight)
    gi_shape, gw_shape = _prelu.output_shapes(_shape(x), _shape(w))
    backend = _backend.current()
    grad_input, grad_weight = backend.new_output(gi_shape, _dtype(x)), backend.new_output(gw_shape, _dtype(x))
    run_host(backend, "PreluBackward", (dy, x, w, grad_input, grad_weight))
    return grad_input, grad_weight
