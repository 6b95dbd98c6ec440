"""The reference queues' count of queued tasks per allocation (``Queues.touched``: the filter of
the host-access, free and race checks) after a synchronize: a task that runs takes its own
counts back, and the counts are dropped at once only when the last queued task (of every
stream) has run (``Queues._done``). So memory another stream still writes stays a hazard to read."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from conftest import on_device_0
from pyaclnn import acl

H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
X = np.arange(4, dtype=np.float32)


class TwoStreams:
    """Two streams and two 16-byte allocations, released after the test (synchronized first)."""

    def __init__(self) -> None:
        self.streams = [acl.aclrtCreateStream(), acl.aclrtCreateStream()]
        self.a, self.b = (acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST) for _ in range(2))

    def close(self) -> None:
        acl.aclrtSynchronizeDevice()
        acl.aclrtFree(self.a)
        acl.aclrtFree(self.b)
        for stream in self.streams:
            acl.aclrtDestroyStream(stream)


def test_a_synchronize_forgets_only_its_own_tasks(use_backend) -> None:
    use_backend("numpy")
    with on_device_0(TwoStreams) as t:
        s0, s1 = t.streams
        out = np.empty(16, np.uint8)
        acl.aclrtMemcpyAsync(t.a, 16, X, 16, H2D, s0)
        acl.aclrtMemcpyAsync(t.b, 16, X, 16, H2D, s1)
        acl.aclrtSynchronizeStream(s0)  # one of the two queued tasks ran: b is still being written
        acl.aclrtMemcpy(out, 16, t.a, 16, D2H)  # a's copy ran: no hazard
        with pytest.raises(pyaclnn.HazardError, match=r"aclrtMemcpy at .* reads .* aclrtMemcpyAsync, queued on"):
            acl.aclrtMemcpy(out, 16, t.b, 16, D2H)
        acl.aclrtSynchronizeStream(s1)  # the last queued task ran: nothing is touched
        acl.aclrtMemcpy(out, 16, t.b, 16, D2H)
        assert out.tobytes() == X.tobytes()
        acl.aclrtMemcpyAsync(t.a, 16, X[::-1].copy(), 16, H2D, s1)  # new work after the queues emptied
        with pytest.raises(pyaclnn.HazardError, match="aclrtMemcpyAsync, queued on"):
            acl.aclrtMemcpy(out, 16, t.a, 16, D2H)
        acl.aclrtSynchronizeStream(s1)
        acl.aclrtMemcpy(out, 16, t.a, 16, D2H)
        assert out.tobytes() == X[::-1].tobytes()
