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


def _recount(queues) -> dict[int, int]:
    """The oracle: each queued task's allocations, counted from the queues themselves."""
    want: dict[int, int] = {}
    for q in queues.queues.values():
        for work in q.pending:
            for base in work.bases:
                want[base] = want.get(base, 0) + 1
    return want


def test_the_counts_made_at_a_check_are_of_the_queued_tasks_only(use_backend) -> None:
    """``touched`` is counted when a check needs it (``Queues._tally``), not per task queued: tasks
    that ran before that (or that a long queue pushed out: ``DEPTH``) are never counted."""
    use_backend("numpy")
    from pyaclnn._numpy.queues import DEPTH
    with on_device_0(TwoStreams) as t:
        queues = pyaclnn.Device(0).runtime.queues
        s0, s1 = t.streams
        out = np.empty(16, np.uint8)
        acl.aclrtMemcpyAsync(t.b, 16, X, 16, H2D, s1)  # stays queued: the queues never empty
        for _ in range(3):
            acl.aclrtMemcpyAsync(t.a, 16, X, 16, H2D, s0)
        acl.aclrtSynchronizeStream(s0)  # they ran before any check counted them
        acl.aclrtMemcpy(out, 16, t.a, 16, D2H)  # a check: no hazard, and the counts are made
        assert queues.touched == _recount(queues) == {t.b: 1}
        acl.aclrtMemcpyAsync(t.a, 16, X, 16, H2D, s0)
        with pytest.raises(pyaclnn.HazardError, match="aclrtMemcpyAsync, queued on"):
            acl.aclrtMemcpy(out, 16, t.a, 16, D2H)
        assert queues.touched == _recount(queues) == {t.a: 1, t.b: 1}
        for _ in range(DEPTH + 8):  # the oldest run as the queue overflows, some counted, some not
            acl.aclrtMemcpyAsync(t.a, 16, X, 16, H2D, s0)
        assert len(queues.untallied) <= DEPTH + 1  # (bounded with no check at all)
        with pytest.raises(pyaclnn.HazardError, match="aclrtMemcpyAsync, queued on"):
            acl.aclrtMemcpy(out, 16, t.a, 16, D2H)
        assert queues.touched == _recount(queues)
        acl.aclrtSynchronizeStream(s0)
        acl.aclrtMemcpy(out, 16, t.a, 16, D2H)
        assert queues.touched == _recount(queues) == {t.b: 1}
