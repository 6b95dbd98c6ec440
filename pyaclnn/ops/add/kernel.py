"""aclnnAdd's phase 2 on NumPy views: the kernel spec.plan names, then Cast to out's dtype and
ViewCopy (aclnn_add.cpp). The result is made whole before it is written, so out may overlap self
or other (the in-place form's out is its selfRef).

Rounding, as the device kernels round (and as the CANN emulator computes them):
- Add, Mul: each operation correctly rounded to the promoted dtype (float16/bf16/float32 sums
  and products are exact in float64, then rounded through float32);
- Axpy (math/axpy/tests/assets/golden.py): float32 in float64 and rounded once; float16/bf16 in
  float32, ``x1 + (x2 * alpha)``, rounded to the dtype; int32 in float32, truncated (saturating);
- integers wrap (two's complement), bool is ``self or (other and alpha)``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...dtypes import DType, to_numpy
from ..._spec import TensorMeta
from ..._numpy.kernels._parallel import quietly
from .spec import alpha_value, plan

__all__ = ["prepare", "add"]

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def _meta(a: np.ndarray) -> TensorMeta:
    from ...dtypes import from_numpy
    return TensorMeta(a.shape, from_numpy(a.dtype), None)


def round_to(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``x`` (float64, or float32) rounded to float dtype ``dt``: float16/bf16 through float32, as the
    device's float32 datapath (and the emulator's kit_round_f) does."""
    if dt == F64:
        return x.astype(F64)
    x32 = x.astype(F32)
    return x32 if dt == F32 else x32.astype(dt)


def _alpha_as(alpha: Any, p: DType) -> Any:
    """ConvertToTensor(alpha, promoted dtype), as a NumPy scalar."""
    v = alpha_value(alpha)
    npdt = to_numpy(p)
    if p == DType.BOOL:
        return np.bool_(v != 0)
    if npdt.kind in "iu":  # an integral (or bool) alpha, wrapped to the dtype
        return np.array(int(v)).astype(np.int64).astype(npdt)[()]
    if npdt.kind == "c":
        return npdt.type(v)
    return round_to(np.array(float(v), F64), npdt)[()]


def add(self: np.ndarray, other: np.ndarray, alpha: Any, out: np.ndarray, soc: str) -> None:
    """out = Cast(self + alpha * other) (see the module docstring)."""
    quietly(_add, self, other, alpha, out, soc)


def _add(s: np.ndarray, o: np.ndarray, alpha: Any, out: np.ndarray, soc: str) -> None:
    path, p = plan(soc, _meta(s), _meta(o), alpha)
    P = to_numpy(p)
    if path == "mixed":  # float16/bf16 with float32: one float32 Add, exact widening
        r: np.ndarray = s.astype(F64) + o.astype(F64)
        r = r.astype(F32)
    elif P.kind == "f" or P.kind == "V":  # float16, bf16 (ml_dtypes), float32, float64
        a, b = _cast_in(s, P), _cast_in(o, P)
        if path == "add":
            r = round_to(a + b, P)
        elif path == "axpy" and P == F32:
            r = round_to(a + b * float(np.float32(_to_float(alpha))), P)
        elif path == "axpy":
            a32, b32, al32 = a.astype(F32), b.astype(F32), np.float32(_to_float(alpha))
            r = (a32 + b32 * al32).astype(P)
        else:
            r = round_to(a + round_to(b * float(_alpha_as(alpha, p)), P).astype(F64), P)
    elif P.kind == "c":
        a, b = s.astype(P), o.astype(P)
        r = a + b if path == "add" else (a + b * _alpha_as(alpha, p)).astype(P)
    elif p == DType.BOOL:
        a, b = s.astype(bool), o.astype(bool)
        r = a | b if path == "add" else a | (b & bool(_alpha_as(alpha, p)))
    elif path == "axpy":  # int32 Axpy: in float32, truncated, saturating
        v = np.trunc(s.astype(P).astype(F32) + o.astype(P).astype(F32) * np.float32(_to_float(alpha)))
        r = np.clip(v.astype(F64), -2**31, 2**31 - 1).astype(P)
    else:  # integers: wrapping Add (and Mul by alpha)
        a, b = s.astype(P), o.astype(P)
        r = a + b if path == "add" else a + b * _alpha_as(alpha, p)
    _store(out, r)


def _cast_in(x: np.ndarray, P: np.dtype) -> np.ndarray:
    """Cast(x, promoted float dtype), as float64 values: through float64 and float32 as the
    emulator's kit_round_f (exact for every input the promotion allows but int64 beyond 2^53)."""
    return round_to(x.astype(F64), P).astype(F64)


def _to_float(alpha: Any) -> float:
    v = alpha_value(alpha)
    return float(np.float32(v.real if isinstance(v, complex) else v))


def _store(out: np.ndarray, r: np.ndarray) -> None:
    """Cast to out's dtype, then ViewCopy. A float64 result reaches float16/bf16 through float32
    (the device Cast, as the emulator's kit_st_f); integers wrap."""
    r, od = np.asarray(r), out.dtype
    if od.kind in "fV" and r.dtype != od:
        if r.dtype.kind in "iub":
            r = r.astype(F64)
        if r.dtype == F64 and od.itemsize == 2:
            r = r.astype(F32)
    out[...] = r.astype(od)


def prepare(soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for C arguments (self, other, alpha, out)."""
    return lambda v: add(v[0], v[1], v[2], v[3], soc)
