"""Device bugs the reference used to miss (issue 25, point 5), and one false positive it raised.

Each test runs a small port written with pyaclnn.acl; where CANN answers with a status, both
backends are run (the acl backend through the emulator) and must give the same one."""
from __future__ import annotations

import ctypes
from typing import Any, Iterator

import numpy as np
import pytest

import pyaclnn
from conftest import on_device_0
from pyaclnn import acl, errors
from helpers.sites import marked_line  # noqa: E402



def line_of(marker: str) -> str:
    return marked_line(__file__, marker)


class Streams:
    """Two streams, released at the end."""

    def __init__(self) -> None:
        self.streams = [acl.aclrtCreateStream(), acl.aclrtCreateStream()]
        self.allocs: list[int] = []
        self.tensors: list[Any] = []

    def malloc(self, nbytes: int) -> int:
        addr = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.allocs.append(addr)
        acl.aclrtMemset(addr, nbytes, 0, nbytes)  # written: only the race checks are under test
        return addr

    def close(self) -> None:
        for t in self.tensors:
            acl.aclDestroyTensor(t)
        for addr in self.allocs:
            acl.aclrtFree(addr)
        for stream in self.streams:
            acl.aclrtDestroyStream(stream)


@pytest.fixture
def port(backend: str) -> Iterator[Streams]:
    with on_device_0(Streams) as p:
        yield p
        acl.aclrtSynchronizeDevice()


@pytest.fixture
def port_numpy(use_backend: Any) -> Iterator[Streams]:
    use_backend("numpy")
    with on_device_0(Streams) as p:
        yield p
        acl.aclrtSynchronizeDevice()


# -- (a) an event with ACL_EVENT_TIME_LINE only cannot order streams --------------------------------
def test_a_time_line_event_cannot_be_waited_on(port: Streams) -> None:
    """hicann/runtime api_error.cc ApiErrorDecorator::StreamWaitEvent: an event without a wait task
    (event.hpp Event::IsEventWithoutWaitTask) is RT_ERROR_FEATURE_NOT_SUPPORT, 207000 from
    rtStreamWaitEvent (api_c_stream.cc); the streams are not ordered."""
    s0, s1 = port.streams
    event = acl.aclrtCreateEventWithFlag(acl.ACL_EVENT_TIME_LINE)
    try:
        acl.aclrtRecordEvent(event, s0)
        with pytest.raises(errors.AclError) as info:
            acl.aclrtStreamWaitEvent(s1, event)
        assert info.value.status == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, info.value
    finally:
        acl.aclrtDestroyEvent(event)


@pytest.mark.parametrize("flag", ["ACL_EVENT_SYNC", "ACL_EVENT_SYNC_TIME_LINE"])
def test_an_event_with_a_wait_task_can_be_waited_on(port: Streams, flag: str) -> None:
    s0, s1 = port.streams
    bits = acl.ACL_EVENT_SYNC | (acl.ACL_EVENT_TIME_LINE if flag.endswith("TIME_LINE") else 0)
    event = acl.aclrtCreateEventWithFlag(bits)
    try:
        acl.aclrtRecordEvent(event, s0)
        acl.aclrtStreamWaitEvent(s1, event)
    finally:
        acl.aclrtDestroyEvent(event)


# -- (e) no race between streams writing disjoint bytes of one allocation ------------------------------
def _fill(p: Streams, addr: int, n: int, stride: int, offset: int, value: float, stream: Any) -> Any:
    """Write ``value`` to n float32 elements at ``addr`` (element stride ``stride``, from element
    ``offset``) by aclnnAdd(ones, ones, alpha=value - 1), queued on ``stream``; returns the tensor."""
    ones = p.malloc(n * 4)
    acl.aclrtMemcpy(ones, n * 4, np.ones(n, np.float32), n * 4, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    src = acl.aclCreateTensor([n], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [n], 1, ones)
    t = acl.aclCreateTensor([n], 1, acl.ACL_FLOAT, [stride], offset, acl.ACL_FORMAT_ND, [2 * n], 1, addr)
    p.tensors += [src, t]
    alpha = acl.aclCreateScalar(np.float32(value - 1), acl.ACL_FLOAT)
    try:
        ws, ex = acl.aclnnAddGetWorkspaceSize(src, src, alpha, t)
        acl.aclnnAdd(p.malloc(ws) if ws else None, ws, ex, stream)  # <fill>
    finally:
        acl.aclDestroyScalar(alpha)
    return t


def test_streams_writing_the_interleaved_halves_of_one_allocation_do_not_race(port: Streams) -> None:
    """base[0::2] on one stream, base[1::2] on another: no byte is shared, so no order is needed."""
    base = port.malloc(8 * 4)
    s0, s1 = port.streams
    _fill(port, base, 4, 2, 0, 1.0, s0)
    _fill(port, base, 4, 2, 1, 2.0, s1)
    acl.aclrtSynchronizeDevice()
    out = np.empty(8, np.float32)
    acl.aclrtMemcpy(out, out.nbytes, base, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    np.testing.assert_array_equal(out, np.tile(np.float32([1, 2]), 4))


def test_streams_writing_overlapping_strided_elements_still_race(port_numpy: Streams) -> None:
    """base[0::2] and base[2::2] share elements 2, 4 and 6: a race, named with the shared bytes."""
    base = port_numpy.malloc(8 * 4)
    s0, s1 = port_numpy.streams
    _fill(port_numpy, base, 3, 2, 0, 1.0, s0)
    with pytest.raises(pyaclnn.HazardError) as info:
        _fill(port_numpy, base, 3, 2, 2, 2.0, s1)
    assert f"[{base + 8:#x}, +4)" in str(info.value), info.value
    assert line_of("fill") in str(info.value)


# -- (d) a tensor over freed memory names the free ------------------------------------------------------
def test_a_launch_on_freed_memory_names_the_free(port_numpy: Streams) -> None:
    """A tensor kept over memory freed since (its address maybe handed out again by a later
    aclrtMalloc, smaller): the out-of-bounds report names the aclrtFree, not only the bounds."""
    p = port_numpy
    old = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemset(old, 64, 0, 64)
    stale = acl.aclCreateTensor([16], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [16], 1, old)
    p.tensors.append(stale)
    ones = p.malloc(64)
    other = acl.aclCreateTensor([16], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [16], 1, ones)
    out = acl.aclCreateTensor([16], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [16], 1, p.malloc(64))
    acl.aclrtFree(old)  # <free>
    p.malloc(16)  # (the allocator may hand the address out again)
    p.tensors += [other, out]
    alpha = acl.aclCreateScalar(np.float32(1), acl.ACL_FLOAT)
    try:
        ws, ex = acl.aclnnAddGetWorkspaceSize(stale, other, alpha, out)
        with pytest.raises(pyaclnn.HazardError) as info:
            acl.aclnnAdd(None, 0, ex, p.streams[0])  # <stale launch>
    finally:
        acl.aclDestroyScalar(alpha)
    message = str(info.value)
    assert line_of("stale launch") in message and line_of("free") in message, message
    assert "aclrtFree" in message, message


# -- (b) pinned host memory written after an async copy from it was queued -----------------------------
def _host_view(addr: int, n: int) -> np.ndarray:
    """A NumPy view of n bytes of aclrtMallocHost memory, as a port writes its pinned buffers."""
    return np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(addr))


@pytest.mark.parametrize("fixed", [False, True])
def test_a_host_write_into_pinned_memory_under_a_queued_async_copy(port_numpy: Streams, fixed: bool) -> None:
    p = port_numpy
    host = acl.aclrtMallocHost(16)
    try:
        view = _host_view(host, 16)
        view[:] = 1
        dev = p.malloc(16)
        acl.aclrtMemcpyAsync(dev, 16, host, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE, p.streams[0])  # <queue copy>
        if fixed:
            acl.aclrtSynchronizeStream(p.streams[0])
        view[4:8] = 2  # the host writes the source: the queued copy may or may not have run
        if fixed:
            out = np.empty(16, np.uint8)
            acl.aclrtMemcpy(out, 16, dev, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST)
            np.testing.assert_array_equal(out, np.ones(16, np.uint8))
            return
        with pytest.raises(pyaclnn.HazardError) as info:
            acl.aclrtSynchronizeStream(p.streams[0])  # <run copy>
        message = str(info.value)
        assert line_of("queue copy") in message and line_of("run copy") in message, message
        assert f"[{host + 4:#x}, +4)" in message, message
    finally:
        acl.aclrtSynchronizeDevice()
        acl.aclrtFreeHost(host)


# -- (c) an output partly overlapping an input of the same launch ---------------------------------------
def _vec(p: Streams, addr: int, n: int, offset: int = 0) -> Any:
    t = acl.aclCreateTensor([n], 1, acl.ACL_FLOAT, [1], offset, acl.ACL_FORMAT_ND, [n + offset], 1, addr)
    p.tensors.append(t)
    return t


def _add(p: Streams, a: Any, b: Any, out: Any) -> None:
    alpha = acl.aclCreateScalar(np.float32(1), acl.ACL_FLOAT)
    try:
        ws, ex = acl.aclnnAddGetWorkspaceSize(a, b, alpha, out)
        acl.aclnnAdd(p.malloc(ws) if ws else None, ws, ex, p.streams[0])  # <add>
    finally:
        acl.aclDestroyScalar(alpha)


def _upload(p: Streams, values: np.ndarray) -> int:
    addr = p.malloc(values.nbytes)
    acl.aclrtMemcpy(addr, values.nbytes, values, values.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    return addr


def _download(addr: int, n: int) -> np.ndarray:
    out = np.empty(n, np.float32)
    acl.aclrtMemcpy(out, out.nbytes, addr, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return out


def test_add_into_self_shifted_by_one_element_is_refused(port_numpy: Streams) -> None:
    """torch: torch.add(x[:-1], y, out=x[1:]) raises (partial overlap); the reference's hazard names
    the launch, both tensors and the shared bytes."""
    torch = pytest.importorskip("torch")  # the oracle: torch refuses it too
    x = torch.zeros(5)
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.add(x[:4], torch.ones(4), out=x[1:])
    p = port_numpy
    base = _upload(p, np.arange(5, dtype=np.float32))
    other = _upload(p, np.ones(4, np.float32))
    with pytest.raises(pyaclnn.HazardError) as info:
        _add(p, _vec(p, base, 4), _vec(p, other, 4), _vec(p, base, 4, offset=1))
    message = str(info.value)
    assert line_of("add") in message and "out" in message and "self" in message, message
    assert f"[{base + 4:#x}, +12)" in message, message


def test_add_with_out_being_self_stays_legal(port: Streams) -> None:
    p = port
    base = _upload(p, np.arange(4, dtype=np.float32))
    other = _upload(p, np.ones(4, np.float32))
    _add(p, _vec(p, base, 4), _vec(p, other, 4), _vec(p, base, 4))  # the same memory: in place
    acl.aclrtSynchronizeStream(p.streams[0])
    np.testing.assert_array_equal(_download(base, 4), np.arange(4, dtype=np.float32) + 1)


def test_inplace_add_stays_legal(port: Streams) -> None:
    p = port
    base = _upload(p, np.arange(4, dtype=np.float32))
    other = _vec(p, _upload(p, np.ones(4, np.float32)), 4)
    alpha = acl.aclCreateScalar(np.float32(2), acl.ACL_FLOAT)
    try:
        ws, ex = acl.aclnnInplaceAddGetWorkspaceSize(_vec(p, base, 4), other, alpha)
        acl.aclnnInplaceAdd(p.malloc(ws) if ws else None, ws, ex, p.streams[0])
    finally:
        acl.aclDestroyScalar(alpha)
    acl.aclrtSynchronizeStream(p.streams[0])
    np.testing.assert_array_equal(_download(base, 4), np.arange(4, dtype=np.float32) + 2)


def test_cat_into_memory_overlapping_an_input_is_refused(port_numpy: Streams) -> None:
    """torch.cat([x[:2], y], out=x) raises as well; the reference names out and tensors[0]."""
    torch = pytest.importorskip("torch")
    x = torch.zeros(4)
    with pytest.raises(RuntimeError, match="single memory location|overlap"):
        torch.cat([x[:2], torch.ones(2)], out=x)
    p = port_numpy
    base = _upload(p, np.arange(4, dtype=np.float32))
    ones = _upload(p, np.ones(2, np.float32))
    members = [_vec(p, base, 2), _vec(p, ones, 2)]
    del p.tensors[-2:]  # the list owns them: aclDestroyTensorList destroys them
    inputs = acl.aclCreateTensorList(members, 2)
    try:
        ws, ex = acl.aclnnCatGetWorkspaceSize(inputs, 0, _vec(p, base, 4))
        with pytest.raises(pyaclnn.HazardError) as info:
            acl.aclnnCat(p.malloc(ws) if ws else None, ws, ex, p.streams[0])  # <cat>
    finally:
        acl.aclDestroyTensorList(inputs)
    message = str(info.value)
    assert line_of("cat") in message and "tensors[0]" in message, message


@pytest.mark.parametrize("api", ["aclrtMemcpy", "aclrtMemcpyAsync"])
def test_an_overlapping_device_to_device_copy_is_refused(port_numpy: Streams, api: str) -> None:
    p = port_numpy
    base = _upload(p, np.arange(8, dtype=np.float32))
    d2d = acl.ACL_MEMCPY_DEVICE_TO_DEVICE
    with pytest.raises(pyaclnn.HazardError) as info:
        if api == "aclrtMemcpy":
            acl.aclrtMemcpy(base + 4, 16, base, 16, d2d)  # <copy sync>
        else:
            acl.aclrtMemcpyAsync(base + 4, 16, base, 16, d2d, p.streams[0])  # <copy async>
    assert line_of("copy sync" if api == "aclrtMemcpy" else "copy async") in str(info.value) and f"[{base + 4:#x}, +12)" in str(info.value), info.value
    acl.aclrtMemcpy(base, 16, base, 16, d2d)  # onto itself: nothing changes, nothing to refuse
