"""Compositions of torch calls for ops-math's creation operators whose phase-1 checks aten does
not make (the table names them ``"compose:creation.<function>"``)."""
from __future__ import annotations

from typing import Any

import torch


def _bounds(start: Any, end: Any, step: Any, dtype: Any) -> tuple[Any, Any, Any]:
    """start, end and step as CheckStepCorrect reads them for an out of ``dtype`` (hicann/ops-math
    c41933244c31e44fd496e3bb3212164f8c48c214 math/range/op_api/aclnn_range.cpp and aclnn_arange.cpp):
    an integer out takes them ToInt64 (truncated: a step of 0.5 is 0), a float one as they are;
    a zero step, or bounds against its sign, is refused (ValueError: 161002 at phase 1, where
    aten's integer kernel would divide by the zero step and kill the process)."""
    if not (dtype.is_floating_point or dtype.is_complex):
        start, end, step = int(start), int(end), int(step)
    if not step:
        raise ValueError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise ValueError(f"upper bound and lower bound inconsistent with step sign (start {start}, end {end}, "
                         f"step {step})")
    return start, end, step


def arange(start: Any, end: Any, step: Any, dtype: Any) -> Any:
    """aclnnArange: [start, end) by step, in out's dtype (aten's arange.start_step)."""
    start, end, step = _bounds(start, end, step, dtype)
    return torch.ops.aten.arange.start_step(start, end, step, dtype=dtype)


def range_closed(start: Any, end: Any, step: Any, dtype: Any) -> Any:
    """aclnnRange: [start, end] by step, in out's dtype (aten's range.step)."""
    start, end, step = _bounds(start, end, step, dtype)
    return torch.ops.aten.range.step(start, end, step, dtype=dtype)
