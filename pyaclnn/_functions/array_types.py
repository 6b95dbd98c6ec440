"""The argument and result types of the NumPy-in/out functions (pyaclnn/ops/<op>/api.py), for type
checkers: NumPy in, NumPy out; a torch tensor among the tensor arguments, torch tensors out
(pyaclnn._functions.torch_out, the run-time rule these types state).

Each function has three overloads, tried in order:
1. every tensor argument a ``NumPyIn`` (an ndarray, a NumPy scalar, a pyaclnn Tensor, a Python
   number or sequence): ``np.ndarray`` out;
2. every one a ``TorchIn``, so (the first having failed) at least one is a ``torch.Tensor``, a mix
   included: ``torch.Tensor`` out;
3. anything else (another DLPack or ``__array__`` object, an ``Any``): ``NumPyOrTorch``.
The first overload carries ``# type: ignore[overload-overlap]``: the second accepts its arguments
too, and the first match is the rule meant. An argument typed ``np.ndarray | torch.Tensor`` goes
through mypy's union math (one overload per member), not straight to the torch overload.
torch is imported for type checkers only, never at run time.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, Union

import numpy as np

from .._objects.tensor import Tensor

if TYPE_CHECKING:
    import torch

__all__ = ["NumPyIn", "TorchIn", "NumPyOrTorch"]

# What gives NumPy out (float covers int and bool for type checkers; lists and tuples are sequences)
NumPyIn = Union[np.ndarray, np.generic, Tensor, float, Sequence[Any]]
# What gives torch out when the NumPy overload did not match: a torch tensor among NumPyIn values
TorchIn = Union[NumPyIn, "torch.Tensor"]
# The result of a call whose argument types say neither
NumPyOrTorch = Union[np.ndarray, "torch.Tensor"]
