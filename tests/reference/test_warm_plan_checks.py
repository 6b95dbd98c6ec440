"""The checks of a launch and of a read back still run once the reference's per-plan reuse is warm
(issue 24 point 7: a phase-1 cache entry remembers its tensors' inputs and outputs, their spans,
the allocations they are in, that none was stale, and the bound kernel, for the next call of the
same tensors). Each test first makes the same call a few times, then changes what the reuse must
not hide: a tensor moved onto memory another stream writes (a race), queued work on memory read
back (a missing synchronize), a read back the runtime refuses. (A launched descriptor's view keeps
its memory, so its address is not handed out again while it lives: test_memory_lifetimes.py covers
the use after free of one never launched.)"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest

import pyaclnn
from conftest import on_device_0
from pyaclnn import acl
from helpers.port import PortSession  # noqa: E402

pytest.importorskip("torch")  # aclnnAbs runs on the aten tier

H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
N = 16


@pytest.fixture
def s(use_backend: Any) -> Iterator[PortSession]:
    use_backend("numpy")
    with on_device_0(lambda: PortSession(2)) as session:
        yield session


def _abs(s: PortSession, x: Any, out: Any, stream: int = 0) -> None:
    _, ex = acl.aclnnAbsGetWorkspaceSize(x, out)
    acl.aclnnAbs(None, 0, ex, s.streams[stream])


def _warm(s: PortSession, x: Any, out: Any) -> None:
    for _ in range(4):
        _abs(s, x, out)
    acl.aclrtSynchronizeStream(s.streams[0])


def test_a_warm_plan_follows_a_tensor_moved_onto_memory_another_stream_writes(s: PortSession) -> None:
    x, out = s.vector(s.malloc(-np.ones(N, np.float32)), N), s.vector(s.malloc(np.zeros(N, np.float32)), N)
    _warm(s, x, out)
    other = s.malloc(np.ones(N, np.float32))
    acl.aclrtMemsetAsync(other, 4 * N, 0, 4 * N, s.streams[1])  # queued on the second stream: it writes ``other``
    acl.aclSetRawTensorAddr(x, other)  # the warm plan's input now reads it
    with pytest.raises(pyaclnn.HazardError, match="no event between the two streams"):
        _abs(s, x, out)


def test_a_warm_read_back_still_sees_queued_work_and_refuses_what_it_refused(s: PortSession) -> None:
    addr = s.malloc(np.zeros(N, np.float32))
    x, out = s.vector(s.malloc(-np.full(N, 2, np.float32)), N), s.vector(addr, N)
    host = np.empty(N, np.float32)
    for _ in range(4):
        _abs(s, x, out)
        acl.aclrtSynchronizeStream(s.streams[0])
        acl.aclrtMemcpy(host, host.nbytes, addr, host.nbytes, D2H)
    np.testing.assert_array_equal(host, np.abs(-np.full(N, 2, np.float32)))  # numpy's abs: the oracle
    _abs(s, x, out)
    with pytest.raises(pyaclnn.HazardError, match="Synchronize first"):
        acl.aclrtMemcpy(host, host.nbytes, addr, host.nbytes, D2H)
    acl.aclrtSynchronizeStream(s.streams[0])
    with pytest.raises(pyaclnn.AclError, match="exceeds destMax") as info:
        acl.aclrtMemcpy(np.empty(N, np.float32), 8, addr, host.nbytes, D2H)
    assert info.value.status == acl.ACL_ERROR_RT_PARAM_INVALID
    with pytest.raises(pyaclnn.AclError, match="not inside one live allocation"):
        acl.aclrtMemcpy(np.empty(2 * N, np.float32), 8 * N, addr, 8 * N, D2H)


def test_a_repeatable_executor_follows_its_tensor_moved_onto_memory_another_stream_writes(s: PortSession) -> None:
    x, out = s.vector(s.malloc(-np.ones(N, np.float32)), N), s.vector(s.malloc(np.zeros(N, np.float32)), N)
    _, ex = acl.aclnnAbsGetWorkspaceSize(x, out)
    acl.aclSetAclOpExecutorRepeatable(ex)
    try:
        for _ in range(4):
            acl.aclnnAbs(None, 0, ex, s.streams[0])
        acl.aclrtSynchronizeStream(s.streams[0])
        other = s.malloc(np.ones(N, np.float32))
        acl.aclrtMemsetAsync(other, 4 * N, 0, 4 * N, s.streams[1])
        acl.aclSetRawTensorAddr(x, other)  # the executor's input now reads what the second stream writes
        with pytest.raises(pyaclnn.HazardError, match="no event between the two streams"):
            acl.aclnnAbs(None, 0, ex, s.streams[0])
    finally:
        acl.aclDestroyAclOpExecutor(ex)
