"""The out= form of a few non-pointwise aten overloads whose functional form is the same kernel.

torchgen's structured kernels (native_functions.yaml ``structured: True`` / ``structured_delegate``):
the functional form's ``meta`` allocates the output, then calls the ``impl`` the out= form calls on
``out`` (a meta that finds ``out`` of the right shape, dtype and strides writes it, no proxy). torch
exposes no flag for it, so the overloads are named here, each checked by
tests/reference/test_aten_structured.py (out= against the functional result, bitwise, over NaN,
infinities, -0.0, denormals, float16/bfloat16/float64, a large tensor for aten's threads):

  amax, amin           amax.out / amin.out: structured (ReduceOps.cpp TORCH_IMPL_FUNC(amax_out))
  softmax.int          softmax.int_out: at::_softmax_out into a contiguous out, the functional
  log_softmax.int      at::_softmax (structured _softmax.out; SoftMax.cpp softmax_out), no dtype cast
  mean.dim             structured_delegate: mean.out (ReduceOps.cpp TORCH_IMPL_FUNC(mean_out))
  cumsum               structured_delegate: cumsum.out (ReduceOps.cpp TORCH_IMPL_FUNC(cumsum_out))
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["STRUCTURED", "out_form", "direct"]

# aten overload name -> (its out= overload's name in the same packet, torch's Python binding of it)
STRUCTURED: dict[str, tuple[str, str]] = {
    "aten::amax": ("out", "amax"),
    "aten::amin": ("out", "amin"),
    "aten::softmax.int": ("int_out", "softmax"),
    "aten::log_softmax.int": ("int_out", "log_softmax"),
    "aten::mean.dim": ("out", "mean"),
    "aten::cumsum": ("out", "cumsum"),
}


def out_form(fn: Any, torch: Any) -> Callable[..., Any] | None:
    """The out= form of ``fn`` (an OpOverload named in STRUCTURED), or None. Its out= overload's
    schema must be ``fn``'s arguments (names and types) plus one keyword-only ``out``. Called
    through torch's Python binding (``torch.amax``: its C++ parser costs about 1 us less a call
    than the overload's ``_op``); given the functional form's positional arguments, its keywords
    and ``out=``, the binding dispatches to that out= overload (torchgen groups the functional and
    out= forms in one signature; the test records the overload dispatched for every entry)."""
    try:
        names = STRUCTURED.get(fn._schema.name + ("." + fn._overloadname if fn._overloadname != "default" else ""))
        if names is None:
            return None
        overload = getattr(fn.overloadpacket, names[0])
        args = overload._schema.arguments
        outs = [a for a in args if a.is_out]
        mine = [(a.name, str(a.type)) for a in fn._schema.arguments]
        if (len(outs) == 1 and outs[0].name == "out" and outs[0].kwarg_only
                and [(a.name, str(a.type)) for a in args if not a.is_out] == mine):
            return getattr(torch._C._VariableFunctions, names[1], None) or getattr(overload, "_op", overload)
    except AttributeError:  # not an OpOverload, or a torch without that overload or Argument.is_out
        pass
    return None


def direct(v: tuple, call_args: list, slot: int, kwargs: dict, from_numpy: Callable[..., Any],
           call_out: Callable[..., Any] | None) -> dict | None:
    """The out= keywords that make a STRUCTURED overload write into ``v[slot]`` itself, or None
    (kernel._direct's rule for these ops; _run_one asks only after the functional result on the
    same tensors had the output's shape and dtype, so out= resizes and casts nothing): the output
    C-contiguous (the layout the functional meta allocates for C-contiguous inputs) and writable,
    of a float or bool dtype (a refusal comes from the meta, before anything is written); every
    input C-contiguous and sharing no byte with the output (even an exact alias would change a
    reduction's or a softmax's result: the output is written while the input is still read)."""
    target = v[slot]
    if call_out is None or target is None or target.dtype.kind not in "fb":
        return None
    flags = target.flags
    if not (flags.c_contiguous and flags.writeable):
        return None
    for i, x in enumerate(v):
        if i == slot or not isinstance(x, np.ndarray):
            continue
        if not x.flags.c_contiguous or np.may_share_memory(x, target):
            return None
    return dict(kwargs, out=from_numpy(target))
