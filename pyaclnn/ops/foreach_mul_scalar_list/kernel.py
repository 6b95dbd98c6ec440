"""aclnnForeachMulScalarList's phase 2 on NumPy views: y_i's first numel(x_i) elements (row-major)
= x_i * scalars_i, tensor by tensor.

The scalar list reaches the kernel as nnopbase's tensor (spec.scalars_dtype): float32 values
(static_cast of each scalar, ``ToFloat``) for float x, int64 (``ToInt64``, truncating) for int32 x.

How each dtype computes, per kernel source (hicann/ops-nn foreach/):
- A2/A3, foreach_mul_scalar_list/op_kernel/foreach_mul_scalar_list.cpp with foreach_utils/op_kernel/
  foreach_one_scalar_list_binary.h (ProcessPlusInLoop) and foreach_one_scalar_binary.h
  (InnerComputer): float32 natively; float16 **natively in half**: the scalar is first rounded to
  half (``T(inScalarGM.GetValue(index))``), then Muls in half, one rounding of the exact product;
  bfloat16 through float32 (Cast, Muls by the float32 scalar, Cast CAST_RINT back); int32 natively:
  the int64 scalar narrowed to int32, the product wraps.
- 950, op_kernel/arch35/foreach_mul_scalar_list_regbase.h (Compute): float16/bfloat16/float32 loaded
  as float32, Muls by the float32 scalar, stored back rounded (one rounding for float16, unlike A2);
  int32: the scalar goes through float (``scalarCalcType`` is float for an int64 ScalarT) before
  Muls on int32 registers; taken as truncation to int32, exact for |scalar| < 2**24 (beyond that
  the source leaves the conversion to the vector unit: not verified).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np

from ..._numpy.kernels._parallel import quietly
from ..._spec import is_regbase
from ...dtypes import DType
from .spec import scalars_dtype

__all__ = ["prepare", "foreach_mul_scalar_list"]

_BF16 = np.dtype(ml_dtypes.bfloat16)


def _scalar_values(scalars: Sequence[Any]) -> list[Any]:
    """The scalars as nnopbase's tensor holds them: float32 or int64 (C conversions of each)."""
    if scalars_dtype(scalars) == DType.INT64:
        return [np.int64(int(s.value)) for s in scalars]  # ToInt64: a float truncates toward zero
    return [np.float32(s.value) for s in scalars]


def _product(x: np.ndarray, s: Any, regbase: bool) -> np.ndarray:
    """x * s as the device's kernel computes it, in x's dtype."""
    dt = x.dtype
    if dt == np.int32:
        narrow = np.int64(int(np.float32(s))) if regbase else s  # 950: through float first
        s32 = np.int64(narrow).astype(np.int32)  # int32 two's complement: the low 32 bits
        return np.multiply(x, s32, dtype=np.int32)  # wraps as the int32 Muls does
    if dt == np.float16 and not regbase:
        return (x.astype(np.float32) * np.float32(np.float16(s))).astype(np.float16)  # exact product, one rounding
    return (x.astype(np.float32) * np.float32(s)).astype(dt)


def foreach_mul_scalar_list(xs: Sequence[np.ndarray], values: Sequence[Any], ys: Sequence[np.ndarray],
                            regbase: bool = False) -> None:
    """ys[i].flat[:xs[i].size] = xs[i] * values[i], tensor by tensor (row-major order of the views)."""
    quietly(_run, tuple(xs), tuple(values), tuple(ys), regbase)


def _run(xs: tuple, values: tuple, ys: tuple, regbase: bool) -> None:
    for x, s, y in zip(xs, values, ys):  # out may be longer than x (A2/A3): its extra tensors are not written
        if not x.size:
            continue
        r = _product(x, s, regbase).reshape(-1)  # made whole first: out may be x itself
        if y.flags.c_contiguous:
            y.reshape(-1)[:r.size] = r
        else:  # a strided out: its elements in row-major order of the view
            whole = y.copy()
            whole.reshape(-1)[:r.size] = r
            y[...] = whole


def prepare(soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for C arguments (x, scalars, out); the lists arrive as tuples of views, the scalar
    list as the backend's Scalars (converted here once)."""
    values = _scalar_values(a[1])
    regbase = is_regbase(soc)
    return lambda v: foreach_mul_scalar_list(v[0], values, v[2], regbase)
