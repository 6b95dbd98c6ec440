"""Stream-ordered lifetimes: memory a queued launch uses is freed only once the stream passed it.

CANN streams are asynchronous: phase 2 (aclnnXxx) only queues the kernel, aclrtFree frees at
once without waiting for queued work (hicann/runtime ``ApiImpl::DevFree``), and aclrtMemcpy does
not synchronize (``ApiImpl::MemCopySync``). So, as CuPy and cuda.core do:

- each stream numbers its launches (``Order.launches``) and knows how many have surely finished
  (``Order.done``: all of them after aclrtSynchronizeStream or aclrtDestroyStream);
- each Storage remembers, per stream, the number of the last launch that reads or writes it
  (``uses``);
- freeing a Storage a stream has not passed yet is deferred to that stream: the free runs right
  after the stream's next synchronize or its close, or once an Event recorded after the
  launches that use it has been synchronized (the workspace pool does the same with a workspace
  it replaces). Beyond MAX_DEFERRED waiting frees, the stream is synchronized then and
  there, so the memory held stays bounded;
- host reads and writes of a Storage (Tensor.numpy, copy_from) first synchronize the streams
  with unfinished launches on it.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterable

MAX_DEFERRED = 256


class Order:
    """One stream's launch counter and its deferred frees."""

    __slots__ = ("launches", "done", "deferred", "lock", "sync", "graph")

    def __init__(self, sync: Callable[[], None]) -> None:
        self.launches = 0
        self.done = 0
        # (launches queued when the free was deferred, release, args), oldest first
        self.deferred: list[tuple[int, Callable[..., None], tuple]] = []
        # Guards ``deferred`` only (never held while releasing): a free may be deferred from
        # any thread, e.g. by a GC release, while another thread runs the ready ones.
        self.lock = threading.Lock()
        self.sync = sync  # synchronizes the stream (and then calls passed)
        self.graph: Any = None  # the pyaclnn.Graph capturing the stream's launches (pyaclnn._objects.graph)

    @property
    def idle(self) -> bool:
        return self.launches == self.done


def uses_of(tensors: Iterable[Any]) -> list[dict[Order, int]]:
    """The ``uses`` of the tensors' storages, for ``launched`` (computed once per plan)."""
    return [t.storage.uses for t in tensors]


def launched(order: Order, uses: list[dict[Order, int]]) -> None:
    """A launch was queued on the stream of ``order``; it uses the storages whose ``uses``
    are given: their memory stays allocated, and host access to it waits, until the stream
    has passed the launch."""
    order.launches = n = order.launches + 1
    for u in uses:
        u[order] = n


def busy(uses: dict[Order, int]) -> list[Order]:
    """The streams with a queued launch, not yet passed, among ``uses``."""
    return [order for order, n in list(uses.items()) if n > order.done]


def wait_for(uses: dict[Order, int]) -> None:
    """Synchronize every stream that has unfinished launches using this storage."""
    if uses:
        for order, n in list(uses.items()):  # (busy, inline: every host read asks)
            if n > order.done:
                order.sync()
        uses.clear()


def release_after(order: Order, release: Callable[..., None], *args: Any) -> None:
    """Run ``release(*args)`` once the stream has passed all launches queued so far."""
    if order.idle:
        release(*args)
        return
    with order.lock:
        order.deferred.append((order.launches, release, args))
    if len(order.deferred) > MAX_DEFERRED:
        order.sync()


def free_after_uses(uses: dict[Order, int], release: Callable[..., None], *args: Any) -> None:
    """Run ``release(*args)`` (a free) now, or once the streams using the memory passed it."""
    pending = busy(uses) if uses else []
    if not pending:
        release(*args)
        return
    for order in pending[:-1]:  # used on several streams (rare): wait for all but one
        order.sync()
    release_after(pending[-1], release, *args)


def passed(order: Order, upto: int | None = None) -> None:
    """The stream finished its first ``upto`` launches (all of them by default: after a
    synchronize), e.g. an event recorded after them has completed: run the frees that waited
    for them."""
    done = order.launches if upto is None else upto
    if done > order.done:
        order.done = done
    if not order.deferred:
        return
    with order.lock:
        ready = [d for d in order.deferred if d[0] <= order.done]
        order.deferred = [d for d in order.deferred if d[0] > order.done]
    error: Exception | None = None
    for _, release, args in ready:  # a refused free does not stop the others
        try:
            release(*args)
        except Exception as exc:  # noqa: BLE001 - re-raised below
            error = error or exc
    if error is not None:
        raise error
