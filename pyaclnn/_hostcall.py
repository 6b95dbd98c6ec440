"""NumPy in, NumPy out: one operator on host arrays, on whichever backend runs.

This is the object layer's job, above the backends (which import nothing of it):
- a runtime that computes on host arrays directly (the NumPy backend's ``run_arrays``) gets
  the arrays themselves, and pyaclnn Tensors as views of its emulated device memory;
- otherwise (a device): upload, two phases, download. Inputs keep their strides (the memory
  they span is copied, not made contiguous first); outputs are uploaded too, so whatever the
  operator leaves untouched keeps the caller's values.
"""
from __future__ import annotations

from itertools import repeat
from typing import Any

import numpy as np

from ._executor import Executor, default_stream
from ._signature import c_values
from ._tensor import Tensor, default_device


def run_host(backend: Any, op: str, args: tuple, values_checked: bool = False) -> None:
    """Run ``op`` on C-shaped ``args`` (ndarrays or Tensors in tensor slots; outputs written in place).
    A plain value of a wrong Python type is a TypeError naming its C parameter, on both backends
    (``values_checked``: the caller has put ``args`` through ``c_values`` already)."""
    runtime = backend.runtime
    if not values_checked:
        args = c_values(runtime.op_info(op).signature, args)
    run_arrays = getattr(runtime, "run_arrays", None)
    if run_arrays is not None:
        if any(map(isinstance, args, repeat(Tensor))):  # small calls: no new tuple unless a Tensor is there
            args = tuple(runtime.tensor_view(a.storage.addr, a.shape, a.dtype, a.strides, a.offset)
                         if isinstance(a, Tensor) else a for a in args)
        run_arrays(op, args)
        return
    run_on_device(backend, op, args)


def run_on_device(backend: Any, op: str, args: tuple) -> None:
    info = backend.runtime.op_info(op)
    outputs = set(info.outputs or ())
    device = default_device()
    made: list[Tensor] = []
    downloads: list[tuple[np.ndarray, Tensor]] = []
    device_args = list(args)
    try:
        for i, kind in enumerate(info.kinds):
            value = args[i]
            if kind == "tensor" and isinstance(value, np.ndarray):
                tensor = Tensor.from_numpy(value, device)
                made.append(tensor)
                if i in outputs:
                    downloads.append((value, tensor))
                device_args[i] = tensor
        stream = default_stream(device)
        with Executor.from_args(op, device_args) as executor:
            executor.run(stream)
        stream.synchronize()
        for host, tensor in downloads:
            host[...] = tensor.numpy()
    finally:
        for tensor in made:
            tensor.close()
