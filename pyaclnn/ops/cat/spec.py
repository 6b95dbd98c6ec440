"""aclnnCat: out = the tensors concatenated along dim (cast to their promoted dtype, then to out's);
checks in the library's order.

Source traced: hicann/ops-math conversion/concat_d/op_api/aclnn_cat.cpp (EraseDim1EmptyTensor,
CheckParams: CheckNotNull, CheckDtypeValid, CheckPromoteType, CheckFormat, CheckShape; then
SplitToConcat, ProcessOneTensor, ProcessNonContiguous); docs: conversion/concat_d/docs/aclnnCat.md.
"""
from __future__ import annotations

from typing import Sequence

from ..._spec import (INNER_NULLPTR, MAX_DIM, TensorMeta, arch, can_cast, fail, fail_invalid, fail_null, fmt_dtypes,
                      fmt_shape, is_regbase, numel, promote_type)
from ...dtypes import DType

OP = "Cat"
API = f"aclnn{OP}GetWorkspaceSize"
REPO = "ops-math"  # its sources: hicann/ops-math (9.x: libopapi_math.so)

__all__ = ["OP", "API", "REPO", "check", "supported_dtypes", "kept", "plan"]

D = DType
_910 = (D.FLOAT, D.INT32, D.INT64, D.FLOAT16, D.INT16, D.INT8, D.UINT8, D.DOUBLE, D.COMPLEX64, D.BOOL)
_910B = _910 + (D.BF16,)
_REGBASE = _910B + (D.UINT16, D.UINT32, D.UINT64, D.FLOAT8_E4M3FN, D.FLOAT8_E5M2, D.HIFLOAT8, D.FLOAT8_E8M0,
                    D.FLOAT4_E1M2, D.FLOAT4_E2M1)


def supported_dtypes(soc: str) -> tuple[DType, ...]:
    """GetSupportDtypeList: DAV_1001 (910) and DAV_2002 (310P) without bf16, DAV_2201 (910B, 910_93)
    with it, regbase (950) also the unsigned and 8/4-bit float dtypes."""
    if is_regbase(soc):
        return _REGBASE
    return _910B if arch(soc) == "DAV_2201" else _910


def kept(tensors: Sequence[TensorMeta]) -> tuple[TensorMeta, ...]:
    """EraseDim1EmptyTensor: the tensors without those of shape (0,) (torch's legacy empty)."""
    return tuple(t for t in tensors if tuple(t.shape) != (0,))


def plan(tensors: Sequence[TensorMeta]) -> DType:
    """The dtype the concatenation runs in: PromoteType over the kept tensors, in list order."""
    ts = kept(tensors)
    promote = DType(ts[0].dtype)
    for t in ts[1:]:
        promote = promote_type(t.dtype, promote)
    return promote


def check(soc: str, tensors: Sequence[TensorMeta | None] | None, dim: int, out: TensorMeta | None) -> bool:
    """Raise the library's error for the first failing rule; True means nothing to compute (no
    tensor left after EraseDim1EmptyTensor, or none non-empty: out is not written)."""
    if tensors is not None:
        # EraseDim1EmptyTensor reads every element's shape before CheckNotNull: a NULL element
        # would crash there; refused as CheckNotNull words it (as the emulator does, emu_ops_math.c)
        for i, t in enumerate(tensors):
            if t is None:
                fail_null(API, f"tensors[{i}] is nullptr")
        tensors = kept(tensors)  # type: ignore[arg-type]
        if not tensors:  # an empty list after erasing: success at once, out is not looked at
            return True
    if tensors is None:  # CheckNotNull
        fail_null(API, "tensors is nullptr")
    if out is None:
        fail_null(API, "out is nullptr")
    ts: tuple[TensorMeta, ...] = tuple(tensors)  # type: ignore[arg-type]
    allowed = supported_dtypes(soc)  # CheckDtypeValid
    for i, t in enumerate(ts):
        if t.dtype not in allowed:
            fail_invalid(API, f"tensor {i} not implemented for {DType(t.dtype)}, should be in dtype support list "
                              f"[{fmt_dtypes(allowed)}]")
    if out.dtype not in allowed:
        fail_invalid(API, f"out dtype {DType(out.dtype)} not supported on {soc} (supported: {fmt_dtypes(allowed)})")
    promote = DType(ts[0].dtype)  # CheckPromoteType
    for i, t in enumerate(ts[1:], 1):
        before, promote = promote, promote_type(t.dtype, promote)
        if promote == DType.DT_UNDEFINED:
            fail_invalid(API, f"tensor {i} dtype {DType(t.dtype)} and dtype {before} can not promote dtype")
        if promote == DType.COMPLEX128:
            fail_invalid(API, f"tensor dtype has been promoted to {promote}, which has not been implemented yet")
    if not can_cast(promote, out.dtype):
        fail_invalid(API, f"Promote dtype {promote} can't be cast to the desired output type {DType(out.dtype)}")
    # CheckFormat: pyaclnn's tensors are all ND (storage format), so it always passes here
    first = ts[0]  # CheckShape
    if first.ndim > MAX_DIM:
        fail_invalid(API, f"tensor 0 rank {first.ndim} > {MAX_DIM} (shape {fmt_shape(first.shape)})")
    rank = first.ndim
    d = dim + rank if dim < 0 else dim
    if not 0 <= d < rank:
        fail_invalid(API, f"dimnum {dim} exceed the dim range of the tensor {rank}")
    shape = list(first.shape)
    for i, t in enumerate(ts[1:], 1):
        if t.ndim != rank:
            fail_invalid(API, f"dimnum of tensor {i} is [{t.ndim}], should be equal to tensor 0 [{rank}]")
        for j in range(rank):
            if j != d and t.shape[j] != first.shape[j]:
                fail_invalid(API, f"dim {j} of tensor {i} is [{t.shape[j]}], should be equal to tensor 0 "
                                  f"[{first.shape[j]}]")
        shape[d] += t.shape[d]
    # SplitToConcat: the empty tensors are left out; none left -> nothing is planned, out is not
    # looked at. One -> ProcessOneTensor's ViewCopy onto out (contiguous.cpp CheckViewCopyParams)
    # fails, 561103; two or more -> ConcatD, then CheckShapeAndScalarSame(concat, out), 161002.
    # Both accept the same shape, or one element on both sides.
    nonempty = sum(1 for t in ts if not t.is_empty)
    if nonempty == 0:
        return True
    cat = tuple(shape)
    if tuple(out.shape) != cat and not (numel(cat) == 1 and out.numel == 1):
        if nonempty == 1:
            fail(INNER_NULLPTR, API, f"Input tensor's shape[{fmt_shape(cat)}] should be same with output's "
                                     f"shape[{fmt_shape(out.shape)}] (ViewCopy of the one non-empty tensor)")
        fail_invalid(API, f"The tensor's shape[{fmt_shape(cat)}] is not equal with shape[{fmt_shape(out.shape)}]")
    return False
