"""The emulator's last divergences from real CANN (issue 19, point 5), driven through cffi.

Each behaviour follows the real sources, cited in tests/emulator/src where it is implemented:

- the op cache is per thread (hicann/opbase op_cache.cpp: ``thread_local OpExecCacheManager``);
- ``aclrtResetDevice`` beyond the sets is 507007 (hicann/runtime runtime.cc
  PrimaryContextRelease -> RT_ERROR_CONTEXT_DEL);
- a kernel's page fault puts the device in failure mode until its last reset (task_manager.cc
  PrintErrorInfo -> ContextManage::SetGlobalFailureErr; Context::CheckStatus / CheckTaskSend);
- ``aclGetRecentErrMsg``: a device error message replaces the thread's text, the device's fault
  event is appended at every read, the host text is prepended (acl.cpp aclGetRecentErrMsgImpl);
- the NULL stream is the context's default stream, asynchronous like any other (api_impl.cc
  MemcpyAsync / LaunchKernel -> curCtx->DefaultStream_());
- a generated operator's phase 2 refusing its workspace keeps the executor (opbase
  individual_op_api.cpp NnopbaseRunWithWorkspace);
- device memory is not host memory: a host access through a device address faults.

Device 1 (the emulator set to two devices) takes the page faults, in a thread of its own, so
device 0 of the module's helper is never in failure mode. Oracle: the statuses of the sources,
and MseLossBackward's "none" reduction 2 * (self - target) * grad. Its phase 2 gets (NULL, 0): its
workspace (512 bytes, MseLossGradV2's 0-byte request) is never touched, as on a device.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
import textwrap
import threading

import numpy as np
import pytest

from test_emulator import (ACL_ERROR_RT_AICORE_EXCEPTION, D2H, H2D, INNER, OK, RUNTIME_ERROR, TESTS, acl,  # noqa: F401
                           dev, mse_tensors, toolkits)
from test_emulator_streams import mse, raw_read
from helpers.threads import in_thread  # noqa: E402

ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007


def test_op_cache_is_per_thread(dev):
    """A layout launched in this thread makes the next identical phase 1 a cache wrapper (561000
    to aclSetAclOpExecutorRepeatable) here, and a plain executor in any other thread."""
    ffi, rt, nn = dev.ffi, dev.rt, dev.nn
    g, s, t, o, _ = mse_tensors(dev)
    assert dev.run("MseLossBackward", g, s, t, 2, o) == OK
    assert dev.emu.op_cache_entries() == 1
    _, _, wrap = dev.phase1("MseLossBackward", g, s, t, 2, o)
    assert nn.aclSetAclOpExecutorRepeatable(wrap) == INNER
    assert nn.aclDestroyAclOpExecutor(wrap) == OK
    dev.acl.errmsg()
    seen = {}

    def other() -> None:
        assert rt.aclrtSetDevice(0) == OK
        try:
            seen["entries"] = dev.emu.op_cache_entries()
            status, _, ex = dev.phase1("MseLossBackward", g, s, t, 2, o)
            seen["repeatable"] = (status, nn.aclSetAclOpExecutorRepeatable(ex))
            assert nn.aclDestroyAclOpExecutor(ex) == OK
        finally:
            assert rt.aclrtResetDevice(0) == OK

    in_thread(other)
    assert seen == {"entries": 0, "repeatable": (OK, OK)}
    assert ffi is not None and dev.emu.op_cache_entries() == 1


def test_resetting_a_device_more_often_than_set_is_507007(dev):
    ffi, rt, emu = dev.ffi, dev.rt, dev.emu
    emu.set_device_count(2)
    seen = {}

    def body() -> None:
        seen["never set"] = rt.aclrtResetDevice(1)
        assert rt.aclrtSetDevice(1) == OK and rt.aclrtResetDevice(1) == OK
        seen["once more"] = rt.aclrtResetDevice(1)
        m = rt.aclGetRecentErrMsg()
        seen["text"] = ffi.string(m).decode() if m != ffi.NULL else ""

    try:
        in_thread(body)
    finally:
        emu.set_device_count(None)
    assert seen["never set"] == seen["once more"] == ACL_ERROR_RT_CONTEXT_RELEASE_ERROR
    assert seen["text"].startswith("EE9999: aclrtResetDevice:") and "more often than set" in seen["text"]
    dev.expected_misuse = 2                       # the emulator counts each as the caller's bug


def _faulting_launch(dev, stream) -> None:
    """MseLossBackward whose output is a host pointer: the launch succeeds, the kernel faults."""
    host = np.zeros(4, np.float32)
    dev._host = host                              # outlives the queued kernel
    g, s, t, _, _ = mse_tensors(dev)
    out = dev.tensor(dev.ffi.from_buffer(host), (2, 2))
    status, ws, ex = dev.phase1("MseLossBackward", g, s, t, 0, out)
    assert status == OK and getattr(dev.op, "aclnnMseLossBackward")(dev.ffi.NULL, 0, ex, stream) == OK


def test_a_page_fault_is_sticky_until_the_device_is_reset(dev):
    ffi, rt, emu = dev.ffi, dev.rt, dev.emu
    emu.set_device_count(2)
    seen = {}

    def body() -> None:
        assert rt.aclrtSetDevice(1) == OK
        first = len(dev.ptrs)                     # what this thread allocates is on device 1
        streams = ffi.new("aclrtStream[2]")
        assert rt.aclrtCreateStream(streams) == OK and rt.aclrtCreateStream(streams + 1) == OK
        _faulting_launch(dev, streams[0])
        seen["first"] = rt.aclrtSynchronizeStream(streams[0])
        seen["again"] = rt.aclrtSynchronizeStream(streams[0])        # not just once
        seen["other stream"] = rt.aclrtSynchronizeStream(streams[1])  # the whole device
        seen["device"] = rt.aclrtSynchronizeDevice()
        seen["null"] = rt.aclrtSynchronizeStream(ffi.NULL)
        args, po, want = mse(dev)
        status, ws, ex = dev.phase1("MseLossBackward", *args)
        seen["phase 2"] = dev.op.aclnnMseLossBackward(ffi.NULL, 0, ex, streams[1])
        buf = np.ones(6, np.float32)
        seen["memcpy async"] = rt.aclrtMemcpyAsync(po, 24, ffi.from_buffer(buf), 24, H2D, streams[1])
        seen["memset async"] = rt.aclrtMemsetAsync(po, 24, 0, 24, ffi.NULL)
        ev = ffi.new("aclrtEvent *")
        assert rt.aclrtCreateEvent(ev) == OK
        seen["record"] = rt.aclrtRecordEvent(ev[0], streams[1])
        seen["memcpy"] = rt.aclrtMemcpy(po, 24, ffi.from_buffer(buf), 24, H2D)   # synchronous: runs
        assert rt.aclrtDestroyEvent(ev[0]) == OK
        for st in streams:
            assert rt.aclrtDestroyStream(st) == OK
        assert rt.aclrtResetDevice(1) == OK                          # the last reset: healthy again
        del dev.ptrs[first:]                      # its memory went with it (emu_rt_memory.c device_memory_release)
        assert rt.aclrtSetDevice(1) == OK
        assert rt.aclrtCreateStream(streams) == OK
        args, po, want = mse(dev)
        status, ws, ex = dev.phase1("MseLossBackward", *args)
        seen["after reset"] = (dev.op.aclnnMseLossBackward(ffi.NULL, 0, ex, streams[0]),
                               rt.aclrtSynchronizeStream(streams[0]))
        seen["result"] = np.allclose(raw_read(dev, po, 6), want, rtol=1e-6)
        assert rt.aclrtDestroyStream(streams[0]) == OK
        assert rt.aclrtResetDevice(1) == OK
        del dev.ptrs[first:]

    try:
        in_thread(body)
    finally:
        emu.set_device_count(None)
    fault = ACL_ERROR_RT_AICORE_EXCEPTION
    assert seen == {"first": fault, "again": fault, "other stream": fault, "device": fault, "null": fault,
                    "phase 2": RUNTIME_ERROR, "memcpy async": fault, "memset async": fault, "record": fault,
                    "memcpy": OK, "after reset": (OK, OK), "result": True}
    # device 0 was never in failure mode
    args, po, want = mse(dev, seed=1)
    assert dev.run("MseLossBackward", *args) == OK
    np.testing.assert_allclose(dev.download(po, 6), want, rtol=1e-6)
    dev.expected_misuse = 1                       # the host pointer posing as device memory


def test_recent_error_message_takes_the_device_text(dev):
    """After a page fault: the host text, then the device's error message, which replaced what
    the thread had read before, then the fault event; a later read appends the event again. A
    thread whose current device is another, or none, gets no device text."""
    ffi, rt, emu = dev.ffi, dev.rt, dev.emu
    emu.set_device_count(2)
    seen = {}

    def raw() -> str | None:
        m = rt.aclGetRecentErrMsg()
        return None if m == ffi.NULL else ffi.string(m).decode()

    def elsewhere() -> None:
        seen["no device"] = raw()
        assert rt.aclrtSetDevice(0) == OK
        seen["device 0"] = raw()
        assert rt.aclrtResetDevice(0) == OK

    def body() -> None:
        assert rt.aclrtSetDevice(1) == OK
        first = len(dev.ptrs)                     # what this thread allocates is on device 1
        p = ffi.new("void **")
        assert rt.aclrtMalloc(p, 0, 0) != OK
        seen["older"] = raw()
        stream = ffi.new("aclrtStream *")
        assert rt.aclrtCreateStream(stream) == OK
        _faulting_launch(dev, stream[0])
        assert rt.aclrtSynchronizeStream(stream[0]) == ACL_ERROR_RT_AICORE_EXCEPTION
        seen["fault"] = raw()
        seen["again"] = raw()
        in_thread(elsewhere)
        assert rt.aclrtDestroyStream(stream[0]) == OK
        assert rt.aclrtResetDevice(1) == OK
        del dev.ptrs[first:]                      # its memory went with it (emu_rt_memory.c device_memory_release)
        assert rt.aclrtSetDevice(1) == OK
        seen["after reset"] = raw()
        assert rt.aclrtResetDevice(1) == OK

    try:
        in_thread(body)
    finally:
        emu.set_device_count(None)
    assert seen["older"].startswith("EH0001: aclrtMalloc:")
    text = seen["fault"].split("\n")
    event = "Fault diagnosis analysis: [0x80cd8008]AI Core page fault;"
    assert text[0].startswith("EE9999: aclnnMseLossBackward: aicore exception")            # the kernel's
    assert text[1].startswith("EE9999: aclrtSynchronizeStream:")                            # the host text
    assert text[2].startswith("EZ9999: The error from device(chipId:1")                     # replaced "older"
    assert text[3:] == [event] and seen["older"] not in seen["fault"]
    assert seen["again"] == seen["fault"] + "\n" + event
    assert seen["no device"] is None and seen["device 0"] is None
    assert seen["after reset"] == seen["again"]                                             # no new text
    dev.expected_misuse = 1


def test_the_null_stream_is_asynchronous(dev):
    """Phase 2, copies, memsets and event records on NULL are queued on the current context's
    default stream; aclrtSynchronizeStream(NULL), an event synchronize or aclrtSynchronizeDevice
    runs them. (The emulator ran NULL-stream work at the call.)"""
    ffi, rt, emu = dev.ffi, dev.rt, dev.emu
    emu.set_stream_mode("deferred")
    try:
        args, po, want = mse(dev, seed=2)
        status, ws, ex = dev.phase1("MseLossBackward", *args)
        assert status == OK and dev.op.aclnnMseLossBackward(ffi.NULL, 0, ex, ffi.NULL) == OK
        assert emu.live("queued") == 1
        ev = ffi.new("aclrtEvent *")
        assert rt.aclrtCreateEvent(ev) == OK and rt.aclrtRecordEvent(ev[0], ffi.NULL) == OK
        copy = dev.malloc(24)
        assert rt.aclrtMemcpyAsync(copy, 24, po, 24, 3, ffi.NULL) == OK
        assert emu.live("queued") == 3
        assert rt.aclrtSynchronizeEvent(ev[0]) == OK                 # runs the kernel, up to the record
        assert emu.live("queued") == 1
        np.testing.assert_allclose(raw_read(dev, po, 6), want, rtol=1e-6)
        assert rt.aclrtSynchronizeStream(ffi.NULL) == OK
        np.testing.assert_allclose(raw_read(dev, copy, 6), want, rtol=1e-6)
        assert rt.aclrtMemsetAsync(copy, 24, 0, 24, ffi.NULL) == OK
        assert raw_read(dev, copy, 6).tolist() != [0] * 6          # a read racing the memset: misuse
        assert rt.aclrtSynchronizeDevice() == OK and raw_read(dev, copy, 6).tolist() == [0] * 6
        assert rt.aclrtDestroyEvent(ev[0]) == OK
        dev.expected_misuse = 1
    finally:
        emu.set_stream_mode(None)


def test_a_generated_phase2_refusing_its_workspace_keeps_the_executor(dev):
    """NnopbaseRunWithWorkspace (hicann/opbase individual_op_api.cpp) checks the workspace before
    it runs the executor: a NULL workspace with a size (161001) or a size below the executor's
    (161002) leaves the executor live, to be launched again. A composite op's phase 2 consumes
    its executor whatever the result (opbase CommonOpExecutorRun)."""
    ffi, emu = dev.ffi, dev.emu
    n, c = 2, 3
    lp, _ = dev.put(np.log(np.full((n, c), 1 / c, np.float32)))
    tgt, _ = dev.put(np.array([0, 2], np.int64))
    gl, _ = dev.put(np.array(1.0, np.float32))
    out, po = dev.empty((n, c))
    mean = ffi.new("char[]", b"mean")
    status, ws, ex = dev.phase1("CrossEntropyLossGrad", gl, lp, tgt, ffi.NULL, ffi.NULL, ffi.NULL, mean,
                                -100, 0.0, 0.0, out)
    assert (status, ws) == (OK, 160 + (16 << 20))                   # CeilAlign(40 cores * 4, 32) + 16 MiB
    wsp = dev.malloc(ws)
    run = dev.op.aclnnCrossEntropyLossGrad
    assert run(ffi.NULL, ws, ex, dev.acl.stream) == 161001
    assert emu.live("executor") == 1
    assert run(wsp, ws - 1, ex, dev.acl.stream) == 161002
    assert "still live" in dev.acl.errmsg() and emu.live("executor") == 1
    assert run(wsp, ws, ex, dev.acl.stream) == OK                     # the same executor runs
    assert emu.live("executor") == 0 and emu.misuse() == 0
    # softmax of uniform log-probabilities is 1/c; mean over n rows: (p - onehot) / n
    want = np.full((n, c), 1 / c, np.float32)
    want[[0, 1], [0, 2]] -= 1
    np.testing.assert_allclose(dev.download(po, n * c).reshape(n, c), want / n, rtol=1e-6)
    # a composite op's refused workspace consumes the executor (GroupNorm: Fill's ones, the 16 MiB
    # system workspace and the two outputs the mask leaves out, each Align()ed to 512 bytes)
    x, _ = dev.put(np.ones((1, 2, 2), np.float32))
    stats, _ = dev.put(np.zeros((1, 1), np.float32))
    gx, _ = dev.empty((1, 2, 2))
    mask = dev.bool_array([True, False, False])
    status, ws, ex = dev.phase1("GroupNormBackward", x, x, stats, stats, ffi.NULL, 1, 2, 2, 1, mask, gx,
                                ffi.NULL, ffi.NULL)
    assert (status, ws) == (OK, 512 + (16 << 20) + 512 + 2 * 512)
    assert dev.op.aclnnGroupNormBackward(ffi.NULL, ws, ex, dev.acl.stream) == 161001
    assert emu.live("executor") == 0
    assert dev.nn.aclDestroyBoolArray(mask) == OK


@pytest.mark.parametrize("access", ["read", "write"])
def test_device_memory_is_not_host_memory(toolkits, access):
    """A host load or store through an aclrtMalloc address faults (SIGSEGV), as device memory is
    out of the host's reach on a device; copies and kernels reach it (the emulator: through a
    private alias of the block, which the address handed out is a PROT_NONE mapping of)."""
    script = textwrap.dedent(f"""
        import sys
        import cffi, numpy as np
        sys.path[:0] = [{str(TESTS)!r}, {str(Path(__file__).resolve().parent)!r}]  # emulator.build; test_emulator
        from emulator.build import library_paths, plugin_paths
        from test_emulator import make_ffi
        from pathlib import Path
        home = Path({str(toolkits["8.x"])!r})
        ffi = make_ffi()
        for lib in plugin_paths(home):
            ffi.dlopen(str(lib), ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
        rt = [ffi.dlopen(str(lib), ffi.RTLD_NOW | ffi.RTLD_GLOBAL) for lib in library_paths(home)][0]
        assert rt.aclInit(ffi.NULL) == 0 and rt.aclrtSetDevice(0) == 0
        p = ffi.new("void **")
        assert rt.aclrtMalloc(p, 16, 0) == 0
        data, back = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
        assert rt.aclrtMemcpy(p[0], 16, ffi.from_buffer(data), 16, 1) == 0
        assert rt.aclrtMemcpy(ffi.from_buffer(back), 16, p[0], 16, 2) == 0
        print("copied", back.tolist(), flush=True)
        device = ffi.cast("float *", p[0])
        if {access!r} == "read":
            print(device[0])
        else:
            device[0] = 1.0
        print("no fault", flush=True)
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EMU_", "ASCEND_"))}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert "copied [0.0, 1.0, 2.0, 3.0]" in proc.stdout, proc.stdout + proc.stderr
    assert "no fault" not in proc.stdout and proc.returncode == -signal.SIGSEGV, proc.stdout + proc.stderr
