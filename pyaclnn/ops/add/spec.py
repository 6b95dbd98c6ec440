"""aclnnAdd: out = self + alpha * other, broadcast, in the promoted dtype; checks in the library's order.

Source traced: hicann/ops-math math/add/op_api/aclnn_add.cpp (aclnnAddGetWorkspaceSize,
CheckParams, CheckPromoteType, CheckShape, GetDtypeSupportListBySocVersion) and add.cpp (l0op::Add);
docs: math/add/docs/ (the page of aclnnAdd and its in-place form). Promotion and casting: opbase data_type_utils.h
(PromoteType, CanCast). ``workspaceSize``/``executor`` nullptr cannot happen from Python.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..._spec import (COMPLEX, MAX_DIM, TensorMeta, arch, broadcast_shapes, can_cast, fail_invalid, fail_null, fmt_dtypes,
                      fmt_shape, is_integral, is_regbase, promote_type)
from ...dtypes import DType

OP = "Add"
API = f"aclnn{OP}GetWorkspaceSize"
REPO = "ops-math"  # its sources: hicann/ops-math (9.x: libopapi_math.so)

__all__ = ["OP", "API", "REPO", "check", "check_params", "supported_dtypes", "alpha_value", "plan"]

D = DType
# ASCEND910B_DTYPE_SUPPORT_LIST (DAV_2201 and DAV_3510) and ASCEND910_DTYPE_SUPPORT_LIST (all others).
_910B = (D.FLOAT, D.INT32, D.INT64, D.FLOAT16, D.INT16, D.INT8, D.UINT8, D.DOUBLE, D.BOOL, D.BF16, D.COMPLEX64,
         D.COMPLEX128)
_910 = (D.FLOAT, D.INT32, D.INT64, D.FLOAT16, D.INT16, D.INT8, D.UINT8, D.DOUBLE, D.BOOL, D.COMPLEX64,
        D.COMPLEX128)
# Which kernel takes a promoted dtype when alpha is not 1 (IsSupportAxpy / IsSupportAxpyV2).
_AXPY = (D.FLOAT, D.INT32, D.FLOAT16)
_AXPY_REGBASE = (D.FLOAT, D.FLOAT16, D.BF16)
_MIXED = {(D.FLOAT16, D.FLOAT), (D.FLOAT, D.FLOAT16), (D.BF16, D.FLOAT), (D.FLOAT, D.BF16)}


def supported_dtypes(soc: str) -> tuple[DType, ...]:
    """GetDtypeSupportListBySocVersion: bf16 only on DAV_2201 (A2/A3) and DAV_3510 (950)."""
    return _910B if arch(soc) in ("DAV_2201", "DAV_3510") else _910


def alpha_value(alpha: Any) -> Any:
    """The value an aclScalar holds (the NumPy backend's Scalar), as a Python number."""
    return alpha.value


def _dtype_of(alpha: Any) -> DType:
    return DType(alpha.dtype)


def _to_float(alpha: Any) -> float:
    """aclScalar::ToFloat: the value as a C float (a complex scalar: its real part)."""
    import numpy as np
    v = alpha_value(alpha)
    return float(np.float32(v.real if isinstance(v, complex) else v))


def check_params(api: str, soc: str, self: TensorMeta | None, other: TensorMeta | None, alpha: Any,
                 out: TensorMeta | None, names: Sequence[str] = ("self", "out")) -> DType:
    """CheckParams, in its order; returns the promoted dtype. ``names``: what self and out are
    called in messages (the in-place form passes selfRef for both)."""
    for name, value in ((names[0], self), ("other", other), ("alpha", alpha), (names[1], out)):  # CheckNotNull
        if value is None:
            fail_null(api, f"{name} is nullptr")
    assert self is not None and other is not None and out is not None
    allowed = supported_dtypes(soc)
    for name, t in ((names[0], self), ("other", other)):  # OP_CHECK_DTYPE_NOT_SUPPORT
        if t.dtype not in allowed:
            fail_invalid(api, f"{name} dtype {DType(t.dtype)} not supported on {soc} (supported: {fmt_dtypes(allowed)})")
    promote = promote_type(self.dtype, other.dtype)
    # CheckPromoteType
    if promote == DType.DT_UNDEFINED:
        fail_invalid(api, f"Self dtype {DType(self.dtype)} and other dtype {DType(other.dtype)} can not promote dtype")
    adt = _dtype_of(alpha)
    if promote == DType.BOOL and not is_integral(adt, include_bool=True) or \
            promote != DType.BOOL and not can_cast(adt, promote):
        fail_invalid(api, f"Alpha dtype {adt} can't be cast to the promote dtype {promote}")
    if is_regbase(soc):
        for t in (self, other):  # OP_CHECK_RESULT_DTYPE_CAST_FAILED
            if not can_cast(DType(t.dtype), promote):
                fail_invalid(api, f"Result type {DType(t.dtype)} can't be cast to the desired output type {promote}")
        if promote not in allowed:
            fail_invalid(api, f"Input dtype {promote} is not implemented, it should be in dtype support list "
                              f"{fmt_dtypes(allowed)}")
    if not can_cast(promote, DType(out.dtype)):
        fail_invalid(api, f"Promote dtype {promote} can't be cast to the desired output type {DType(out.dtype)}")
    # CheckShape
    for name, t in ((names[0], self), ("other", other)):
        if t.ndim > MAX_DIM:
            fail_invalid(api, f"{name} rank {t.ndim} > {MAX_DIM} (shape {fmt_shape(t.shape)})")
    shape = broadcast_shapes(self.shape, other.shape)
    if shape is None:
        fail_invalid(api, f"{names[0]} shape {fmt_shape(self.shape)} and other shape {fmt_shape(other.shape)} "
                          "can not broadcast")
    if tuple(out.shape) != shape:
        fail_invalid(api, f"Shape of out should be {fmt_shape(shape)}, but current is {fmt_shape(out.shape)}")
    return promote


def check(soc: str, self: TensorMeta | None, other: TensorMeta | None, alpha: Any, out: TensorMeta | None) -> bool:
    """Raise the library's error for the first failing rule; True means empty (self or other
    empty: success, nothing written)."""
    check_params(API, soc, self, other, alpha, out)
    assert self is not None and other is not None
    return self.is_empty or other.is_empty


def _equal_to_one(soc: str, promote: DType, alpha: Any) -> bool:
    """IsEqualToOne: !(a > 1 || a < 1), so NaN counts as 1; on regbase never for complex, and
    compared as a double for a double computation."""
    import math
    if not is_regbase(soc):
        a = _to_float(alpha)
    elif promote in COMPLEX or _dtype_of(alpha) in COMPLEX:
        return False
    elif promote == DType.DOUBLE:
        v = alpha_value(alpha)
        a = float(v)
    else:
        a = _to_float(alpha)
    return math.isnan(a) or a == 1.0


def plan(soc: str, self: TensorMeta, other: TensorMeta, alpha: Any) -> tuple[str, DType]:
    """The kernel aclnnAddGetWorkspaceSize plans for a non-empty call: ("mixed", float32): the
    mixed-dtype Add kernel (float16/bf16 with float32, alpha 1 as a float); ("add", dtype): Add in
    the promoted dtype; ("axpy", dtype): Axpy with alpha as a float; ("mul_add", dtype): Mul by alpha
    converted to the promoted dtype, then Add (AxpyV2 on regbase, for its dtypes: the same result).
    The result is then cast to out's dtype."""
    mixed = (DType(self.dtype), DType(other.dtype)) in _MIXED
    a = _to_float(alpha)
    if mixed and not (a > 1 or a < 1):
        return "mixed", DType.FLOAT
    promote = promote_type(self.dtype, other.dtype)
    if _equal_to_one(soc, promote, alpha):
        return "add", promote
    if promote in (_AXPY_REGBASE if is_regbase(soc) else _AXPY):
        return "axpy", promote
    # regbase takes AxpyV2 for its integer and bool dtypes (x1 + alpha * x2 in the promoted dtype:
    # what Mul then Add give, wrapping), Mul then Add for the rest
    return "mul_add", promote
