"""NumPy in, NumPy out: one operator on host arrays, on whichever backend runs.

This is the object layer's job, above the backends (which import nothing of it):
- a runtime that computes on host arrays directly (the NumPy backend's ``prepare_arrays``)
  gets the arrays themselves, and pyaclnn Tensors as views of its emulated device memory;
- otherwise (a device): upload, two phases, download. Inputs keep their strides (the memory
  they span is copied, not made contiguous first); outputs are uploaded too, so whatever the
  operator leaves untouched keeps the caller's values.

Repeated calls: a call that succeeded leaves a ``CallMemo`` on the backend, under its
arguments' metadata (each array's shape, dtype and strides; each other argument's type and
value). A later call with the same metadata reuses it: the C values, the output shapes and
dtypes and, on the NumPy backend, phase 1 (the checks, a pure function of that metadata and
the SoC) are not worked out again. It is the host-side counterpart of aclnn's op cache. On a
device the memo's ``run`` is the whole upload/two-phase/download call: the library checks
every call there. Small calls are dominated by this bookkeeping (issue 12).
"""
from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, cast

import numpy as np

from . import _streamorder
from ._device import default_device, default_stream
from ._executor import Executor
from ._signature import c_values
from ._tensor import Tensor

if TYPE_CHECKING:
    from ._backend import Backend
    from ._runtime import HostRuntime

__all__ = ["CallMemo", "run_host", "memo_for", "run_memo", "remember_memo"]

MEMOS_MAX = 1024  # memos kept per backend; the table starts afresh when full


class CallMemo(NamedTuple):
    """What a NumPy-in/NumPy-out call worked out, valid for arguments of the same metadata.

    The C arguments of the call are the caller's first ``n_arrays`` arguments (arrays, or None
    for an absent optional tensor), then ``values`` (the plain arguments converted to their C
    types), then new zeroed outputs: ``(shape, dtype)`` each, or None for one not asked for."""
    n_arrays: int
    values: tuple
    outputs: tuple
    zeros: Callable[..., np.ndarray]
    run: Callable[[tuple], None]


# Argument types whose value is all a call's phase 1 sees (keyed by type and value: True != 1).
_VALUE_TYPES = frozenset((int, float, str, bool, type(None)))


def _key(op: str, args: tuple, _nd: Any = np.ndarray, _values: frozenset = _VALUE_TYPES) -> tuple | None:
    """``op`` and each argument's metadata, or None when an argument is anything else (a Tensor,
    a torch tensor, an ndarray subclass, a list: no memo). A tuple (GroupNorm's output mask) is
    keyed with its elements' types, so (1, 1, 1) never reuses the memo of (True, True, True).
    The names read are default arguments (locals): cheaper than globals on every call."""
    key: list[Any] = [op]
    append = key.append
    for a in args:
        t = type(a)
        if t is _nd:
            append(a.shape)
            append(a.dtype)
            append(a.strides)
        elif t in _values:
            append(t)
            append(a)
        elif t is tuple:
            append(a)
            append(tuple(map(type, a)))
        else:
            return None
    return tuple(key)


def memo_for(backend: Backend, op: str, args: tuple) -> CallMemo | None:
    """The memo a call of ``op`` with arguments of this metadata left, if any."""
    key = _key(op, args)
    if key is None:
        return None
    try:
        return backend.call_memos.get(key)
    except TypeError:  # a tuple holding something unhashable
        return None


def run_memo(memo: CallMemo, args: tuple) -> list[Any]:
    """Run a call memoised before on ``args`` (the caller's, arrays first); returns the outputs
    (ndarrays, None for one not asked for)."""
    zeros = memo.zeros
    outs = [None if spec is None else zeros(*spec) for spec in memo.outputs]
    memo.run((*args[:memo.n_arrays], *memo.values, *outs))
    return outs


def remember_memo(backend: Backend, op: str, args: tuple, memo: CallMemo) -> None:
    """Keep ``memo`` for later calls with ``args``' metadata (nothing if it has no key)."""
    key = _key(op, args)
    if key is None:
        return
    memos = backend.call_memos
    if len(memos) >= MEMOS_MAX:
        memos.clear()
    try:
        memos[key] = memo
    except TypeError:  # a tuple holding something unhashable
        pass


def run_host(backend: Backend, op: str, args: tuple, values_checked: bool = False) -> Callable[[tuple], None]:
    """Run ``op`` on C-shaped ``args`` (ndarrays or Tensors in tensor slots; outputs written in
    place). A plain value of a wrong Python type is a TypeError naming its C parameter, on both
    backends (``values_checked``: the caller has put ``args`` through ``c_values`` already).

    Returns what to run for a later call whose (host array) arguments have the same metadata:
    phase 2 alone on the NumPy backend, whose phase 1 has passed; the whole call on a device."""
    runtime = backend.runtime
    if not values_checked:
        args = c_values(runtime.op_info(op).signature, args)
    prepare = getattr(runtime, "prepare_arrays", None)
    if prepare is None:
        run_on_device(backend, op, args)
        return lambda later: run_on_device(backend, op, later)
    if any(map(isinstance, args, repeat(Tensor))):  # a bad address is the kernel's fault: named aclnn<Op>
        api = f"aclnn{op}"
        outputs = runtime.op_info(op).outputs or ()
        for a in args:  # computed now, on the host: the streams' queued launches on them finish first
            if isinstance(a, Tensor):
                _streamorder.wait_for(a.storage.uses)
        host = cast("HostRuntime", runtime)  # it has prepare_arrays: device memory is host memory
        args = tuple(host.tensor_view(a.storage.addr, a.shape, a.dtype, a.strides, a.offset, api, i in outputs)
                     if isinstance(a, Tensor) else a for i, a in enumerate(args))
    run: Callable[[tuple], None] = prepare(op, args)
    run(args)
    return run


def run_on_device(backend: Backend, op: str, args: tuple) -> None:
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
