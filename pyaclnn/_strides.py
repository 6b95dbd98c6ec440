"""Strided-layout arithmetic shared by the tensor layer and the NumPy runtime (elements)."""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence


@lru_cache(maxsize=1024)
def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides, in elements, of a contiguous tensor of ``shape`` (a tuple)."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def extent(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, int]:
    """(lowest, highest) element offset a non-empty strided view touches, relative to its
    first element."""
    lo = sum(min(0, (d - 1) * s) for d, s in zip(shape, strides) if d > 0)
    hi = sum(max(0, (d - 1) * s) for d, s in zip(shape, strides) if d > 0)
    return lo, hi
