"""Async copies from pinned host memory (aclrtMallocHost), which the host can write through a
NumPy view with no call to see.

The device DMAs the source bytes when it runs the copy (hicann/runtime api_impl.cc
ApiImpl::MemcpyAsync only queues the task), so a host write between the queueing and the run
gives the old bytes or the new ones depending on timing. The queue (pyaclnn._numpy.queues)
keeps a ``Snapshot`` of each source when a task is queued to run (a copy, or each replay of a
graph holding captured copies: aclmdlRIExecuteAsync) and compares it when the task runs; a
change is a hazard naming both lines. Bytes a task of the device writes into the source
meanwhile (an async copy into that pinned memory, queued before) are the device's own: the
snapshots over them take the new bytes (``refresh``), so only host writes differ.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._core.sites import Site
from .memory import Span


class PinnedSource(NamedTuple):
    """The source of an async copy from pinned host memory: the copy's C call, the address and
    bytes (a live uint8 view of the pinned memory), and the user's line that queued or captured it."""
    api: str
    start: int
    data: np.ndarray
    site: Site


class PinnedCopy:
    """The task of an async copy from pinned host memory: it copies the bytes there when it runs;
    ``source`` tells the queue what to keep (a captured one is queued again by each replay)."""
    __slots__ = ("out", "source")

    def __init__(self, out: np.ndarray, source: PinnedSource) -> None:
        self.out, self.source = out, source

    def __call__(self) -> None:
        self.out[...] = self.source.data


class Snapshot:
    """A pinned source's bytes as they were when its task was queued to run."""
    __slots__ = ("source", "before")

    def __init__(self, source: PinnedSource) -> None:
        self.source, self.before = source, source.data.copy()

    def changed(self) -> Span | None:
        """The bytes [first, last + 1) (addresses) that differ from the snapshot now, or None."""
        data, before = self.source.data, self.before
        if np.array_equal(data, before):
            return None
        changed = np.flatnonzero(data != before)
        start = self.source.start
        return start + int(changed[0]), start + int(changed[-1]) + 1

    def refresh(self, spans: tuple[Span, ...]) -> None:
        """The device wrote ``spans``: what it wrote into the source is no host write."""
        start, end = self.source.start, self.source.start + self.before.size
        for s, e in spans:
            lo, hi = max(s, start), min(e, end)
            if lo < hi:
                self.before[lo - start:hi - start] = self.source.data[lo - start:hi - start]
