"""aclnnReduceSum: out = sum of self over dims (all of them when dims is empty), in dtype; checks in
the library's order.

Source traced: hicann/ops-math math/reduce_sum/op_api/aclnn_reduce_sum.cpp (CheckParams,
CheckDtypeValid, CheckDimValid, FillScalar, aclnnReduceSumGetWorkspaceSize) and
common/inc/op_api/aclnn_check.h (CheckShapeAndScalarSame); docs: math/reduce_sum/docs/.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..._spec import (INNER_NULLPTR, MAX_DIM, TensorMeta, fail, fail_invalid, fail_null, fmt_dtypes, fmt_shape,
                      is_regbase, numel)
from ...dtypes import DType

OP = "ReduceSum"
API = f"aclnn{OP}GetWorkspaceSize"
REPO = "ops-math"  # its sources: hicann/ops-math (9.x: libopapi_math.so)

__all__ = ["OP", "API", "REPO", "check", "empty_fills", "supported_dtypes", "plan"]

D = DType
_910 = (D.FLOAT16, D.FLOAT, D.INT8, D.INT16, D.INT32, D.INT64, D.UINT8, D.BOOL, D.DOUBLE, D.COMPLEX64, D.COMPLEX128)
_910B = _910 + (D.BF16,)
_EMPTY = (D.FLOAT16, D.FLOAT, D.INT8, D.INT16, D.INT32, D.INT64, D.UINT8, D.BOOL, D.DOUBLE, D.BF16)
_FLOAT_BOOL_SUM_MAX = 1 << 24  # bool summed into int64 goes through float32 below 2^24 elements


def supported_dtypes(soc: str) -> tuple[DType, ...]:
    """CheckDtypeValid: bf16 on Ascend910B, Ascend910_93 and regbase (950) only."""
    return _910B if soc in ("Ascend910B", "Ascend910_93") or is_regbase(soc) else _910


def _reduced(self: TensorMeta, dims: Sequence[int]) -> tuple[int, ...]:
    """The reduced axes, normalised and sorted (empty dims: every axis)."""
    n = max(self.ndim, 1)
    axes = sorted({d + n if d < 0 else d for d in dims}) if dims else list(range(self.ndim))
    return tuple(a for a in axes if a < self.ndim)


def check(soc: str, self: TensorMeta | None, dims: Sequence[int] | None, keep_dims: bool, dtype: int,
          out: TensorMeta | None) -> bool:
    """Raise the library's error for the first failing rule; True means empty (self empty: out is
    zero-filled, see empty_fills)."""
    for name, value in (("self", self), ("dims", dims), ("out", out)):  # CheckNotNull
        if value is None:
            fail_null(API, f"{name} is nullptr")
    assert self is not None and dims is not None and out is not None
    allowed = supported_dtypes(soc)  # CheckDtypeValid
    for name, t in (("self", self), ("out", out)):
        if t.dtype not in allowed:
            fail_invalid(API, f"{name} dtype {DType(t.dtype)} not supported on {soc} (supported: {fmt_dtypes(allowed)})")
    try:
        want = DType(dtype)
    except ValueError:
        want = DType.DT_UNDEFINED
    if want not in allowed:
        fail_invalid(API, f"type {want} should be in dtype support list [{fmt_dtypes(allowed)}]")
    if out.dtype != want:
        fail_invalid(API, f"out dtype {DType(out.dtype)} should be the same as dtype {want}")
    if self.ndim > MAX_DIM:  # CheckMaxDimension
        fail_invalid(API, f"self rank {self.ndim} > {MAX_DIM} (shape {fmt_shape(self.shape)})")
    n = max(self.ndim, 1)  # CheckDimValid
    seen: set[int] = set()
    for d in dims:
        if d >= n or d < -n:
            fail_invalid(API, f"Provided dim {d} must be in the range of [{-n}, {n - 1}]")
        pos = d + n if d < 0 else d
        if pos in seen:
            fail_invalid(API, f"Dim {pos} appears multiple times in the list of dims")
        seen.add(pos)
    if self.is_empty:  # FillScalar(out, 0): out's dtype must be fillable, its shape is not checked
        if out.dtype not in _EMPTY:
            fail_invalid(API, f"out dtype {DType(out.dtype)} not supported for an empty self (supported: "
                              f"{fmt_dtypes(_EMPTY)})")
        return True
    if self.ndim == 0:  # Cast + ViewCopy of the one element: a ViewCopy onto another size fails
        if out.numel != 1:
            fail(INNER_NULLPTR, API, f"out shape {fmt_shape(out.shape)} cannot take the 0-d self")
        return False
    axes = _reduced(self, dims)
    shape = tuple(1 if d in axes else s for d, s in enumerate(self.shape) if keep_dims or d not in axes)
    if tuple(out.shape) != shape and not (numel(shape) == 1 and out.numel == 1):  # CheckShapeAndScalarSame
        fail_invalid(API, f"The tensor's shape[{fmt_shape(shape)}] is not equal with shape[{fmt_shape(out.shape)}]")
    return False


def empty_fills(soc: str, self: TensorMeta, dims: Any, keep_dims: bool, dtype: int, out: TensorMeta) -> bool:
    """An empty self still writes: FillScalar zero-fills out (unless out is empty too)."""
    return not out.is_empty


def plan(self: TensorMeta, dims: Sequence[int], dtype: int) -> tuple[tuple[int, ...], DType, bool]:
    """(reduced axes, the dtype the sum runs in, whether it is ReduceAny) for a non-empty self of
    rank >= 1: the sum runs in dtype, except bool summed into int64, which goes through float32 when
    fewer than 2^24 elements meet in one sum; dtype bool is ReduceAny."""
    axes = _reduced(self, dims)
    want = DType(dtype)
    promote = want
    if self.dtype == DType.BOOL and want == DType.INT64:
        count = numel([self.shape[a] for a in axes])
        promote = DType.FLOAT if count < _FLOAT_BOOL_SUM_MAX else DType.INT64
    return axes, promote, want == DType.BOOL
