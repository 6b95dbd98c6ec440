"""Emulated device and pinned-host memory for the NumPy backend.

Each allocation is a real, 64-byte aligned NumPy byte buffer (like aclrtMalloc's alignment),
and its address is the buffer's real address: device addresses are unique ints, and a tensor
on "device" memory is a zero-copy strided view of its allocation.

Fresh memory holds the poison byte 0xFF (a NaN in every float type, as the emulator's
aclrtMalloc fills it: device memory is not zeroed), and each allocation knows exactly which of
its bytes something has written since (one run as two ints while they are one, else a bool a
byte: a strided tensor's elements are marked and checked through a strided view of it), for the
uninitialised-read check (pyaclnn._numpy.queues), and the user's line that made it (``site``).

Host memory can also be made device memory in place (``register``, modelled on
aclrtHostRegister, which maps host memory for the device: on a device the kernels then read and
write it through the mapped address, with no copy). Here the address is the memory's own, so an
ndarray's bytes become an allocation of kind "registered" without a copy; the NumPy-in/out
functions do this to their arrays for the duration of a call (pyaclnn._functions.hostcall).
"""
from __future__ import annotations

import bisect
import ctypes
import threading
from collections import deque
from typing import Callable, Iterable, NamedTuple, Sequence, cast

import numpy as np

from .._core.constants import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID
from .._core.sites import UNKNOWN, Site, user_site
from .._core.strides import extent
from ..errors import from_status

ALIGN = 64
POISON = 0xFF
RECENT_FREES = 256  # frees remembered per address space (freed_over)
_NO_BYTES = (0, 0, -1, None)  # AddressSpace.bytes_at remembers nothing


def _address(buf: np.ndarray) -> int:
    """The address of a contiguous uint8 array's first byte. ctypes reads a writable buffer's
    in 0.2 us; ``buf.ctypes.data`` (1 us: it builds numpy's ctypes helper) is for read-only ones."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(buf.data))
    except (TypeError, ValueError):  # read-only (or empty) memory
        return buf.ctypes.data


Span = tuple[int, int]  # [start, end) device addresses


class Elements(NamedTuple):
    """The bytes of a strided tensor's elements (all, or its first ones: boxes of
    pyaclnn._core.strides.byte_boxes, each ``(address of its lowest byte, [(byte stride, size), ...])``),
    inside [start, end): what a launch reads or writes of it, exactly (its gaps are not touched)."""
    start: int
    end: int
    boxes: tuple[tuple[int, list[tuple[int, int]]], ...]


# Bytes read or written exactly, for the uninitialised-read check: a span (a contiguous tensor, a
# copy, a memset), or the elements of a strided tensor
Access = Span | Elements
_Spans = Sequence[Span]


_WORDS: dict[int, tuple[type, object]] = {2: (np.uint16, 0x0101), 4: (np.uint32, 0x01010101),
                                           8: (np.uint64, 0x0101010101010101)}


def _box(mask: np.ndarray, origin: int, first: int, dims: list[tuple[int, int]]) -> tuple[np.ndarray, object]:
    """The bytes of one box as a strided view of ``mask`` (a bool a byte, from address
    ``origin``; the box lies inside it), and the value of a view element all written: an item
    of 2, 4 or 8 bytes is one word, 0x01 a byte (NumPy then loops over items, not bytes)."""
    word = _WORDS.get(dims[-1][1]) if dims and dims[-1][0] == 1 else None
    dtype, full = word if word is not None else (np.bool_, True)
    if word is not None:
        dims = dims[:-1]
    view = np.ndarray(tuple(d for _, d in dims), dtype, mask, first - origin, tuple(s for s, _ in dims))
    return view, full


def _mark(mask: np.ndarray, origin: int, access: Access) -> None:
    """Set the bytes of ``access`` in ``mask`` (only what lies in it: a queued task's accesses
    may be in other allocations)."""
    start, end = access[0] - origin, access[1] - origin
    if isinstance(access, Elements):
        if 0 <= start and end <= mask.size:
            for first, dims in access.boxes:
                view, full = _box(mask, origin, first, dims)
                view[...] = full
    else:
        mask[max(start, 0):max(end, 0)] = True


def _first_gap(written: np.ndarray, origin: int, access: Access) -> Span | None:
    """The first run of the bytes of ``access`` (inside ``written``, a mask from ``origin``)
    that are not written; None: all are."""
    start, end = access[0], access[1]
    have = written[start - origin:end - origin]
    if isinstance(access, Elements):
        if all(view.min() == full for view, full in (_box(written, origin, *box) for box in access.boxes)):
            return None
        gap = np.zeros(end - start, bool)
        _mark(gap, start, access)
        gap &= ~have
    elif have.all():
        return None
    else:
        gap = ~have
    i = int(gap.argmax())
    n = int(gap[i:].argmin()) or gap.size - i  # (0: the gap runs to the end)
    return start + i, start + i + n


def shared(a: Access, b: Access) -> Span | None:
    """The first run of bytes both ``a`` and ``b`` touch (exactly: a strided tensor's gaps are
    not its bytes), or None: they share none. For the race checks, once their spans overlap."""
    origin = min(a[0], b[0])
    size = max(a[1], b[1]) - origin
    both = np.zeros(size, bool)
    _mark(both, origin, a)
    other = np.zeros(size, bool)
    _mark(other, origin, b)
    both &= other
    if not both.any():
        return None
    i = int(both.argmax())
    n = int(both[i:].argmin()) or size - i  # (0: the run reaches the end)
    return origin + i, origin + i + n


def _subtract(gaps: list[Span], writes: Iterable[Span]) -> list[Span]:
    """``gaps`` less the spans ``writes``."""
    for ws, we in writes:
        out: list[Span] = []
        for gs, ge in gaps:
            if we <= gs or ge <= ws:
                out.append((gs, ge))
                continue
            if gs < ws:
                out.append((gs, ws))
            if we < ge:
                out.append((we, ge))
        gaps = out
        if not gaps:
            break
    return gaps


class Allocation:
    __slots__ = ("base", "size", "buf", "kind", "site", "head", "mask", "serial", "refs", "device")

    def __init__(self, base: int, size: int, buf: np.ndarray, kind: str, site: Site, serial: int,
                 device: int | None = None) -> None:
        self.base, self.size, self.buf, self.kind, self.site = base, size, buf, kind, site
        self.device = device  # device memory: the device it is on (released with it: release_device)
        self.serial = serial  # the address space's allocation count when it was made
        # The bytes written since aclrtMalloc: while they are one run (none, all, or a prefix:
        # the usual case), that run as ints, kept, checked and grown with no NumPy call; once they
        # are not, a bool a byte (True: written), and ``head`` is (0, 0).
        self.head = (0, 0)
        self.mask: np.ndarray | None = None
        self.refs = 1  # registrations of host memory it holds (kind "registered": see register)

    def written(self) -> np.ndarray:
        """The written bytes as a mask: ``mask``, or a new one from ``head`` (not kept)."""
        if self.mask is not None:
            return self.mask
        mask = np.zeros(self.size, bool)
        s, e = self.head
        if e:
            mask[s - self.base:e - self.base] = True
        return mask

    def to_mask(self) -> np.ndarray:
        """The mask, made from ``head`` the first time the written bytes may stop being one run."""
        if self.mask is None:
            self.mask, self.head = self.written(), (0, 0)
        return self.mask


class AddressSpace:
    """Live allocations by address; lookups are bounds-checked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bases: list[int] = []
        self._allocs: dict[int, Allocation] = {}
        self.allocations = 0  # allocations made so far
        self.frees = 0        # frees so far
        self.unwrites = 0     # copies that made written bytes unwritten again (copy_written)
        self._last_bytes: tuple[int, int, int, np.ndarray | None] = _NO_BYTES  # bytes_at's last answer
        # the latest frees, newest last: (start, end, the free's C call and line, the allocation's
        # line, its serial), to name the free where a stale pointer is used (freed_over, free_of)
        self.recent_frees: deque[tuple[int, int, str, Site, Site, int]] = deque(maxlen=RECENT_FREES)
        # allocations never freed before their device closed (release_device): for the leak
        # report, as what aclrtFree never gave back: (base, size, the allocation's line, serial)
        self.closed_unfreed: list[tuple[int, int, Site, int]] = []

    def allocate(self, size: int, kind: str, api: str, device: int | None = None) -> int:
        if size <= 0:
            raise from_status(ACL_ERROR_INVALID_PARAM, api, f"size must not be 0 (got {size})")
        try:
            raw = np.empty(size + ALIGN, dtype=np.uint8)
        except (MemoryError, ValueError):  # ValueError: more than NumPy can index ("maximum dimension")
            raise from_status(ACL_ERROR_RT_MEMORY_ALLOCATION, api, f"cannot allocate {size} bytes") from None
        start = (-raw.ctypes.data) % ALIGN
        buf = raw[start:start + size]
        buf.fill(POISON)
        base = buf.ctypes.data
        site = user_site()
        with self._lock:
            self.allocations += 1
            self._allocs[base] = Allocation(base, size, buf, kind, site, self.allocations, device)
            bisect.insort(self._bases, base)
        return base

    def release(self, ptr: int, kind: str, api: str) -> None:
        with self._lock:
            alloc = self._allocs.get(ptr)
            if alloc is None or alloc.kind != kind:
                raise from_status(ACL_ERROR_RT_PARAM_INVALID, api, f"{ptr:#x} is not the start of a live {kind} "
                                                                   f"allocation{self.freed_over(ptr, ptr + 1)}")
            del self._bases[bisect.bisect_left(self._bases, ptr)]
            del self._allocs[ptr]
            self.frees += 1
            self._last_bytes = _NO_BYTES  # (bytes_at's: the freed buffer may go)
        self.recent_frees.append((ptr, ptr + alloc.size, api, user_site(), alloc.site, alloc.serial))

    def release_device(self, device: int, api: str) -> list[int]:
        """The device closes: every aclrtMalloc allocation on it is freed (the bases), by ``api``
        at the user's line (pyaclnn._numpy.runtime.session: the last aclrtResetDevice)."""
        site = user_site()
        with self._lock:
            gone = [a for a in self._allocs.values() if a.kind == "device" and a.device == device]
            for alloc in gone:
                del self._bases[bisect.bisect_left(self._bases, alloc.base)]
                del self._allocs[alloc.base]
                self.frees += 1
            self._last_bytes = _NO_BYTES  # (bytes_at's: the freed buffer may go)
        for alloc in gone:
            self.recent_frees.append((alloc.base, alloc.base + alloc.size, api, site, alloc.site, alloc.serial))
            self.closed_unfreed.append((alloc.base, alloc.size, alloc.site, alloc.serial))
        return [a.base for a in gone]

    def freed_over(self, start: int, end: int) -> str:
        """Where [start, end) was freed, if a remembered free covered part of it: ", memory freed by
        aclrtFree at <line> (allocated at <line>)" and whether the address was handed out again,
        or "" (for the report of a stale pointer's use: out of bounds, or a fault)."""
        for s, e, api, site, made, _ in reversed(self.recent_frees):
            if s < end and start < e:
                again = self.find(s)
                reused = (f"; a later allocation{f' (at {again.site})' if again.site else ''} has its address "
                          f"now, {again.size} bytes" if again is not None and again.base == s else "")
                return f", memory freed by {api} at {site} (allocated at {made}){reused}"
        return ""

    def free_of(self, serial: int) -> tuple[str, Site, Site] | None:
        """How the ``serial``-th allocation was freed, if that free is remembered: (the free's C
        call, its line, the allocation's line)."""
        for _, _, api, site, made, freed in reversed(self.recent_frees):
            if freed == serial:
                return api, site, made
        return None

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
            self._last_bytes = _NO_BYTES  # (bytes_at's: the freed buffer may go)

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
        if alloc.mask is None:
            s, e = alloc.head
            if s <= start and end <= e:  # the usual case: already written
                return
            if not e or start <= e and s <= end:  # the first run, or one it meets
                alloc.head = (start, end) if not e else (min(s, start), max(e, end))
                return
        alloc.to_mask()[start - alloc.base:end - alloc.base] = True

    def mark_elements(self, access: Elements) -> None:
        """The bytes of a strided tensor's elements (inside one allocation) hold written data now."""
        alloc = self.find(access.start)
        if alloc is None or access.end > alloc.base + alloc.size:
            return  # (out of bounds: the launch named it)
        s, e = alloc.head
        if not (s <= access.start and access.end <= e):
            _mark(alloc.to_mask(), alloc.base, access)

    def unwritten(self, access: Access, later: Callable[[Access], Sequence[Access]] | None = None) -> Span | None:
        """The first run of the bytes of ``access`` nothing has written since aclrtMalloc (none
        outside an allocation: that is the out-of-bounds check's), or None: all are written.
        ``later(access)``: what queued tasks will have written first, taken as written (asked only
        when some bytes are not written yet: it scans the queues)."""
        start, end = access[0], access[1]
        alloc = self.find(start)
        if alloc is None:
            return None
        s, e = alloc.head
        if s <= start and end <= e:  # the usual case (this runs for every tensor a launch reads)
            return None
        if start >= end or end > alloc.base + alloc.size:
            return None
        if alloc.mask is not None:
            gap = _first_gap(alloc.mask, alloc.base, access)
            if gap is None or later is None:
                return gap
        # Some bytes are unwritten now (the mask's gap, or the ends of [start, end), bytes of ``access``,
        # are not both in the one run): what queued tasks will write counts too
        queued = later(access) if later is not None else ()
        if alloc.mask is None and type(access) is tuple and Elements not in map(type, queued):
            # spans around one run: what is left of [start, end) around it, less ``queued``; no NumPy call
            gaps = [(start, min(end, s)), (max(start, e), end)]
            if queued:
                gaps = _subtract(gaps, cast(_Spans, queued))
            for gap in gaps:
                if gap[0] < gap[1]:
                    return gap
            return None
        written = alloc.written()
        if queued:
            written = written.copy() if written is alloc.mask else written
            for a in queued:
                _mark(written, alloc.base, a)
        return _first_gap(written, alloc.base, access)

    def copy_written(self, dst: int, src: int, count: int) -> None:
        """A device-to-device copy: what was written at ``src`` is written at ``dst`` now (the
        poison it carries stays unwritten, to be caught where it is used)."""
        if self.unwritten((src, src + count)) is None:
            self.mark_written(dst, dst + count)
            return
        source, target = self.find(src), self.find(dst)
        if source is not None and target is not None:
            self.unwrites += 1
            bits = source.written()[src - source.base:src - source.base + count].copy()
            target.to_mask()[dst - target.base:dst - target.base + count] = bits

    def bytes_at(self, addr: int, count: int) -> np.ndarray | None:
        """A uint8 view of [addr, addr+count); None if it leaves its allocation (the caller
        raises the status its C call reports). The last one found is kept (a program reads the
        same output back after each launch) while the frees count is the same: an allocation
        found live stays live, with the same buffer, until a free, and no other allocation can
        hold its bytes meanwhile, so the lookup would find the same view again. A free drops it
        (the freed buffer is not kept alive by it)."""
        last = self._last_bytes
        if last[0] == addr and last[1] == count and last[2] == self.frees:
            return last[3]
        frees = self.frees  # (read first: a free while this looks makes the next call look again)
        alloc = self.find(addr)
        if alloc is None or addr + count > alloc.base + alloc.size:
            return None
        start = addr - alloc.base
        view = alloc.buf[start:start + count]
        self._last_bytes = (addr, count, frees, view)
        return view

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
