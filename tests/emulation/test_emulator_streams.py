"""The emulator's asynchronous streams and per-thread current device, driven through cffi.

What the real runtime does (hicann/runtime; cited in tests/emulator/src/emu_rt_streams.c): phase 2
and the async copies only queue work; aclrtFree frees at once; aclrtMemcpy does not synchronize;
aclrtDestroyStream waits for queued work and needs the stream's context current; aclrtSetDevice
makes the device current in the calling thread and counts one reference per call.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from test_emulator import (D2H, H2D, OK, RUNTIME_ERROR, acl, dev, toolkits)  # noqa: F401 - fixtures

ACL_ERROR_RT_STREAM_CONTEXT = 107003


@pytest.fixture(params=["deferred", "worker"])
def mode(request, dev):
    dev.emu.set_stream_mode(request.param)
    yield request.param
    dev.rt.aclrtSynchronizeStream(dev.acl.stream)
    dev.emu.set_stream_mode(None)


def mse(dev, n=6, seed=0):
    rng = np.random.default_rng(seed)
    g, s, t = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    (tg, _), (ts, _), (tt, _) = dev.put(g), dev.put(s), dev.put(t)
    to, po = dev.empty((n,))
    return (tg, ts, tt, 0, to), po, (s - t) * 2.0 * g


def raw_read(dev, ptr, n):
    out = np.empty(n, np.float32)
    assert dev.rt.aclrtMemcpy(dev.ffi.from_buffer(out), out.nbytes, ptr, out.nbytes, D2H) == OK
    return out


def test_phase2_only_queues_the_kernel(dev):
    dev.emu.set_stream_mode("deferred")
    try:
        args, po, want = mse(dev)
        assert dev.run("MseLossBackward", *args) == OK
        assert dev.emu.live("queued") == 1
        before = raw_read(dev, po, 6)             # no implicit synchronisation: not written yet
        assert np.isnan(before).all()
        assert dev.emu.misuse() == 1 and "still writes" in dev.emu.last_misuse()
        dev.expected_misuse = 1
        assert dev.rt.aclrtSynchronizeStream(dev.acl.stream) == OK
        assert dev.emu.live("queued") == 0
        np.testing.assert_allclose(raw_read(dev, po, 6), want, rtol=1e-6)
    finally:
        dev.emu.set_stream_mode(None)


def test_worker_runs_queued_work_without_a_synchronize(dev):
    dev.emu.set_stream_mode("worker")
    try:
        args, po, want = mse(dev)
        assert dev.run("MseLossBackward", *args) == OK
        deadline = time.monotonic() + 10
        while dev.emu.live("queued") and time.monotonic() < deadline:
            time.sleep(0.001)
        assert dev.emu.live("queued") == 0
        np.testing.assert_allclose(raw_read(dev, po, 6), want, rtol=1e-6)
    finally:
        dev.emu.set_stream_mode(None)


def test_worker_runs_nothing_once_the_mode_is_deferred(dev):
    # The worker thread outlives the test that started it. A deferred test's kernels must wait for
    # its synchronize even when the worker is mid-pause as the mode switches (it used to wake and
    # run them: "queued" 2 where 3 were, on a loaded CI machine). A wide pause holds that window.
    dev.emu.set_worker_delay(0.3)
    dev.emu.set_stream_mode("worker")
    try:
        args, po, want = mse(dev, seed=5)
        assert dev.run("MseLossBackward", *args) == OK
        deadline = time.monotonic() + 10
        while dev.emu.live("queued") and time.monotonic() < deadline:
            time.sleep(0.001)                     # the worker ran it and is now in its pause
        assert dev.emu.live("queued") == 0
        dev.emu.set_stream_mode("deferred")
        args2, po2, want2 = mse(dev, seed=6)
        assert dev.run("MseLossBackward", *args2) == OK
        time.sleep(0.6)                           # past the worker's pause
        assert dev.emu.live("queued") == 1
        assert dev.rt.aclrtSynchronizeStream(dev.acl.stream) == OK
        np.testing.assert_allclose(raw_read(dev, po2, 6), want2, rtol=1e-6)
    finally:
        dev.emu.set_stream_mode(None)
        dev.emu.set_worker_delay(0.0002)


def test_free_under_queued_work_is_misuse_and_poisoned(dev):
    dev.emu.set_stream_mode("deferred")
    try:
        args, po, _ = mse(dev)
        assert dev.run("MseLossBackward", *args) == OK
        out_ptr = dev.ptrs.pop()                  # the output buffer: free it now, under the kernel
        assert dev.rt.aclrtFree(out_ptr) == OK    # frees at once, as CANN does
        assert dev.emu.misuse() == 1 and "freed while aclnnMseLossBackward" in dev.emu.last_misuse()
        assert dev.rt.aclrtSynchronizeStream(dev.acl.stream) == OK
        assert dev.emu.misuse() == 2 and "ran after" in dev.emu.last_misuse()  # the kernel did nothing
        dev.expected_misuse = 2
    finally:
        dev.emu.set_stream_mode(None)


def test_event_synchronize_runs_up_to_the_record(dev):
    ffi, rt = dev.ffi, dev.rt
    dev.emu.set_stream_mode("deferred")
    try:
        args, po, want = mse(dev, seed=1)
        ev = ffi.new("aclrtEvent *")
        assert rt.aclrtCreateEvent(ev) == OK
        status = ffi.new("aclrtEventRecordedStatus *")
        assert dev.run("MseLossBackward", *args) == OK
        assert rt.aclrtRecordEvent(ev[0], dev.acl.stream) == OK
        assert rt.aclrtQueryEventStatus(ev[0], status) == OK and status[0] == 0   # not ready
        args2, po2, _ = mse(dev, seed=2)
        assert dev.run("MseLossBackward", *args2) == OK
        assert dev.emu.live("queued") == 3
        assert rt.aclrtSynchronizeEvent(ev[0]) == OK
        assert dev.emu.live("queued") == 1                                       # the later launch
        assert rt.aclrtQueryEventStatus(ev[0], status) == OK and status[0] == 1  # complete
        np.testing.assert_allclose(raw_read(dev, po, 6), want, rtol=1e-6)
        assert rt.aclrtDestroyEvent(ev[0]) == OK
    finally:
        dev.emu.set_stream_mode(None)


def test_polling_an_event_sees_it_complete(dev, mode):
    """A device runs its queues on its own, and aclrtQueryEventStatus reads how far it got
    (hicann/runtime event.cc Event::QueryEventStatus): a correct program that polls instead of
    synchronizing must see the record complete, in deferred mode too (it used to poll forever).
    The poll runs the recording stream up to the record only: a launch queued after it stays."""
    ffi, rt = dev.ffi, dev.rt
    args, po, want = mse(dev, seed=7)
    args2, _, _ = mse(dev, seed=8)
    ev = ffi.new("aclrtEvent *")
    status = ffi.new("aclrtEventRecordedStatus *")
    assert rt.aclrtCreateEvent(ev) == OK
    dev.emu.set_worker_delay(0.05)                # worker mode: the poll, not the thread, gets there
    try:
        assert dev.run("MseLossBackward", *args) == OK
        assert rt.aclrtRecordEvent(ev[0], dev.acl.stream) == OK
        assert dev.run("MseLossBackward", *args2) == OK
        polls = 0
        while polls < 1000:
            polls += 1
            assert rt.aclrtQueryEventStatus(ev[0], status) == OK
            if status[0] == 1:                    # ACL_EVENT_RECORDED_STATUS_COMPLETE
                break
        assert status[0] == 1, "polling never saw the event complete"
        if mode == "deferred":
            assert polls == 2                     # the first poll: NOT_READY, the device was busy
            assert dev.emu.live("queued") == 1    # the launch after the record did not run
        np.testing.assert_allclose(raw_read(dev, po, 6), want, rtol=1e-6)
        assert rt.aclrtQueryEventStatus(ev[0], status) == OK and status[0] == 1   # stays complete
    finally:
        dev.emu.set_worker_delay(0.0002)
    assert rt.aclrtSynchronizeStream(dev.acl.stream) == OK
    assert rt.aclrtDestroyEvent(ev[0]) == OK


def test_stream_wait_event_orders_two_streams(dev, mode):
    ffi, rt = dev.ffi, dev.rt
    other = ffi.new("aclrtStream *")
    ev = ffi.new("aclrtEvent *")
    assert rt.aclrtCreateStream(other) == OK and rt.aclrtCreateEvent(ev) == OK
    args, po, want = mse(dev, seed=3)
    copy = dev.malloc(24)
    assert dev.run("MseLossBackward", *args) == OK
    assert rt.aclrtRecordEvent(ev[0], dev.acl.stream) == OK
    assert rt.aclrtStreamWaitEvent(other[0], ev[0]) == OK
    assert rt.aclrtMemcpyAsync(copy, 24, po, 24, 3, other[0]) == OK            # device to device
    assert rt.aclrtSynchronizeStream(other[0]) == OK       # runs the kernel first, then the copy
    np.testing.assert_allclose(raw_read(dev, copy, 6), want, rtol=1e-6)
    assert rt.aclrtDestroyEvent(ev[0]) == OK and rt.aclrtDestroyStream(other[0]) == OK


def test_destroy_stream_waits_for_its_work(dev, mode):
    ffi, rt = dev.ffi, dev.rt
    s = ffi.new("aclrtStream *")
    assert rt.aclrtCreateStream(s) == OK
    args, po, want = mse(dev, seed=4)
    status, ws, ex = dev.phase1("MseLossBackward", *args)
    assert status == OK and dev.op.aclnnMseLossBackward(ffi.NULL, 0, ex, s[0]) == OK
    assert rt.aclrtDestroyStream(s[0]) == OK
    assert dev.emu.live("queued") == 0
    np.testing.assert_allclose(raw_read(dev, po, 6), want, rtol=1e-6)


def test_kernel_reads_addresses_given_at_launch(dev, mode):
    """The aclTensors may be destroyed once phase 2 returned (torch_npu does so before any sync)."""
    args, po, want = mse(dev, seed=5)
    assert dev.run("MseLossBackward", *args) == OK
    for t in dev.tensors:
        assert dev.nn.aclDestroyTensor(t) == OK
    dev.tensors.clear()
    assert dev.rt.aclrtSynchronizeStream(dev.acl.stream) == OK
    np.testing.assert_allclose(raw_read(dev, po, 6), want, rtol=1e-6)


def test_one_current_device_per_thread(dev, monkeypatch):
    """aclrtSetDevice(1) after aclrtSetDevice(0) makes device 1 current in this thread: work on a
    stream of device 0 is refused (107003; phase 2: 361001) until device 0 is set again. Every
    aclrtSetDevice adds a reference (Runtime::PrimaryContextRetain), even in the same thread."""
    ffi, rt, emu = dev.ffi, dev.rt, dev.emu
    emu.set_device_count(2)
    try:
        sets = emu.live("device_set")
        cur = ffi.new("int32_t *")
        args, po, want = mse(dev, seed=6)
        assert rt.aclrtSetDevice(0) == OK and emu.live("device_set") == sets + 1
        assert rt.aclrtSetDevice(1) == OK and rt.aclrtGetDevice(cur) == OK and cur[0] == 1
        first = len(dev.ptrs)
        assert dev.run("MseLossBackward", *args) == RUNTIME_ERROR
        on_device_1 = dev.ptrs[first:]            # its workspace
        assert "belongs to another context" in dev.acl.errmsg()
        buf = np.zeros(6, np.float32)
        assert rt.aclrtMemcpyAsync(po, 24, ffi.from_buffer(buf), 24, H2D, dev.acl.stream) == ACL_ERROR_RT_STREAM_CONTEXT
        assert rt.aclrtDestroyStream(dev.acl.stream) == ACL_ERROR_RT_STREAM_CONTEXT
        assert rt.aclrtSynchronizeStream(dev.acl.stream) == OK   # switches context implicitly
        assert rt.aclrtSetDevice(0) == OK and rt.aclrtGetDevice(cur) == OK and cur[0] == 0
        assert emu.live("device_set") == sets + 3
        assert dev.run("MseLossBackward", *mse(dev, seed=6)[0]) == OK
        for d in (0, 1, 0):
            assert rt.aclrtResetDevice(d) == OK
        for ptr in on_device_1:                   # gone with device 1's last reset (device_memory_release)
            dev.ptrs.remove(ptr)
        assert emu.live("device_set") == sets
        dev.acl.errmsg()
    finally:
        emu.set_device_count(None)


def test_current_device_is_per_thread(dev):
    ffi, rt, emu = dev.ffi, dev.rt, dev.emu
    emu.set_device_count(2)
    seen = {}

    def worker():
        cur = ffi.new("int32_t *")
        assert rt.aclrtSetDevice(1) == OK
        assert rt.aclrtGetDevice(cur) == OK
        seen["worker"] = cur[0]
        assert rt.aclrtResetDevice(1) == OK

    try:
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        cur = ffi.new("int32_t *")
        assert rt.aclrtGetDevice(cur) == OK
        assert (seen["worker"], cur[0]) == (1, 0)
    finally:
        emu.set_device_count(None)
