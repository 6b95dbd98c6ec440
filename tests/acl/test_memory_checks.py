"""aclrtMemcpy(Async) and aclrtMemset(Async): both backends check what the real stack checks, in
its order, with its statuses.

The real sources (cited where each backend implements them: tests/emulator/src/emu_rt_memory.c
above ``acl_memcpy_checks``, pyaclnn/_numpy/runtime.py "copies and memsets"):

1. the acl layer (hicann/runtime src/acl/aclrt_impl/memory.cpp aclrt{Memcpy,Memset}{,Async}Impl):
   count 0 succeeds before anything else is looked at; then a NULL pointer and (copies) a kind
   MemcpyKindTranslate does not know are ACL_ERROR_INVALID_PARAM (100000);
2. the runtime (src/runtime/api/impl/api_error.cc ApiErrorDecorator::MemCopySync, MemcpyAsync,
   MemsetAsync): count > destMax / maxCount is RT_ERROR_INVALID_VALUE, reported as
   ACL_ERROR_RT_PARAM_INVALID (107000), before the context; aclrtMemset's count check is the
   driver's (hicann/driver devmm_svm.c drvMemsetD8Inner, 107000 too), after the context;
3. the context (api_impl.cc ApiImpl::*): ACL_ERROR_RT_CONTEXT_NULL (107002);
4. the memory, in the driver: a range outside any live allocation is
   ACL_ERROR_RT_DRV_INTERNAL_ERROR (507899), for memsets as for copies.

Every test runs on the NumPy backend and on the acl backend through the emulator and asserts the
exception class and status code. The oracle is the list above (statuses from the sources), and
for values the bytes written.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

import numpy as np
import pytest

from conftest import on_device_0
from pyaclnn import acl, errors

H2H, H2D, D2H = acl.ACL_MEMCPY_HOST_TO_HOST, acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST


class Mem:
    """Device memory and a stream for one test, released at the end."""

    def __init__(self) -> None:
        self.stream = acl.aclrtCreateStream()
        self.allocs: list[int] = []

    def malloc(self, nbytes: int) -> int:
        addr = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.allocs.append(addr)
        return addr

    def freed(self, nbytes: int = 16) -> int:
        addr = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        acl.aclrtFree(addr)
        return addr

    def read(self, addr: int, nbytes: int) -> bytes:
        out = np.empty(nbytes, np.uint8)
        acl.aclrtSynchronizeStream(self.stream)
        acl.aclrtMemcpy(out, nbytes, addr, nbytes, D2H)
        return out.tobytes()

    def close(self) -> None:
        acl.aclrtSynchronizeStream(self.stream)
        for addr in self.allocs:
            acl.aclrtFree(addr)
        acl.aclrtDestroyStream(self.stream)


@pytest.fixture
def m(backend: str) -> Iterator[Mem]:
    with on_device_0(Mem) as mem:
        yield mem


def in_thread_without_device(call: Callable[[], Any]) -> BaseException | None:
    """Run ``call`` in a new thread, which has no current context: what it raised, or None."""
    box: list[BaseException | None] = [None]

    def body() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box[0] = exc

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    return box[0]


def raises(exc: BaseException | None, cls: type[errors.AclError], status: int, api: str) -> None:
    assert isinstance(exc, cls), repr(exc)
    assert exc.status == status and exc.api == api, (exc.status, exc.api)


def copy(call: str, m: Mem) -> Callable[..., None]:
    if call == "aclrtMemcpy":
        return acl.aclrtMemcpy
    return lambda *args: acl.aclrtMemcpyAsync(*args, m.stream)


def memset(call: str, m: Mem) -> Callable[..., None]:
    if call == "aclrtMemset":
        return acl.aclrtMemset
    return lambda *args: acl.aclrtMemsetAsync(*args, m.stream)


COPIES = ["aclrtMemcpy", "aclrtMemcpyAsync"]
MEMSETS = ["aclrtMemset", "aclrtMemsetAsync"]


# -- 1. count > destMax is the runtime's 107000 -----------------------------------------------------
@pytest.mark.parametrize("call", COPIES)
@pytest.mark.parametrize("kind", [H2D, D2H])
def test_count_over_dest_max_is_the_runtimes_param_invalid(m: Mem, call: str, kind: int) -> None:
    """api_error.cc ApiErrorDecorator::MemCopySync / MemcpyAsync: cnt > destMax ->
    RT_ERROR_INVALID_VALUE -> ACL_ERROR_RT_PARAM_INVALID (was 100000 on both backends)."""
    dev, host = m.malloc(16), np.zeros(4, np.float32)
    args = (dev, 8, host, 16, kind) if kind == H2D else (host, 8, dev, 16, kind)
    with pytest.raises(errors.RtParamInvalidError) as info:
        copy(call, m)(*args)
    raises(info.value, errors.RtParamInvalidError, 107000, call)


# -- 2. the order: count 0, then NULL and kind, then count vs destMax, then the context ------------
@pytest.mark.parametrize("call", COPIES + MEMSETS)
def test_count_zero_succeeds_before_any_other_check(m: Mem, call: str) -> None:
    """The acl layer returns success for count 0 first: NULL pointers, an unknown kind, a destMax
    of 0 and a thread without a context are never looked at (both backends checked the
    context first: 107002)."""
    stream = m.stream
    calls = {"aclrtMemcpy": lambda: acl.aclrtMemcpy(None, 0, None, 0, 99),
             "aclrtMemcpyAsync": lambda: acl.aclrtMemcpyAsync(None, 0, None, 0, 99, stream),
             "aclrtMemset": lambda: acl.aclrtMemset(None, 0, 0, 0),
             "aclrtMemsetAsync": lambda: acl.aclrtMemsetAsync(None, 0, 0, 0, stream)}
    calls[call]()
    assert in_thread_without_device(calls[call]) is None


@pytest.mark.parametrize("call", COPIES)
@pytest.mark.parametrize("bad", ["dst", "src", "kind 6", "kind 7", "kind 99"])
def test_null_and_kind_come_before_the_context(m: Mem, call: str, bad: str) -> None:
    """A NULL dst/src or a kind MemcpyKindTranslate refuses is 100000 even in a thread without a
    context (was 107002 there on both backends; kinds 6 and 7, INNER_/INTER_DEVICE_TO_DEVICE,
    were accepted)."""
    dev, host = m.malloc(16), np.zeros(4, np.float32)
    dst, src, kind = dev, host, H2D
    if bad == "dst":
        dst = None
    elif bad == "src":
        src = None
    else:
        kind = int(bad.split()[1])
    f = copy(call, m)
    for exc in (in_thread_without_device(lambda: f(dst, 16, src, 16, kind)),
                pytest.raises(errors.AclInvalidParamError, f, dst, 16, src, 16, kind).value):
        raises(exc, errors.AclInvalidParamError, 100000, call)


@pytest.mark.parametrize("call", COPIES + ["aclrtMemsetAsync"])
def test_count_over_the_maximum_comes_before_the_context(m: Mem, call: str) -> None:
    """The runtime's parameter checks run before ApiImpl looks for the context."""
    dev, host = m.malloc(16), np.zeros(4, np.float32)
    if call in COPIES:
        f = copy(call, m)
        exc = in_thread_without_device(lambda: f(dev, 8, host, 16, H2D))
    else:
        exc = in_thread_without_device(lambda: acl.aclrtMemsetAsync(dev, 8, 0, 16, m.stream))
    raises(exc, errors.RtParamInvalidError, 107000, call)


def test_memset_checks_its_count_after_the_context(m: Mem) -> None:
    """ApiErrorDecorator::MemSetSync has no count check: the driver's (drvMemsetD8Inner) comes
    after ApiImpl::MemSetSync's context check, so a thread without one gets 107002. (A pin: both
    backends did this already; it keeps the reordering from going too far.)"""
    dev = m.malloc(16)
    raises(in_thread_without_device(lambda: acl.aclrtMemset(dev, 8, 0, 16)),
           errors.RtContextNullError, 107002, "aclrtMemset")


@pytest.mark.parametrize("call", COPIES + MEMSETS)
def test_the_context_comes_before_the_address(m: Mem, call: str) -> None:
    """Valid parameters, no context: 107002, before the driver would look at the address. (A pin,
    except aclrtMemsetAsync on the NumPy backend, whose errors named aclrtMemset.)"""
    gone, host = m.freed(), np.zeros(4, np.float32)
    if call in COPIES:
        f = copy(call, m)
        exc = in_thread_without_device(lambda: f(gone, 16, host, 16, H2D))
    else:
        g = memset(call, m)
        exc = in_thread_without_device(lambda: g(gone, 16, 0, 16))
    raises(exc, errors.RtContextNullError, 107002, call)


def test_async_host_to_host_is_not_supported(m: Mem) -> None:
    """api_error.cc ApiErrorDecorator::MemcpyAsync: H2H on a host-driven (online) runtime is
    RT_ERROR_FEATURE_NOT_SUPPORT -> ACL_ERROR_RT_FEATURE_NOT_SUPPORT (the NumPy backend copied);
    the synchronous copy does it. (The emulator did this already.)"""
    src, dst = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    with pytest.raises(errors.RtFeatureNotSupportError) as info:
        acl.aclrtMemcpyAsync(dst, 16, src, 16, H2H, m.stream)
    raises(info.value, errors.RtFeatureNotSupportError, 207000, "aclrtMemcpyAsync")
    assert not dst.any()
    acl.aclrtMemcpy(dst, 16, src, 16, H2H)
    np.testing.assert_array_equal(dst, src)


# -- 3. a memset outside its allocation is the driver's 507899 ---------------------------------------
@pytest.mark.parametrize("where", ["freed", "overrun"])
@pytest.mark.parametrize("call", MEMSETS)
def test_memset_outside_an_allocation_is_the_drivers_error(m: Mem, where: str, call: str) -> None:
    """drvMemsetD8 -> the DEVMM_SVM_MEMSET8 ioctl refuses a range in no allocation with -EINVAL ->
    DRV_ERROR_PARA_ERROR -> ACL_ERROR_RT_DRV_INTERNAL_ERROR; aclrtMemsetAsync's drvMemGetAttribute
    alike (was 100000 on the NumPy backend; the emulator wrote out of bounds)."""
    neighbour = m.malloc(64)
    acl.aclrtMemset(neighbour, 64, 0x11, 64)
    bad = m.freed() if where == "freed" else m.malloc(8)  # 16 bytes from an 8-byte allocation
    with pytest.raises(errors.RtDrvInternalError) as info:
        memset(call, m)(bad, 16, 0x5A, 16)
    raises(info.value, errors.RtDrvInternalError, 507899, call)
    assert m.read(neighbour, 64) == b"\x11" * 64  # nothing was written anywhere


@pytest.mark.parametrize("call", MEMSETS)
def test_memset_count_over_max_count_is_107000(m: Mem, call: str) -> None:
    """count > maxCount: the runtime's (async) or the driver's (sync) RT_ERROR_INVALID_VALUE /
    DRV_ERROR_INVALID_VALUE, both reported as ACL_ERROR_RT_PARAM_INVALID (was 100000)."""
    dev = m.malloc(16)
    acl.aclrtMemset(dev, 16, 0x22, 16)
    with pytest.raises(errors.RtParamInvalidError) as info:
        memset(call, m)(dev, 8, 0x5A, 16)
    raises(info.value, errors.RtParamInvalidError, 107000, call)
    assert m.read(dev, 16) == b"\x22" * 16


@pytest.mark.parametrize("call", MEMSETS)
def test_memset_inside_device_or_pinned_memory(m: Mem, call: str) -> None:
    """The driver sets device memory and pinned host memory (aclrtMallocHost) alike; a range that
    ends exactly at the allocation's end is inside it. (A pin: the new address check must not
    refuse them.)"""
    dev = m.malloc(16)
    memset(call, m)(dev + 4, 12, 0x7F, 12)
    assert m.read(dev, 16)[4:] == b"\x7f" * 12
    host = acl.aclrtMallocHost(16)
    try:
        memset(call, m)(host, 16, 0x33, 16)
        acl.aclrtSynchronizeStream(m.stream)
        out = np.empty(16, np.uint8)
        acl.aclrtMemcpy(out, 16, host, 16, acl.ACL_MEMCPY_HOST_TO_HOST)
        assert out.tobytes() == b"\x33" * 16
    finally:
        acl.aclrtFreeHost(host)
