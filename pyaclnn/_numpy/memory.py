"""Emulated device and pinned-host memory for the NumPy backend.

Each allocation is a real, 64-byte aligned NumPy byte buffer (like aclrtMalloc's alignment),
and its address is the buffer's real address: device addresses are unique ints, and a tensor
on "device" memory is a zero-copy strided view of its allocation.

Fresh memory holds the poison byte 0xFF (a NaN in every float type, as the emulator's
aclrtMalloc fills it: device memory is not zeroed), and each allocation knows exactly which of
its bytes something has written since (``written``: sorted disjoint runs in NumPy arrays, so a
strided tensor's thousands of element runs are merged and queried vectorised), for the
uninitialised-read check (pyaclnn._numpy.queues), and the user's line that made it (``site``).

Host memory can also be made device memory in place (``register``, modelled on
aclrtHostRegister, which maps host memory for the device: on a device the kernels then read and
write it through the mapped address, with no copy). Here the address is the memory's own, so an
ndarray's bytes become an allocation of kind "registered" without a copy; the NumPy-in/out
functions do this to their arrays for the duration of a call (pyaclnn._hostcall).
"""
from __future__ import annotations

import bisect
import ctypes
import threading
from typing import Sequence

import numpy as np

from .._sites import UNKNOWN, Site, user_site
from .._strides import extent, merge_runs
from ..errors import from_status

ALIGN = 64
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
POISON = 0xFF


def _address(buf: np.ndarray) -> int:
    """The address of a contiguous uint8 array's first byte. ctypes reads a writable buffer's
    in 0.2 us; ``buf.ctypes.data`` (1 us: it builds numpy's ctypes helper) is for read-only ones."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(buf.data))
    except (TypeError, ValueError):  # read-only (or empty) memory
        return buf.ctypes.data


_NONE = np.empty(0, np.int64)
_NONE.flags.writeable = False


class Runs:
    """Byte runs ``[starts[i], ends[i])`` of device addresses (int64 arrays), sorted, disjoint and
    apart (touching runs are one): what is written of an allocation, the gaps of a read, or the
    bytes of a strided tensor's elements (pyaclnn._strides.element_runs). Never changed in place.
    One run made by ``span`` is kept as ints (``one``) until an array is asked for: the usual gap
    (a fresh input a queued launch writes) then costs no NumPy call."""
    __slots__ = ("_starts", "_ends", "one")

    def __init__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        self._starts, self._ends = starts, ends
        self.one: tuple[int, int] | None = None

    @classmethod
    def span(cls, start: int, end: int) -> Runs:
        runs = cls(_NONE, _NONE)
        runs.one = (start, end)
        return runs

    def _arrays(self) -> None:
        if self.one is not None and not self._starts.size:
            self._starts, self._ends = np.array(self.one[:1], np.int64), np.array(self.one[1:], np.int64)

    @property
    def starts(self) -> np.ndarray:
        self._arrays()
        return self._starts

    @property
    def ends(self) -> np.ndarray:
        self._arrays()
        return self._ends

    def __len__(self) -> int:
        return 1 if self.one is not None else self._starts.size

    def first(self) -> tuple[int, int]:
        return self.one if self.one is not None else (int(self._starts[0]), int(self._ends[0]))

    def bounds(self) -> tuple[int, int]:
        """The span from the first run's start to the last one's end."""
        return self.one if self.one is not None else (int(self._starts[0]), int(self._ends[-1]))

    def within(self, start: int, end: int) -> bool:
        """Whether [start, end) lies inside one run."""
        i = int(np.searchsorted(self.starts, start, "right")) - 1
        return i >= 0 and end <= self.ends[i]

    def inside(self, other: Runs) -> bool:
        """Whether each of these runs lies inside one run of ``other`` (one vectorised search)."""
        if not other.starts.size:
            return not self.starts.size
        i = np.searchsorted(other.starts, self.starts, "right") - 1
        return bool(((i >= 0) & (self.ends <= other.ends[i])).all())  # (i = -1 reads the last: masked)

    def union(self, other: Runs) -> Runs:
        if not self.starts.size:
            return other
        starts, ends = np.concatenate((self.starts, other.starts)), np.concatenate((self.ends, other.ends))
        return Runs(*merge_runs(starts, ends))

    def minus_span(self, start: int, end: int) -> Runs:
        """The bytes of these runs not in [start, end); one run met by the span: no NumPy call
        (the usual gap of a launch's input, filled by the queued launch that writes it)."""
        if len(self) == 1:
            s, e = self.first()
            if end <= s or e <= start:
                return self
            if start <= s and e <= end:
                return _EMPTY
        return self.minus(Runs.span(start, end))

    def minus(self, other: Runs) -> Runs:
        """The bytes of these runs not in ``other``: these runs cut by the holes of ``other``
        (vectorised, no sort: each run meets a range of holes that two searches find)."""
        if not self.starts.size or not other.starts.size:
            return self
        lo, hi = self.bounds()
        i, j = int(np.searchsorted(other.ends, lo, "right")), int(np.searchsorted(other.starts, hi, "left"))
        if i >= j:  # none of ``other`` reaches into them
            return self
        # the holes of ``other`` within [lo, hi): sorted, apart (other's runs lie between them)
        h_starts = np.concatenate(((lo,), other.ends[i:j]))
        h_ends = np.concatenate((other.starts[i:j], (hi,)))
        keep = h_starts < h_ends
        h_starts, h_ends = h_starts[keep], h_ends[keep]
        first = np.searchsorted(h_ends, self.starts, "right")  # the holes run k meets: [first, past)
        past = np.searchsorted(h_starts, self.ends, "left")
        n = np.maximum(past - first, 0)
        total = int(n.sum())
        if not total:
            return _EMPTY
        run = np.repeat(np.arange(n.size), n)
        hole = np.arange(total) - np.repeat(np.cumsum(n) - n, n) + np.repeat(first, n)
        return Runs(np.maximum(self.starts[run], h_starts[hole]), np.minimum(self.ends[run], h_ends[hole]))


_EMPTY = Runs(_NONE, _NONE)


class Allocation:
    __slots__ = ("base", "size", "buf", "kind", "site", "head", "written", "serial", "refs")

    def __init__(self, base: int, size: int, buf: np.ndarray, kind: str, site: Site, serial: int) -> None:
        self.base, self.size, self.buf, self.kind, self.site = base, size, buf, kind, site
        self.serial = serial  # the address space's allocation count when it was made
        # The bytes written since aclrtMalloc: the first run as ints ((0, 0): none), and all of
        # them as Runs when there are two or more. One run (written whole, or a prefix: the usual
        # case) is kept, checked and grown in Python, with no NumPy call.
        self.head = (0, 0)
        self.written: Runs | None = None
        self.refs = 1  # registrations of host memory it holds (kind "registered": see register)

    def runs(self) -> Runs:
        """The bytes written, as Runs."""
        if self.written is not None:
            return self.written
        return Runs.span(*self.head) if self.head[1] else _EMPTY

    def set_written(self, runs: Runs) -> None:
        n = len(runs)
        self.head = runs.first() if n else (0, 0)
        self.written = runs if n > 1 else None

    def covers(self, start: int, end: int) -> bool:
        """Whether [start, end) is written: two comparisons in the usual case, else one search."""
        head = self.head
        if head[0] <= start and end <= head[1]:
            return True
        return self.written is not None and self.written.within(start, end)


class AddressSpace:
    """Live allocations by address; lookups are bounds-checked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bases: list[int] = []
        self._allocs: dict[int, Allocation] = {}
        self.allocations = 0  # allocations made so far
        self.frees = 0        # frees so far
        self.unwrites = 0     # copies that made written bytes unwritten again (copy_written)

    def allocate(self, size: int, kind: str, api: str) -> int:
        if size <= 0:
            raise from_status(ACL_ERROR_INVALID_PARAM, api, f"size must not be 0 (got {size})")
        try:
            raw = np.empty(size + ALIGN, dtype=np.uint8)
        except MemoryError:
            raise from_status(ACL_ERROR_RT_MEMORY_ALLOCATION, api, f"cannot allocate {size} bytes") from None
        start = (-raw.ctypes.data) % ALIGN
        buf = raw[start:start + size]
        buf.fill(POISON)
        base = buf.ctypes.data
        site = user_site()
        with self._lock:
            self.allocations += 1
            self._allocs[base] = Allocation(base, size, buf, kind, site, self.allocations)
            bisect.insort(self._bases, base)
        return base

    def release(self, ptr: int, kind: str, api: str) -> None:
        with self._lock:
            alloc = self._allocs.get(ptr)
            if alloc is None or alloc.kind != kind:
                raise from_status(ACL_ERROR_RT_PARAM_INVALID, api,
                                  f"{ptr:#x} is not the start of a live {kind} allocation")
            del self._bases[bisect.bisect_left(self._bases, ptr)]
            del self._allocs[ptr]
            self.frees += 1

    def register(self, buf: np.ndarray) -> int | None:
        """Make the host bytes ``buf`` (a contiguous uint8 view) device memory in place: their
        own address, returned. Memory inside a live allocation is device memory already (an
        ndarray over emulated memory: a Tensor exported with __dlpack__, or memory registered
        by another call, whose registration then counts once more, so that two calls sharing an
        input both keep it). None when ``buf`` reaches into an allocation that does not hold all
        of it: it cannot be mapped beside that (the caller copies it instead). The caller's
        bytes hold its data, so they count as written."""
        base, size = _address(buf), buf.size
        with self._lock:
            bases = self._bases
            after = bisect.bisect_right(bases, base)  # one search answers both questions (as find would)
            if after:
                alloc = self._allocs[bases[after - 1]]
                if base < alloc.base + alloc.size:  # inside a live allocation
                    if base + size > alloc.base + alloc.size:
                        return None
                    if alloc.kind == "registered":
                        alloc.refs += 1
                    return base
            if after < len(bases) and bases[after] < base + size:
                return None
            self.allocations += 1
            # no site: it is never listed as a leak (live_allocations), and finding one costs a stack walk
            alloc = self._allocs[base] = Allocation(base, size, buf, "registered", UNKNOWN, self.allocations)
            alloc.head = (base, base + size)
            bisect.insort(self._bases, base)
        return base

    def unregister(self, addr: int) -> None:
        """Give back one ``register`` that returned ``addr`` (aclrtHostUnregister): the last one
        of a registered allocation removes it, as a free does (views of it are stale then)."""
        with self._lock:
            alloc = self._allocs.get(addr) or self.find(addr)  # (usually the base its register made)
            if alloc is None or alloc.kind != "registered":
                return  # it was device memory already: nothing was registered
            alloc.refs -= 1
            if alloc.refs:
                return
            del self._bases[bisect.bisect_left(self._bases, alloc.base)]
            del self._allocs[alloc.base]
            self.frees += 1

    def find(self, addr: int) -> Allocation | None:
        # No lock: a base is in _allocs before it enters _bases and leaves _bases first, and
        # each step is atomic under the GIL; a base that just left is simply not found.
        bases = self._bases
        i = bisect.bisect_right(bases, addr) - 1
        if i < 0:
            return None
        try:
            alloc = self._allocs.get(bases[i])
        except IndexError:  # the list shrank under us
            return None
        return alloc if alloc is not None and addr < alloc.base + alloc.size else None

    def made_before(self, addr: int, allocations: int) -> bool:
        """Whether ``addr`` is inside an allocation that was made before the ``allocations``-th
        one (so it is the memory a task queued then saw, not memory freed and made again)."""
        alloc = self.find(addr)
        return alloc is not None and alloc.serial <= allocations

    def mark_written(self, start: int, end: int) -> None:
        """Bytes [start, end) hold written data now (a copy, a memset, a kernel's output)."""
        alloc = self.find(start)
        if alloc is None or start >= end:
            return
        end = min(end, alloc.base + alloc.size)
        s, e = alloc.head
        if s <= start and end <= e:  # the usual case: already written
            return
        if alloc.written is None and (not e or start <= e and s <= end):  # the first run, or one it meets
            alloc.head = (start, end) if not e else (min(s, start), max(e, end))
            return
        if not alloc.covers(start, end):
            alloc.set_written(alloc.runs().union(Runs.span(start, end)))

    def mark_runs(self, runs: Runs) -> None:
        """The bytes of ``runs`` (one tensor's elements: inside one allocation) hold written data now."""
        if not len(runs):
            return
        start, end = runs.bounds()
        alloc = self.find(start)
        if alloc is None or alloc.covers(start, end):
            return
        written = alloc.runs()
        if not runs.inside(written):  # (a search: cheaper than the union, often all written already)
            alloc.set_written(written.union(runs))

    def unwritten(self, start: int, end: int) -> Runs | None:
        """The parts of [start, end) nothing has written since aclrtMalloc, or None when it is all
        written (none outside an allocation: that is the out-of-bounds check's)."""
        alloc = self.find(start)
        if alloc is None or start >= end:
            return None
        s, e = alloc.head
        if s <= start and end <= e:  # the usual case (this runs for every tensor a launch reads)
            return None
        if alloc.written is None:  # one run at most: what is left of [start, end) around it
            if not e or e <= start or end <= s:
                return Runs.span(start, end)
            left, right = start < s, e < end
            if left and right:
                return Runs(np.array((start, e), np.int64), np.array((s, end), np.int64))
            return Runs.span(start, s) if left else Runs.span(e, end)
        if alloc.written.within(start, end):
            return None
        gaps = Runs.span(start, end).minus(alloc.written)
        return gaps if len(gaps) else None

    def unwritten_runs(self, runs: Runs) -> Runs | None:
        """The bytes of ``runs`` (inside one allocation) nothing has written, or None: all written."""
        if not len(runs):
            return None
        start, end = runs.bounds()
        alloc = self.find(start)
        if alloc is None or alloc.covers(start, end):
            return None
        written = alloc.runs()
        if runs.inside(written):
            return None
        gaps = runs.minus(written)
        return gaps if len(gaps) else None

    def is_written(self, start: int, end: int) -> bool:
        """Whether all of [start, end) (inside one allocation) is written."""
        alloc = self.find(start)
        return alloc is not None and alloc.covers(start, end)

    def copy_written(self, dst: int, src: int, count: int) -> None:
        """A device-to-device copy: what was written at ``src`` is written at ``dst`` now (the
        poison it carries stays unwritten, to be caught where it is used)."""
        gaps = self.unwritten(src, src + count)
        self.mark_written(dst, dst + count)
        if gaps is not None:
            alloc = self.find(dst)
            if alloc is not None:
                self.unwrites += 1
                shift = dst - src  # punch the unwritten parts back out
                alloc.set_written(alloc.runs().minus(Runs(gaps.starts + shift, gaps.ends + shift)))

    def bytes_at(self, addr: int, count: int) -> np.ndarray | None:
        """A uint8 view of [addr, addr+count); None if it leaves its allocation (the caller
        raises the status its C call reports)."""
        alloc = self.find(addr)
        if alloc is None or addr + count > alloc.base + alloc.size:
            return None
        start = addr - alloc.base
        return alloc.buf[start:start + count]

    def view(self, addr: int, shape: Sequence[int], dtype: np.dtype, strides: Sequence[int],
             offset: int, span: tuple[int, int] | None = None) -> np.ndarray | None:
        """The strided array a tensor descriptor describes (strides/offset in elements); None
        if it reaches outside its allocation (the caller raises what the device reports).
        ``span``: the bytes [start, end) it reaches, when the caller knows them already."""
        itemsize = dtype.itemsize
        if 0 in shape:
            return np.empty(shape, dtype)
        if span is None:
            lo, hi = extent(shape, strides)
            start, end = addr + (lo + offset) * itemsize, addr + (hi + offset + 1) * itemsize
        else:
            start, end = span
        alloc = self.find(start) if start >= 0 else None
        if alloc is None or end > alloc.base + alloc.size:
            return None
        # (positional: keywords cost np.ndarray 0.3 us more, on a call made for every tensor of a launch)
        return np.ndarray(tuple(shape), dtype, alloc.buf, addr - alloc.base + offset * itemsize,
                          tuple([s * itemsize for s in strides]))

    def live_allocations(self) -> list[Allocation]:
        """The live allocations (the leak report: NumpyRuntime.live_handles); registered host
        memory is the caller's, given back by the call that registered it, so not listed."""
        with self._lock:
            return [a for a in self._allocs.values() if a.kind != "registered"]

    def live(self, kind: str) -> int:
        with self._lock:
            return sum(1 for a in self._allocs.values() if a.kind == kind)
