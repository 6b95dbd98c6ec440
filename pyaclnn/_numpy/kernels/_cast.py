"""The device's Cast on NumPy arrays, shared by the kernels that compose one (Cat, ReduceSum).

As the CANN emulator models it (kit_round_f / kit_st_f): to a float dtype through float64, then
float16/bfloat16 (and the 1-byte float types) through float32, rounding to nearest each time;
float to integer truncates toward zero, then wraps; integer to integer wraps; anything to bool
is ``!= 0``; to complex, NumPy's own conversion.
"""
from __future__ import annotations

import numpy as np

__all__ = ["cast"]

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def cast(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``x`` as the device's Cast to ``dt`` gives it (``x`` itself when it has that dtype)."""
    if x.dtype == dt:
        return x
    if dt == np.bool_:
        return x != 0
    if dt.kind in "fV":
        wide = x.astype(F64)
        return wide.astype(F32).astype(dt) if dt.itemsize < 4 else wide.astype(dt)
    if dt.kind == "c":
        return x.astype(dt)
    if x.dtype.kind in "fV":
        return np.trunc(x.astype(F64)).astype(np.int64).astype(dt)
    return x.astype(np.int64).astype(dt)
