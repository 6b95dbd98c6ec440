"""The reference runtime's memory: aclrtMalloc/aclrtFree, host memory, copies and memsets (the
byte model is pyaclnn._numpy.memory), host views and registered host arrays."""
from __future__ import annotations

from ..._core.sites import user_site as _user_site
from typing import Any, Sequence
import numpy as np
from ..._core.constants import (ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID,
                                ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_DRV_INTERNAL_ERROR,
                                ACL_ERROR_RT_MEMORY_ALLOCATION,
                                ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_HOST)
from ..queues import hazard
from ..overlap import copy_overlap
from ..pinned import PinnedCopy, PinnedSource
from .streams import NumpyStreams


# aclrtMemcpyAsync's kind against the memory (hicann/runtime api_error.cc MemcpyAsyncCheckLocation
# -> MemcpyKindAutoCorrect, MemcpyKindReviseMap; NpuDriver::PtrGetRealLocation: aclrtMalloc memory is
# DEVICE, aclrtMallocHost memory HOST, other host memory UNREGISTERED). Two known locations force the
# kind; with an unregistered side, these kinds (H2H 0, H2D 1, D2H 2, D2D 3) are allowed, others 107000.
_FORCED_KIND = {("host", "device"): 1, ("device", "host"): 2, ("host", "host"): 0, ("device", "device"): 3}

_ALLOWED_KINDS = {("unregistered", "device"): (1, 3), ("device", "unregistered"): (2, 3),
                  ("host", "unregistered"): (0, 1), ("unregistered", "host"): (0, 2),
                  ("unregistered", "unregistered"): (0, 1, 2, 3)}

_U8 = np.dtype(np.uint8)
_NDARRAY = np.ndarray  # (one global read: memcpy's usual read back asks it on every call)
DEVICE_MEMORY = 64 << 30  # bytes, as the emulator's EMU_DEVICE_MEM_TOTAL
MEMCPY_KINDS = range(0, 6)  # the acl layer's MemcpyKindTranslate: HOST_TO_HOST .. HOST_TO_BUF_TO_DEVICE


def _policy_ok(policy: int) -> bool:
    """An aclrtMemMallocPolicy the acl layer takes: a page policy 0..7 in the low byte, and only the
    memory-type / read-only flags above it (memory.cpp aclMallocMemInner; emu_rt_memory.c policy_ok)."""
    flags = 256 | 4096 | 1048576  # ACL_MEM_TYPE_LOW_BAND_WIDTH, _HIGH_BAND_WIDTH, ACL_MEM_ACCESS_USER_SPACE_READONLY
    return (policy & 0xFF) <= 7 and (policy & ~0xFF & ~flags) == 0


class NumpyMemory(NumpyStreams):
    """aclrtMalloc & co., aclrtMemcpy[Async], aclrtMemset[Async], host views (HostRuntime)."""

    # -- memory --------------------------------------------------------------------------------
    def malloc(self, size: int, policy: int) -> int:
        """The acl layer's checks (hicann/runtime src/acl/aclrt_impl/memory.cpp aclrtMallocImpl ->
        aclMallocMemInner: size 0; size plus alignment and padding wrapping around, "size too
        large"; the policy), then the context; as the emulator's aclrtMalloc (emu_rt_memory.c)."""
        api = "aclrtMalloc"
        if size == 0:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, "size must not be 0")
        huge1g = policy in (6, 7)  # ACL_MEM_MALLOC_HUGE1G_ONLY(_P2P): no padding
        if size > (1 << 64) - 1 - (32 if huge1g else 64):
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, f"size too large: {size}")
        if not _policy_ok(policy):
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, f"policy {policy} is invalid")
        self._need_context(api)
        if size > DEVICE_MEMORY:  # the driver's out of memory (emu_rt_memory.c device_pool_fits), not NumPy's
            raise self._fail(ACL_ERROR_RT_MEMORY_ALLOCATION, api, f"out of memory: {size} bytes requested, "
                                                                   f"the device has {DEVICE_MEMORY}")
        return self.memory.allocate(size, "device", api, self._thread.device)

    def free(self, ptr: int) -> None:
        if not ptr:  # ACL_REQUIRES_NOT_NULL (aclrtFreeImpl)
            raise self._fail(ACL_ERROR_INVALID_PARAM, "aclrtFree", "devPtr is nullptr")
        # no context needed (hicann/runtime api_impl.cc ApiImpl::DevFree: CurrentContext(false), then
        # DevFreeStatic frees through the NPU driver when there is none), as emu_rt_memory.c aclrtFree
        self._need_init("aclrtFree")
        self._freeing(ptr, "device", "aclrtFree")
        self.memory.release(ptr, "device", "aclrtFree")

    def _freeing(self, ptr: int, kind: str, api: str) -> None:
        """A free frees at once (hicann/runtime ApiImpl::DevFree): queued work on it is a hazard."""
        alloc = self.memory.find(ptr) if isinstance(ptr, int) else None
        if alloc is not None and alloc.base == ptr and alloc.kind == kind:
            self.queues.freed(api, (ptr, ptr + alloc.size))
            if self._captures is not None:  # a graph may use it (capture.py)
                self._capture_freed(ptr, api)

    # -- the capture family's hooks (pyaclnn/_numpy/runtime/capture.py overrides them) ------------
    def _capture_freed(self, base: int, api: str) -> None:
        """An allocation a graph may use is freed."""

    def _capture_sync_copy(self, api: str) -> None:
        """Refuse a synchronous copy or memset the capture mode forbids."""

    def _capture_async_copy(self, api: str, stream: Any, src: Any, dst: Any) -> None:
        """Refuse an async copy a capture cannot record."""

    def malloc_host(self, size: int) -> int:
        self._need_context("aclrtMallocHost")
        return self.memory.allocate(size, "host", "aclrtMallocHost")

    def free_host(self, ptr: int) -> None:
        if not ptr:
            raise self._fail(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost", "hostPtr is nullptr")
        self._freeing(ptr, "host", "aclrtFreeHost")
        self.memory.release(ptr, "host", "aclrtFreeHost")

    # -- copies and memsets: each layer's checks in the real order (emu_rt_memory.c cites them) -
    # 1. acl layer (hicann/runtime src/acl/aclrt_impl/memory.cpp aclrt{Memcpy,Memset}{,Async}Impl):
    #    count 0 succeeds before anything else; then NULL pointers and the memcpy kind, 100000.
    # 2. the async entry points validate the stream handle (api_c.cc rtMemcpyAsync/rtMemsetAsync).
    # 3. count > destMax (maxCount): 107000 (api_error.cc ApiErrorDecorator::MemCopySync,
    #    MemcpyAsync, MemsetAsync; aclrtMemset's is the driver's drvMemsetD8, after the context).
    # 4. the context (api_impl.cc ApiImpl::*: 107002), then the memory (the driver: 507899).
    def _memcpy_args(self, api: str, dst: Any, src: Any, count: int, kind: int) -> bool:
        """Step 1 of a copy; True when there is nothing to do (count 0: the call succeeds)."""
        if count == 0:
            return True
        if dst is None or (isinstance(dst, int) and dst == 0):  # (unrolled: this runs for every copy)
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, "dst is nullptr")
        if src is None or (isinstance(src, int) and src == 0):
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, "src is nullptr")
        if kind not in MEMCPY_KINDS:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, f"invalid aclrtMemcpyKind {kind} (MemcpyKindTranslate takes "
                                                           "ACL_MEMCPY_HOST_TO_HOST .. ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)")
        return False

    def _max_check(self, api: str, name: str, maximum: int, count: int) -> None:
        """Step 3: RT_ERROR_INVALID_VALUE, reported as ACL_ERROR_RT_PARAM_INVALID."""
        if count > maximum:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api, f"count {count} exceeds {name} {maximum} "
                                                              f"(range (0, {maximum}])")

    def _bytes(self, where: Any, count: int, api: str, writable: bool) -> np.ndarray:
        if isinstance(where, int):
            return self._device_bytes(where, count, api)
        if isinstance(where, np.ndarray):  # a byte view: bfloat16 has no buffer-protocol format
            flags = where.flags
            if not flags.c_contiguous:
                raise self._fail(ACL_ERROR_INVALID_PARAM, api, "host array must be C-contiguous")
            if writable and not flags.writeable:
                raise self._fail(ACL_ERROR_INVALID_PARAM, api, "destination host array is read-only")
            flat = where if where.ndim == 1 and where.dtype == np.uint8 else where.reshape(-1).view(np.uint8)
        else:
            view = memoryview(where)
            if not view.c_contiguous:
                raise self._fail(ACL_ERROR_INVALID_PARAM, api, "host buffer must be C-contiguous")
            if writable and view.readonly:
                raise self._fail(ACL_ERROR_INVALID_PARAM, api, "destination host buffer is read-only")
            flat = np.frombuffer(view.cast("B"), dtype=np.uint8)
        if count > flat.size:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api,
                             f"count {count} exceeds the host buffer's {flat.size} bytes")
        return flat if count == flat.size else flat[:count]

    def _device_bytes(self, addr: int, count: int, api: str) -> np.ndarray:
        """The device side of a copy or memset. Neither the acl layer nor the runtime checks the
        address: the driver does. On A2/A3 (hicann/driver src/ascend_hal/svm/v2: _drvMemcpyInner
        and drvMemsetD8Inner, then the SVM ioctls: devmm_memcpy_para_check in
        src/sdk_driver/svm/v2/master/comm/svm_master_memcpy.c, devmm_ioctl_memset_device_check in
        svm_master_memset.c) a range it cannot resolve fails with -EINVAL / -EADDRNOTAVAIL, i.e.
        DRV_ERROR_PARA_ERROR / DRV_ERROR_IOCRL_FAIL, which the runtime's ErrorcodeManage
        (src/runtime/core/src/common/errcode_manage.cc) reports as ACL_ERROR_RT_DRV_INTERNAL_ERROR;
        the async calls' drvMemGetAttribute fails the same way for an address in no heap. Closest
        model: refused at the call, 507899. (A small overrun inside a mapped page, or a host
        address outside the SVM range, which the driver copies or sets as host memory, goes
        unnoticed on a device.) Pinned host memory (aclrtMallocHost) is accepted too."""
        view = self.memory.bytes_at(addr, count)
        if view is None:
            raise self._fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api,
                             f"[{addr:#x}, +{count}) is not inside one live allocation (freed, or past its end?)")
        return view

    def memcpy(self, dst: Any, dst_max: int, src: Any, count: int, kind: int) -> None:
        api = "aclrtMemcpy"
        if (kind == ACL_MEMCPY_DEVICE_TO_HOST and type(dst) is _NDARRAY and type(src) is int and src
                and 0 < count <= dst_max):
            # The usual read back, to a host ndarray, the arguments already valid: the general
            # path's checks in its order, without re-dispatching on the kinds of ``dst`` and
            # ``src`` (inline: every Tensor.numpy() is one). Where a later step would refuse the
            # copy it falls through, having done nothing, and the general path reports it.
            if not self._initialized or self._thread.device is None:  # (_need_context's test, inline)
                self._need_context(api)
            if self._captures:
                self._capture_sync_copy(api)
            nbytes = dst.nbytes
            if dst.flags.carray and nbytes >= count:  # (C-contiguous, writeable and aligned: else the general path)
                data = self.memory.bytes_at(src, count)
                if data is not None:
                    if self.queues.busy:  # (queued work: host_access's checks; none after a synchronize)
                        self.queues.host_access(api, ((src, src + count),), write=False)
                    out = dst if dst.dtype is _U8 and dst.ndim == 1 else dst.reshape(-1).view(_U8)
                    (out if count == nbytes else out[:count])[...] = data  # (out: dst's nbytes bytes)
                    return
        if self._memcpy_args(api, dst, src, count, kind):
            return
        self._max_check(api, "destMax", dst_max, count)
        self._need_context(api)
        self._capture_sync_copy(api)
        self._sync_kind_sides(api, dst, src, count, kind)
        out = self._bytes(dst, count, api, writable=True)
        data = self._bytes(src, count, api, writable=False)
        # it waits for no stream (ApiImpl::MemCopySync): queued work on that memory is a race
        device_src, device_dst = isinstance(src, int), isinstance(dst, int)
        if device_src:
            self.queues.host_access(api, ((src, src + count),), write=False)
        if device_dst:
            self.queues.host_access(api, ((dst, dst + count),), write=True)
        if device_src and device_dst:
            self._check_copy_overlap(api, dst, src, count)
            self._check_written(api, src, count)
        out[...] = data
        if device_dst:
            if device_src:
                self.memory.copy_written(dst, src, count)
            else:
                self.memory.mark_written(dst, dst + count)

    @staticmethod
    def _check_copy_overlap(api: str, dst: int, src: int, count: int) -> None:
        """A copy between overlapping ranges (pyaclnn._numpy.overlap): the DMA copies in blocks, so what lands
        depends on their order (memcpy, not memmove)."""
        hit = copy_overlap(dst, src, count)
        if hit is not None:
            site = _user_site()
            hazard(f"{api} at {site} copies {count} bytes from {src:#x} to {dst:#x}: the ranges overlap in "
                   f"[{hit[0]:#x}, +{hit[1] - hit[0]}), so the bytes that land depend on the order the copy "
                   f"engine moves its blocks in (a copy is not memmove). Copy through a separate buffer", site)

    def _check_written(self, api: str, start: int, count: int) -> None:
        """A device-to-device copy reads its source: bytes never written are a hazard."""
        if self.memory.unwritten((start, start + count)) is not None:
            self.queues.check_written(api, _user_site(), ((start, start + count),))

    def _sync_kind_sides(self, api: str, dst: Any, src: Any, count: int, kind: int) -> None:
        """The sides the kind calls device memory (H2D, D2D, H2B2D: dst; D2H, D2D: src) must be
        aclrtMalloc or aclrtMallocHost memory: the driver copies by address (NpuDriver::MemCopySync
        -> drvMemcpy takes no kind; hicann/driver svm_master_memcpy.c devmm_memcpy_para_check
        cannot resolve a pageable host address given as device memory: -EINVAL ->
        ACL_ERROR_RT_DRV_INTERNAL_ERROR, errcode_manage.cc). A host array where the kind says host
        is not looked at. As the emulator (emu_rt_memory.c memcpy_device_checks), dst first."""
        for name, bad in (("dst", (kind == 1 or kind == 3 or kind == 5) and not isinstance(dst, int)),
                          ("src", (kind == 2 or kind == 3) and not isinstance(src, int))):
            if bad:
                raise self._fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api,
                                 f"{name} (+{count} bytes) is host memory, not inside a live device allocation, "
                                 f"but kind {kind} copies {'to' if name == 'dst' else 'from'} the device")

    def memcpy_async(self, dst: Any, dst_max: int, src: Any, count: int, kind: int, stream: int) -> None:
        """Steps 1-4, then (api_error.cc MemcpyAsync) H2H, which an online runtime refuses with
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT, then the stream's device (ApiImpl::MemcpyAsync)."""
        api = "aclrtMemcpyAsync"
        if self._memcpy_args(api, dst, src, count, kind):
            return
        self._need_stream(stream, api)
        self._max_check(api, "destMax", dst_max, count)
        self._need_context(api)
        out = self._bytes(dst, count, api, writable=True)
        data = self._bytes(src, count, api, writable=False)
        kind = self._async_kind(api, dst, src, kind)
        if kind == ACL_MEMCPY_HOST_TO_HOST:
            raise self._fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                             "ACL_MEMCPY_HOST_TO_HOST is not supported by the async copy")
        self._capture_async_copy(api, stream, src, dst)
        self._need_stream(stream, api, launch=True)
        self._launch_fault(stream, api)
        reads = ((src, src + count),) if isinstance(src, int) else ()
        writes = ((dst, dst + count),) if isinstance(dst, int) else ()
        both = bool(reads and writes and self._location(src) == "device" == self._location(dst))
        if reads and writes:
            self._check_copy_overlap(api, dst, src, count)

        pinned: tuple[PinnedSource, ...] = ()
        if reads and self._location(src) == "host":  # pinned: the host may write it before the copy runs
            # (the queue keeps its bytes when the copy, or each replay of a graph capturing it, is
            # queued to run, and compares them when it runs: pyaclnn._numpy.pinned)
            pinned = (PinnedSource(api, src, data, _user_site()),)
            copy: Any = PinnedCopy(out, pinned[0])
        else:
            def copy() -> None:
                out[...] = data
        self.queues.put(self._queue(stream), api, reads, writes, copy, check_init=reads if both else (),
                        pinned=pinned)

    def _location(self, where: Any) -> str:
        alloc = self.memory.find(where) if isinstance(where, int) else None
        if alloc is None or alloc.kind == "registered":  # a registered address is no copy's memory (the docs of
            return "unregistered"  # aclrtHostRegister): the host memory it is, as the driver sees it
        return alloc.kind  # "device" or "host" (pinned)

    def _async_kind(self, api: str, dst: Any, src: Any, kind: int) -> int:
        """The kind the async copy runs with (see _FORCED_KIND), or 107000 for a kind its memory
        cannot have (pinned host memory given as the device side of a copy with pageable memory)."""
        if kind > 3:  # ACL_MEMCPY_DEFAULT, ..._HOST_TO_BUF_TO_DEVICE: not modelled
            return kind
        where = (self._location(src), self._location(dst))
        if where in _FORCED_KIND:
            return _FORCED_KIND[where]
        if kind not in _ALLOWED_KINDS[where]:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api,
                             f"kind {kind} does not match the memory: src is {where[0]}, dst is {where[1]} memory "
                             f"(aclrtMallocHost memory is host memory: use a HOST kind)")
        return kind

    def memset(self, ptr: int | None, max_count: int, value: int, count: int) -> None:
        """The context, then the driver (drvMemsetD8Inner): count > maxCount, then the address."""
        api = "aclrtMemset"
        if count == 0:  # step 1
            return
        if not ptr:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is nullptr")
        self._need_context(api)
        self._capture_sync_copy(api)
        self._max_check(api, "maxCount", max_count, count)
        view = self._device_bytes(ptr, count, api)
        self.queues.host_access(api, ((ptr, ptr + count),), write=True)
        view[...] = value & 0xFF
        self.memory.mark_written(ptr, ptr + count)

    def memset_async(self, ptr: int | None, max_count: int, value: int, count: int, stream: Any) -> None:
        """The stream handle, count > maxCount, the context, the stream's device
        (ApiImpl::MemsetAsync), then the address (memory_common.cc MemSetAsync)."""
        api = "aclrtMemsetAsync"
        if count == 0:  # step 1
            return
        if not ptr:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is nullptr")
        self._need_stream(stream, api)
        self._max_check(api, "maxCount", max_count, count)
        self._need_context(api)
        self._need_stream(stream, api, launch=True)
        view = self._device_bytes(ptr, count, api)
        self._launch_fault(stream, api)

        def fill() -> None:
            view[...] = value & 0xFF
        self.queues.put(self._queue(stream), api, (), ((ptr, ptr + count),), fill)

    def mem_info(self, attr: int) -> tuple[int, int]:
        self._need_context("aclrtGetMemInfo")
        if not 0 <= attr <= 17:  # ACL_DDR_MEM .. ACL_MEM_P2P_HUGE1G (as emu_rt_memory.c aclrtGetMemInfo)
            raise self._fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo", f"attr {attr} is invalid")
        return DEVICE_MEMORY, DEVICE_MEMORY

    def _in_device_allocation(self, addr: int, count: int) -> bool:
        """Whether [addr, addr+count) lies inside one live aclrtMalloc allocation (one lookup)."""
        alloc = self.memory.find(addr)
        return alloc is not None and alloc.kind == "device" and addr + count <= alloc.base + alloc.size

    def host_view(self, addr: int, shape: Sequence[int], dtype: np.dtype, strides: Sequence[int],
                  offset: int) -> np.ndarray | None:
        """The ndarray a tensor on emulated device memory is (zero copy); None when it reaches
        outside its allocation (freed, or past its end)."""
        return self.memory.view(addr, shape, np.dtype(dtype), strides, offset)

    def register_host(self, buf: np.ndarray) -> int | None:
        """Host bytes ``buf`` (a contiguous uint8 view) as device memory, in place: the device
        address a tensor on them takes (their own), or None when they cannot be (they reach into
        an allocation that does not hold all of them). Modelled on aclrtHostRegister (hicann/runtime
        docs/zh/api_ref/11-02_host_memory_management.md: host memory mapped for the device, which
        the kernels then use without a copy); unlike it, a registration is counted, so calls that
        share an array each keep it (pyaclnn._numpy.memory.AddressSpace.register)."""
        return self.memory.register(buf)

    def unregister_host(self, addr: int) -> None:
        """Give back one ``register_host`` that returned ``addr`` (aclrtHostUnregister)."""
        self.memory.unregister(addr)
