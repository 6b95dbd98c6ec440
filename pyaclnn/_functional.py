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

import os
import weakref
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence, overload

import numpy as np

from . import _backend
from ._executor import ce_reduction, gn_output_mask, mse_reduction
from ._interop import CONVERTERS_MAX, Converter, converter, host_array
from ._hostcall import CallMemo, memo_for, remember_memo, run_host, run_memo
from ._signature import c_values
from ._spec import group_norm_backward as _gn
from ._spec import mse_loss_backward as _mse
from ._spec import prelu_backward as _prelu
from ._tensor import Tensor
from .errors import AclError, OutputTooLargeError

if TYPE_CHECKING:
    from ._backend import Backend

__all__ = ["mse_loss_backward", "group_norm_backward", "cross_entropy_loss_grad", "prelu_backward"]

Array = Any  # np.ndarray, a pyaclnn Tensor, a DLPack tensor (torch...) or anything np.asarray takes


_NOT_NUMBERS = frozenset("USOMm")  # str, bytes, object, datetime, timedelta (not V: bfloat16 is one)
_PYTHON_VALUES = frozenset((float, list, tuple))  # NumPy reads Python floats (in lists) as float64
_FLOAT64 = np.dtype(np.float64)

# The arrays _arg made of Python floats (or lists of them): id -> (name, what it was). NumPy
# reads them as float64, a dtype the caller never wrote, which the library may refuse; the
# refusal then says so (_first_call). An entry leaves with its array.
_FROM_PYTHON: dict[int, tuple[str, str]] = {}


_READERS: dict[type, Converter] = {}  # the types _arg has vetted, each with its _interop converter


def _arg(x: Any, name: str, api: str, _reader: Callable[[type], Converter | None] = _READERS.get) -> Any:
    """An argument for a tensor parameter: None, a Tensor, or an ndarray of numbers (a DLPack or
    ``__array__`` object is viewed as one, see _interop.host_array). Text or objects are a
    TypeError naming ``name``. A type seen before goes straight to its converter: on calls of
    ~10 us each step saved here counts (issue 16). Python floats and lists are never memoised:
    the arrays made of them are remembered for the error hint (_FROM_PYTHON)."""
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
                if len(_READERS) >= CONVERTERS_MAX:
                    _READERS.clear()
                _READERS[type(value)] = converter(type(value))
    if x.dtype.kind in _NOT_NUMBERS:
        raise _not_a_tensor(name, api, x)
    return x


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
    the outputs and leaves the memo for calls with ``args``' metadata (pyaclnn._hostcall)."""
    zeros = _allocator(api, backend, specs)
    outs = [None if spec is None else zeros(*spec) for spec in specs]
    c_args = c_values(backend.runtime.op_info(op).signature, (*args[:n_arrays], *values, *outs))
    try:
        run = run_host(backend, op, c_args, values_checked=True)
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


def mse_loss_backward(grad_output: Array, input: Array, target: Array, reduction: str | int = "mean") -> np.ndarray:
    """Gradient of MSE loss w.r.t. ``input`` (aclnnMseLossBackward).

    ``out = (input - target) * grad_output * cof``, broadcast over the three, with
    ``cof = 2 / input.size`` for 'mean' (the size of ``input`` itself, as the device does) and
    ``2`` for 'none' and 'sum'. Returns an array of the broadcast shape and ``input``'s dtype.

    Args:
        grad_output: the gradient of the loss (C ``gradOutput``): an array, ``pyaclnn.Tensor``
            or torch CPU tensor of float32, float16 or bfloat16.
        input: the prediction (C ``self``), of the same dtype.
        target: the target, of the same dtype; the three broadcast together.
        reduction: 'none', 'mean' or 'sum', or the C ``int64_t`` 0, 1 or 2.

    Returns:
        A new array of the broadcast shape and ``input``'s dtype.

    Raises:
        AclnnParamNullptrError: a tensor is None (161001).
        AclnnParamInvalidError: dtypes differ or are not supported on the SoC, shapes do not
            broadcast, or ``reduction`` is not one of the three (161002).
        TypeError: an argument is not an array of numbers, or ``reduction`` is neither str nor int.

    Examples:
        >>> g = np.array([[0, 1], [2, 3]], np.float32)
        >>> pyaclnn.mse_loss_backward(g, g, np.ones((2, 2), np.float32), reduction="mean")
        array([[-0.,  0.],
               [ 1.,  3.]], dtype=float32)
    """
    op, api = "MseLossBackward", "aclnnMseLossBackwardGetWorkspaceSize"
    backend = _backend.current()
    args = (grad_output, input, target, reduction)
    memo = memo_for(backend, op, args)  # a repeat of a call that worked: all below is known
    if memo is None:
        r = mse_reduction(reduction)
        g, x, y = _arg(grad_output, "grad_output", api), _arg(input, "input", api), _arg(target, "target", api)
        args = (g, x, y, reduction)
        memo = memo_for(backend, op, args)  # the same, for arrays that came as torch tensors
        if memo is None:
            (out,) = _first_call(backend, op, api, args, 3, (r,),
                                 [(_mse.out_shape(_shape(g), _shape(x), _shape(y)), _dtype(x))])
            return out
    (out,) = run_memo(memo, args)
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

    ``grad_out``/``input`` hold ``N*C*HxW`` elements (read as (N, C, HxW)); ``mean``/``rstd`` hold
    ``N*group`` (read as (N, group)); ``gamma`` is (C,) or None (ones). An output whose
    ``output_mask`` entry is False is not computed and returned as None (so with the default
    mask, or a literal ``(True, True, True)``, the three are arrays, as type checkers see).
    ``mean`` and ``rstd`` are used as given (not recomputed), and ``gamma`` enters the group
    sums, as on the device.

    Args:
        grad_out: the gradient of GroupNorm's output, ``N*C*HxW`` elements (C ``gradOut``).
        input: GroupNorm's input, of the same size and dtype.
        mean: the per-group means of the forward pass, ``N*group`` elements.
        rstd: the per-group reciprocal standard deviations, ``N*group`` elements.
        gamma: the per-channel scale, (C,), or None for ones.
        N: the batch size (C ``int64_t``).
        C: the channels.
        HxW: the elements per channel.
        group: the number of groups; it divides C.
        output_mask: which of grad_input, grad_gamma, grad_beta to compute.

    Returns:
        grad_input: shaped like ``input``; None where ``output_mask[0]`` is False.
        grad_gamma: (C,); None where ``output_mask[1]`` is False.
        grad_beta: (C,); None where ``output_mask[2]`` is False.

    Raises:
        AclnnParamNullptrError: a required tensor is None (161001).
        AclnnParamInvalidError: dtypes, element counts or sizes the library rejects (161002).
        TypeError: an argument of the wrong Python type (a float for ``N``, ``output_mask=True``).

    Examples:
        >>> x = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
        >>> mean, rstd = np.array([[1.5], [5.5]], np.float32), np.ones((2, 1), np.float32)
        >>> dx, dgamma, dbeta = pyaclnn.group_norm_backward(np.ones_like(x), x, mean, rstd, None,
        ...                                                 2, 2, 2, 1)
        >>> dgamma, dbeta
        (array([-4.,  4.], dtype=float32), array([4., 4.], dtype=float32))
    """
    op, api = "GroupNormBackward", "aclnnGroupNormBackwardGetWorkspaceSize"
    backend = _backend.current()
    args = (grad_out, input, mean, rstd, gamma, N, C, HxW, group, output_mask)
    memo = memo_for(backend, op, args)  # a repeat of a call that worked: all below is known
    if memo is None:
        dy, x, m, r = _arg(grad_out, "grad_out", api), _arg(input, "input", api), _arg(mean, "mean", api), \
            _arg(rstd, "rstd", api)
        g = _arg(gamma, "gamma", api)
        args = (dy, x, m, r, g, N, C, HxW, group, output_mask)
        memo = memo_for(backend, op, args)  # the same, for arrays that came as torch tensors
        if memo is None:
            mask = gn_output_mask(output_mask, api)
            # N, C, HxW, group checked as the int64_t they are (C sizes the outputs): TypeError for "2" or 2.5
            n, c, hxw, grp = c_values(backend.runtime.op_info(op).signature,
                                      (dy, x, m, r, g, N, C, HxW, group, mask, None, None, None))[5:9]
            shapes = _gn.output_shapes(_shape(x), None if g is None else _shape(g), c)
            dt = _dtype(dy)
            dtypes = (dt, _dtype(m, dt), _dtype(m, dt))  # 950: dgamma/dbeta follow mean
            specs = [(s, d) if (mask is None or i >= len(mask) or mask[i]) else None
                     for i, (s, d) in enumerate(zip(shapes, dtypes))]
            grad_input, grad_gamma, grad_beta = _first_call(backend, op, api, args, 5, (n, c, hxw, grp, mask), specs)
            return grad_input, grad_gamma, grad_beta
    grad_input, grad_gamma, grad_beta = run_memo(memo, args)
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

    For 'mean' and 'sum' only ``grad_loss[0]`` is read: on A2/A3 (Ascend910B, Ascend910_93) a
    ``grad_loss`` of N elements is accepted and its other elements are silently ignored, as the
    device does; Ascend950 refuses it (561002). Pass a 0-D ``grad_loss`` there.

    Args:
        grad_loss: the gradient of the loss: 0-D (or one element) for 'mean' and 'sum', (N,)
            for 'none'; float32, float16 or bfloat16.
        log_prob: the log-probabilities, (N, C), of ``grad_loss``'s dtype.
        target: the class of each row, (N,), int64.
        weight: the class weights, (C,), float32 (also for float16/bfloat16 inputs), or None.
        grad_zloss: accepted, no effect (None).
        lse_for_zloss: accepted, no effect (None).
        reduction: 'none', 'mean' or 'sum', or 0, 1, 2.
        ignore_index: rows whose target is this value contribute nothing.
        label_smoothing: must be 0.0 on A2/A3, where the device has no defined result for
            another value (pyaclnn refuses it, 161002); Ascend950 implements it.
        lse_square_scale_for_zloss: accepted, no effect (0.0).

    Returns:
        A new array shaped like ``log_prob``, of ``grad_loss``'s dtype.

    Raises:
        AclnnParamNullptrError: a required tensor is None, or the SoC has no kernel (161001).
        AclnnParamInvalidError: dtypes the library rejects, an unknown reduction string, or a
            call with no defined result on the device (161002, "pyaclnn refuses"), such as a
            target outside ``[0, C)`` that is not ``ignore_index`` (raised when the kernel runs).
        AclnnInnerTilingError: shapes the operator's tiling rejects (561002).

    Examples:
        >>> log_prob = np.log(np.full((2, 4), 0.25, np.float32))
        >>> pyaclnn.cross_entropy_loss_grad(np.float32(1.0), log_prob, np.array([1, 3], np.int64))
        array([[ 0.125, -0.375,  0.125,  0.125],
               [ 0.125,  0.125,  0.125, -0.375]], dtype=float32)
    """
    op, api = "CrossEntropyLossGrad", "aclnnCrossEntropyLossGradGetWorkspaceSize"
    backend = _backend.current()
    args = (grad_loss, log_prob, target, weight, grad_zloss, lse_for_zloss, reduction, ignore_index,
            label_smoothing, lse_square_scale_for_zloss)
    memo = memo_for(backend, op, args)  # a repeat of a call that worked: all below is known
    if memo is None:
        red = ce_reduction(reduction)
        gl, lp, t = _arg(grad_loss, "grad_loss", api), _arg(log_prob, "log_prob", api), _arg(target, "target", api)
        w, gz, lse = _arg(weight, "weight", api), _arg(grad_zloss, "grad_zloss", api), \
            _arg(lse_for_zloss, "lse_for_zloss", api)
        args = (gl, lp, t, w, gz, lse, *args[6:])
        memo = memo_for(backend, op, args)  # the same, for arrays that came as torch tensors
        if memo is None:
            (out,) = _first_call(backend, op, api, args, 6,
                                 (red, ignore_index, label_smoothing, lse_square_scale_for_zloss),
                                 [(_shape(lp), _dtype(gl, _dtype(lp)))])
            return out
    (out,) = run_memo(memo, args)
    return out


def prelu_backward(grad_output: Array, input: Array, weight: Array) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of PReLU (aclnnPreluBackward) -> (grad_input, grad_weight).

    Channels are dim 1 of ``input`` (a 0-D or 1-D input is one channel); ``weight`` holds one
    value per channel, or a single value for all. ``grad_weight`` is (C,), or ``weight``'s shape
    when it has one element. ``grad_output`` may broadcast to ``input``'s shape. ``x == 0``
    takes the weight branch, as on the device.

    Args:
        grad_output: the gradient of PReLU's output (C ``gradOutput``).
        input: PReLU's input (C ``self``), of the same dtype.
        weight: the slopes: one per channel, or one for all.

    Returns:
        grad_input: shaped like ``input``.
        grad_weight: (C,), or ``weight``'s shape when it has one element.

    Raises:
        AclnnParamNullptrError: a tensor is None (161001).
        AclnnParamInvalidError: dtypes or shapes the library rejects (161002).

    Examples:
        >>> x = np.array([[-1, 2], [3, -4]], np.float32)
        >>> pyaclnn.prelu_backward(np.ones((2, 2), np.float32), x, np.array([0.25, 0.5], np.float32))
        (array([[0.25, 1.  ],
               [1.  , 0.5 ]], dtype=float32), array([-1., -4.], dtype=float32))
    """
    op, api = "PreluBackward", "aclnnPreluBackwardGetWorkspaceSize"
    backend = _backend.current()
    args = (grad_output, input, weight)
    memo = memo_for(backend, op, args)  # a repeat of a call that worked: all below is known
    if memo is None:
        dy, x, w = _arg(grad_output, "grad_output", api), _arg(input, "input", api), _arg(weight, "weight", api)
        args = (dy, x, w)
        memo = memo_for(backend, op, args)  # the same, for arrays that came as torch tensors
        if memo is None:
            gi_shape, gw_shape = _prelu.output_shapes(_shape(x), _shape(w))
            grad_input, grad_weight = _first_call(backend, op, api, args, 3, (),
                                                  [(gi_shape, _dtype(x)), (gw_shape, _dtype(x))])
            return grad_input, grad_weight
    grad_input, grad_weight = run_memo(memo, args)
    return grad_input, grad_weight
