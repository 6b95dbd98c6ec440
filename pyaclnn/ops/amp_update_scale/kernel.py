"""aclnnAmpUpdateScale's phase 2 (hicann/ops-math math/amp_update_scale/op_kernel/amp_update_scale.h
Compute): in float32 scalars, found_inf != 0 (NaN included) -> scale * backoff, tracker 0; else
tracker + 1 == growthInterval (int32, as the tiling narrows it) -> scale * growth if that is finite
(else scale kept), tracker 0; else tracker + 1. The factors are the definition's Float attributes:
float32."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..._numpy.kernels._parallel import quietly

__all__ = ["prepare", "amp_update_scale"]


def amp_update_scale(scale_in: np.ndarray, tracker_in: np.ndarray, found_in: np.ndarray, growth: np.float32,
                     backoff: np.float32, interval: np.int32, scale_out: np.ndarray, tracker_out: np.ndarray) -> None:
    quietly(_update, scale_in, tracker_in, found_in, growth, backoff, interval, scale_out, tracker_out)


def _update(scale_in, tracker_in, found_in, growth, backoff, interval, scale_out, tracker_out) -> None:
    scale = np.float32(scale_in.reshape(-1)[0])
    tracker = np.int32(tracker_in.reshape(-1)[0])
    found = np.float32(found_in.reshape(-1)[0])
    if found != 0 or np.isnan(found):
        scale, tracker = np.float32(scale * backoff), np.int32(0)
    else:
        successful = np.int32(tracker + np.int32(1))  # int32 arithmetic: wraps at INT32_MAX
        if successful == interval:
            grown = np.float32(scale * growth)
            scale = grown if np.isfinite(grown) else scale
            tracker = np.int32(0)
        else:
            tracker = successful
    # element 0 of each view (its first in row-major order: the kernel's GM address is the
    # tensor's); reshape(-1) of a strided 2-D view would be a copy, and the write lost
    scale_out[(0,) * scale_out.ndim] = scale.astype(scale_out.dtype)
    tracker_out[(0,) * tracker_out.ndim] = tracker


def prepare(soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for C arguments (currentScale, growthTracker, foundInf, growthFactor, backoffFactor,
    growthInterval, updatedScale, updatedGrowthTracker)."""
    growth, backoff, interval = np.float32(a[3]), np.float32(a[4]), np.int32(a[5])
    return lambda v: amp_update_scale(v[0], v[1], v[2], growth, backoff, interval, v[6], v[7])
