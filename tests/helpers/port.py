"""A small port's session through pyaclnn.acl (streams, device memory, pinned host memory, 1-D
float32 tensors), each made through the C layer as a ported C++ sample makes it and released at
``close`` in the order CANN wants: synchronize, destroy the tensors, free, destroy the streams."""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from pyaclnn import acl

H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST


class PortSession:
    """``streams`` streams (``stream`` is the first) and what the test allocates on them."""

    def __init__(self, streams: int = 1) -> None:
        self.streams = [acl.aclrtCreateStream() for _ in range(streams)]
        self.stream = self.streams[0]
        self.allocs: list[int] = []
        self.hosts: list[int] = []
        self.tensors: list[Any] = []

    def malloc(self, values: np.ndarray) -> int:
        """aclrtMalloc of ``values.nbytes``, filled with ``values`` (a synchronous aclrtMemcpy)."""
        addr = acl.aclrtMalloc(values.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.allocs.append(addr)
        acl.aclrtMemcpy(addr, values.nbytes, values, values.nbytes, H2D)
        return addr

    def pinned(self, n: int) -> tuple[int, np.ndarray]:
        """n bytes of aclrtMallocHost memory and a NumPy view of them (as a port writes them)."""
        addr = acl.aclrtMallocHost(n)
        self.hosts.append(addr)
        return addr, np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(addr))

    def vector(self, addr: int, n: int) -> Any:
        """aclCreateTensor of ``n`` float32 at ``addr``."""
        t = acl.aclCreateTensor([n], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [n], 1, addr)
        self.tensors.append(t)
        return t

    def close(self) -> None:
        for s in self.streams:
            acl.aclrtSynchronizeStream(s)
        for t in self.tensors:
            acl.aclDestroyTensor(t)
        for addr in self.allocs:
            acl.aclrtFree(addr)
        for addr in self.hosts:
            acl.aclrtFreeHost(addr)
        for s in self.streams:
            acl.aclrtDestroyStream(s)
