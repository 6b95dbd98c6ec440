"""Threads: 8 threads, each with its own stream, run operators concurrently and get the right
results, on both backends.

CANN keeps the current device per thread; the emulator answers 107002 (context null) to a
thread that calls the runtime without aclrtSetDevice, and so does the reference runtime. The
tests below pass only because pyaclnn sets the device in every thread that touches an object
(``Device.use()``), and balances those aclrtSetDevice calls with resets when the device closes.
"""
from __future__ import annotations

import gc
import threading
from typing import Any, Callable

import numpy as np
import pytest

import pyaclnn
from conftest import live_handles
from pyaclnn import acl
from pyaclnn._objects import backend as _backend
from pyaclnn.errors import class_for_status
from helpers.threads import in_thread  # noqa: E402

F32 = np.float32
THREADS = 8
ITERATIONS = {"numpy": 150, "acl": 150}
RT_CONTEXT_NULL = 107002


def device_refs(backend: str) -> int:
    """aclrtSetDevice references still held (the emulator's per-device count on acl)."""
    if backend == "numpy":
        return _backend.current().runtime.live_counts()["device_set"]
    from emulator.build import Emulator
    return Emulator(_backend.current().paths["home"]).live("device_set")


def run_threads(fn: Callable[[int], Any], n: int = THREADS, timeout: float = 120) -> list[Any]:
    """Start ``n`` threads running ``fn(k)`` together; re-raise the first failure; never hang."""
    results: list[Any] = [None] * n
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def target(k: int) -> None:
        try:
            barrier.wait(timeout)
            results[k] = fn(k)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=target, args=(k,), name=f"worker-{k}") for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    if errors:
        raise errors[0]
    return results


def other_ops_inputs() -> dict[str, tuple]:
    rng = np.random.default_rng(3)
    r = lambda *s: rng.standard_normal(s).astype(F32)  # noqa: E731
    return {
        "group_norm_backward": (r(2, 4, 3), r(2, 4, 3), r(2, 2), np.abs(r(2, 2)) + 0.5, r(4), 2, 4, 3, 2),
        "cross_entropy_loss_grad": (np.ones(1, F32), np.log(np.full((3, 4), 0.25, F32)),
                                    np.array([0, 3, 1], np.int64), np.abs(r(4))),
        "prelu_backward": (r(2, 3, 4), r(2, 3, 4), r(3)),
    }


def as_list(result: Any) -> list[np.ndarray]:
    return list(result) if isinstance(result, tuple) else [result]


def test_eight_threads_with_their_own_streams_compute_correctly(backend):
    iterations = ITERATIONS[backend]
    others = other_ops_inputs()
    gc.collect()
    outside, refs_outside = live_handles(), device_refs(backend)
    expected = {name: as_list(getattr(pyaclnn, name)(*args)) for name, args in others.items()}
    dev = pyaclnn.Device(0)

    def worker(k: int) -> int:
        rng = np.random.default_rng(100 + k)
        g, x, y = (rng.standard_normal((3, 4)).astype(F32) for _ in range(3))
        with dev.create_stream() as stream:  # created in this thread
            tg, tx, ty = (pyaclnn.Tensor.from_numpy(v, dev) for v in (g, x, y))
            out = pyaclnn.Tensor.zeros((3, 4), device=dev)
            rex_out = pyaclnn.Tensor.zeros((3, 4), device=dev)
            rex = pyaclnn.MseLossBackward(tg, tx, ty, "none", rex_out, repeatable=True)
            bad = pyaclnn.Tensor.from_numpy(np.ones(k + 5, F32), dev)  # broadcasts with nothing here
            for i in range(iterations):
                scale = F32(i % 7 + 1)
                tg.copy_from(g * scale)
                pyaclnn.MseLossBackward(tg, tx, ty, "sum", out).run(stream)
                rex.run(stream)
                stream.synchronize()
                np.testing.assert_allclose(out.numpy(), 2 * (x - y) * g * scale, rtol=1e-6)
                np.testing.assert_allclose(rex_out.numpy(), 2 * (x - y) * g * scale, rtol=1e-6)
                np.testing.assert_allclose(pyaclnn.mse_loss_backward(g * scale, x, y, "mean"),
                                           (x - y) * g * scale * F32(2 / x.size), rtol=1e-6)
                name = list(others)[i % 3]
                for got, want in zip(as_list(getattr(pyaclnn, name)(*others[name])), expected[name]):
                    np.testing.assert_array_equal(got, want)
                if i % 10 == 0:  # a refusal reports this thread's own message, not another's
                    with pytest.raises(pyaclnn.AclnnParamInvalidError) as info:
                        pyaclnn.MseLossBackward(tg, tx, bad, "sum", out)
                    assert f"({k + 5},)" in str(info.value)
                    assert not any(f"({j + 5},)" in str(info.value) for j in range(THREADS) if j != k)
            rex.close()
        return iterations

    try:
        assert run_threads(worker) == [iterations] * THREADS
        # `dev` was made current in every thread, yet holds one reference (one aclrtSetDevice
        # when opened; the threads switch with aclrtSetCurrentContext); the backend's default
        # device (the functional calls, through the executor on both backends) holds one more
        assert device_refs(backend) == refs_outside + 1 + (refs_outside == 0)
    finally:
        dev.close()
        # The functional calls ran on the backend's default device (made current in each thread too).
        default = getattr(_backend.current(), "default_device", None)
        if default is not None:
            default.close()
    gc.collect()
    assert device_refs(backend) == refs_outside  # every set balanced by a reset
    assert live_handles() == outside


@pytest.mark.parametrize("api, call", [
    ("aclrtCreateStream", lambda: acl.aclrtCreateStream()),
    ("aclrtMalloc", lambda: acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)),
    ("aclrtGetDevice", lambda: acl.aclrtGetDevice()),
])
def test_a_bare_runtime_call_in_a_thread_without_a_device_is_context_null(backend, api, call):
    """What pyaclnn protects its users from: CANN refuses a thread that set no device."""
    with pyaclnn.Device(0):  # current in the main thread only
        with pytest.raises(class_for_status(RT_CONTEXT_NULL)) as info:
            in_thread(call)
    err = info.value
    assert isinstance(err, pyaclnn.RtContextNullError) and err.status == RT_CONTEXT_NULL
    assert err.api == api
    assert "aclrtSetDevice" in str(err)  # the hint says what to do

    def ported_thread() -> None:  # the C way, as a ported sample's worker thread does it
        acl.aclrtSetDevice(0)
        stream = acl.aclrtCreateStream()
        ptr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        acl.aclrtFree(ptr)
        acl.aclrtDestroyStream(stream)
        acl.aclrtResetDevice(0)

    before = live_handles()
    in_thread(ported_thread)
    assert live_handles() == before


def test_objects_made_in_one_thread_are_used_and_closed_in_others(backend):
    """Each object sets its device in whatever thread uses or releases it."""
    g, x, y = (np.full((2, 2), v, F32) for v in (1, 3, 2))
    gc.collect()
    outside, refs_outside = live_handles(), device_refs(backend)
    dev = pyaclnn.Device(0)
    stream, start, end = dev.create_stream(), dev.create_event(), dev.create_event()
    tg, tx, ty = (pyaclnn.Tensor.from_numpy(v, dev) for v in (g, x, y))
    out = pyaclnn.Tensor.zeros((2, 2), device=dev)
    ex = pyaclnn.MseLossBackward(tg, tx, ty, "sum", out)
    rex = pyaclnn.MseLossBackward(tg, tx, ty, "none", pyaclnn.Tensor.zeros((2, 2), device=dev), repeatable=True)
    in_thread(lambda: start.record(stream))   # a thread that touched no pyaclnn object before
    in_thread(lambda: ex.run(stream))
    in_thread(lambda: rex.set_input(1, pyaclnn.Tensor.from_numpy(x * 2, dev)))
    in_thread(lambda: rex.run(stream))
    in_thread(lambda: end.record(stream))
    in_thread(stream.synchronize)
    assert in_thread(lambda: start.elapsed_ms(end)) >= 0
    np.testing.assert_array_equal(in_thread(out.numpy), 2 * (x - y) * g)
    np.testing.assert_array_equal(in_thread(rex.outputs[0].numpy), 2 * (2 * x - y) * g)

    made = in_thread(lambda: [pyaclnn.Tensor.from_numpy(x, dev) for _ in range(4)])
    in_thread(made[0].close)                       # closed in another thread
    made[1].close()                                # closed here
    del made                                       # the rest collected here, without close()
    for obj in (rex, ex, start, end, stream):
        in_thread(obj.close)
    in_thread(dev.close)
    gc.collect()
    assert live_handles() == outside
    assert device_refs(backend) == refs_outside


def test_two_threads_growing_one_streams_workspace(backend):
    """Stream.workspace shared by threads: each growth allocates once and the buffer it replaces
    is freed once (no leak, no double free), whatever the interleaving. The switch interval is
    made tiny so that the threads interleave inside the call."""
    import sys
    with pyaclnn.Device(0) as device:
        before = live_handles()["device_alloc"]
        stream = device.create_stream()
        old = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            got = run_threads(lambda k: [stream.workspace(64 * (4 * j + k + 1)) for j in range(300)], n=4)
        finally:
            sys.setswitchinterval(old)
        assert all(addr for addrs in got for addr in addrs)
        stream.close()
        assert live_handles()["device_alloc"] == before
