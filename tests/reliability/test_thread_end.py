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
