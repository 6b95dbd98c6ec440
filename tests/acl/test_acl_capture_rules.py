"""The capture rules through pyaclnn.acl, on both backends (acl through the emulator): each
violation refused at its call with CANN's status (the sources: /work/notes/i26-capture.md, from
hicann/runtime; the emulator's tests/emulator/src/emu_rt_capture.c cites each), and the capture
going on afterwards as CANN's does. Oracle: the statuses traced from the runtime's source, and
NumPy on the values put in for what replays compute.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl

GLOBAL, THREAD_LOCAL, RELAXED = (acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, acl.ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
                                 acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
ACTIVE, NONE = acl.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, acl.ACL_MODEL_RI_CAPTURE_STATUS_NONE
H2D = acl.ACL_MEMCPY_HOST_TO_DEVICE


@pytest.fixture
def rt(backend):
    """Device 0 set; every stream, event, allocation and model made through it released after."""
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    made: dict[str, list] = {"streams": [], "events": [], "ptrs": [], "tensors": []}

    class Rt:
        def stream(self):
            s = acl.aclrtCreateStream()
            made["streams"].append(s)
            return s

        def event(self, ex=True):
            e = acl.aclrtCreateEventExWithFlag(acl.ACL_EVENT_SYNC) if ex else acl.aclrtCreateEvent()
            made["events"].append(e)
            return e

        def put(self, values):
            ptr = acl.aclrtMalloc(values.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            acl.aclrtMemcpy(ptr, values.nbytes, values, values.nbytes, H2D)
            made["ptrs"].append(ptr)
            shape = list(values.shape)
            t = acl.aclCreateTensor(shape, len(shape), acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, shape, len(shape),
                                    ptr)
            made["tensors"].append(t)
            return t, ptr

        @staticmethod
        def read(ptr, n):
            out = np.empty(n, np.float32)
            acl.aclrtMemcpy(out, out.nbytes, ptr, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
            return out

        @staticmethod
        def add(x, y, stream, alpha=1.0):
            """aclnnInplaceAdd (x += alpha * y): phase 1 now, phase 2 on ``stream``."""
            a = acl.aclCreateScalar(alpha, acl.ACL_FLOAT)
            ws, ex = acl.aclnnInplaceAddGetWorkspaceSize(x, y, a)
            assert ws == 0
            acl.aclnnInplaceAdd(None, 0, ex, stream)
            acl.aclDestroyScalar(a)

    yield Rt()
    for s in made["streams"]:
        if acl.aclmdlRICaptureGetInfo(s)[0] != NONE:
            try:
                acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))
            except pyaclnn.AclError:
                pass
    for s in made["streams"]:
        acl.aclrtDestroyStream(s)
    for e in made["events"]:
        acl.aclrtDestroyEvent(e)
    for t in made["tensors"]:
        acl.aclDestroyTensor(t)
    for p in made["ptrs"]:
        acl.aclrtFree(p)
    acl.aclrtResetDevice(0)


def status(call, *args) -> int:
    with pytest.raises(pyaclnn.AclError) as info:
        call(*args)
    return info.value.status


def test_synchronizing_a_capturing_stream_or_the_device_is_refused_and_the_capture_goes_on(rt):
    (tx, px), (ty, _) = rt.put(np.zeros(4, np.float32)), rt.put(np.ones(4, np.float32))
    s, other = rt.stream(), rt.stream()
    acl.aclmdlRICaptureBegin(s, GLOBAL)
    rt.add(tx, ty, s)
    with pytest.raises(pyaclnn.AclError) as info:
        acl.aclrtSynchronizeStream(s)
    assert info.value.status == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert status(acl.aclrtSynchronizeStreamWithTimeout, s, 1000) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert status(acl.aclrtSynchronizeDevice) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert status(acl.aclrtDestroyStream, s) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    acl.aclrtSynchronizeStream(other)                              # another stream: allowed
    assert acl.aclmdlRICaptureGetInfo(s)[0] == ACTIVE              # not invalidated (CANN)
    model = acl.aclmdlRICaptureEnd(s)
    np.testing.assert_array_equal(rt.read(px, 4), np.zeros(4))     # captured, not run
    acl.aclmdlRIExecuteAsync(model, s)
    acl.aclrtSynchronizeStream(s)
    np.testing.assert_array_equal(rt.read(px, 4), np.ones(4))
    acl.aclmdlRIDestroy(model)


def test_the_refusal_names_the_rule_on_the_reference(rt, backend):
    s = rt.stream()
    acl.aclmdlRICaptureBegin(s, GLOBAL)
    with pytest.raises(pyaclnn.AclError, match="capture rule"):
        acl.aclrtSynchronizeStream(s)
    with pytest.raises(pyaclnn.AclError, match="capture rule"):
        acl.aclrtMemset(rt.put(np.zeros(4, np.float32))[1], 16, 0, 16)
    acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))


def test_a_captured_event_cannot_be_synchronized_or_queried(rt):
    s = rt.stream()
    e, plain = rt.event(), rt.event(ex=False)
    acl.aclmdlRICaptureBegin(s, GLOBAL)
    assert status(acl.aclrtRecordEvent, plain, s) == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    acl.aclrtRecordEvent(e, s)
    assert status(acl.aclrtSynchronizeEvent, e) == acl.ACL_ERROR_RT_EVENT_CAPTURED
    assert status(acl.aclrtQueryEventStatus, e) == acl.ACL_ERROR_RT_EVENT_CAPTURED
    assert status(acl.aclrtEventElapsedTime, e, e) == acl.ACL_ERROR_RT_EVENT_CAPTURED
    assert status(acl.aclrtStreamWaitEvent, None, e) == acl.ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT  # default stream
    acl.aclrtStreamWaitEvent(s, e)
    acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))
    acl.aclrtSynchronizeEvent(e)                                   # out of capture again


def test_a_capture_waiting_on_work_outside_it_is_refused(rt):
    s, other = rt.stream(), rt.stream()
    outside = rt.event()
    acl.aclrtRecordEvent(outside, other)
    acl.aclmdlRICaptureBegin(s, GLOBAL)
    assert status(acl.aclrtStreamWaitEvent, s, outside) == acl.ACL_ERROR_RT_CAPTURE_DEPENDENCY
    assert status(acl.aclrtStreamWaitEvent, s, rt.event(ex=False)) == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))


def test_mixing_two_captures_invalidates_both(rt):
    s1, s2 = rt.stream(), rt.stream()
    e = rt.event()
    acl.aclmdlRICaptureBegin(s1, GLOBAL)
    acl.aclmdlRICaptureBegin(s2, GLOBAL)
    acl.aclrtRecordEvent(e, s1)
    assert status(acl.aclrtStreamWaitEvent, s2, e) == acl.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    assert acl.aclmdlRICaptureGetInfo(s1)[0] == acl.aclmdlRICaptureGetInfo(s2)[0] == ACTIVE
    assert status(acl.aclmdlRICaptureEnd, s2) == acl.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
    assert status(acl.aclmdlRICaptureEnd, s1) == acl.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
    assert acl.aclmdlRICaptureGetInfo(s1)[0] == NONE


@pytest.mark.parametrize("func", ["aclrtMemcpy", "aclrtMemset"])
def test_synchronous_copies_follow_the_capture_mode(rt, func):
    _, p = rt.put(np.zeros(4, np.float32))
    src = np.full(4, 7, np.float32)

    def call():
        if func == "aclrtMemcpy":
            acl.aclrtMemcpy(p, 16, src, 16, H2D)
        else:
            acl.aclrtMemset(p, 16, 0x41, 16)

    want = src if func == "aclrtMemcpy" else np.frombuffer(b"\x41" * 16, np.float32)
    s = rt.stream()
    acl.aclmdlRICaptureBegin(s, GLOBAL)
    assert status(call) == acl.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
    assert acl.aclmdlRICaptureThreadExchangeMode(RELAXED) == GLOBAL     # the thread opts out...
    call()                                                              # ...the copy runs at once
    np.testing.assert_array_equal(rt.read(p, 4), want)
    assert acl.aclmdlRICaptureThreadExchangeMode(GLOBAL) == RELAXED
    model = acl.aclmdlRICaptureEnd(s)
    acl.aclrtMemset(p, 16, 0, 16)
    acl.aclmdlRIExecuteAsync(model, s)
    acl.aclrtSynchronizeStream(s)
    np.testing.assert_array_equal(rt.read(p, 4), np.zeros(4))          # it was not captured
    acl.aclmdlRIDestroy(model)
    acl.aclmdlRICaptureBegin(s, RELAXED)
    call()
    acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))


def in_this_thread(body) -> int:
    """The status ``body()`` raised (0: none)."""
    try:
        body()
    except pyaclnn.AclError as exc:
        return exc.status
    return 0


def in_thread(body):
    """``body()`` in a new thread with device 0 set; returns the status it raised (0: none)."""
    out: list[int] = []

    def run():
        acl.aclrtSetDevice(0)
        try:
            body()
            out.append(0)
        except pyaclnn.AclError as exc:
            out.append(exc.status)
        finally:
            acl.aclrtResetDevice(0)

    th = threading.Thread(target=run)
    th.start()
    th.join()
    return out[0]


def test_capture_modes_across_threads(rt):
    _, p = rt.put(np.zeros(4, np.float32))
    s = rt.stream()

    def memset():
        acl.aclrtMemset(p, 16, 0, 16)

    results: dict[str, int] = {}

    def capturing():  # in a fresh thread: CANN's per-thread capture counts start clean there
        acl.aclmdlRICaptureBegin(s, THREAD_LOCAL)
        try:
            results["mine"] = in_this_thread(memset)                  # the thread that captures
            results["other"] = in_thread(memset)                      # another thread may
        finally:
            acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))

    assert in_thread(capturing) == 0
    assert results == {"mine": acl.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "other": 0}
    acl.aclmdlRICaptureBegin(s, GLOBAL)
    assert in_thread(memset) == acl.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT  # GLOBAL: no thread may
    acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))


def test_end_on_another_stream_or_thread_is_refused(rt):
    s, side, other = rt.stream(), rt.stream(), rt.stream()
    fork, join = rt.event(), rt.event()
    acl.aclmdlRICaptureBegin(s, GLOBAL)
    assert status(acl.aclmdlRICaptureEnd, other) == acl.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    acl.aclrtRecordEvent(fork, s)
    acl.aclrtStreamWaitEvent(side, fork)                                  # side joins the capture
    assert status(acl.aclmdlRICaptureEnd, side) == acl.ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED
    assert acl.aclmdlRICaptureGetInfo(s)[0] == ACTIVE                     # the capture goes on
    acl.aclrtRecordEvent(join, side)
    acl.aclrtStreamWaitEvent(s, join)                                     # side rejoins
    acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))
    # Begin in a thread of its own: CANN counts a thread's captures until the thread that ends
    # them exits capture mode, so an End elsewhere would leave this thread's count up for good
    begun: list[int] = []
    assert in_thread(lambda: begun.append(acl.aclmdlRICaptureBegin(s, GLOBAL))) == 0
    assert status(acl.aclmdlRICaptureEnd, s) == acl.ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD
    assert acl.aclmdlRICaptureGetInfo(s)[0] == NONE                       # ...which ended it
    assert in_thread(lambda: acl.aclmdlRICaptureBegin(s, RELAXED)) == 0
    acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))                        # RELAXED: any thread


def test_a_side_stream_not_rejoined_fails_the_capture_at_end(rt):
    (tx, px), (ty, _) = rt.put(np.ones(4, np.float32)), rt.put(np.ones(4, np.float32))
    s1, s2 = rt.stream(), rt.stream()
    fork, join = rt.event(), rt.event()
    acl.aclmdlRICaptureBegin(s1, GLOBAL)
    acl.aclrtRecordEvent(fork, s1)
    acl.aclrtStreamWaitEvent(s2, fork)
    rt.add(tx, ty, s2)                                                    # last task on s2: a kernel
    assert status(acl.aclmdlRICaptureEnd, s1) == acl.ACL_ERROR_RT_STREAM_UNJOINED
    assert acl.aclmdlRICaptureGetInfo(s1)[0] == acl.aclmdlRICaptureGetInfo(s2)[0] == NONE
    acl.aclmdlRICaptureBegin(s1, GLOBAL)                                  # recorded, never waited on
    acl.aclrtRecordEvent(fork, s1)
    acl.aclrtStreamWaitEvent(s2, fork)
    acl.aclrtRecordEvent(join, s2)
    assert status(acl.aclmdlRICaptureEnd, s1) == acl.ACL_ERROR_RT_STREAM_UNJOINED
    np.testing.assert_array_equal(rt.read(px, 4), np.ones(4))             # nothing ran


def test_two_stream_capture_joined_by_events_replays_both_streams(rt):
    x0, y = np.ones(4, np.float32), np.full(4, 3, np.float32)
    (tx, px), (ty, _), (tz, pz) = rt.put(x0), rt.put(y), rt.put(x0)
    s1, s2 = rt.stream(), rt.stream()
    fork, join = rt.event(), rt.event()
    acl.aclmdlRICaptureBegin(s1, GLOBAL)
    acl.aclrtRecordEvent(fork, s1)
    acl.aclrtStreamWaitEvent(s2, fork)
    status2, model2 = acl.aclmdlRICaptureGetInfo(s2)
    assert status2 == ACTIVE and model2 == acl.aclmdlRICaptureGetInfo(s1)[1]
    rt.add(tx, ty, s1)
    rt.add(tz, ty, s2, alpha=2.0)
    acl.aclrtRecordEvent(join, s2)
    acl.aclrtStreamWaitEvent(s1, join)
    model = acl.aclmdlRICaptureEnd(s1)
    assert acl.aclmdlRICaptureGetInfo(s2)[0] == NONE
    np.testing.assert_array_equal(rt.read(pz, 4), x0)                     # nothing ran yet
    for _ in range(2):
        acl.aclmdlRIExecuteAsync(model, s1)
    acl.aclrtSynchronizeStream(s1)
    np.testing.assert_array_equal(rt.read(px, 4), x0 + 2 * y)
    np.testing.assert_array_equal(rt.read(pz, 4), x0 + 2 * 2.0 * y)
    acl.aclmdlRIDestroy(model)


def test_pageable_host_memory_in_a_captured_async_copy_is_refused(rt):
    _, p = rt.put(np.zeros(4, np.float32))
    pageable = np.ones(4, np.float32)
    pinned = acl.aclrtMallocHost(16)
    try:
        acl.aclrtMemcpy(pinned, 16, pageable, 16, acl.ACL_MEMCPY_HOST_TO_HOST)
        s = rt.stream()
        acl.aclmdlRICaptureBegin(s, GLOBAL)
        assert status(acl.aclrtMemcpyAsync, p, 16, pageable, 16, H2D, s) == acl.ACL_ERROR_RT_PARAM_INVALID
        acl.aclrtMemcpyAsync(p, 16, pinned, 16, H2D, s)
        model = acl.aclmdlRICaptureEnd(s)
        acl.aclmdlRIExecuteAsync(model, s)
        acl.aclrtSynchronizeStream(s)
        np.testing.assert_array_equal(rt.read(p, 4), pageable)
        acl.aclmdlRIDestroy(model)
    finally:
        acl.aclrtFreeHost(pinned)


def test_begin_end_and_replay_misuse(rt):
    s, other = rt.stream(), rt.stream()
    assert status(acl.aclmdlRICaptureBegin, None, GLOBAL) == acl.ACL_ERROR_INVALID_PARAM   # the default stream
    acl.aclmdlRICaptureBegin(s, GLOBAL)
    model = acl.aclmdlRICaptureEnd(s)
    acl.aclmdlRICaptureBegin(other, GLOBAL)
    assert status(acl.aclmdlRIExecuteAsync, model, other) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(other))
    assert status(acl.aclmdlRIExecuteAsync, None, s) == acl.ACL_ERROR_INVALID_PARAM
    acl.aclmdlRIDestroy(model)
