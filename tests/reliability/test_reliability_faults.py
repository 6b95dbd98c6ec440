"""Fault injection: every native call pyaclnn makes fails in turn (acl backend on the emulator).

Each case arms ``emu_fail(func, status)`` in a realistic scenario and checks that
- the right exception comes out: ``class_for_status(status)``, ``.api`` naming the C function and
  ``.cann_message`` holding the emulator's ``aclGetRecentErrMsg`` text;
- nothing leaks: once the test closes what it holds, the emulator's live counts are back to
  where they were (a handle whose *release* the runtime refused is the runtime's; the case
  frees it itself through ``pyaclnn.acl`` after checking it is the only one left);
- nothing is released twice and no freed executor is touched (``Emulator.misuse() == 0``),
  in particular after a failing phase 2, which frees a single-use executor inside CANN;
- the next call works and gives the right numbers.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl
from pyaclnn.errors import class_for_status
from helpers.threads import in_thread  # noqa: E402

F32 = np.float32
KINDS = ("tensor", "bool_array", "executor", "stream", "event", "device_alloc", "host_alloc",
         "device_set", "context")
NULL_RETURNED = 561103  # pyaclnn's status for an aclCreate* that returned NULL (no status in C)
OPS = ("MseLossBackward", "GroupNormBackward", "CrossEntropyLossGrad", "PreluBackward")


# -- helpers -------------------------------------------------------------------------------------
def live(emu) -> dict[str, int]:
    return {k: emu.live(k) for k in KINDS}


def expect_fault(emu, func: str, status: int, action: Callable[[], Any], *, skip: int = 0,
                 expect: int | None = None) -> pyaclnn.AclError:
    """Arm one failure of ``func`` after ``skip`` good calls, run ``action``, check the error.
    An aclCreate* reports failure by returning NULL, which pyaclnn raises as 561103."""
    if expect is None:
        expect = NULL_RETURNED if func.startswith("aclCreate") else status
    emu.fail(func, status, skip, 1)
    try:
        with pytest.raises(pyaclnn.AclError) as info:
            action()
    finally:
        emu.reset_faults()
    err = info.value
    assert type(err) is class_for_status(expect), (type(err), err)
    assert err.status == expect and err.api == func, str(err)
    assert err.cann_message and func in err.cann_message and "injected failure" in err.cann_message, \
        err.cann_message
    assert func in str(err)  # the message names the C function
    return err


def host_args(op: str) -> tuple:
    """Valid C-shaped host arguments of ``op`` (outputs zero-filled), small and deterministic."""
    rng = np.random.default_rng(7)
    r = lambda *s: rng.standard_normal(s).astype(F32)  # noqa: E731
    if op == "MseLossBackward":
        return r(2, 3), r(2, 3), r(2, 3), 1, np.zeros((2, 3), F32)
    if op == "GroupNormBackward":
        return (r(2, 4, 3), r(2, 4, 3), r(2, 2), np.abs(r(2, 2)) + 0.5, r(4), 2, 4, 3, 2, (True, True, True),
                np.zeros((2, 4, 3), F32), np.zeros(4, F32), np.zeros(4, F32))
    if op == "CrossEntropyLossGrad":
        lp = np.log(np.full((3, 4), 0.25, F32))
        return (np.ones(1, F32), lp, np.array([0, 3, 1], np.int64), np.abs(r(4)), None, None, "mean", -100,
                0.0, 0.0, np.zeros((3, 4), F32))
    if op == "PreluBackward":
        return r(2, 3, 4), r(2, 3, 4), r(3), np.zeros((2, 3, 4), F32), np.zeros(3, F32)
    raise KeyError(op)


OUTPUTS = {"MseLossBackward": (4,), "GroupNormBackward": (10, 11, 12), "CrossEntropyLossGrad": (10,),
           "PreluBackward": (3, 4)}


def device_args(op: str) -> tuple[tuple, list[pyaclnn.Tensor]]:
    """host_args uploaded: (C-shaped args with Tensors, the output tensors)."""
    args = tuple(pyaclnn.Tensor.from_numpy(a) if isinstance(a, np.ndarray) else a for a in host_args(op))
    return args, [args[i] for i in OUTPUTS[op]]


def functional(op: str, args: tuple) -> list[np.ndarray]:
    """Run ``op`` through pyaclnn's NumPy-in/NumPy-out function of the active backend."""
    if op == "MseLossBackward":
        g, x, y, red, _ = args
        return [pyaclnn.mse_loss_backward(g, x, y, red)]
    if op == "GroupNormBackward":
        dy, x, m, rs, gamma, n, c, hxw, g, mask = args[:10]
        return list(pyaclnn.group_norm_backward(dy, x, m, rs, gamma, n, c, hxw, g, mask))
    if op == "CrossEntropyLossGrad":
        gl, lp, t, w, gz, lse, red, ii, ls, scale, _ = args
        return [pyaclnn.cross_entropy_loss_grad(gl, lp, t, w, gz, lse, red, ii, ls, scale)]
    g, x, w = args[:3]
    return list(pyaclnn.prelu_backward(g, x, w))


def smoke() -> None:
    """The next call works: two-phase on a new device/stream, and the functional API."""
    g = np.arange(6, dtype=F32).reshape(2, 3)
    x, y = g * 2, np.ones((2, 3), F32)
    expect = (x - y) * g * (2 / x.size)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        tg, tx, ty = (pyaclnn.Tensor.from_numpy(v) for v in (g, x, y))
        out = pyaclnn.Tensor.zeros((2, 3))
        pyaclnn.MseLossBackward(tg, tx, ty, "mean", out).run(stream)
        stream.synchronize()
        np.testing.assert_allclose(out.numpy(), expect, rtol=1e-6)
    np.testing.assert_allclose(pyaclnn.mse_loss_backward(g, x, y), expect, rtol=1e-6)


# -- the cases -------------------------------------------------------------------------------------
@dataclass
class Case:
    func: str
    status: int
    scenario: Callable[[Any, "Case"], None]

    @property
    def id(self) -> str:
        return f"{self.func}-{self.status}-{self.scenario.__name__.removeprefix('s_')}"


def s_open_device(emu, c: Case) -> None:
    expect_fault(emu, c.func, c.status, lambda: pyaclnn.Device(0))


def s_first_use_in_thread(emu, c: Case) -> None:
    # A Device opened here is first used in another thread: making it current there
    # (aclrtSetCurrentContext with the device's default context) fails.
    x = np.ones(4, F32)
    with pyaclnn.Device(0) as dev:
        expect_fault(emu, c.func, c.status, lambda: in_thread(lambda: pyaclnn.Tensor.from_numpy(x, dev)))
        t = in_thread(lambda: pyaclnn.Tensor.from_numpy(x, dev))  # a new thread retries and works
        np.testing.assert_array_equal(t.numpy(), x)


def s_create_stream(emu, c: Case) -> None:
    with pyaclnn.Device(0) as dev:
        expect_fault(emu, c.func, c.status, dev.create_stream)
        dev.create_stream().synchronize()


def s_create_event(emu, c: Case) -> None:
    with pyaclnn.Device(0) as dev:
        expect_fault(emu, c.func, c.status, dev.create_event)
        dev.create_event().close()


def s_record_event(emu, c: Case) -> None:
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream, dev.create_event() as ev:
        expect_fault(emu, c.func, c.status, lambda: ev.record(stream))
        ev.record(stream)


def s_time_events(emu, c: Case) -> None:
    # Timing: record, synchronize the end event, elapsed time; the failing step can be retried.
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        with dev.create_event() as start, dev.create_event() as end:
            start.record(stream)
            end.record(stream)
            step = end.synchronize if c.func == "aclrtSynchronizeEvent" else (lambda: start.elapsed_ms(end))
            expect_fault(emu, c.func, c.status, step)
            end.synchronize()
            assert start.elapsed_ms(end) >= 0


def s_from_numpy(emu, c: Case) -> None:
    # Upload: aclrtMalloc, aclrtMemcpy, aclCreateTensor; whichever fails, the error is raised with
    # nothing left allocated -- checked while the exception (and its traceback) is still held,
    # so the release must not be left to garbage collection.
    x = np.arange(6, dtype=F32)
    with pyaclnn.Device(0):
        before = live(emu)
        expect_fault(emu, c.func, c.status, lambda: pyaclnn.Tensor.from_numpy(x))
        assert live(emu) == before
        np.testing.assert_array_equal(pyaclnn.Tensor.from_numpy(x).numpy(), x)


def s_from_numpy_strided(emu, c: Case) -> None:
    x = np.arange(24, dtype=F32).reshape(4, 6)[::2, 1::2]
    with pyaclnn.Device(0):
        before = live(emu)
        expect_fault(emu, c.func, c.status, lambda: pyaclnn.Tensor.from_numpy(x))
        assert live(emu) == before
        np.testing.assert_array_equal(pyaclnn.Tensor.from_numpy(x).numpy(), x)


def s_zeros(emu, c: Case) -> None:
    with pyaclnn.Device(0):
        before = live(emu)
        expect_fault(emu, c.func, c.status, lambda: pyaclnn.Tensor.zeros((3, 5)))
        assert live(emu) == before
        np.testing.assert_array_equal(pyaclnn.Tensor.zeros((3, 5)).numpy(), np.zeros((3, 5), F32))


def s_view(emu, c: Case) -> None:
    x = np.arange(12, dtype=F32).reshape(3, 4)
    with pyaclnn.Device(0):
        t = pyaclnn.Tensor.from_numpy(x)
        expect_fault(emu, c.func, c.status, lambda: t[::2, 1:])
        np.testing.assert_array_equal(t.numpy(), x)  # the viewed storage is untouched
        np.testing.assert_array_equal(t[::2, 1:].numpy(), x[::2, 1:])


def s_download(emu, c: Case) -> None:
    x = np.arange(6, dtype=F32)
    with pyaclnn.Device(0):
        t = pyaclnn.Tensor.from_numpy(x)
        expect_fault(emu, c.func, c.status, t.numpy)
        np.testing.assert_array_equal(t.numpy(), x)


def s_functional_upload(emu, c: Case) -> None:
    # The third of the functional call's uploads fails: the two already made are released (at
    # once: checked while the exception is still held).
    args, before = host_args("MseLossBackward"), live(emu)
    err = expect_fault(emu, c.func, c.status, lambda: functional("MseLossBackward", args), skip=2)
    assert live(emu) == before, err


def s_functional_download(emu, c: Case) -> None:
    # Uploads of g, x, y and out pass; the op runs; the download of the result fails.
    args, before = host_args("MseLossBackward"), live(emu)
    err = expect_fault(emu, c.func, c.status, lambda: functional("MseLossBackward", args), skip=4)
    assert live(emu) == before, err


def s_functional_sync(emu, c: Case) -> None:
    # The synchronize fails: the launch may still be queued, so its memory is freed only once
    # the stream has passed it (stream-ordered lifetimes): at the next synchronize.
    args, before = host_args("MseLossBackward"), live(emu)
    err = expect_fault(emu, c.func, c.status, lambda: functional("MseLossBackward", args))
    from pyaclnn._objects.device import default_device
    from pyaclnn._objects.stream import default_stream
    default_stream(default_device()).synchronize()
    assert live(emu) == before, err


def s_workspace(emu, c: Case) -> None:
    # GroupNormBackward needs a workspace; its allocation at run() fails. The executor was not
    # launched, so it is still planned: running it again works and gives the right result.
    args = host_args("GroupNormBackward")
    expect = functional("GroupNormBackward", args)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        dargs, outs = device_args("GroupNormBackward")
        ex = pyaclnn.Executor.from_args("GroupNormBackward", dargs)
        assert ex.workspace_size > 0
        expect_fault(emu, c.func, c.status, lambda: ex.run(stream))
        assert not ex.launched
        ex.run(stream)
        stream.synchronize()
        for got, want in zip(outs, expect):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def s_stream_sync(emu, c: Case) -> None:
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        dargs, outs = device_args("MseLossBackward")
        pyaclnn.Executor.from_args("MseLossBackward", dargs).run(stream)
        expect_fault(emu, c.func, c.status, stream.synchronize)
        stream.synchronize()
        np.testing.assert_allclose(outs[0].numpy(), functional("MseLossBackward", host_args("MseLossBackward"))[0],
                                   rtol=1e-6)


def s_stream_close_sync(emu, c: Case) -> None:
    # close() synchronizes first; when that fails the stream and its workspace are released anyway.
    with pyaclnn.Device(0) as dev:
        stream = dev.create_stream()
        stream.workspace(4096)
        before_ws = emu.live("device_alloc")
        expect_fault(emu, c.func, c.status, stream.close)
        assert stream.closed and emu.live("device_alloc") == before_ws - 1


def s_free_tensor(emu, c: Case) -> None:
    # Closing a tensor: its descriptor is destroyed; aclrtFree of its memory is refused.
    with pyaclnn.Device(0):
        t = pyaclnn.Tensor.from_numpy(np.ones(8, F32))
        addr, before = t.data_ptr, live(emu)
        expect_fault(emu, c.func, c.status, t.close)
        assert t.closed and t.storage.closed
        after = live(emu)
        assert after["tensor"] == before["tensor"] - 1 and after["device_alloc"] == before["device_alloc"]
        acl.aclrtFree(addr)  # the one allocation the runtime kept: the test frees it


def s_free_workspace_on_stream_close(emu, c: Case) -> None:
    # aclrtFree of the workspace fails while a stream closes: the stream is destroyed anyway.
    with pyaclnn.Device(0) as dev:
        stream = dev.create_stream()
        addr = stream.workspace(4096)
        before = live(emu)
        expect_fault(emu, c.func, c.status, stream.close)
        after = live(emu)
        assert stream.closed and after["stream"] == before["stream"] - 1
        assert after["device_alloc"] == before["device_alloc"]
        acl.aclrtFree(addr)


def s_destroy_stream_on_device_close(emu, c: Case) -> None:
    # Closing a device closes its children; one of them failing stops neither the others nor
    # the device reset, and the error is raised.
    dev = pyaclnn.Device(0)
    stream = dev.create_stream()
    raw = stream.raw  # noqa: SLF001 - to destroy the stream the runtime refused to destroy
    event = dev.create_event()
    t = pyaclnn.Tensor.from_numpy(np.ones(8, F32), dev)
    ex = pyaclnn.MseLossBackward(t, t, t, "sum", pyaclnn.Tensor.zeros(8, device=dev))
    before = live(emu)
    expect_fault(emu, c.func, c.status, dev.close)
    assert all(o.closed for o in (dev, stream, event, t, ex))
    after = live(emu)
    assert after["stream"] == before["stream"]  # refused
    assert (after["device_set"], after["event"], after["executor"], after["tensor"]) == \
        (before["device_set"] - 1, before["event"] - 1, before["executor"] - 1, before["tensor"] - 2)
    acl.aclrtDestroyStream(raw)


def s_destroy_event(emu, c: Case) -> None:
    with pyaclnn.Device(0) as dev:
        ev = dev.create_event()
        raw = ev.raw  # noqa: SLF001
        expect_fault(emu, c.func, c.status, ev.close)
        assert ev.closed
        acl.aclrtDestroyEvent(raw)


def s_reset_device(emu, c: Case) -> None:
    dev = pyaclnn.Device(0)
    stream, t = dev.create_stream(), pyaclnn.Tensor.from_numpy(np.ones(4, F32), dev)
    before = live(emu)
    expect_fault(emu, c.func, c.status, dev.close)
    after = live(emu)
    assert stream.closed and t.closed and dev.closed
    assert after["stream"] == before["stream"] - 1 and after["tensor"] == before["tensor"] - 1
    assert after["device_set"] == before["device_set"]
    acl.aclrtResetDevice(0)  # the reference the runtime kept


def s_destroy_tensor(emu, c: Case) -> None:
    with pyaclnn.Device(0):
        t = pyaclnn.Tensor.from_numpy(np.ones(8, F32))
        raw, before = t.raw, live(emu)  # noqa: SLF001
        expect_fault(emu, c.func, c.status, t.close)
        after = live(emu)
        assert after["device_alloc"] == before["device_alloc"] - 1  # the memory is freed anyway
        assert after["tensor"] == before["tensor"]
        acl.aclDestroyTensor(raw)


def s_destroy_private_descriptor(emu, c: Case) -> None:
    # A repeatable executor owns one private descriptor per tensor; one refused destroy does not
    # stop the others, nor the executor's own destroy.
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        dargs, _ = device_args("MseLossBackward")
        ex = pyaclnn.Executor.from_args("MseLossBackward", dargs, repeatable=True)
        ex.run(stream)
        descriptors = [h for kind, h in ex.planned.owned if kind == "tensor"]  # noqa: SLF001
        before = live(emu)
        expect_fault(emu, c.func, c.status, ex.close)
        after = live(emu)
        assert ex.closed and after["executor"] == before["executor"] - 1
        assert after["tensor"] == before["tensor"] - (len(descriptors) - 1)
        # pyaclnn releases the handles it owns last-created first: the refused one is the last.
        acl.aclDestroyTensor(descriptors[-1])


def s_phase1(emu, c: Case) -> None:
    op = c.func.removeprefix("aclnn").removesuffix("GetWorkspaceSize")
    with pyaclnn.Device(0):
        dargs, _ = device_args(op)
        for repeatable in (False, True):
            before = live(emu)
            err = expect_fault(emu, c.func, c.status, lambda r=repeatable: pyaclnn.Executor.from_args(op, dargs, r))
            assert live(emu) == before, err  # bool arrays and private descriptors released
    before = live(emu)
    err = expect_fault(emu, c.func, c.status, lambda: functional(op, host_args(op)))
    assert live(emu) == before, err
    functional(op, host_args(op))


def s_phase2(emu, c: Case) -> None:
    # A failing phase 2 consumes a single-use executor inside CANN: pyaclnn must never touch it
    # again (no aclDestroyAclOpExecutor, no second launch), and must release its own handles.
    op = c.func.removeprefix("aclnn")
    expect = functional(op, host_args(op))
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        dargs, _ = device_args(op)
        ex = pyaclnn.Executor.from_args(op, dargs)
        destroys = emu.calls("aclDestroyAclOpExecutor")
        expect_fault(emu, c.func, c.status, lambda: ex.run(stream))
        assert ex.launched
        with pytest.raises(pyaclnn.ExecutorConsumedError):
            ex.run(stream)
        ex.close()
        assert emu.calls("aclDestroyAclOpExecutor") == destroys
        # A repeatable executor survives a failing launch: run it again, then close destroys it.
        dargs, outs = device_args(op)
        rex = pyaclnn.Executor.from_args(op, dargs, repeatable=True)
        expect_fault(emu, c.func, c.status, lambda: rex.run(stream))
        rex.run(stream)
        stream.synchronize()
        for got, want in zip(outs, expect):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        rex.close()
        assert emu.calls("aclDestroyAclOpExecutor") == destroys + 1
    expect_fault(emu, c.func, c.status, lambda: functional(op, host_args(op)))


def s_release_fails_too(emu, c: Case) -> None:
    # Phase 1 or phase 2 fails, then releasing the executor's bool array fails too: the error
    # the user sees is the operator's, not the clean-up's.
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        dargs, _ = device_args("GroupNormBackward")
        if c.func.endswith("GetWorkspaceSize"):
            action = lambda: pyaclnn.Executor.from_args("GroupNormBackward", dargs)  # noqa: E731
            masks = []
            real = dev.runtime.create_bool_array  # noqa: SLF001 - to learn the handle it makes
            dev.runtime.create_bool_array = lambda v: masks.append(real(v)) or masks[-1]
            try:
                emu.fail("aclDestroyBoolArray", 161002, 0, 1)
                expect_fault(emu, c.func, c.status, action)
            finally:
                del dev.runtime.create_bool_array
        else:
            ex = pyaclnn.Executor.from_args("GroupNormBackward", dargs)
            masks = [h for kind, h in ex.planned.owned if kind == "bool_array"]  # noqa: SLF001
            emu.fail("aclDestroyBoolArray", 161002, 0, 1)
            expect_fault(emu, c.func, c.status, lambda: ex.run(stream))
        assert emu.calls("aclDestroyBoolArray") == 1
        acl.aclGetRecentErrMsg()
        acl.aclDestroyBoolArray(masks[0])  # the one the runtime refused to destroy


def s_set_repeatable(emu, c: Case) -> None:
    with pyaclnn.Device(0):
        keep = []
        for op in OPS:
            dargs, _ = device_args(op)
            keep.append(dargs)
            before, destroys = live(emu), emu.calls("aclDestroyAclOpExecutor")
            expect_fault(emu, c.func, c.status,
                         lambda op=op, dargs=dargs: pyaclnn.Executor.from_args(op, dargs, repeatable=True))
            assert live(emu) == before
            assert emu.calls("aclDestroyAclOpExecutor") == destroys + 1  # the planned one is freed


def s_destroy_executor(emu, c: Case) -> None:
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        dargs, _ = device_args("MseLossBackward")
        for repeatable in (True, False):  # a repeatable one, and a planned one that never ran
            ex = pyaclnn.Executor.from_args("MseLossBackward", dargs, repeatable)
            if repeatable:
                ex.run(stream)
            raw = ex.planned.handle  # noqa: SLF001 - to free the executor the runtime kept
            before = live(emu)
            expect_fault(emu, c.func, c.status, ex.close)
            after = live(emu)
            assert ex.closed and after["executor"] == before["executor"]
            assert after["tensor"] == before["tensor"] - (3 + 1 if repeatable else 0)
            acl.aclDestroyAclOpExecutor(raw)


def s_set_tensor_addr(emu, c: Case) -> None:
    output = c.func == "aclSetOutputTensorAddr"
    g, x, y, red, _ = host_args("MseLossBackward")
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        tg, tx, ty = (pyaclnn.Tensor.from_numpy(v) for v in (g, x, y))
        out = pyaclnn.Tensor.zeros(g.shape)
        ex = pyaclnn.MseLossBackward(tg, tx, ty, "sum", out, repeatable=True)
        new = pyaclnn.Tensor.zeros(g.shape) if output else pyaclnn.Tensor.from_numpy(x * 3)
        setter = (lambda: ex.set_output(0, new)) if output else (lambda: ex.set_input(1, new))
        expect_fault(emu, c.func, c.status, setter)
        ex.run(stream)  # still bound to the old tensors
        stream.synchronize()
        np.testing.assert_allclose(out.numpy(), 2 * (x - y) * g, rtol=1e-6)
        setter()
        ex.run(stream)
        stream.synchronize()
        target = new if output else out
        want = 2 * (x - y) * g if output else 2 * (3 * x - y) * g
        np.testing.assert_allclose(target.numpy(), want, rtol=1e-6)
        ex.close()


def s_create_bool_array(emu, c: Case) -> None:
    with pyaclnn.Device(0):
        dargs, _ = device_args("GroupNormBackward")
        before = live(emu)
        expect_fault(emu, c.func, c.status,
                     lambda: pyaclnn.Executor.from_args("GroupNormBackward", dargs))
        assert live(emu) == before
    expect_fault(emu, c.func, c.status, lambda: functional("GroupNormBackward", host_args("GroupNormBackward")))


def s_private_descriptor(emu, c: Case) -> None:
    # The third private descriptor of a repeatable executor cannot be made: phase 1 is never
    # called and the two made are destroyed.
    with pyaclnn.Device(0):
        dargs, _ = device_args("PreluBackward")
        before, planned = live(emu), emu.calls("aclnnPreluBackwardGetWorkspaceSize")
        expect_fault(emu, c.func, c.status,
                     lambda: pyaclnn.Executor.from_args("PreluBackward", dargs, repeatable=True),
                     skip=2)
        assert live(emu) == before and emu.calls("aclnnPreluBackwardGetWorkspaceSize") == planned


def s_destroy_bool_array(emu, c: Case) -> None:
    # Phase 2 ran (outputs are written); releasing the executor's mask afterwards fails.
    args = host_args("GroupNormBackward")
    expect = functional("GroupNormBackward", args)
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        dargs, outs = device_args("GroupNormBackward")
        ex = pyaclnn.Executor.from_args("GroupNormBackward", dargs)
        mask = next(h for kind, h in ex.planned.owned if kind == "bool_array")  # noqa: SLF001
        before = live(emu)
        expect_fault(emu, c.func, c.status, lambda: ex.run(stream))
        assert live(emu)["bool_array"] == before["bool_array"]  # refused: still live
        stream.synchronize()
        for got, want in zip(outs, expect):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        acl.aclDestroyBoolArray(mask)


CASES = [
    # runtime: devices, streams, events
    Case("aclrtSetDevice", 107001, s_open_device),
    Case("aclrtSetCurrentContext", 507033, s_first_use_in_thread),
    Case("aclrtCreateStream", 207008, s_create_stream),
    Case("aclrtCreateEvent", 207007, s_create_event),
    Case("aclrtRecordEvent", 507000, s_record_event),
    Case("aclrtSynchronizeEvent", 507006, s_time_events),
    Case("aclrtEventElapsedTime", 107006, s_time_events),
    Case("aclrtSynchronizeStream", 107020, s_stream_sync),
    Case("aclrtSynchronizeStream", 507000, s_stream_close_sync),
    Case("aclrtSynchronizeStream", 507015, s_functional_sync),
    Case("aclrtDestroyStream", 507000, s_destroy_stream_on_device_close),
    Case("aclrtDestroyEvent", 507000, s_destroy_event),
    Case("aclrtResetDevice", 507000, s_reset_device),
    # runtime: memory
    Case("aclrtMalloc", 207001, s_from_numpy),
    Case("aclrtMalloc", 207001, s_from_numpy_strided),
    Case("aclrtMalloc", 207001, s_zeros),
    Case("aclrtMalloc", 207001, s_workspace),
    Case("aclrtMalloc", 207001, s_functional_upload),
    Case("aclrtMemcpy", 507013, s_from_numpy),
    Case("aclrtMemcpy", 507013, s_from_numpy_strided),
    Case("aclrtMemcpy", 507013, s_download),
    Case("aclrtMemcpy", 507013, s_functional_upload),
    Case("aclrtMemcpy", 507013, s_functional_download),
    Case("aclrtMemset", 507013, s_zeros),
    Case("aclrtFree", 207002, s_free_tensor),
    Case("aclrtFree", 207002, s_free_workspace_on_stream_close),
    # nnopbase: descriptors, arrays, executors
    Case("aclCreateTensor", 0, s_from_numpy),
    Case("aclCreateTensor", 0, s_from_numpy_strided),
    Case("aclCreateTensor", 0, s_view),
    Case("aclCreateTensor", 0, s_private_descriptor),
    Case("aclCreateTensor", 0, s_functional_upload),
    Case("aclCreateBoolArray", 0, s_create_bool_array),
    Case("aclDestroyTensor", 161002, s_destroy_tensor),
    Case("aclDestroyTensor", 161002, s_destroy_private_descriptor),
    Case("aclDestroyBoolArray", 161002, s_destroy_bool_array),
    Case("aclSetAclOpExecutorRepeatable", 561103, s_set_repeatable),  # 561000 re-plans: test_acl_sharing
    Case("aclDestroyAclOpExecutor", 561103, s_destroy_executor),
    Case("aclSetInputTensorAddr", 161002, s_set_tensor_addr),
    Case("aclSetOutputTensorAddr", 161002, s_set_tensor_addr),
    # the operators: phase 1 and phase 2 of each
    *(Case(f"aclnn{op}GetWorkspaceSize", status, s_phase1)
      for op in OPS for status in (161002, 561002)),
    *(Case(f"aclnn{op}", status, s_phase2) for op in OPS for status in (507015, 361001)),
    Case("aclnnGroupNormBackwardGetWorkspaceSize", 561002, s_release_fails_too),
    Case("aclnnGroupNormBackward", 507015, s_release_fails_too),
]

# The NULL-returning constructors get status 0 from emu_fail (its text then says 500001);
# pyaclnn reports them as 561103.
for _c in CASES:
    if _c.func.startswith("aclCreate"):
        assert _c.status == 0


def test_every_native_function_of_the_object_model_is_covered():
    """The table covers every runtime/nnopbase call Device/Stream/Event/Tensor/executors make."""
    covered = {c.func for c in CASES}
    used = {"aclrtSetDevice", "aclrtResetDevice", "aclrtSetCurrentContext", "aclrtCreateStream", "aclrtDestroyStream",
            "aclrtSynchronizeStream", "aclrtCreateEvent", "aclrtRecordEvent", "aclrtDestroyEvent",
            "aclrtSynchronizeEvent", "aclrtEventElapsedTime",
            "aclrtMalloc", "aclrtFree", "aclrtMemcpy", "aclrtMemset", "aclCreateTensor", "aclDestroyTensor",
            "aclCreateBoolArray", "aclDestroyBoolArray", "aclSetAclOpExecutorRepeatable",
            "aclDestroyAclOpExecutor", "aclSetInputTensorAddr", "aclSetOutputTensorAddr",
            *(f"aclnn{op}GetWorkspaceSize" for op in OPS), *(f"aclnn{op}" for op in OPS)}
    assert used <= covered, used - covered


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fault(emulator, case: Case):
    emu = emulator
    for op in OPS:  # the default device, this thread's default stream and its workspace now exist
        functional(op, host_args(op))
    acl.aclGetRecentErrMsg()
    base = live(emu)
    emu.reset_counters()
    case.scenario(emu, case)
    emu.reset_faults()
    assert live(emu) == base
    assert emu.misuse() == 0, emu.last_misuse()
    smoke()
    assert emu.misuse() == 0, emu.last_misuse()
    assert acl.aclGetRecentErrMsg() is None  # no stale error text left behind for the next failure
    assert emu.calls("aclFinalize") == 0


def test_missing_error_text_still_gives_the_right_error(emulator):
    """aclGetRecentErrMsg returning NULL (no text): still the right class, no crash."""
    emu = emulator
    with pyaclnn.Device(0):
        emu.fail("aclGetRecentErrMsg", 0, 0, 1)
        emu.fail("aclrtMalloc", 207001, 0, 1)
        with pytest.raises(class_for_status(207001)) as info:
            pyaclnn.Tensor.from_numpy(np.ones(4, F32))
        emu.reset_faults()
        assert info.value.cann_message is None and info.value.api == "aclrtMalloc"
        assert "207001" in str(info.value)
        acl.aclGetRecentErrMsg()  # the text the NULL return left behind
    smoke()
    assert emu.misuse() == 0


@pytest.mark.parametrize("func, status", [("aclInit", 100003), ("aclrtGetDeviceCount", 507033)])
def test_backend_start_failure_is_reported_and_recovers(emulator, emulator_home, use_backend, func, status):
    """A failing aclInit / aclrtGetDeviceCount makes PYACLNN_BACKEND=acl unavailable, with the
    CANN error chained; after the fault the backend starts normally."""
    emu = emulator
    use_backend("numpy")  # shuts the acl backend down (gives back pyaclnn's aclInit)
    if emu.live("init"):  # a session other tests opened with a bare aclInit, as a host would
        from pyaclnn._acl._lib import loaded
        assert loaded().rt.aclFinalize() == 0
    assert emu.live("init") == 0
    emu.fail(func, status, 0, 1)
    with pytest.raises(pyaclnn.BackendUnavailableError, match=func):
        use_backend("acl", home=emulator_home)
    emu.reset_faults()
    assert emu.live("init") == 0  # a half-started backend finalized again
    use_backend("acl", home=emulator_home)
    smoke()
    assert emu.misuse() == 0
