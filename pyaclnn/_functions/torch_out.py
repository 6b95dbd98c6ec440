"""Torch in, torch out: the outputs of a NumPy-in/out call as torch CPU tensors when the caller
passed torch tensors (pyaclnn._functions.functional.call).

The rule: if any tensor argument is a ``torch.Tensor`` (or a subclass: ``nn.Parameter``), every
output is a torch CPU tensor sharing the new output array's memory (``torch.from_numpy``: no
copy; bfloat16 through its uint16 bits, as torch.from_numpy has no ml_dtypes bfloat16). A mix of
torch tensors and NumPy arrays (or pyaclnn Tensors) is torch out too. The outputs are plain
tensors (``requires_grad`` False, no ``grad_fn``): the call is a kernel, not an autograd op.
torch is never imported here: a caller who passed torch tensors has imported it
(``sys.modules``), and one who did not gets NumPy arrays.
"""
from __future__ import annotations

import sys
from typing import Any, Sequence

import numpy as np

__all__ = ["torch_of", "to_torch"]

_BF16_KIND = "V"  # ml_dtypes.bfloat16 is a NumPy void-kind dtype


def torch_of(tensors: Sequence[Any]) -> Any | None:
    """The torch module when one of ``tensors`` (the caller's tensor arguments) is a torch tensor,
    else None. Looks torch up in ``sys.modules`` only: no import."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    tensor = torch.Tensor
    for t in tensors:
        if isinstance(t, tensor):
            return torch
    return None


def to_torch(torch: Any, outs: list[Any]) -> list[Any]:
    """``outs`` (new ndarrays, None for an output not asked for) as torch CPU tensors sharing
    their memory. One loop, no call per output but torch's (it runs on every small call)."""
    from_numpy = torch.from_numpy
    tensors: list[Any] = []
    for a in outs:
        if a is None:
            tensors.append(None)
        elif a.dtype.kind != _BF16_KIND:
            tensors.append(from_numpy(a))
        else:  # ml_dtypes.bfloat16: torch.from_numpy has no such dtype, its bits do
            tensors.append(from_numpy(a.view(np.uint16)).view(torch.bfloat16))
    return tensors
