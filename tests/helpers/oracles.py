"""The independent oracles the operators are checked against: PyTorch CPU in float64 (autograd or
aten's own backward kernels), with the documented closed form where torch is not installed (the
oldest-dependencies run). One definition each, so no two tests check against two formulas."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


def f64(a: Any) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def t64(a: Any) -> Any:
    """A float64 torch tensor of a copy of ``a``."""
    import torch
    return torch.from_numpy(np.asarray(a, dtype=np.float64).copy())


def mse_oracle(g: np.ndarray, x: np.ndarray, y: np.ndarray, reduction: int) -> np.ndarray:
    """aclnnMseLossBackward: aten's mse_loss_backward with "sum" (2*(x-y)*g), divided by
    ``self.numel()`` for mean (1) as the device does (ops.md §1.1), which aten's own mean cannot
    express once grad_output is larger than self; operands broadcast."""
    shape = np.broadcast_shapes(g.shape, x.shape, y.shape)
    gb, xb, yb = (np.broadcast_to(f64(a), shape) for a in (g, x, y))
    torch = _torch()
    if torch is None:
        ref = 2 * (xb - yb) * gb
    else:
        ref = torch.ops.aten.mse_loss_backward(t64(gb), t64(xb), t64(yb), 2).numpy()
    return ref / x.size if reduction == 1 else ref


def ce_oracle(grad_loss: Any, log_prob: np.ndarray, target: np.ndarray, weight: np.ndarray | None = None,
              reduction: str = "mean", ignore_index: int = -100, label_smoothing: float = 0.0) -> np.ndarray:
    """aclnnCrossEntropyLossGrad: autograd of torch's cross_entropy on logits whose log_softmax
    is (up to rounding) ``log_prob``, the loss's gradient ``grad_loss`` (a scalar for mean/sum)."""
    torch = pytest.importorskip("torch")
    z = t64(log_prob).requires_grad_()
    loss = torch.nn.functional.cross_entropy(z, torch.from_numpy(np.asarray(target, np.int64)),
                                             weight=None if weight is None else t64(weight),
                                             ignore_index=ignore_index, reduction=reduction,
                                             label_smoothing=label_smoothing)
    loss.backward(t64(grad_loss).reshape(loss.shape))
    return z.grad.numpy()


def prelu_oracle(g: np.ndarray, x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """aclnnPreluBackward: torch autograd of F.prelu (weight flattened; channel dim 1) in float64;
    without torch, its closed form."""
    torch = _torch()
    wf = np.reshape(f64(w), -1)
    gb = np.broadcast_to(f64(g), x.shape)
    if torch is None:
        wb = wf.reshape((1, -1) + (1,) * (x.ndim - 2)) if x.ndim > 1 else wf
        gw = np.where(x > 0, 0, x * gb)
        axes = tuple(i for i in range(x.ndim) if i != 1)
        return np.where(x > 0, gb, wb * gb), (gw.sum(axis=axes) if wf.size > 1 else gw.sum().reshape(1))
    xt = t64(x).requires_grad_()
    wt = t64(wf).requires_grad_()
    torch.nn.functional.prelu(xt, wt).backward(t64(gb))
    return xt.grad.numpy(), wt.grad.numpy()
