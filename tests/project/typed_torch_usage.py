"""Torch in, torch out, as a type checker sees it and as it runs: each NumPy-in/out call's type
is asserted statically (``assert_type``, checked by mypy --strict in test_types.py) and its
result's class at run time (``is_``, the same test runs this file), so the hints say what the
functions return. Not collected by pytest itself (no test_ prefix)."""
from __future__ import annotations

from typing import Any, assert_type

import numpy as np
import torch

import pyaclnn


def is_(value: object, kind: type) -> None:
    assert isinstance(value, kind), f"{type(value).__name__} is not {kind.__name__}"


class HasArray:
    """An ``__array__`` object of no type the overloads name: the fallback overload."""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.ones((2, 4, 3), np.float32)


a = np.ones((2, 4, 3), np.float32)
stats = np.ones((2, 2), np.float32)
logp = np.log(np.full((2, 4), 0.25, np.float32))
labels = np.array([1, 3], np.int64)
t, t_stats, t_logp, t_labels = (torch.from_numpy(x) for x in (a, stats, logp, labels))

# NumPy in, NumPy out (a pyaclnn Tensor and NumPy scalars are NumPy in too)
mse = pyaclnn.mse_loss_backward(a, a, a, reduction="mean")
assert_type(mse, np.ndarray)
is_(mse, np.ndarray)
mse_obj = pyaclnn.mse_loss_backward(pyaclnn.Tensor.from_numpy(a), a, np.float32(0.5))
assert_type(mse_obj, np.ndarray)
is_(mse_obj, np.ndarray)
gi, gw = pyaclnn.prelu_backward(a, a, np.ones(4, np.float32))
assert_type(gi, np.ndarray)
assert_type(gw, np.ndarray)
is_(gw, np.ndarray)
ce = pyaclnn.cross_entropy_loss_grad(np.float32(1.0), logp, labels)
assert_type(ce, np.ndarray)
is_(ce, np.ndarray)
dx, dgamma, dbeta = pyaclnn.group_norm_backward(a, a, stats, stats, None, 2, 4, 3, 2)
assert_type(dbeta, np.ndarray)
is_(dbeta, np.ndarray)

# torch in, torch out
mse_t = pyaclnn.mse_loss_backward(t, t, t)
assert_type(mse_t, torch.Tensor)
is_(mse_t, torch.Tensor)
gi_t, gw_t = pyaclnn.prelu_backward(t, t, torch.ones(4))
assert_type(gi_t, torch.Tensor)
assert_type(gw_t, torch.Tensor)
is_(gi_t, torch.Tensor)
is_(gw_t, torch.Tensor)
ce_t = pyaclnn.cross_entropy_loss_grad(torch.tensor(1.0), t_logp, t_labels)
assert_type(ce_t, torch.Tensor)
is_(ce_t, torch.Tensor)
dx_t, dgamma_t, dbeta_t = pyaclnn.group_norm_backward(t, t, t_stats, t_stats, None, 2, 4, 3, 2)
assert_type(dx_t, torch.Tensor)
assert_type(dbeta_t, torch.Tensor)
is_(dx_t, torch.Tensor)
is_(dbeta_t, torch.Tensor)
masked_t = pyaclnn.group_norm_backward(t, t, t_stats, t_stats, None, 2, 4, 3, 2, output_mask=[True, False, True])
assert_type(masked_t, tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None])
is_(masked_t[0], torch.Tensor)
assert masked_t[1] is None

# a mix is torch out, wherever the torch tensor is (here only the int64 target, or a Parameter)
ce_mix = pyaclnn.cross_entropy_loss_grad(np.float32(1.0), logp, t_labels)
assert_type(ce_mix, torch.Tensor)
is_(ce_mix, torch.Tensor)
mse_mix = pyaclnn.mse_loss_backward(a, a, torch.nn.Parameter(t))
assert_type(mse_mix, torch.Tensor)
is_(mse_mix, torch.Tensor)
gn_mix = pyaclnn.group_norm_backward(a, a, stats, stats, torch.ones(4), 2, 4, 3, 2)
assert_type(gn_mix, tuple[torch.Tensor, torch.Tensor, torch.Tensor])
is_(gn_mix[2], torch.Tensor)

# an argument of another type: either (here NumPy out)
other = pyaclnn.mse_loss_backward(HasArray(), a, a)
assert_type(other, np.ndarray | torch.Tensor)
is_(other, np.ndarray)
