"""NumPy in, NumPy out: what every operator's function (pyaclnn/ops/<op>/api.py) is made of.

One call runs one operator on the active backend.
Inputs may be any-strided NumPy arrays (passed with their strides, not copied first), pyaclnn
Tensors, or anything with ``__dlpack__`` or ``__array__`` (a torch CPU tensor is viewed
without a copy, bfloat16 included; one with ``requires_grad=True`` is read as detached);
outputs are new NumPy arrays, or torch CPU tensors when any tensor argument is a torch tensor
(pyaclnn._functions.torch_out: mixed inputs give torch, bfloat16 included, no autograd). Outputs start as zeros, so where the library
writes nothing (empty inputs) the result is zeros rather than garbage. Validation is the
library's own (the NumPy backend runs the shared op specs; the device judges on acl), so
both backends raise the same error class and status for the same call.
"""
from __future__ import annotations

import os
import sys
import weakref
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from .._objects import backend as _backend
from .._objects.interop import CONVERTERS_MAX, Converter, always_numbers, converter, host_array
from .hostcall import _VALUE_TYPES, CallMemo, _key, memo_for, remember_memo, run_host, run_memo
from .torch_out import to_torch, torch_of
from .._registry.signature import c_values
from .._objects.tensor import Tensor
from ..errors import AclError, OutputTooLargeError

if TYPE_CHECKING:
    from .._objects.backend import Backend

__all__ = ["Array", "OutputSpec", "Plan", "call", "_shape", "_dtype"]

Array = Any  # np.ndarray, a pyaclnn Tensor, a DLPack tensor (torch...) or anything np.asarray takes


_NOT_NUMBERS = frozenset("USOMm")  # str, bytes, object, datetime, timedelta (not V: bfloat16 is one)
_PYTHON_VALUES = frozenset((float, list, tuple))  # NumPy reads Python floats (in lists) as float64
_FLOAT64 = np.dtype(np.float64)

# The arrays _arg made of Python floats (or lists of them): id -> (name, what it was). NumPy
# reads them as float64, a dtype the caller never wrote, which the library may refuse; the
# refusal then says so (_first_call). An entry leaves with its array.
_FROM_PYTHON: dict[int, tuple[str, str]] = {}


_READERS: dict[type, Converter] = {}  # the types _arg has vetted, each with its _interop converter
# Those whose converter gives arrays of numbers only (torch tensors: _interop.always_numbers):
# their arrays skip the dtype check.
_NUMBER_READERS: dict[type, Converter] = {}


def _arg(x: Any, name: str, api: str, _numbers: Callable[[type], Converter | None] = _NUMBER_READERS.get,
         _reader: Callable[[type], Converter | None] = _READERS.get) -> Any:
    """An argument for a tensor parameter: None, a Tensor, or an ndarray of numbers (a DLPack or
    ``__array__`` object is viewed as one, see _interop.host_array). Text or objects are a
    TypeError naming ``name``. A type seen before goes straight to its converter: on calls of
    ~5 us each step saved here counts (issue 16: a torch tensor costs one lookup and its
    conversion). Python floats and lists are never memoised: the arrays made of them are
    remembered for the error hint (_FROM_PYTHON)."""
    read = _numbers(type(x))
    if read is not None:
        return read(x)
    read = _reader(type(x))
    if read is not None:
        x = read(x)
    else:
        if x is None or isinstance(x, Tensor):
            return x
        if type(x) is not np.ndarray:
            if isinstance(x, (str, bytes)):
                raise _not_a_tensor(name, api, x)
            value, x = x, host_array(x)
            if type(value) in _PYTHON_VALUES:
                if x.dtype == _FLOAT64:
                    what = f"the Python float {value!r}" if type(value) is float else f"a Python {type(value).__name__}"
                    _FROM_PYTHON[id(x)] = (name, what)
                    weakref.finalize(x, _FROM_PYTHON.pop, id(x), None)
            else:
                if len(_READERS) + len(_NUMBER_READERS) >= CONVERTERS_MAX:
                    _READERS.clear()
                    _NUMBER_READERS.clear()
                cls = type(value)
                if always_numbers(cls) and _TORCH_TENSOR is _Unseen:
                    _see_torch()
                (_NUMBER_READERS if always_numbers(cls) else _READERS)[cls] = converter(cls)
    if x.dtype.kind in _NOT_NUMBERS:
        raise _not_a_tensor(name, api, x)
    return x


class _Unseen:
    """Stands for torch's types until _arg meets a torch tensor (no object has this type)."""


# What call needs to view torch tensors inline, set by _see_torch (torch is never imported
# here): torch.Tensor and torch.nn.Parameter (_interop.always_numbers: their numpy() gives
# numbers or refuses), and how to view one. That is numpy() itself at first, untested: what it
# refuses (requiring grad with grad mode on, bfloat16, lazy conj/neg views, ZeroTensors, other
# devices) takes the whole path. Its refusals are C++ exceptions of ~10 us, so after one it is
# _interop's reader, which tests first (testing costs ~0.1 us a tensor, a tenth of the 1.5x
# budget of a 5 us call: issue 16).
_TORCH_TENSOR: type = _Unseen
_TORCH_PARAMETER: type = _Unseen
_TORCH_VIEW: Callable[[Any], np.ndarray] = np.asarray


def _see_torch() -> None:
    global _TORCH_TENSOR, _TORCH_PARAMETER, _TORCH_VIEW
    import torch
    _TORCH_VIEW = torch.Tensor.numpy
    _TORCH_TENSOR, _TORCH_PARAMETER = torch.Tensor, torch.nn.Parameter


# What an operator's function gives ``call`` for a first call: (backend, the arguments with the
# tensors as host arrays) -> (the C values of the other arguments, in C order; the outputs'
# (shape, dtype), None for one not asked for).
OutputSpec = tuple[tuple[int, ...], np.dtype]
Plan = Callable[["Backend", tuple], tuple[tuple, Sequence[Optional[OutputSpec]]]]


def call(op: str, api: str, args: tuple, tensors: tuple[str, ...], plan: Plan,
         _nd: Any = np.ndarray, _values: frozenset = _VALUE_TYPES) -> list[Any]:
    """One NumPy-in/NumPy-out call of ``op`` on ``args`` (its tensors first, named ``tensors``
    in errors; ``api`` names the C function): the plan cache's three steps, in this one place.

    1. A repeat of a call that worked (the same metadata: pyaclnn._functions.hostcall's key) runs
       its memo at once. Plain torch tensors (``torch.Tensor``, ``nn.Parameter``) are viewed here,
       inline, and keyed as the arrays they become: on calls of ~5 us, a lookup that misses on
       them, a frame per argument and a second lookup would cost a third of the 1.5x budget
       (issue 16). What the view refuses (_TORCH_VIEW) and any other type take step 2.
    2. Else the tensors become host arrays (``_arg``) and the memo is looked up again (for what
       step 1 does not view: Python floats, Tensors...).
    3. Else ``plan`` gives the other C values and the outputs' specs, and the call runs through
       the executor (``_first_call``), leaving its memo for the next.

    Returns the outputs (new ndarrays, or torch tensors sharing them when a tensor argument was a
    torch tensor; None for one not asked for), in C order."""
    backend = _backend.current()
    plain = _key(op, args)  # ndarrays and plain values only
    if plain is not None:
        try:
            memo = backend.call_memos.get(plain)
        except TypeError:  # a tuple holding something unhashable
            memo = None
        return _whole_path(backend, op, api, args, tensors, plan) if memo is None else run_memo(memo, args)
    # the same key, viewing torch tensors on the way (their branch first: the others are rare here)
    key: list[Any] = [op]
    arrays: list[Any] = []  # args, with each torch tensor's view
    torch_in = False  # a torch tensor among them: torch tensors out
    for a in args:
        t = type(a)
        if t is _TORCH_TENSOR or t is _TORCH_PARAMETER:
            try:
                a = _TORCH_VIEW(a)
            except (RuntimeError, TypeError, BufferError):
                _refused(a)
                return _whole_path(backend, op, api, args, tensors, plan)
            torch_in = True
            key.append(a.shape)
            key.append(a.dtype)
            key.append(a.strides)
        elif t in _values:
            key.append(t)
            key.append(a)
        elif t is _nd:
            key.append(a.shape)
            key.append(a.dtype)
            key.append(a.strides)
        elif t is tuple:
            key.append(a)
            key.append(tuple(map(type, a)))
        else:
            return _whole_path(backend, op, api, args, tensors, plan)
        arrays.append(a)
    try:
        memo = backend.call_memos.get(tuple(key))
    except TypeError:  # a tuple holding something unhashable
        memo = None
    if memo is None:
        return _whole_path(backend, op, api, args, tensors, plan)
    outs = run_memo(memo, tuple(arrays))
    return to_torch(sys.modules["torch"], outs) if torch_in else outs


def _whole_path(backend: Backend, op: str, api: str, args: tuple, tensors: tuple[str, ...], plan: Plan) -> list[Any]:
    """Steps 2 and 3 of ``call``: the tensors as host arrays, the memo again, else the first
    call; torch tensors in, torch tensors out (pyaclnn._functions.torch_out)."""
    n = len(tensors)
    torch = torch_of(args[:n])
    try:
        args = (*[_arg(a, name, api) for a, name in zip(args, tensors)], *args[n:])
    except BufferError as exc:  # memory that is not host memory (a CUDA, NPU or meta tensor): which argument
        name = next((name for a, name in zip(args, tensors) if _not_host(a, name, api)), "an argument")
        raise BufferError(f"{api}: {name}: {exc}") from None
    memo = memo_for(backend, op, args)
    if memo is not None:
        outs = run_memo(memo, args)
    else:
        values, specs = plan(backend, args)
        outs = _first_call(backend, op, api, args, n, values, specs)
    return outs if torch is None else to_torch(torch, outs)


def _not_host(a: Any, name: str, api: str) -> bool:
    """Whether ``a`` is the argument _arg refused with a BufferError."""
    try:
        _arg(a, name, api)
    except BufferError:
        return True
    except Exception:  # noqa: BLE001 - another argument's error is not the one reported
        return False
    return False


def _refused(t: Any) -> None:
    """_TORCH_VIEW refused ``t``: later tensors are viewed through _interop's reader, which tests
    first what numpy() refuses most (grad, bfloat16) and reads lazy views and ZeroTensors."""
    global _TORCH_VIEW
    _TORCH_VIEW = converter(type(t))


def _python_values_hint(arrays: Sequence[Any]) -> str | None:
    """What to say when a call of ``arrays`` (after _arg) fails and some were Python floats."""
    made = [(a, _FROM_PYTHON[id(a)]) for a in arrays if type(a) is np.ndarray and id(a) in _FROM_PYTHON]
    if not made:
        return None
    own = [np.dtype(a.dtype) for a in arrays if a is not None and id(a) not in _FROM_PYTHON]
    dtype = next((d.name for d in own if d.kind in "fV" and d != _FLOAT64), "float32")  # V: bfloat16
    module = "np" if hasattr(np, dtype) else "ml_dtypes"
    return "; ".join(f"{name} was {what}, converted to a {a.dtype} array (NumPy's default for Python floats): "
                     f"pass an array of the dtype the operator takes, e.g. np.asarray({name}, {module}.{dtype})"
                     for a, (name, what) in made)


def _not_a_tensor(name: str, api: str, x: Any) -> TypeError:
    what = f"{type(x).__name__} {x!r}" if isinstance(x, (str, bytes)) else f"an array of dtype {x.dtype}"
    return TypeError(f"{api}: {name} must be a NumPy array (or pyaclnn.Tensor) of numbers, got {what}; "
                     "pass e.g. np.asarray(values, np.float32)")


def _memory_bytes() -> int:
    """This machine's physical memory (0 when the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 0


_MEMORY = _memory_bytes()
_PLAIN_ZEROS_MAX = 1 << 20  # bytes (new_output only faults pages in from 8 MiB: _parallel._FAULT_IN_MIN)


def _allocator(api: str, backend: Backend, specs: Sequence[tuple[tuple[int, ...], np.dtype] | None]
               ) -> Callable[..., np.ndarray]:
    """What allocates the zeroed host outputs of ``specs`` (None: an output not asked for),
    refused with OutputTooLargeError before anything is allocated when together they exceed
    the machine's memory (a broadcast of (1000000, 1) and (1, 1000000) is 4 TB of float32).

    Not a 161002: the library sets no size limit on these ops (ops.md: the checks are dtypes,
    ranks, broadcasting, shapes), so it would accept the call. Not numpy's MemoryError either,
    nor an OOM kill when the kernels fault the pages in: the arrays are pyaclnn's own."""
    total = 0
    for spec in specs:
        if spec is not None:
            n = spec[1].itemsize  # an np.dtype (_dtype)
            for d in spec[0]:
                n *= d
            total += n
    if total > _MEMORY > 0:
        shapes = ", ".join(f"{tuple(s[0])} {np.dtype(s[1])}" for s in specs if s is not None)
        raise OutputTooLargeError(f"{api}: the output(s) {shapes} need {total / 2**30:,.1f} GiB, more than this "
                                  f"machine's {_MEMORY / 2**30:,.1f} GiB of memory; check the input shapes (do "
                                  "they broadcast as intended?)")
    # Small outputs: np.zeros itself, which is what every backend's new_output gives below its
    # fault-in size; a call through it costs a few hundred ns per output on calls of ~10 us.
    return np.zeros if total <= _PLAIN_ZEROS_MAX else backend.new_output


def _first_call(backend: Backend, op: str, api: str, args: tuple, n_arrays: int, values: tuple,
                specs: Sequence[tuple[tuple[int, ...], np.dtype] | None]) -> list[Any]:
    """Run ``op`` on the caller's ``args`` (its first ``n_arrays`` are the input tensors, host
    arrays by now), ``values`` (the other C arguments) and new outputs of ``specs``; returns
    the outputs and leaves the memo for calls with ``args``' metadata (pyaclnn._functions.hostcall)."""
    zeros = _allocator(api, backend, specs)
    outs = [None if spec is None else zeros(*spec) for spec in specs]
    c_args = c_values(backend.runtime.op_info(op).signature, (*args[:n_arrays], *values, *outs))
    try:
        run = run_host(backend, op, c_args)
    except AclError as exc:  # the library's status; the hint is what only pyaclnn knows
        hint = _python_values_hint(args[:n_arrays])
        if hint:
            exc.add_hint(hint)
        raise
    remember_memo(backend, op, args, CallMemo(n_arrays, c_args[n_arrays:n_arrays + len(values)], tuple(specs),
                                              zeros, run))
    return outs


def _shape(x: Any) -> tuple[int, ...]:
    return () if x is None else tuple(x.shape)


def _dtype(x: Any, default: Any = np.float32) -> np.dtype:
    return np.dtype(default) if x is None else np.dtype(x.dtype)
