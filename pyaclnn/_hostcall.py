"""Running one operator on host arrays through a device: upload, two phases, download.

Backend-neutral: used by the acl backend for the NumPy-in/NumPy-out functions. Inputs keep
their strides (the memory they span is copied, not made contiguous first); outputs are
uploaded too, so whatever the operator leaves untouched keeps the caller's values.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._executor import Executor, default_stream
from ._runtime import ARG_KINDS, N_INPUT_TENSORS
from ._tensor import Tensor, default_device


def run_on_device(op: str, args: tuple) -> None:
    device = default_device()
    made: list[Tensor] = []
    downloads: list[tuple[np.ndarray, Tensor]] = []
    device_args: list[Any] = []
    tensor_index = 0
    try:
        for value, kind in zip(args, ARG_KINDS[op]):
            if kind == "tensor":
                if isinstance(value, np.ndarray):
                    tensor = Tensor.from_numpy(value, device)
                    made.append(tensor)
                    if tensor_index >= N_INPUT_TENSORS[op]:
                        downloads.append((value, tensor))
                    value = tensor
                tensor_index += 1
            device_args.append(value)
        stream = default_stream(device)
        with Executor.from_args(op, device_args) as executor:
            executor.run(stream)
        stream.synchronize()
        for host, tensor in downloads:
            host[...] = tensor.numpy()
    finally:
        for tensor in made:
            tensor.close()
