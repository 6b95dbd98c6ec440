"""``pyaclnn.acl``: device and host memory, copies and memsets (the memory family of pyaclnn._runtime).

Part of ``pyaclnn.acl`` (which re-exports every ``acl*`` function here): see its docstring."""
from __future__ import annotations

from typing import Any
import numpy as _np
from .._objects.handles import AclrtStream
from .._objects.interop import host_array
from .common import (Buffer, active_runtime, address_arg, data_type_arg, enum_arg, int32_arg, size_t_arg)

__all__ = ["aclrtMalloc", "aclrtFree", "aclrtMallocHost", "aclrtFreeHost", "aclrtMemcpy", "aclrtMemcpyAsync",
           "aclrtMemset", "aclrtMemsetAsync", "aclrtGetMemInfo", "aclDataTypeSize"]


def aclrtMalloc(size: int, policy: int) -> int:
    """aclrtMalloc(&devPtr, size, policy) -> devPtr (an int).

    Args:
        size: bytes, > 0.
        policy: an ``aclrtMemMallocPolicy``, e.g. ``ACL_MEM_MALLOC_HUGE_FIRST``.

    Returns:
        The device address, as an int.

    Raises:
        AclError: the status, e.g. 100000 for size 0, 207001 when out of memory.

    Examples:
        >>> from pyaclnn import acl
        >>> acl.aclrtSetDevice(0)
        >>> ptr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        >>> acl.aclrtMemcpy(ptr, 16, np.arange(4, dtype=np.float32), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        >>> out = np.zeros(4, np.float32)
        >>> acl.aclrtMemcpy(out, 16, ptr, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        >>> out
        array([0., 1., 2., 3.], dtype=float32)
        >>> acl.aclrtFree(ptr)
        >>> acl.aclrtResetDevice(0)
    """
    api = "aclrtMalloc"
    return active_runtime().malloc(size_t_arg(api, "size", size), enum_arg(api, "policy", policy,
                                                                          "aclrtMemMallocPolicy"))


def aclrtFree(devPtr: int | None) -> None:
    """aclrtFree(devPtr). None is nullptr: CANN's 100000, as for any nullptr argument."""
    active_runtime().free(address_arg("aclrtFree", "devPtr", devPtr))


def aclrtMallocHost(size: int) -> int:
    """aclrtMallocHost(&hostPtr, size) -> hostPtr (an int; pinned host memory)."""
    return active_runtime().malloc_host(size_t_arg("aclrtMallocHost", "size", size))


def aclrtFreeHost(hostPtr: int | None) -> None:
    """aclrtFreeHost(hostPtr). None is nullptr (100000)."""
    active_runtime().free_host(address_arg("aclrtFreeHost", "hostPtr", hostPtr))


def _host(buffer: Buffer, writable: bool = False) -> Buffer:
    """A DLPack object (torch CPU tensor...) as an ndarray viewing its memory; addresses, None,
    ndarrays and other buffer objects as they are."""
    return host_array(buffer, in_place=writable) if hasattr(buffer, "__dlpack__") else buffer


def _host_side(api: str, name: str, buffer: Buffer, count: int, writable: bool = False) -> Buffer:
    """One side of a copy, checked before CANN is called: a host buffer C would read or write as
    ``count`` plain bytes must be C-contiguous, writable for ``dst`` and hold ``count`` bytes (C
    cannot know, and would read or write past it). Ints (addresses) and None go through as they
    are. TypeError for what is no buffer, ValueError for a buffer that cannot serve."""
    if buffer is None or (isinstance(buffer, (int, _np.integer)) and not isinstance(buffer, bool)):
        return address_arg(api, name, buffer) if buffer is not None else None
    buffer = _host(buffer, writable)
    if isinstance(buffer, _np.ndarray):  # flags, not memoryview: bfloat16 has no buffer-protocol format
        contiguous, readonly, nbytes = buffer.flags.c_contiguous, not buffer.flags.writeable, buffer.nbytes
    else:
        try:
            view = memoryview(buffer)
        except TypeError:
            raise TypeError(f"{api}: {name} must be a host buffer (NumPy array, bytearray, DLPack CPU tensor...), "
                            f"an int address or None, not {type(buffer).__name__}") from None
        contiguous, readonly, nbytes = view.c_contiguous, view.readonly, view.nbytes
    if not contiguous:
        fix = ("copy into np.ascontiguousarray(dst), then assign it back" if writable
               else "pass np.ascontiguousarray(src)")
        raise ValueError(f"{api}: {name} is not C-contiguous (C copies count plain bytes from its start): {fix}")
    if writable and readonly:
        raise ValueError(f"{api}: {name} is read-only, and the copy writes into it: pass a writable buffer "
                         f"(e.g. {name}.copy() or np.empty_like({name}))")
    if count > nbytes:
        raise ValueError(f"{api}: count {count} exceeds {name}'s {nbytes} bytes: pass count <= {nbytes} "
                         f"or a larger {name}")
    return buffer


def aclrtMemcpy(dst: Buffer, destMax: int, src: Buffer, count: int, kind: int) -> None:
    """aclrtMemcpy. Host sides are NumPy arrays/buffers or DLPack tensors (``dst`` writable: the
    copy lands in its memory; both C-contiguous, of at least ``count`` bytes: else ValueError,
    before CANN is called), device sides ints; None is nullptr.

    Args:
        dst: where to copy to: a host buffer or a device address.
        destMax: the bytes ``dst`` can hold.
        src: what to copy: a host buffer or a device address.
        count: the bytes to copy (0 succeeds at once).
        kind: ``ACL_MEMCPY_HOST_TO_DEVICE``, ``ACL_MEMCPY_DEVICE_TO_HOST``, ...

    Raises:
        ValueError: a host buffer that is not C-contiguous, read-only for ``dst``, or smaller
            than ``count``.
        TypeError: a host side that is no buffer.
        AclError: CANN's status, e.g. 107000 (``count`` over ``destMax``), 507899 (a device
            side that is not inside a live allocation).
    """
    api = "aclrtMemcpy"
    destMax, count, kind = _copy_args(api, destMax, count, kind)
    active_runtime().memcpy(_host_side(api, "dst", dst, count, True), destMax, _host_side(api, "src", src, count), count, kind)


def aclrtMemcpyAsync(dst: Buffer, destMax: int, src: Buffer, count: int, kind: int, stream: AclrtStream) -> None:
    """aclrtMemcpyAsync (host sides as for aclrtMemcpy). Keep host buffers alive and unchanged
    until the stream is synchronized."""
    api = "aclrtMemcpyAsync"
    destMax, count, kind = _copy_args(api, destMax, count, kind)
    active_runtime().memcpy_async(_host_side(api, "dst", dst, count, True), destMax, _host_side(api, "src", src, count),
                       count, kind, stream)


def _copy_args(api: str, dest_max: Any, count: Any, kind: Any) -> tuple[int, int, int]:
    return (size_t_arg(api, "destMax", dest_max), size_t_arg(api, "count", count),
            enum_arg(api, "kind", kind, "aclrtMemcpyKind"))


def _memset_args(api: str, dev_ptr: Any, max_count: Any, value: Any, count: Any) -> tuple[int, int, int, int]:
    return (address_arg(api, "devPtr", dev_ptr), size_t_arg(api, "maxCount", max_count),
            int32_arg(api, "value", value), size_t_arg(api, "count", count))


def aclrtMemset(devPtr: int | None, maxCount: int, value: int, count: int) -> None:
    """aclrtMemset(devPtr, maxCount, value, count): the low byte of ``value`` in ``count`` bytes."""
    active_runtime().memset(*_memset_args("aclrtMemset", devPtr, maxCount, value, count))


def aclrtMemsetAsync(devPtr: int | None, maxCount: int, value: int, count: int, stream: AclrtStream) -> None:
    """aclrtMemsetAsync (as aclrtMemset, queued on ``stream``)."""
    active_runtime().memset_async(*_memset_args("aclrtMemsetAsync", devPtr, maxCount, value, count), stream)


def aclrtGetMemInfo(attr: int) -> tuple[int, int]:
    """aclrtGetMemInfo(attr, &free, &total) -> (free, total)."""
    return active_runtime().mem_info(enum_arg("aclrtGetMemInfo", "attr", attr, "aclrtMemAttr"))


def aclDataTypeSize(dataType: int) -> int:
    """aclDataTypeSize(dataType) -> bytes per element. A value that is no aclDataType member is
    8, the switch's default (hicann/runtime src/acl/aclrt_impl/data_buffer.cpp aclDataTypeSizeImpl)."""
    from ..dtypes import DType, itemsize
    dataType = data_type_arg("aclDataTypeSize", dataType)
    try:
        return itemsize(DType(dataType))
    except ValueError:
        return 8
