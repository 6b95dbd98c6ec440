"""The acl runtime's memory: aclrtMalloc/aclrtFree, host memory, copies and memsets."""
from __future__ import annotations

from typing import Any
import numpy as np
from .._lib import check, created, ffi
from .session import NULL, VOID_P
from .streams import AclStreams


def _ptr(value: Any, writable: bool = False) -> Any:
    """An int address or a host buffer, as the void* cffi needs (None: nullptr, which the
    library checks itself)."""
    if value is None:
        return NULL
    if isinstance(value, int):
        return ffi.cast("void *", value)
    if isinstance(value, np.ndarray):  # a byte view: bfloat16 has no buffer-protocol format
        if not value.flags.c_contiguous:
            raise ValueError("host arrays passed to aclrtMemcpy must be C-contiguous")
        value = value.reshape(-1).view(np.uint8)
    return ffi.from_buffer(value, require_writable=writable)


def _device_ptr(addr: int | None) -> Any:
    """A device address as void* (None: nullptr, which the library checks itself)."""
    return NULL if addr is None else ffi.cast(VOID_P, addr)


def _address(ptr: Any) -> int:
    return int(ffi.cast("uintptr_t", ptr))


class AclMemory(AclStreams):
    """aclrtMalloc & co., aclrtMemcpy[Async], aclrtMemset[Async]."""

    # -- memory --------------------------------------------------------------------------------
    def malloc(self, size: int, policy: int) -> int:
        """aclrtMalloc. A KeyboardInterrupt landing right after it returned (Python runs signal
        handlers after C calls) frees the memory: nothing holds its address yet."""
        out = ffi.new("void **")
        return created(lambda: self.rt.aclrtMalloc(out, size, policy), out, "aclrtMalloc", self.rt.aclrtFree, _address)

    def free(self, ptr: int) -> None:
        check(self.rt.aclrtFree(ffi.cast("void *", ptr)), "aclrtFree")

    def malloc_host(self, size: int) -> int:
        """aclrtMallocHost; interrupted right after it returned, the memory is freed (as malloc)."""
        out = ffi.new("void **")
        return created(lambda: self.rt.aclrtMallocHost(out, size), out, "aclrtMallocHost", self.rt.aclrtFreeHost,
                       _address)

    def free_host(self, ptr: int) -> None:
        check(self.rt.aclrtFreeHost(ffi.cast("void *", ptr)), "aclrtFreeHost")

    def memcpy(self, dst: Any, dst_max: int, src: Any, count: int, kind: int) -> None:
        check(self.rt.aclrtMemcpy(_ptr(dst, True), dst_max, _ptr(src), count, kind), "aclrtMemcpy")

    def memcpy_async(self, dst: Any, dst_max: int, src: Any, count: int, kind: int, stream: Any) -> None:
        check(self.rt.aclrtMemcpyAsync(_ptr(dst, True), dst_max, _ptr(src), count, kind, stream),
              "aclrtMemcpyAsync")

    def memset(self, ptr: int | None, max_count: int, value: int, count: int) -> None:
        check(self.rt.aclrtMemset(_device_ptr(ptr), max_count, value, count), "aclrtMemset")

    def mem_info(self, attr: int) -> tuple[int, int]:
        free, total = ffi.new("size_t *"), ffi.new("size_t *")
        check(self.rt.aclrtGetMemInfo(attr, free, total), "aclrtGetMemInfo")
        return int(free[0]), int(total[0])

    def memset_async(self, ptr: int | None, max_count: int, value: int, count: int, stream: Any) -> None:
        check(self.rt.aclrtMemsetAsync(_device_ptr(ptr), max_count, value, count, stream), "aclrtMemsetAsync")
