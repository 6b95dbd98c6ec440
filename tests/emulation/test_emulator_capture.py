"""The emulator's graph capture (aclmdlRI), driven through cffi: what hicann/runtime does (cited in
tests/emulator/src/emu_rt_capture.c; the rules and their sources: the capture notes of issue 26).

Work launched on a capturing stream is recorded, not run; aclmdlRIExecuteAsync runs it again at
the captured addresses, reading what they hold then; the capture rules fail at the offending call.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from test_emulator import D2H, H2D, OK, run_script, toolkits  # noqa: F401
from test_emulator_ops import acl11, dev, run2  # noqa: F401 - fixtures (the Add/InplaceAdd cdefs)

GLOBAL, THREAD_LOCAL, RELAXED = 0, 1, 2
NONE, ACTIVE = 0, 1
INVALID_PARAM = 100000
PARAM_INVALID = 107000
CAPTURE_DEPENDENCY = 107024
STREAM_UNJOINED = 107025
STREAM_CAPTURED = 107027
EVENT_CAPTURED = 107028
NOT_CAPTURED = 107029
MODE_NOT_SUPPORT = 107030
CAPTURE_IMPLICIT = 107031
CAPTURE_CONFLICT = 107032
CAPTURE_UNMATCHED = 107036
WRONG_THREAD = 107038
FEATURE_NOT_SUPPORT = 207000
CAPTURE_INVALIDATED = 507903
ACL_EVENT_SYNC = 1


class Capture:
    """Streams, events, models and pinned buffers of one test, released at its end (a capture
    left open is ended first: a capturing stream cannot be destroyed)."""

    def __init__(self, dev) -> None:
        self.dev, self.rt, self.ffi = dev, dev.rt, dev.ffi
        self.streams: list = []
        self.events: list = []
        self.models: list = []
        self.pinned: list = []

    def stream(self):
        p = self.ffi.new("aclrtStream *")
        assert self.rt.aclrtCreateStream(p) == OK
        self.streams.append(p[0])
        return p[0]

    def event(self, ex: bool = True):
        p = self.ffi.new("aclrtEvent *")
        assert (self.rt.aclrtCreateEventExWithFlag(p, ACL_EVENT_SYNC) if ex else self.rt.aclrtCreateEvent(p)) == OK
        self.events.append(p[0])
        return p[0]

    def begin(self, stream, mode=GLOBAL) -> None:
        assert self.rt.aclmdlRICaptureBegin(stream, mode) == OK

    def end(self, stream, status=OK):
        m = self.ffi.new("aclmdlRI *")
        assert self.rt.aclmdlRICaptureEnd(stream, m) == status, self.dev.acl.errmsg()
        if status == OK:
            assert m[0] != self.ffi.NULL
            self.models.append(m[0])
        else:
            assert m[0] == self.ffi.NULL
        return m[0]

    def info(self, stream):
        status, model = self.ffi.new("aclmdlRICaptureStatus *"), self.ffi.new("aclmdlRI *")
        assert self.rt.aclmdlRICaptureGetInfo(stream, status, model) == OK
        return status[0], model[0]

    def exchange(self, mode: int) -> int:
        p = self.ffi.new("aclmdlRICaptureMode *", mode)
        assert self.rt.aclmdlRICaptureThreadExchangeMode(p) == OK
        return p[0]

    def host(self, arr: np.ndarray):
        """Pinned host memory (aclrtMallocHost) holding `arr`, and a NumPy view of it."""
        p = self.ffi.new("void **")
        assert self.rt.aclrtMallocHost(p, arr.nbytes) == OK
        self.pinned.append(p[0])
        view = np.frombuffer(self.ffi.buffer(p[0], arr.nbytes), arr.dtype).reshape(arr.shape)
        view[...] = arr
        return p[0], view

    def read(self, ptr, n: int) -> np.ndarray:
        """A synchronous copy of device memory, no synchronize (it is refused in a capture)."""
        out = np.empty(n, np.float32)
        assert self.rt.aclrtMemcpy(self.ffi.from_buffer(out), out.nbytes, ptr, out.nbytes, D2H) == OK
        return out

    def close(self) -> None:
        self.exchange(GLOBAL)
        for s in self.streams:
            if self.info(s)[0] != NONE:
                self.rt.aclmdlRICaptureEnd(s, self.ffi.new("aclmdlRI *"))
        for s in self.streams:
            assert self.rt.aclrtSynchronizeStream(s) == OK
        for m in self.models:
            assert self.rt.aclmdlRIDestroy(m) == OK
        for e in self.events:
            assert self.rt.aclrtDestroyEvent(e) == OK
        for s in self.streams:
            assert self.rt.aclrtDestroyStream(s) == OK
        for p in self.pinned:
            assert self.rt.aclrtFreeHost(p) == OK


@pytest.fixture
def cap(dev):  # noqa: F811
    models = dev.emu.live("model")
    c = Capture(dev)
    yield c
    c.close()
    dev.acl.errmsg()
    assert dev.emu.live("model") == models


def inplace_add(dev, self_t, other_t, stream, alpha=1.0):  # noqa: F811
    """aclnnInplaceAdd(selfRef += alpha * other) on `stream`: phase 1 now, phase 2 queued."""
    status, ws, ex = dev.phase1("InplaceAdd", self_t, other_t, dev.scalar(alpha, np.float32))
    assert status == OK
    return dev.op.aclnnInplaceAdd(dev.malloc(ws) if ws else dev.ffi.NULL, ws, ex, stream)


def add(dev, a, b, out, stream):  # noqa: F811
    status, ws, ex = dev.phase1("Add", a, b, dev.scalar(1.0, np.float32), out)
    assert status == OK
    return dev.op.aclnnAdd(dev.malloc(ws) if ws else dev.ffi.NULL, ws, ex, stream)


# ------------------------------------------------------------------------------------------------
# capture and replay
# ------------------------------------------------------------------------------------------------
def test_captured_work_runs_only_at_replay_and_each_replay_runs_it_again(dev, cap):  # noqa: F811
    x0, y = np.arange(6, dtype=np.float32), np.full(6, 10, np.float32)
    (tx, px), (ty, _) = dev.put(x0), dev.put(y)
    s = cap.stream()
    cap.begin(s)
    assert cap.info(s)[0] == ACTIVE and cap.info(s)[1] != dev.ffi.NULL
    assert inplace_add(dev, tx, ty, s) == OK
    assert dev.emu.live("queued") == 0            # recorded into the model, not queued
    model = cap.end(s)
    assert cap.info(s) == (NONE, dev.ffi.NULL)
    assert dev.rt.aclrtSynchronizeStream(s) == OK
    np.testing.assert_array_equal(cap.read(px, 6), x0)  # captured work never ran
    for n in (1, 2, 3):
        assert dev.rt.aclmdlRIExecuteAsync(model, s) == OK
        assert dev.emu.live("queued") == 1
        assert dev.rt.aclrtSynchronizeStream(s) == OK
        np.testing.assert_array_equal(cap.read(px, 6), x0 + n * y)   # one update per replay
    # the executor was single-use and is gone; the model keeps its own copy of the launch
    assert dev.emu.live("executor") == 0


def test_replay_reads_what_the_captured_addresses_hold_then(dev, cap):  # noqa: F811
    """Inputs changed between replays (a synchronous copy into the device input, a new value in
    the pinned host buffer a captured async copy reads) are what the next replay computes with."""
    a, b = np.arange(4, dtype=np.float32), np.full(4, 0.5, np.float32)
    (ta, pa), (tb, pb) = dev.put(a), dev.put(b)
    tout, pout = dev.empty((4,))
    hb_ptr, hb = cap.host(b)                     # host side of b, pinned
    hout_ptr, hout = cap.host(np.zeros(4, np.float32))
    s = cap.stream()
    cap.begin(s)
    assert dev.rt.aclrtMemcpyAsync(pb, 16, hb_ptr, 16, H2D, s) == OK
    assert add(dev, ta, tb, tout, s) == OK
    assert dev.rt.aclrtMemcpyAsync(hout_ptr, 16, pout, 16, D2H, s) == OK
    model = cap.end(s)
    for step in range(3):
        new_a = a * (step + 2)
        assert dev.rt.aclrtMemcpy(pa, 16, dev.ffi.from_buffer(new_a), 16, H2D) == OK
        hb[...] = step - 1.0
        assert dev.rt.aclmdlRIExecuteAsync(model, s) == OK
        assert dev.rt.aclrtSynchronizeStream(s) == OK
        np.testing.assert_array_equal(hout, new_a + np.float32(step - 1.0))


def test_two_stream_capture_joined_by_events_replays_both_streams(dev, cap):  # noqa: F811
    x0, y = np.ones(4, np.float32), np.full(4, 3, np.float32)
    (tx, px), (ty, _), (tz, pz) = dev.put(x0), dev.put(y), dev.put(x0)
    s1, s2 = cap.stream(), cap.stream()
    fork, join = cap.event(), cap.event()
    cap.begin(s1)
    assert dev.rt.aclrtRecordEvent(fork, s1) == OK
    assert dev.rt.aclrtStreamWaitEvent(s2, fork) == OK       # s2 joins the capture
    assert cap.info(s2)[0] == ACTIVE and cap.info(s2)[1] == cap.info(s1)[1]
    assert inplace_add(dev, tx, ty, s1) == OK
    assert inplace_add(dev, tz, ty, s2, alpha=2.0) == OK
    assert dev.rt.aclrtRecordEvent(join, s2) == OK
    assert dev.rt.aclrtStreamWaitEvent(s1, join) == OK       # and rejoins the origin stream
    cap.end(s2, CAPTURE_UNMATCHED)                           # End on the side stream: refused...
    assert cap.info(s1)[0] == ACTIVE                         # ...and the capture goes on
    model = cap.end(s1)
    assert cap.info(s2)[0] == NONE                           # every stream of the model left it
    for _ in range(2):
        assert dev.rt.aclmdlRIExecuteAsync(model, s1) == OK
    assert dev.rt.aclrtSynchronizeStream(s1) == OK
    np.testing.assert_array_equal(cap.read(px, 4), x0 + 2 * y)
    np.testing.assert_array_equal(cap.read(pz, 4), x0 + 2 * 2.0 * y)


def test_a_side_stream_not_rejoined_fails_the_capture_at_end(dev, cap):  # noqa: F811
    (tx, px), (ty, _) = dev.put(np.ones(4, np.float32)), dev.put(np.ones(4, np.float32))
    s1, s2 = cap.stream(), cap.stream()
    fork, join = cap.event(), cap.event()
    cap.begin(s1)
    assert dev.rt.aclrtRecordEvent(fork, s1) == OK
    assert dev.rt.aclrtStreamWaitEvent(s2, fork) == OK
    assert inplace_add(dev, tx, ty, s2) == OK                # last task on s2 is a kernel
    cap.end(s1, STREAM_UNJOINED)
    assert cap.info(s1)[0] == cap.info(s2)[0] == NONE and dev.emu.live("model") == 0
    # recorded but never waited on the origin stream: still unjoined
    cap.begin(s1)
    assert dev.rt.aclrtRecordEvent(fork, s1) == OK
    assert dev.rt.aclrtStreamWaitEvent(s2, fork) == OK
    assert dev.rt.aclrtRecordEvent(join, s2) == OK
    cap.end(s1, STREAM_UNJOINED)
    np.testing.assert_array_equal(cap.read(px, 4), np.ones(4, np.float32))   # nothing ran


# ------------------------------------------------------------------------------------------------
# the rules: refused at the call, with CANN's status
# ------------------------------------------------------------------------------------------------
def test_synchronizing_a_capturing_stream_or_the_device_is_refused_and_the_capture_goes_on(dev, cap):  # noqa: F811
    (tx, px), (ty, _) = dev.put(np.zeros(4, np.float32)), dev.put(np.ones(4, np.float32))
    s = cap.stream()
    cap.begin(s)
    assert inplace_add(dev, tx, ty, s) == OK
    assert dev.rt.aclrtSynchronizeStream(s) == STREAM_CAPTURED
    assert "capture rule" in dev.acl.errmsg()
    assert dev.rt.aclrtSynchronizeStreamWithTimeout(s, 1000) == STREAM_CAPTURED
    assert dev.rt.aclrtSynchronizeDevice() == STREAM_CAPTURED
    assert dev.rt.aclrtDestroyStream(s) == STREAM_CAPTURED
    assert dev.rt.aclrtSynchronizeStream(dev.acl.stream) == OK   # another stream: allowed
    assert dev.rt.aclmdlRICaptureBegin(s, GLOBAL) == STREAM_CAPTURED
    assert cap.info(s)[0] == ACTIVE                               # not invalidated (CANN)
    model = cap.end(s)
    assert dev.rt.aclmdlRIExecuteAsync(model, s) == OK
    assert dev.rt.aclrtSynchronizeStream(s) == OK
    np.testing.assert_array_equal(cap.read(px, 4), np.ones(4, np.float32))


def test_a_captured_event_cannot_be_synchronized_or_queried(dev, cap):  # noqa: F811
    s = cap.stream()
    e, plain = cap.event(), cap.event(ex=False)
    cap.begin(s)
    assert dev.rt.aclrtRecordEvent(plain, s) == FEATURE_NOT_SUPPORT   # aclrtCreateEvent's events: no
    assert dev.rt.aclrtRecordEvent(e, s) == OK
    assert dev.rt.aclrtSynchronizeEvent(e) == EVENT_CAPTURED
    assert dev.rt.aclrtQueryEventStatus(e, dev.ffi.new("aclrtEventRecordedStatus *")) == EVENT_CAPTURED
    assert dev.rt.aclrtEventElapsedTime(dev.ffi.new("float *"), e, e) == EVENT_CAPTURED
    assert dev.rt.aclrtStreamWaitEvent(dev.ffi.NULL, e) == CAPTURE_IMPLICIT   # the default stream
    assert dev.rt.aclrtStreamWaitEvent(s, e) == OK
    cap.end(s)
    assert dev.rt.aclrtSynchronizeEvent(e) == OK                 # out of capture again


def test_a_capture_waiting_on_work_outside_it_is_refused(dev, cap):  # noqa: F811
    s, other = cap.stream(), cap.stream()
    outside = cap.event()
    assert dev.rt.aclrtRecordEvent(outside, other) == OK
    cap.begin(s)
    assert dev.rt.aclrtStreamWaitEvent(s, outside) == CAPTURE_DEPENDENCY
    assert dev.rt.aclrtStreamWaitEvent(s, cap.event(ex=False)) == FEATURE_NOT_SUPPORT
    cap.end(s)


def test_mixing_two_captures_invalidates_both(dev, cap):  # noqa: F811
    s1, s2 = cap.stream(), cap.stream()
    e = cap.event()
    cap.begin(s1)
    cap.begin(s2)
    assert dev.rt.aclrtRecordEvent(e, s1) == OK
    assert dev.rt.aclrtStreamWaitEvent(s2, e) == CAPTURE_CONFLICT
    assert cap.info(s1)[0] == cap.info(s2)[0] == ACTIVE           # the streams say nothing...
    cap.end(s2, CAPTURE_INVALIDATED)                              # ...End does
    cap.end(s1, CAPTURE_INVALIDATED)
    assert dev.emu.live("model") == 0


@pytest.mark.parametrize("func", ["aclrtMemcpy", "aclrtMemset"])
def test_synchronous_copies_follow_the_capture_mode(dev, cap, func):  # noqa: F811
    _, p = dev.put(np.zeros(4, np.float32))
    src = np.full(4, 7, np.float32)

    def call():
        if func == "aclrtMemcpy":
            return dev.rt.aclrtMemcpy(p, 16, dev.ffi.from_buffer(src), 16, H2D)
        return dev.rt.aclrtMemset(p, 16, 0x41, 16)

    want = src if func == "aclrtMemcpy" else np.frombuffer(b"\x41" * 16, np.float32)
    s = cap.stream()
    cap.begin(s, GLOBAL)
    assert call() == MODE_NOT_SUPPORT and "capture rule" in dev.acl.errmsg()
    assert cap.exchange(RELAXED) == GLOBAL                        # the thread opts out...
    assert call() == OK                                           # ...the copy runs at once
    np.testing.assert_array_equal(cap.read(p, 4), want)
    assert cap.exchange(GLOBAL) == RELAXED
    model = cap.end(s)
    assert dev.rt.aclrtMemset(p, 16, 0, 16) == OK
    assert dev.rt.aclmdlRIExecuteAsync(model, s) == OK and dev.rt.aclrtSynchronizeStream(s) == OK
    np.testing.assert_array_equal(cap.read(p, 4), np.zeros(4, np.float32))   # it was not captured
    cap.begin(s, RELAXED)
    assert call() == OK
    cap.end(s)


def in_thread(dev, body):  # noqa: F811
    """Runs `body()` in a new thread with device 0 current; returns what it returned."""
    out: list = []

    def run():
        assert dev.rt.aclrtSetDevice(0) == OK
        try:
            out.append(body())
        finally:
            assert dev.rt.aclrtResetDevice(0) == OK

    th = threading.Thread(target=run)
    th.start()
    th.join()
    return out[0]


def test_capture_modes_across_threads(dev, cap):  # noqa: F811
    _, p = dev.put(np.zeros(4, np.float32))
    s = cap.stream()

    def memset():
        return dev.rt.aclrtMemset(p, 16, 0, 16)

    cap.begin(s, THREAD_LOCAL)
    assert memset() == MODE_NOT_SUPPORT                           # the thread that captures
    assert in_thread(dev, memset) == OK                           # another thread may
    cap.end(s)
    cap.begin(s, GLOBAL)
    assert in_thread(dev, memset) == MODE_NOT_SUPPORT             # GLOBAL: no thread may
    cap.end(s)


def test_end_in_another_thread_is_refused_unless_relaxed(dev, cap):  # noqa: F811
    s = cap.stream()
    m = dev.ffi.new("aclmdlRI *")
    cap.begin(s, GLOBAL)
    assert in_thread(dev, lambda: dev.rt.aclmdlRICaptureEnd(s, m)) == WRONG_THREAD
    assert cap.info(s)[0] == NONE and dev.emu.live("model") == 0  # the capture is over
    cap.begin(s, RELAXED)
    assert in_thread(dev, lambda: dev.rt.aclmdlRICaptureEnd(s, m)) == OK
    cap.models.append(m[0])


def test_pageable_host_memory_in_a_captured_async_copy_is_refused(dev, cap):  # noqa: F811
    _, p = dev.put(np.zeros(4, np.float32))
    pageable = np.ones(4, np.float32)
    pinned, _ = cap.host(pageable)
    s = cap.stream()
    cap.begin(s)
    assert dev.rt.aclrtMemcpyAsync(p, 16, dev.ffi.from_buffer(pageable), 16, H2D, s) == PARAM_INVALID
    assert dev.rt.aclrtMemcpyAsync(p, 16, pinned, 16, H2D, s) == OK
    cap.end(s)


def test_begin_end_and_replay_misuse(dev, cap):  # noqa: F811
    s, other = cap.stream(), cap.stream()
    m = dev.ffi.new("aclmdlRI *")
    assert dev.rt.aclmdlRICaptureBegin(dev.ffi.NULL, GLOBAL) == INVALID_PARAM   # the default stream
    assert dev.rt.aclmdlRICaptureBegin(s, 3) == PARAM_INVALID
    assert dev.rt.aclmdlRICaptureEnd(s, m) == NOT_CAPTURED
    assert dev.rt.aclmdlRICaptureGetInfo(s, dev.ffi.NULL, dev.ffi.NULL) == INVALID_PARAM
    assert dev.rt.aclmdlRICaptureThreadExchangeMode(dev.ffi.new("aclmdlRICaptureMode *", 3)) == PARAM_INVALID
    cap.begin(s)
    assert dev.rt.aclmdlRICaptureEnd(other, m) == NOT_CAPTURED
    model = cap.end(s)
    cap.begin(other)
    assert dev.rt.aclmdlRIExecuteAsync(model, other) == STREAM_CAPTURED   # not into a capture
    cap.end(other)
    assert dev.rt.aclmdlRIExecuteAsync(dev.ffi.NULL, s) == INVALID_PARAM


def test_a_replay_after_its_memory_was_freed_is_a_misuse(dev, cap):  # noqa: F811
    (tx, px), (ty, _) = dev.put(np.zeros(4, np.float32)), dev.put(np.ones(4, np.float32))
    s = cap.stream()
    cap.begin(s)
    assert inplace_add(dev, tx, ty, s) == OK
    model = cap.end(s)
    dev.ptrs.remove(px)
    assert dev.rt.aclrtFree(px) == OK                             # the model still uses it
    assert dev.rt.aclmdlRIExecuteAsync(model, s) == OK
    assert dev.rt.aclrtSynchronizeStream(s) == OK
    assert dev.emu.misuse() == 1 and "freed" in dev.emu.last_misuse()
    dev.expected_misuse = 1


def test_capture_and_replay_in_the_9x_layout(toolkits):
    """The 9.x toolkit: the calls resolve through the compat libascendcl.so (a filter of
    libacl_rt.so) as a program linked with -lascendcl finds them; a captured memset replays."""
    out = run_script(toolkits["9.x"], """
        rt, compat, nn, math_, op = load_all()
        assert rt.aclInit(ffi.NULL) == 0 and rt.aclrtSetDevice(0) == 0
        s, p, m = ffi.new("aclrtStream *"), ffi.new("void **"), ffi.new("aclmdlRI *")
        assert compat.aclrtCreateStream(s) == 0 and compat.aclrtMalloc(p, 16, 0) == 0
        assert compat.aclrtMemset(p[0], 16, 0, 16) == 0
        assert compat.aclmdlRICaptureBegin(s[0], 0) == 0
        assert compat.aclrtMemsetAsync(p[0], 16, 7, 16, s[0]) == 0
        assert compat.aclrtMemset(p[0], 16, 1, 16) == 107030
        assert compat.aclmdlRICaptureEnd(s[0], m) == 0
        host = ffi.new("char[16]")
        assert compat.aclrtMemcpy(host, 16, p[0], 16, 2) == 0 and ffi.buffer(host)[:] == bytes(16)
        assert compat.aclmdlRIExecuteAsync(m[0], s[0]) == 0 and compat.aclrtSynchronizeStream(s[0]) == 0
        assert compat.aclrtMemcpy(host, 16, p[0], 16, 2) == 0 and ffi.buffer(host)[:] == bytes([7]) * 16
        assert compat.aclmdlRIDestroy(m[0]) == 0
        print("replayed")
    """)
    assert "replayed" in out
