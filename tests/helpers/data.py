"""Random test data, one way for every test."""
from __future__ import annotations

from typing import Any

import numpy as np


def rand(rng: np.random.Generator, shape: Any, dtype: Any = np.float32, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    """Uniform values in [lo, hi), drawn in float32 and rounded to ``dtype``."""
    return rng.uniform(lo, hi, size=shape).astype(np.float32).astype(dtype)


def random_array(rng: np.random.Generator, shape: Any, dt: Any) -> np.ndarray:
    """An array of ``dt``: bools, small integers (non-negative for unsigned), or normal values * 8."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.asarray(rng.integers(0, 2, shape), bool)
    if dt.kind in "iu":
        return np.asarray(rng.integers(-20 if dt.kind == "i" else 0, 20, shape)).astype(dt)
    return np.asarray(rng.standard_normal(shape) * 8, np.float32).astype(dt)
