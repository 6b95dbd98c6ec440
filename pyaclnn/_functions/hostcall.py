"""One operator on host arrays, through the executor, on whichever backend runs.

The NumPy-in/out functions (pyaclnn/ops/<op>/api.py, through pyaclnn._functions.functional) call here:
their arrays become device Tensors, the executor plans the call (phase 1: the runtime's
``workspace_size``, aclnn<Op>GetWorkspaceSize) and launches it (pyaclnn._objects.launch.launch) on the
thread's default stream, which is then synchronized. Pyaclnn Tensors among the arguments are
used as they are, once their own queued launches have finished. The arrays become Tensors
- on the NumPy backend, where device memory is host memory, in place: the runtime makes their
  bytes device memory for the call (``register_host``, modelled on aclrtHostRegister), so the
  kernel reads the caller's arrays and writes the new outputs directly;
- on a device, as copies: upload, two phases, download. Inputs keep their strides (the memory
  they span is copied, not made contiguous first); outputs are uploaded too, so whatever the
  operator leaves untouched keeps the caller's values (zeros).

Repeated calls: a call that succeeded leaves a ``CallMemo`` on the backend, under its
arguments' metadata (each array's shape, dtype and strides; each other argument's type and
value). A later call with the same metadata reuses it: the C values, the output shapes and
dtypes and, on the NumPy backend, the phase-2 kernel the first call's executor was planned with
(the runtime's ``executor_kernel``: phase 1 is a pure function of that metadata and the SoC, so
it passes again), run on the caller's arrays. It is the host-side counterpart of aclnn's op
cache. On a device the memo's ``run`` is the whole call: the library checks every call there.
Small calls are dominated by this bookkeeping (issue 12).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple, cast

import numpy as np

from .._objects import lifetimes
from .._objects.device import default_device
from .._objects.stream import default_stream
from .._objects.executor import Executor
from .._objects.interop import host_span
from .._objects.tensor import Storage, Tensor
from ..errors import NotSupportedError

if TYPE_CHECKING:
    from .._objects.backend import Backend
    from .._objects.device import Device
    from .._runtime import HostRuntime

__all__ = ["CallMemo", "run_host", "run_call", "memo_for", "run_memo", "remember_memo"]

_BYTES = np.dtype(np.uint8)
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


def run_host(backend: Backend, op: str, args: tuple) -> Callable[[tuple], None]:
    """Run ``op`` on C-shaped ``args`` (ndarrays or Tensors in tensor slots, plain values already
    through ``c_values``; output arrays written in place). Returns what a later call whose
    (host array) arguments have the same metadata runs: the kernel alone on the NumPy backend,
    the whole call on a device."""
    kernel = run_call(backend, op, args)
    if kernel is not None:
        return kernel

    def again(later: tuple) -> None:
        run_call(backend, op, later)
    return again


def run_call(backend: Backend, op: str, args: tuple) -> Callable[[tuple], None] | None:
    """One call of ``op`` through the executor (module docstring); returns its phase-2 kernel
    where the runtime can give it (the NumPy backend), else None."""
    runtime = backend.runtime
    host = cast("HostRuntime", runtime) if getattr(runtime, "register_host", None) is not None else None
    info = runtime.op_info(op)
    outputs = info.outputs or ()
    device = default_device()
    made: list[Tensor] = []         # the Tensors made for the arrays (closed after the call)
    registered: list[int] = []      # host memory made device memory (given back after the call)
    downloads: list[tuple[np.ndarray, Tensor]] = []
    tensor_args = list(args)
    kernel = None
    try:
        for i, kind in enumerate(info.kinds):
            a = args[i]
            if kind != "tensor":
                continue
            if isinstance(a, np.ndarray):
                if type(a) is not np.ndarray:  # a subclass (a masked array: its data, as from_numpy copies it)
                    a = a.view(np.ndarray)
                # strides that are not whole elements (a packed record's field) are no tensor's; a
                # C-contiguous array needs no look at them on the NumPy backend (_in_place ignores them)
                whole = (host is not None and a.flags.c_contiguous) or all(st % a.itemsize == 0 for st in a.strides)
                try:
                    shared = _in_place(host, a, device, registered) if host is not None and whole else None
                    copied = shared is None
                    t = Tensor.from_numpy(a if whole else np.ascontiguousarray(a), device) if shared is None else shared
                except NotSupportedError as exc:  # a dtype with no aclDataType: name the parameter
                    raise NotSupportedError(f"aclnn{op}GetWorkspaceSize: {info.signature.params[i].name}: {exc}") \
                        from None
                if copied and i in outputs:
                    downloads.append((a, t))
                made.append(t)
                tensor_args[i] = t
            elif isinstance(a, Tensor):  # used on the default stream: its queued launches finish first
                lifetimes.wait_for(a.storage.uses)
        stream = default_stream(device)
        with Executor.from_args(op, tensor_args) as executor:
            if host is not None:
                kernel = host.executor_kernel(executor.planned.handle)
            executor.run(stream)
        stream.synchronize()
        for array, t in downloads:
            array[...] = t.numpy()
    finally:
        for t in made:
            t.close()
        for addr in registered:
            host.unregister_host(addr)  # type: ignore[union-attr]  # registered only with a host runtime
    return kernel


def _in_place(host: HostRuntime, array: np.ndarray, device: Device, registered: list[int]) -> Tensor | None:
    """A Tensor on ``array``'s own memory, made device memory for the call (None: it cannot be,
    see ``register_host``; the caller copies it). An empty array has no memory to share."""
    if array.size == 0:
        return Tensor.empty(array.shape, array.dtype, device)
    item = array.itemsize
    if array.flags.c_contiguous:  # the usual case: its bytes in order (host_span costs ~10 us)
        span, first, strides = array.reshape(-1).view(_BYTES), 0, None
    else:
        span, first = host_span(array)
        strides = [s // item for s in array.strides]
    addr = host.register_host(span)
    if addr is None:
        return None
    registered.append(addr)
    # a Storage pyaclnn never frees (the caller's memory); shape and strides are an ndarray's, valid as they are
    return Tensor(Storage.borrowed(device, addr, span.nbytes), array.shape, array.dtype, strides, first)
