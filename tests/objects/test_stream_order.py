"""Streams are asynchronous; one current device per thread (issue 10, points 1 and 2).

On the emulator (tests/emulator, "Stream queues") phase 2 only queues the kernel, which runs at
synchronisation (EMU_STREAM_MODE=deferred) or on a background thread (worker); memory freed
under queued work, and host copies racing with it, count as misuse. pyaclnn keeps what a queued
launch uses alive until the stream passed it, orders host reads and writes after queued work,
and makes the right device current in each thread before every runtime call.
"""
from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl
from conftest import live_handles

F32 = np.float32


def mse_case(n=8, seed=0):
    rng = np.random.default_rng(seed)
    g, x, y = (rng.standard_normal(n).astype(F32) for _ in range(3))
    return g, x, y, (x - y) * F32(2) * g


def test_temporaries_dropped_before_synchronize(emu):
    g, x, y, want = mse_case()
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        out = pyaclnn.Tensor.zeros(x.shape)
        pyaclnn.MseLossBackward(pyaclnn.Tensor.from_numpy(g), pyaclnn.Tensor.from_numpy(x),
                                pyaclnn.Tensor.from_numpy(y), "none", out).run(stream)
        gc.collect()                        # the three inputs are gone: their memory must not be
        stream.synchronize()
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


def test_numpy_and_copy_from_wait_for_queued_work(emu):
    g, x, y, want = mse_case(seed=1)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        tg, tx, ty = (pyaclnn.Tensor.from_numpy(a) for a in (g, x, y))
        out = pyaclnn.Tensor.zeros(x.shape)
        pyaclnn.MseLossBackward(tg, tx, ty, "none", out).run(stream)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)      # no explicit synchronize
        pyaclnn.MseLossBackward(tg, tx, ty, "none", out).run(stream)
        tg.copy_from(np.zeros_like(g))      # the queued launch reads tg: it must run first
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


def test_set_input_and_set_output_keep_what_a_queued_launch_uses(emu):
    g, x, y, want = mse_case(seed=2)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        tg, tx, ty = (pyaclnn.Tensor.from_numpy(a) for a in (g, x, y))
        first = pyaclnn.Tensor.zeros(x.shape)
        with pyaclnn.MseLossBackward(tg, tx, ty, "none", first, repeatable=True) as ex:
            ex.run(stream)
            ex.set_input(0, pyaclnn.Tensor.from_numpy(g * 2))
            tg.close()                      # read by the first queued launch
            second = pyaclnn.Tensor.zeros(x.shape)
            ex.set_output(0, second)
            ex.run(stream)
            stream.synchronize()
        np.testing.assert_allclose(first.numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(second.numpy(), want * 2, rtol=1e-6)


def test_workspace_grows_while_a_launch_is_queued(emu):
    rng = np.random.default_rng(3)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        stream.workspace(16)                # a small buffer, too small for GroupNorm
        n, c, hw, grp = 2, 4, 3, 2
        x = rng.standard_normal((n, c, hw)).astype(F32)
        dy = rng.standard_normal((n, c, hw)).astype(F32)
        mean = rng.standard_normal((n, grp)).astype(F32)
        rstd = rng.random((n, grp)).astype(F32) + 0.5
        gamma = rng.standard_normal(c).astype(F32)
        want = pyaclnn.group_norm_backward(dy, x, mean, rstd, gamma, n, c, hw, grp)
        args = [pyaclnn.Tensor.from_numpy(a) for a in (dy, x, mean, rstd, gamma)]
        outs = [pyaclnn.Tensor.zeros(s) for s in ((n, c, hw), (c,), (c,))]
        small = stream.workspace_slot[0]
        ex = pyaclnn.GroupNormBackward(*args, n, c, hw, grp, (True, True, True), *outs)
        ex.run(stream)                      # replaces the 16-byte buffer while it may be in use
        assert stream.workspace_slot[0] != small
        stream.synchronize()
        for got, w in zip(outs, want):
            np.testing.assert_allclose(got.numpy(), w, rtol=1e-5, atol=1e-6)


def test_gc_of_a_tensor_a_queued_launch_uses(emu):
    g, x, y, want = mse_case(seed=4)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        tg, tx, ty = (pyaclnn.Tensor.from_numpy(a) for a in (g, x, y))
        out = pyaclnn.Tensor.zeros(x.shape)
        pyaclnn.MseLossBackward(tg, tx, ty, "none", out).run(stream)
        view = out[::1]
        del tg, tx, ty, out
        gc.collect()
        stream.synchronize()
        np.testing.assert_allclose(view.numpy(), want, rtol=1e-6)


def test_closing_a_stream_frees_what_waited_for_it(emu):
    before = live_handles()
    g, x, y, _ = mse_case(seed=5)
    with pyaclnn.Device(0) as dev:
        stream = dev.create_stream()
        pyaclnn.MseLossBackward(*(pyaclnn.Tensor.from_numpy(a) for a in (g, x, y)), "none",
                                pyaclnn.Tensor.zeros(x.shape)).run(stream)
        gc.collect()
        stream.close()                      # waits for the launch, then frees its memory
    assert live_handles() == before


# -- one current device per thread -----------------------------------------------------------------
@pytest.fixture
def two_devices(emulator):
    emulator.set_device_count(8)
    emulator.reset_counters()
    yield emulator
    assert emulator.misuse() == 0, emulator.last_misuse()
    emulator.set_device_count(None)


def test_two_devices_in_one_thread(two_devices):
    g, x, y, want = mse_case(seed=6)
    with pyaclnn.Device(0) as d0:
        s0 = d0.create_stream()
        assert acl.aclrtGetDevice() == 0
        ins = [pyaclnn.Tensor.from_numpy(a, d0) for a in (g, x, y)]
        out = pyaclnn.Tensor.zeros(x.shape, device=d0)
        with pyaclnn.Device(1) as d1:
            s1 = d1.create_stream()
            assert acl.aclrtGetDevice() == 1
            s0b = d0.create_stream()
            assert acl.aclrtGetDevice() == 0      # pyaclnn switched back for device 0's call
            pyaclnn.MseLossBackward(*ins, "none", out).run(s0)   # device 0's stream, d1 opened last
            s0.synchronize()
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
            t1 = pyaclnn.Tensor.from_numpy(x, d1)
            np.testing.assert_array_equal(t1.numpy(), x)
            s1.close(), s0b.close()


def test_tensors_of_two_devices_in_one_op_are_refused(two_devices):
    """Device 1's memory is no address a kernel on device 0 can use (the emulator would run it
    and read it as host memory: a silent answer a real device never gives): a ValueError at
    plan time, and at set_input/set_output, naming both devices."""
    g, x, y, _ = mse_case(seed=8)
    with pyaclnn.Device(0) as d0, pyaclnn.Device(1) as d1:
        ins0 = [pyaclnn.Tensor.from_numpy(a, d0) for a in (g, x, y)]
        out0 = pyaclnn.Tensor.empty(x.shape, device=d0)
        x1 = pyaclnn.Tensor.from_numpy(x, d1)
        with pytest.raises(ValueError, match="device 1.*device 0|device 0.*device 1"):
            pyaclnn.MseLossBackward(ins0[0], x1, ins0[2], "none", out0)
        ex = pyaclnn.MseLossBackward(*ins0, "none", out0, repeatable=True)
        with pytest.raises(ValueError, match="device 1.*device 0|device 0.*device 1"):
            ex.set_input(1, x1)
        with pytest.raises(ValueError, match="device 1.*device 0|device 0.*device 1"):
            ex.set_output(0, pyaclnn.Tensor.empty(x.shape, device=d1))
        ex.close()


def test_set_input_takes_an_open_tensor(backend):
    """set_input/set_output name what they need: a TypeError for anything but a Tensor (was an
    AttributeError from inside), a ClosedError for a closed one (its address was set in the
    executor, freed memory)."""
    g, x, y, _ = mse_case(seed=9)
    ins = [pyaclnn.Tensor.from_numpy(a) for a in (g, x, y)]
    ex = pyaclnn.MseLossBackward(*ins, "none", pyaclnn.Tensor.empty(x.shape), repeatable=True)
    for bad in (x, None, "x"):
        with pytest.raises(TypeError, match="pyaclnn.Tensor"):
            ex.set_input(0, bad)
    closed = pyaclnn.Tensor.from_numpy(g)
    closed.close()
    with pytest.raises(pyaclnn.ClosedError):
        ex.set_input(0, closed)
    with pytest.raises(pyaclnn.ClosedError):
        ex.set_output(0, closed)
    ex.run()  # still runs on its own tensors
    ex.close()


def test_gc_release_restores_the_threads_device(two_devices):
    with pyaclnn.Device(0) as d0, pyaclnn.Device(1) as d1:
        t0 = pyaclnn.Tensor.from_numpy(np.ones(4, F32), d0)
        s1 = d1.create_stream()
        assert acl.aclrtGetDevice() == 1
        del t0
        gc.collect()                        # freeing device 0's memory needs device 0 current...
        assert acl.aclrtGetDevice() == 1    # ...and then device 1 is current again
        s1.close()


def test_gc_release_restores_a_device_another_library_made_current(two_devices):
    """The thread's device was set outside pyaclnn's objects (a host framework, here the raw
    layer): a release run by GC switches to its own device, then gives the thread back the
    context it had (aclrtGetCurrentContext before, aclrtSetCurrentContext after)."""
    with pyaclnn.Device(0) as d0, pyaclnn.Device(1):
        t0 = pyaclnn.Tensor.from_numpy(np.ones(4, F32), d0)
        acl.aclrtSetDevice(1)               # the host's own call: pyaclnn does not know it
        try:
            del t0
            gc.collect()                    # frees device 0's memory with device 0 current...
            assert acl.aclrtGetDevice() == 1  # ...then the host's device is current again
        finally:
            acl.aclrtResetDevice(1)


@pytest.mark.parametrize("devices", [2, 8])
def test_devices_interleaved_in_several_threads(two_devices, devices):
    sets = two_devices.live("device_set")
    opened = [pyaclnn.Device(i) for i in range(devices)]
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            streams = {d.id: d.create_stream() for d in opened}
            for i in range(12):
                d = opened[(k + i) % devices]
                g, x, y, want = mse_case(seed=k * 100 + i)
                out = pyaclnn.Tensor.zeros(x.shape, device=d)
                pyaclnn.MseLossBackward(*(pyaclnn.Tensor.from_numpy(a, d) for a in (g, x, y)), "none",
                                        out).run(streams[d.id])
                np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
            for s in streams.values():
                s.close()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
    assert two_devices.live("device_set") == sets + devices   # one reference per Device, not per switch
    for d in opened:
        d.close()
    assert two_devices.live("device_set") == sets


def test_numpy_backend_follows_the_same_rule(use_backend):
    use_backend("numpy")
    from pyaclnn._objects import backend as _backend
    _backend.current().runtime._device_count = 2
    g, x, y, want = mse_case(seed=7)
    with pyaclnn.Device(0) as d0:
        s0 = d0.create_stream()
        ins = [pyaclnn.Tensor.from_numpy(a, d0) for a in (g, x, y)]
        out = pyaclnn.Tensor.zeros(x.shape, device=d0)
        with pyaclnn.Device(1):
            assert acl.aclrtGetDevice() == 1
            raw = acl.aclrtCreateStream()          # a stream of device 1, made by hand
            pyaclnn.MseLossBackward(*ins, "none", out).run(s0)
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
            acl.aclrtSetDevice(0)
            with pytest.raises(pyaclnn.AclError) as info:
                acl.aclrtMemcpyAsync(out.data_ptr, 32, np.zeros(8, F32), 32, acl.ACL_MEMCPY_HOST_TO_DEVICE, raw)
            assert info.value.status == 107003
            acl.aclrtSetDevice(1)
            acl.aclrtDestroyStream(raw)
            acl.aclrtResetDevice(0), acl.aclrtResetDevice(1)


def test_event_synchronize_frees_what_the_work_before_the_record_used(emu):
    emu.reset_counters()
    g, x, y, want = mse_case(seed=8)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream, dev.create_event() as ev:
        out = pyaclnn.Tensor.zeros(x.shape)
        stream.workspace(1 << 10)                            # the stream's workspace, made before counting
        allocs = emu.live("device_alloc")
        pyaclnn.MseLossBackward(*(pyaclnn.Tensor.from_numpy(a) for a in (g, x, y)), "none", out).run(stream)
        gc.collect()
        assert emu.live("device_alloc") == allocs + 3      # the inputs wait for the stream
        ev.record(stream)
        keep = pyaclnn.Tensor.from_numpy(g)
        pyaclnn.MseLossBackward(keep, keep, keep, "none", pyaclnn.Tensor.zeros(x.shape)).run(stream)
        ev.synchronize()                                     # the first launch is done
        assert emu.live("device_alloc") == allocs + 2        # its inputs freed; keep + 2nd out remain
        if emu.live("queued"):                               # deferred mode: the 2nd launch waits
            assert emu.live("queued") == 1
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
