"""Memory whose life ends under work that still uses it, on the reference backend (issue 25,
point 5): pinned host memory written under a graph replay's copy from it, a tensor descriptor
over an allocation freed and handed out again at the same address, device memory freed by the
last aclrtResetDevice. Each names the lines involved; correct programs raise nothing."""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest

import pyaclnn
from conftest import on_device_0
from pyaclnn import acl
from helpers.port import PortSession  # noqa: E402
from helpers.sites import marked_line  # noqa: E402

H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST


def line_of(marker: str) -> str:
    return marked_line(__file__, marker)


@pytest.fixture
def port(use_backend: Any) -> Iterator[PortSession]:
    use_backend("numpy")
    with on_device_0(PortSession) as p:
        yield p


def _download(addr: int, n: int) -> np.ndarray:
    out = np.empty(n, np.float32)
    acl.aclrtMemcpy(out, out.nbytes, addr, out.nbytes, D2H)
    return out


# -- the pinned-host snapshot covers graph replays ----------------------------------------------------
def _captured_upload(p: PortSession, host: int, dev: int, n: int) -> Any:
    acl.aclmdlRICaptureBegin(p.stream, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    acl.aclrtMemcpyAsync(dev, n, host, n, H2D, p.stream)  # <captured copy>
    return acl.aclmdlRICaptureEnd(p.stream)


def test_a_host_write_between_a_replay_and_its_run_is_caught(port: PortSession) -> None:
    p = port
    host, view = p.pinned(16)
    view[:] = 1
    dev = p.malloc(np.zeros(4, np.float32))
    model = _captured_upload(p, host, dev, 16)
    try:
        view[:] = 3  # before the replay is queued: what it copies (no hazard)
        acl.aclmdlRIExecuteAsync(model, p.stream)  # <replay>
        view[4:8] = 2  # the host writes the source: the replayed copy may or may not have run
        with pytest.raises(pyaclnn.HazardError) as info:
            acl.aclrtSynchronizeStream(p.stream)  # <run replay>
        message = str(info.value)
        for marker in ("replay", "run replay", "captured copy"):
            assert line_of(marker) in message, message
        assert f"[{host + 4:#x}, +4)" in message, message
    finally:
        acl.aclrtSynchronizeStream(p.stream)
        acl.aclmdlRIDestroy(model)


def test_replays_of_a_captured_copy_take_what_the_host_wrote_before_each(port: PortSession) -> None:
    """The correct use: write the pinned buffer, replay, synchronize, write again, replay again."""
    p = port
    host, view = p.pinned(16)
    dev = p.malloc(np.zeros(4, np.float32))
    view[:] = 0
    model = _captured_upload(p, host, dev, 16)
    try:
        for value in (1.0, 2.5, -4.0):
            view[:] = np.full(4, value, np.float32).view(np.uint8)
            acl.aclmdlRIExecuteAsync(model, p.stream)
            acl.aclrtSynchronizeStream(p.stream)
            np.testing.assert_array_equal(_download(dev, 4), np.full(4, value, np.float32))
    finally:
        acl.aclmdlRIDestroy(model)


def test_a_device_write_into_pinned_memory_before_a_copy_from_it_is_no_hazard(port: PortSession) -> None:
    """D2H into a pinned buffer, then H2D from it, on one stream: the device wrote the source
    between the second copy's queueing and its run; it is ordered, not a host write."""
    p = port
    host, view = p.pinned(16)
    view[:] = 0
    a = p.malloc(np.arange(4, dtype=np.float32))
    b = p.malloc(np.zeros(4, np.float32))
    acl.aclrtMemcpyAsync(host, 16, a, 16, D2H, p.stream)
    acl.aclrtMemcpyAsync(b, 16, host, 16, H2D, p.stream)
    acl.aclrtSynchronizeStream(p.stream)
    np.testing.assert_array_equal(_download(b, 4), np.arange(4, dtype=np.float32))


# -- a descriptor over an allocation freed and handed out again at the same address -----------------------
def _same_address_again(p: PortSession, old: int, nbytes: int) -> int:
    """aclrtMalloc until it returns ``old`` again (the allocator reuses a freed block of the same
    size at once; a few tries at most), keeping the others for the port to free."""
    for _ in range(64):
        addr = p.malloc(np.zeros(nbytes // 4, np.float32))  # <malloc again>
        if addr == old:
            return addr
    pytest.skip("the allocator did not hand the freed address out again")


def _add(p: PortSession, a: Any, b: Any, out: Any, relaunch: Any = None) -> None:
    alpha = acl.aclCreateScalar(np.float32(1), acl.ACL_FLOAT)
    try:
        ws, ex = acl.aclnnAddGetWorkspaceSize(a, b, alpha, out)
        if relaunch is not None:
            relaunch(ex)
        acl.aclnnAdd(None, 0, ex, p.stream)  # <add>
    finally:
        acl.aclDestroyScalar(alpha)


@pytest.mark.parametrize("sites", [False, True], ids=["default", "handle-sites"])
def test_a_tensor_over_freed_memory_given_out_again_is_a_use_after_free(port: PortSession, sites: bool) -> None:
    """Named: the free, the allocation freed, the new one, the launch; the aclCreateTensor line
    where handle sites are tracked (``pyaclnn check``, its pytest plugin), as in the leak report."""
    from pyaclnn._objects.backend import current
    p = port
    current().runtime.track_sites(sites)
    try:
        old = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)  # <old malloc>
        stale = acl.aclCreateTensor([16], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [16], 1, old)  # <make tensor>
        p.tensors.append(stale)
        acl.aclrtFree(old)  # <free>
        _same_address_again(p, old, 64)
        ones = p.vector(p.malloc(np.ones(16, np.float32)), 16)
        out = p.vector(p.malloc(np.zeros(16, np.float32)), 16)
        with pytest.raises(pyaclnn.HazardError) as info:
            _add(p, stale, ones, out)
    finally:
        current().runtime.track_sites(False)
    message = str(info.value)
    assert "use after free" in message, message
    for marker in ("free", "old malloc", "malloc again", "add"):
        assert line_of(marker) in message, (marker, message)
    assert "self" in message and "aclrtFree" in message and "aclCreateTensor" in message, message
    if sites:
        assert f"made by aclCreateTensor at {line_of('make tensor')}" in message, message
    else:
        assert "`pyaclnn check` names its line" in message, message


def test_a_tensor_made_again_or_re_pointed_over_the_new_memory_is_fine(port: PortSession) -> None:
    """The correct programs: a new aclTensor over the new allocation, or the old one re-pointed
    (aclSetInputTensorAddr on a repeatable executor, aclSetRawTensorAddr), at the same address."""
    p = port
    old = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    t = p.vector(old, 16)
    acl.aclrtFree(old)
    new = _same_address_again(p, old, 64)
    acl.aclrtMemcpy(new, 64, np.full(16, 2, np.float32), 64, H2D)
    ones = p.vector(p.malloc(np.ones(16, np.float32)), 16)
    out_addr = p.malloc(np.zeros(16, np.float32))
    out = p.vector(out_addr, 16)
    _add(p, p.vector(new, 16), ones, out)  # a new descriptor
    acl.aclSetRawTensorAddr(t, new)
    _add(p, t, ones, out)  # the old one, re-pointed
    acl.aclrtSynchronizeStream(p.stream)
    np.testing.assert_array_equal(_download(out_addr, 16), np.full(16, 3, np.float32))


def test_a_repeatable_executor_re_pointed_at_memory_given_out_again_is_fine(port: PortSession) -> None:
    p = port
    old = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemcpy(old, 64, np.ones(16, np.float32), 64, H2D)
    t = p.vector(old, 16)
    ones = p.vector(p.malloc(np.ones(16, np.float32)), 16)
    out_addr = p.malloc(np.zeros(16, np.float32))
    out = p.vector(out_addr, 16)
    alpha = acl.aclCreateScalar(np.float32(1), acl.ACL_FLOAT)
    ws, ex = acl.aclnnAddGetWorkspaceSize(t, ones, alpha, out)
    acl.aclSetAclOpExecutorRepeatable(ex)
    try:
        acl.aclrtFree(old)  # (before any launch: a launched view would keep the block from reuse here)
        new = _same_address_again(p, old, 64)
        acl.aclrtMemcpy(new, 64, np.full(16, 5, np.float32), 64, H2D)
        with pytest.raises(pyaclnn.HazardError, match="use after free"):
            acl.aclnnAdd(None, 0, ex, p.stream)  # not re-pointed yet
        acl.aclSetInputTensorAddr(ex, 0, t, new)
        acl.aclnnAdd(None, 0, ex, p.stream)
        acl.aclrtSynchronizeStream(p.stream)
        np.testing.assert_array_equal(_download(out_addr, 16), np.full(16, 6, np.float32))
    finally:
        acl.aclDestroyAclOpExecutor(ex)
        acl.aclDestroyScalar(alpha)
