"""Per-call timing of the small-call tables: medians of individually timed calls, in samples
that alternate the sides.

A sample is the median of a batch of individually timed calls (a median, not a mean: on a
shared machine a batch often holds a preemption, which would add milliseconds to a mean of
microsecond calls). Samples alternate the sides (forward, then backward, then forward...), so a
slow spell of the machine falls on every side; the medians of the samples and their ratios come
from the same run.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["per_call_us", "interleaved"]


def per_call_us(fn: Callable[[], Any], batch: int) -> float:
    """Median of ``batch`` individually timed calls of ``fn``, in microseconds."""
    clock = time.perf_counter
    times = []
    for _ in range(batch):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times) * 1e6


def interleaved(sample: Callable[[int, int], float], sides: int, samples: int, batch: int) -> list[list[float]]:
    """``samples`` samples of each of ``sides`` sides, alternating them: ``sample(k, n)`` times
    side ``k`` over ``n`` calls. Each side first runs one warm-up sample of max(batch // 4, 5)
    calls (caches, first-call imports, torch's dispatcher), not kept."""
    for k in range(sides):
        sample(k, max(batch // 4, 5))
    times: list[list[float]] = [[] for _ in range(sides)]
    for s in range(samples):
        order = range(sides) if s % 2 == 0 else reversed(range(sides))
        for k in order:
            times[k].append(sample(k, batch))
    return times
