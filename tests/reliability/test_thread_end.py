"""Per-thread state is released when its thread ends (issue 25, point 4).

A thread that runs work on its default stream gets one (pyaclnn._objects.stream.default_stream);
when the thread ended, CPython dropped that Stream while clearing the thread's state, and its
release there read pyaclnn's threading.local records again: each read made a new per-thread
record that nothing ever freed (a record a thread on both backends; 0.5 KiB a thread on acl
by tracemalloc, 24 bytes now).
Now the ended thread's default streams are closed by the next call that needs one.
"""
from __future__ import annotations

import gc
import threading

import numpy as np

import pyaclnn
from conftest import live_handles
from pyaclnn._objects import current as _current
from pyaclnn._objects import stream as _stream

F32 = np.float32


def small_op() -> None:
    """An executor run on the thread's default stream (no stream given), then its result read."""
    x = np.ones(8, F32)
    with pyaclnn.Tensor.from_numpy(x) as g, pyaclnn.Tensor.from_numpy(x * 2) as i, \
            pyaclnn.Tensor.from_numpy(x) as t, pyaclnn.Tensor.empty((8,), F32) as out:
        with pyaclnn.MseLossBackward(g, i, t, "sum", out) as op:
            op.run()
        assert np.array_equal(out.numpy(), np.full(8, 2.0, F32))  # 2 * (2 - 1) * 1: the closed form


def run_threads(n: int) -> None:
    for _ in range(n):
        t = threading.Thread(target=small_op)
        t.start()
        t.join()


def thread_records(local: threading.local) -> int:
    """How many threads have a record in ``local`` (CPython keeps them in one dict, its referent)."""
    return sum(len(r) for r in gc.get_referents(local) if isinstance(r, dict))


def test_threads_that_ended_leave_no_state(backend) -> None:
    small_op()
    run_threads(5)  # warm-up: caches, imports
    small_op()      # closes the default streams of the threads that ended
    gc.collect()
    records = thread_records(_current.thread)
    handles = live_handles()
    run_threads(120)
    small_op()
    gc.collect()
    assert thread_records(_current.thread) == records  # was one more per thread
    assert live_handles() == handles      # the ended threads' streams are destroyed


def test_a_thread_that_ended_gets_its_default_stream_closed(backend) -> None:
    made: list[pyaclnn.Stream] = []

    def work() -> None:
        small_op()
        made.append(_stream.default_stream(pyaclnn._objects.device.default_device()))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not made[0].closed  # closed by the next call that needs a default stream
    small_op()
    assert made[0].closed


def test_a_hazard_left_queued_by_a_thread_that_ended_fails_check(use_backend, capsys) -> None:
    """The ended thread's stream is closed where no caller can receive its error: a hazard of
    the work it left queued is reported (stderr) and counted by ``pyaclnn check`` and the pytest
    plugin, not dropped. The hazard: a pinned host buffer written after an aclrtMemcpyAsync from
    it was queued (found when the copy runs, as in tests/reference/test_hazards_missed.py)."""
    import ctypes

    from pyaclnn import acl
    from pyaclnn._cli import check as _check
    from pyaclnn._objects.device import default_device
    use_backend("numpy")
    default_device()  # current in this thread too (aclrtMallocHost needs a context)
    host = acl.aclrtMallocHost(16)
    target = pyaclnn.Tensor.empty((16,), np.uint8)

    def work() -> None:
        view = np.ctypeslib.as_array((ctypes.c_uint8 * 16).from_address(host))
        view[:] = 1
        stream = _stream.default_stream(default_device())
        acl.aclrtMemcpyAsync(target.data_ptr, 16, host, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE, stream)
        view[4:8] = 2  # the ended thread leaves the copy queued, its source rewritten

    with _check.thread_hazards() as found:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        _stream.default_stream(default_device())  # closes the ended thread's stream: the copy runs
    assert [type(exc) for _, exc in found] == [pyaclnn.HazardError]
    assert "pyaclnn: closing the default stream of a thread that ended: HazardError: aclrtMemcpyAsync" \
        in capsys.readouterr().err
    target.close()
    acl.aclrtFreeHost(host)
