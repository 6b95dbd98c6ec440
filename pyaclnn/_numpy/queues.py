"""The reference backend runs as a device: queued work runs later, and misuse is a HazardError.

On an Ascend device phase 2 (aclnnXxx), aclrtMemcpyAsync, aclrtMemsetAsync and aclrtRecordEvent
only put a task on a stream (hicann/runtime api_impl.cc ApiImpl::MemcpyAsync / MemsetAsync /
EventRecord, and the kernel launches of opbase's CommonOpExecutorRun); the device runs it later,
and the host learns that it ran at a synchronize. A NULL stream is the context's default stream,
asynchronous like any other (ApiImpl::* take curCtx->DefaultStream_()). A synchronous copy or
memset waits for no stream (ApiImpl::MemCopySync). So here each stream has a queue of ``Work``
that runs:

- at a synchronize of its stream, of an event recorded after it, or of the device;
- at stream destroy (the runtime flushes a stream before tearing it down) and device reset;
- before later work that waits for it through an event (aclrtStreamWaitEvent);
- when the stream holds more than ``DEPTH`` tasks (a device's task queue is bounded; the oldest
  then surely ran), which bounds memory for programs that never synchronize.

Every Work names the byte spans of device memory it reads and writes (a tensor covers the span
its shape, strides and offset reach; disjoint views never conflict, and where a strided tensor's
span meets another's, only the bytes of its elements count: base[0::2] and base[1::2] share
none), the C call and the user's
source line that queued it. A program whose result would depend on when queued work runs is
undefined behaviour on a device; ``hazard`` reports it at the call that would misbehave
(``pyaclnn.HazardError`` naming both sides, or a HazardWarning, or nothing: PYACLNN_HAZARDS),
and the program then goes on as a device would (stale data, garbage, a fault at the next
synchronize):

- a host access (synchronous copy or memset, a NumPy-in/out call on a Tensor) to memory that
  queued work writes, or, for a host write, reads;
- a free of memory that queued work uses;
- work queued on one stream touching memory that queued work on another stream writes (or
  reads, if the new work writes), with no event ordering the two;
- a kernel or device-to-device copy reading bytes not written since aclrtMalloc (fresh memory
  holds the poison byte 0xFF, as the emulator's: a NaN in every float type). Exact to the byte,
  unlike the spans above: a launch marks written the bytes of the elements its kernel writes
  (not the gaps of a strided output; only part of an output where the op spec's ``written``
  says so) and checks the bytes of the elements it reads (``Access``). A copy to the host
  carries such bytes without complaint, as memcheck lets undefined bytes be copied and flags
  their use: the object layer reads spans back whole (``Tensor.copy_from`` of a strided view);
- a tensor reaching outside its allocation (the runtime names it: ``runtime.launch``; and the
  aclrtFree of memory it covers, from the address space's latest frees);
- an output partly overlapping an input of its launch, and a copy between overlapping ranges
  (pyaclnn._numpy.overlap);
- a host write into aclrtMallocHost memory that an async copy queued from it has not copied yet
  (seen when the copy runs: its source is compared with what it was when the copy, or the replay
  of a graph that captured it, was queued: pyaclnn._numpy.pinned).
"""
from __future__ import annotations

import threading
import warnings
from collections import deque
from typing import Any, Callable, Iterable

from .._core import env as _env
from .._core.sites import Site, user_site
from ..errors import AclError, HazardError, HazardWarning
from .memory import Access, Elements, Span, shared
from .pinned import PinnedSource, Snapshot

# A strided tensor's exact bytes (memory.Elements), worked out only when its span overlaps another's
Exact = Callable[[], Access] | None
Exacts = tuple[tuple[Exact, ...], tuple[Exact, ...]] | None  # per read span, per write span; None: all spans exact

_new = object.__new__
DEPTH = 1024  # tasks a stream holds before its oldest are taken as done (the device caught up)


class Work:
    """One task queued on a stream (see the module docstring); ``memory`` is the address
    space's (allocations, frees) count when it was queued, to tell whether its memory is still
    the memory it was queued on."""
    __slots__ = ("seq", "api", "site", "reads", "writes", "run", "waits", "memory", "mark", "bases", "exact", "counted")

    def __init__(self, seq: int, api: str, site: Site, reads: tuple[Span, ...], writes: tuple[Span, ...],
                 run: Callable[[], None] | None, waits: dict[Any, int] | None, memory: tuple[int, int],
                 mark: tuple[Access, ...], exact: Exacts = None, bases: tuple[int, ...] = ()) -> None:
        self.seq, self.api, self.site, self.reads, self.writes = seq, api, site, reads, writes
        self.run, self.waits, self.memory, self.mark = run, waits, memory, mark
        self.exact: Exacts = exact  # the exact bytes of its strided tensors' spans (Queues.put)
        self.bases: tuple[int, ...] = bases  # the allocations its spans are in (Queues.touched)
        # whether ``touched`` counts its bases: False until Queues._tally counts them, None when it
        # left its queue uncounted (then never counted)
        self.counted: bool | None = False


class Queue:
    """One stream's tasks not run yet, and which tasks of other streams its next task follows
    (``after``: stream key -> the last task of that stream it is ordered after, via events)."""
    __slots__ = ("key", "label", "pending", "seq", "after", "device", "error", "bounded")

    def __init__(self, key: Any, label: str, device: int | None, bounded: bool = True) -> None:
        self.key, self.label, self.device = key, label, device
        self.bounded = bounded  # False: a capture's queue, whose tasks never run (DEPTH does not apply)
        self.pending: deque[Work] = deque()
        self.seq = 0
        self.after: dict[Any, int] = {}
        self.error: AclError | None = None  # a kernel's own refusal, reported at the next synchronize


def _overlap(a: tuple[Span, ...], b: tuple[Span, ...], ea: tuple[Exact, ...] | None = None,
             eb: tuple[Exact, ...] | None = None) -> Span | None:
    """The first bytes both spans of ``a`` and of ``b`` touch; where a span has an exact form
    (``ea``, ``eb``: a strided tensor's elements), only the bytes its elements cover count, so
    disjoint strided views (base[0::2], base[1::2]) share nothing though their spans interleave."""
    for i, (s0, e0) in enumerate(a):
        for j, (s1, e1) in enumerate(b):
            if s0 < e1 and s1 < e0:
                x = ea[i] if ea is not None else None
                y = eb[j] if eb is not None else None
                if x is None and y is None:
                    return max(s0, s1), min(e0, e1)
                hit = shared((s0, e0) if x is None else x(), (s1, e1) if y is None else y())
                if hit is not None:
                    return hit
    return None


def _span(span: Span) -> str:
    return f"[{span[0]:#x}, +{span[1] - span[0]})"


def hazard(message: str, site: Site) -> None:
    """Report a hazard as PYACLNN_HAZARDS says: raise (default), warn at the user's line, or off."""
    mode = _env.hazards()
    if mode == "raise":
        raise HazardError(message)
    if mode == "warn":
        warnings.warn_explicit(message, HazardWarning, site.filename, site.line)


class Queues:
    """Every stream's queue of one NumPy runtime, and the hazard checks (module docstring)."""

    def __init__(self, memory: Any, on_fault: Callable[[Queue, str], None]) -> None:
        self.memory = memory
        self.on_fault = on_fault  # a task failed on the device: the next synchronize reports it
        self.lock = threading.RLock()  # kernels run under it: one device executes one task at a time
        self.queues: dict[Any, Queue] = {}
        self.busy = 0  # tasks not run yet, over all streams: 0 makes every check free
        # allocation base -> queued tasks touching it: a check of memory no queued task touches
        # costs no scan of the queues (a free or a host copy beside a long queue stays cheap).
        # Counted when a check needs it (_tally), not per task queued: most tasks run at the next
        # synchronize with no check between (0.25-0.3 us a launch of three tensors)
        self.touched: dict[int, int] = {}
        self.untallied: list[Work] = []  # tasks queued since the last _tally, their bases not counted yet
        self.snapshots: dict[Work, list[Snapshot]] = {}  # queued tasks copying from pinned memory (pinned.py)
        self._memo: tuple[tuple[int, int], dict[tuple[Span, ...], tuple[int, ...]]] = ((-1, -1), {})  # (bases)

    def queue_of(self, key: Any, label: str, device: int | None) -> Queue:
        q = self.queues.get(key)
        if q is None:
            q = self.queues[key] = Queue(key, label, device)
        return q

    # -- queueing --------------------------------------------------------------------------------
    def put(self, q: Queue, api: str, reads: tuple[Span, ...], writes: tuple[Span, ...], run: Callable[[], None] | None,
            *, check_init: tuple[Access, ...] = (), waits: dict[Any, int] | None = None,
            mark: tuple[Access, ...] | None = None, exact: Exacts = None,
            pinned: tuple[PinnedSource, ...] = ()) -> None:
        """Queue a task on ``q`` after the hazard checks of new work: races with other streams'
        queued work (``reads``, ``writes``: spans), and reads (``check_init``: exact) of bytes
        nothing has written. ``mark``: the bytes to mark written when it runs (default
        ``writes``; for a launch the exact bytes of its outputs not known written already).
        ``exact``: the exact bytes of the strided tensors among ``reads`` and ``writes``, for the
        race checks once spans overlap. ``pinned``: the pinned host sources it copies from, kept
        as they are now to compare when it runs (not on a capture's queue: its tasks run at replays)."""
        self.queue(q, api, user_site(2), reads, writes, run, check_init, waits, writes if mark is None else mark, exact,
                   pinned, None)

    def queue(self, q: Queue, api: str, site: Site, reads: tuple[Span, ...], writes: tuple[Span, ...],
              run: Callable[[], None] | None, check_init: tuple[Access, ...], waits: dict[Any, int] | None,
              mark: tuple[Access, ...], exact: Exacts, pinned: tuple[PinnedSource, ...],
              bases: tuple[int, ...] | None) -> None:
        """``put`` with the user's ``site`` found and ``mark`` given (positional: a launch's
        repeated path), and ``bases``: ``self.bases(reads + writes)`` when the caller knows it
        (None: worked out here)."""
        memory = self.memory
        lock = self.lock
        lock.acquire()  # (acquire, try, release: cheaper than a `with` block, on every task queued)
        try:
            if self.busy > len(q.pending) and (reads or writes):  # other streams have queued work
                self._check_race(q, api, site, reads, writes, exact)
            if check_init:  # (check_written, inline: this runs for every tensor a launch reads)
                later = self._marks_before(q)
                for access in check_init:
                    gap = memory.unwritten(access, later)
                    if gap is not None:
                        self._never_written(api, site, gap)
                        break
            if reads or writes:
                if bases is None:
                    bases = self.bases(reads + writes)
            else:
                bases = ()
            q.seq += 1
            work = _new(Work)  # (Work's fields set here, one by one: no __init__ frame, no tuple, per task queued)
            work.seq = q.seq
            work.api = api
            work.site = site
            work.reads = reads
            work.writes = writes
            work.run = run
            work.waits = waits
            work.memory = (memory.allocations, memory.frees)
            work.mark = mark
            work.exact = exact
            work.bases = bases
            work.counted = False
            if pinned and q.bounded:
                self.snapshots[work] = [Snapshot(source) for source in pinned]
            q.pending.append(work)
            self.busy += 1
            untallied = self.untallied
            untallied.append(work)
            if len(untallied) > DEPTH:  # (bounded: tasks that ran uncounted are dropped from it here)
                self._tally()
            if len(q.pending) > DEPTH and q.bounded:
                self.flush(q, q.pending[0].seq)
        finally:
            lock.release()

    def wait(self, q: Queue, event: tuple[Any, int, dict[Any, int]] | None) -> None:
        """aclrtStreamWaitEvent: ``q``'s later tasks follow the event's stream up to its record
        (and what that stream followed). An event never recorded orders nothing."""
        if event is None:
            return
        key, seq, after = event
        waits = dict(after)
        waits[key] = max(waits.get(key, 0), seq)
        self.put(q, "aclrtStreamWaitEvent", (), (), None, waits=waits)
        for k, s in waits.items():
            if k != q.key and s > q.after.get(k, 0):
                q.after[k] = s

    def record(self, q: Queue, run: Callable[[], None]) -> tuple[Any, int, dict[Any, int]]:
        """aclrtRecordEvent: a task marking this point of ``q``; returns the event's position."""
        self.put(q, "aclrtRecordEvent", (), (), run)
        return q.key, q.seq, dict(q.after)

    # -- running ---------------------------------------------------------------------------------
    def flush(self, q: Queue, upto: int | None = None) -> None:
        """Run ``q``'s tasks in order, all of them or those up to ``upto``; a task waiting on an
        event first runs the other stream's tasks up to it. Each task runs unless its memory was
        freed under it (a use after free the program was told of: what a device does then is
        undefined; the bytes are gone here, so it faults); a kernel's own refusal (e.g. a class
        index out of range) waits in ``q.error`` for the next synchronize. (One loop, with no
        call per task but the task's and _done: a synchronize runs it once per launch.)"""
        lock = self.lock
        lock.acquire()  # (acquire, try, release: cheaper than a `with` block, on every synchronize)
        try:
            pending = q.pending
            memory, snapshots = self.memory, self.snapshots  # (never replaced: changed in place)
            while pending and (upto is None or pending[0].seq <= upto):
                work = pending.popleft()
                self._done(work)
                if work.waits:
                    for key, seq in work.waits.items():
                        other = self.queues.get(key)
                        if other is not None and other is not q:
                            self.flush(other, seq)
                run = work.run
                if run is None:
                    continue
                if snapshots:
                    self._pinned_ran(work)
                if memory.frees != work.memory[1] and any(
                        not memory.made_before(start, work.memory[0]) for start, _ in work.reads + work.writes):
                    self.on_fault(q, f"{work.api} queued at {work.site} uses device memory freed before it ran")
                    continue
                try:
                    run()
                except AclError as exc:
                    if q.error is None:
                        q.error = exc
                if work.mark:
                    self._written(work.mark)
                if snapshots and work.writes:
                    for snaps in snapshots.values():
                        for snap in snaps:
                            snap.refresh(work.writes)
        finally:
            lock.release()

    def _pinned_ran(self, work: Work) -> None:
        """``work`` runs now: a pinned source it copies from that the host wrote since it was
        queued is a hazard (pyaclnn._numpy.pinned); the copy then takes the new bytes, as a late DMA."""
        for snap in self.snapshots.pop(work, ()):
            hit = snap.changed()
            if hit is None:
                continue
            src, site = snap.source, user_site()
            queued = (f"{work.api} queued at {work.site} replays {src.api} captured at {src.site}, which"
                      if work.api != src.api else f"{src.api} queued at {work.site}")
            hazard(f"{queued} copies from pinned host memory (aclrtMallocHost) whose bytes {_span(hit)} the host "
                   f"wrote after it was queued and before the device ran it (it ran at {site}): a device copies "
                   f"the old bytes or the new ones depending on timing. Synchronize the stream (or an event "
                   f"recorded after the copy) before writing the source again", site)

    def _written(self, writes: tuple[Access, ...]) -> None:
        """A task ran: what it writes holds written data now."""
        memory = self.memory
        for access in writes:
            if isinstance(access, Elements):
                memory.mark_elements(access)
            else:
                memory.mark_written(*access)

    def flush_all(self, belongs: Callable[[Queue], bool]) -> None:
        with self.lock:
            for q in list(self.queues.values()):
                if belongs(q):
                    self.flush(q)

    def retire(self, key: Any) -> None:
        """A stream (or a context's default stream) goes away: its queued work runs first (the
        runtime flushes a stream before tearing it down), then its queue is forgotten."""
        with self.lock:
            q = self.queues.pop(key, None)
            if q is not None:
                self.flush(q)

    def bases(self, spans: tuple[Span, ...]) -> tuple[int, ...]:
        """The allocations ``spans`` start in, each once (a plain loop: no generator frames).
        Remembered per spans while the address space is unchanged (its (allocations, frees)
        counts: every change to the allocations moves one), as a launch repeats the same spans."""
        memory = self.memory
        stamp = (memory.allocations, memory.frees)
        memo = self._memo
        if memo[0] != stamp or len(memo[1]) > 4096:
            memo = self._memo = (stamp, {})
        found_t = memo[1].get(spans)
        if found_t is not None:
            return found_t
        find = memory.find
        found: list[int] = []
        for start, _ in spans:
            alloc = find(start)
            if alloc is not None and alloc.base not in found:
                found.append(alloc.base)
        found_t = tuple(found)
        if stamp == (memory.allocations, memory.frees):  # (not while another thread allocated)
            memo[1][spans] = found_t
        return found_t

    def forget(self, work: Work) -> None:
        """``work`` was taken out of its queue without running (a capture's work, kept by its model)."""
        self._done(work)
        self.snapshots.pop(work, None)

    def _tally(self) -> None:
        """Count in ``touched`` the bases of the tasks queued since the last tally that are still
        queued (``Work.counted``), so ``touched`` counts every queued task's bases."""
        touched = self.touched
        for work in self.untallied:
            if work.counted is False:
                for base in work.bases:
                    touched[base] = touched.get(base, 0) + 1
                work.counted = True
        self.untallied.clear()

    def _done(self, work: Work) -> None:
        """``work`` left its queue (ran, or its stream went away)."""
        self.busy = busy = self.busy - 1
        # The last task queued anywhere (the usual synchronize): ``touched`` and ``untallied`` hold
        # queued tasks only (queue adds them as it adds to busy, under the lock), so every count
        # ends at 0 here: dropped at once, not one by one.
        if not busy:
            self.touched.clear()
            self.untallied.clear()
            return
        if not work.counted:
            work.counted = None  # (_tally skips it: it is not queued any more)
            return
        touched = self.touched
        for base in work.bases:
            n = touched[base] - 1
            if n:
                touched[base] = n
            else:
                del touched[base]

    # -- hazard checks ---------------------------------------------------------------------------
    def _queued_users(self, spans: tuple[Span, ...], write: bool, after: Queue | None = None,
                      exact: tuple[Exact, ...] | None = None) -> tuple[Queue, Work, Span, bool] | None:
        """The first queued task whose access conflicts with an access of ``spans`` (a write
        conflicts with reads and writes, a read with writes): (queue, task, shared bytes, it
        writes). With ``after``: only tasks a new task of that queue is not ordered after (other
        streams', past the last one an event ordered it after). ``exact``: the strided ones of
        ``spans`` as their elements' bytes (with the tasks' own, the overlap is exact)."""
        if self.untallied:
            self._tally()
        touched = self.touched
        if not any(base in touched for base in self.bases(spans)):
            return None
        for q in self.queues.values():
            if q is after or not q.pending:
                continue
            upto = after.after.get(q.key, 0) if after is not None else 0
            for work in q.pending:
                if work.seq <= upto:
                    continue
                theirs = work.exact
                hit = _overlap(spans, work.writes, exact, theirs[1] if theirs is not None else None)
                if hit is not None:
                    return q, work, hit, True
                if write:
                    hit = _overlap(spans, work.reads, exact, theirs[0] if theirs is not None else None)
                    if hit is not None:
                        return q, work, hit, False
        return None

    def host_access(self, api: str, spans: tuple[Span, ...], write: bool, how: str = "") -> None:
        """A synchronous host access of device memory (a copy, a memset, a NumPy-in/out call on a
        Tensor): it waits for no stream, so queued work on that memory is a race."""
        if not self.busy:
            return
        with self.lock:
            found = self._queued_users(spans, write)
        if found is None:
            return
        q, work, hit, writes = found
        site = user_site()
        verb = "writes" if write else "reads"
        hazard(f"{api} at {site} {verb}{how} {_span(hit)} that {work.api}, queued on {q.label} at {work.site}, "
               f"{'writes' if writes else 'reads'}: the device may not have run it yet (a synchronous copy or "
               f"memset waits for no stream). Synchronize first: aclrtSynchronizeStream on that stream (or "
               f"Stream.synchronize()), or an event recorded after it", site)

    def freed(self, api: str, span: Span) -> None:
        """aclrtFree / aclrtFreeHost of ``span``: memory a queued task uses is a use after free."""
        if not self.busy:
            return
        with self.lock:
            found = self._queued_users((span,), True)
        if found is None:
            return
        q, work, hit, writes = found
        site = user_site()
        hazard(f"{api} at {site} frees {_span(span)} that {work.api}, queued on {q.label} at {work.site}, still "
               f"{'writes' if writes else 'reads'} ({_span(hit)}): the device would use freed memory. Synchronize "
               f"{q.label} before freeing", site)

    def _check_race(self, q: Queue, api: str, site: Site, reads: tuple[Span, ...], writes: tuple[Span, ...],
                    exact: Exacts = None) -> None:
        found = (self._queued_users(writes, True, q, exact[1] if exact is not None else None)
                 if writes else None)  # q's own tasks are ordered before
        mine_write = found is not None
        if found is None and reads:
            found = self._queued_users(reads, False, q, exact[0] if exact is not None else None)
        if found is None:
            return
        other, work, hit, theirs_write = found
        hazard(f"{api} at {site}, queued on {q.label}, {'writes' if mine_write else 'reads'} {_span(hit)} that "
               f"{work.api}, queued on {other.label} at {work.site}, {'writes' if theirs_write else 'reads'}, with "
               f"no event between the two streams: their order on the device is undefined. Record an event on "
               f"{other.label} after {work.api} and make {q.label} wait for it (aclrtRecordEvent, "
               f"aclrtStreamWaitEvent), or synchronize {other.label} first", site)

    def check_written(self, api: str, site: Site, reads: tuple[Access, ...], q: Queue | None = None) -> None:
        """``reads`` by a task about to be queued on ``q`` (or by the host, ``q`` None: it waits
        for no queued write): bytes never written since aclrtMalloc are a hazard; queued writes
        the task is ordered after (its own stream's, or another's it waits for) count as written."""
        for access in reads:
            gap = self.memory.unwritten(access, None if q is None else self._marks_before(q))
            if gap is not None:
                self._never_written(api, site, gap)
                return

    def _marks_before(self, q: Queue) -> Callable[[Access], list[Access]]:
        """For the uninitialised-read check of a task about to be queued on ``q``: what the
        queued tasks that run before it will mark written (the exact bytes, not the spans of
        their strided outputs), of those touching the allocation of an access."""
        def marks(access: Access) -> list[Access]:
            alloc = self.memory.find(access[0])
            base = alloc.base if alloc is not None else None
            found: list[Access] = []
            # (a capture's queue is no stream's: its own earlier tasks count too)
            queues = self.queues.values() if self.queues.get(q.key) is q else [*self.queues.values(), q]
            for other in queues:
                upto = None if other is q else q.after.get(other.key, 0)
                for work in other.pending:
                    if upto is not None and work.seq > upto:
                        break
                    if base in work.bases:
                        found += work.mark
            return found
        return marks

    def _never_written(self, api: str, site: Site, gap: Span) -> None:
        alloc = self.memory.find(gap[0])
        made = f", allocated at {alloc.site}" if alloc is not None and alloc.site else ""
        hazard(f"{api} at {site} reads {_span(gap)}, device memory never written since aclrtMalloc"
               f"{made}: the device reads garbage there. Copy the input in (aclrtMemcpy, "
               f"Tensor.from_numpy) or fill it (aclrtMemset) first", site)

