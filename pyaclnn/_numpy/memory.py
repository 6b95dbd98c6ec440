"""Emulated device and pinned-host memory for the NumPy backend.

Each allocation is a real, 64-byte aligned NumPy byte buffer (like aclrtMalloc's alignment),
and its address is the buffer's real address: device addresses are unique ints, and a tensor
on "device" memory is a zero-copy strided view of its allocation.
"""
from __future__ import annotations

import bisect
import threading
from typing import Sequence

import numpy as np

from .._strides import extent
from ..errors import from_status

ALIGN = 64
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001


class Allocation:
    __slots__ = ("base", "size", "buf", "kind")

    def __init__(self, base: int, size: int, buf: np.ndarray, kind: str) -> None:
        self.base, self.size, self.buf, self.kind = base, size, buf, kind


class AddressSpace:
    """Live allocations by address; lookups are bounds-checked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bases: list[int] = []
        self._allocs: dict[int, Allocation] = {}

    def allocate(self, size: int, kind: str, api: str) -> int:
        if size <= 0:
            raise from_status(ACL_ERROR_INVALID_PARAM, api, f"size must not be 0 (got {size})")
        try:
            raw = np.empty(size + ALIGN, dtype=np.uint8)
        except MemoryError:
            raise from_status(ACL_ERROR_RT_MEMORY_ALLOCATION, api, f"cannot allocate {size} bytes") from None
        start = (-raw.ctypes.data) % ALIGN
        buf = raw[start:start + size]
        base = buf.ctypes.data
        with self._lock:
            bisect.insort(self._bases, base)
            self._allocs[base] = Allocation(base, size, buf, kind)
        return base

    def release(self, ptr: int, kind: str, api: str) -> None:
        with self._lock:
            alloc = self._allocs.get(ptr)
            if alloc is None or alloc.kind != kind:
                raise from_status(ACL_ERROR_RT_PARAM_INVALID, api,
                                  f"{ptr:#x} is not the start of a live {kind} allocation")
            del self._allocs[ptr]
            del self._bases[bisect.bisect_left(self._bases, ptr)]

    def find(self, addr: int) -> Allocation | None:
        with self._lock:
            i = bisect.bisect_right(self._bases, addr) - 1
            if i < 0:
                return None
            alloc = self._allocs[self._bases[i]]
        return alloc if addr < alloc.base + alloc.size else None

    def bytes_at(self, addr: int, count: int) -> np.ndarray | None:
        """A uint8 view of [addr, addr+count); None if it leaves its allocation (the caller
        raises the status its C call reports)."""
        alloc = self.find(addr)
        if alloc is None or addr + count > alloc.base + alloc.size:
            return None
        start = addr - alloc.base
        return alloc.buf[start:start + count]

    def view(self, addr: int, shape: Sequence[int], dtype: np.dtype, strides: Sequence[int],
             offset: int) -> np.ndarray | None:
        """The strided array a tensor descriptor describes (strides/offset in elements); None
        if it reaches outside its allocation (the caller raises what the device reports)."""
        itemsize = dtype.itemsize
        if 0 in shape:
            return np.empty(shape, dtype)
        lo, hi = extent(shape, strides)
        lo, hi = lo + offset, hi + offset
        alloc = self.find(addr + lo * itemsize) if lo * itemsize + addr >= 0 else None
        end = addr + (hi + 1) * itemsize
        if alloc is None or end > alloc.base + alloc.size:
            return None
        return np.ndarray(tuple(shape), dtype=dtype, buffer=alloc.buf,
                          offset=addr - alloc.base + offset * itemsize,
                          strides=tuple(s * itemsize for s in strides))

    def live(self, kind: str) -> int:
        with self._lock:
            return sum(1 for a in self._allocs.values() if a.kind == kind)
