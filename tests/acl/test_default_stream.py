"""The NULL stream is the default stream of the current context, on both backends.

Real CANN (hicann/runtime): the runtime's handle check lets nullptr through
(src/runtime/core/src/common/runtime_handle_guard.cc GetValidatedObjectImpl), then
ApiImpl::MemcpyAsync / MemsetAsync / EventRecord / StreamWaitEvent / LaunchKernel and
CheckStreamSynchronizeParam (src/runtime/api/impl/api_impl.cc) take ``curCtx->DefaultStream_()``
after the context check (107002 without one); opbase's phase 2 (CommonOpExecutorRun,
src/nnopbase/composite_op/aclnn_engine/op_executor.cpp) passes the stream on unchecked. Only
aclrtDestroyStream refuses NULL (aclrtDestroyStreamImpl: ACL_REQUIRES_NOT_NULL, 100000).
The NumPy backend refused NULL with 107000 everywhere.

Oracle: the bytes copied / set, and MseLossBackward's "none" reduction 2 * (x - y) * g.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from pyaclnn import acl, errors
from test_invalid_addresses import NONE, F32, Session, _mse_inputs, _outside, s  # noqa: F401 - fixture

NULLS = [None, 0]


@pytest.mark.parametrize("null", NULLS)
def test_memcpy_and_memset_async_on_the_default_stream(s: Session, null: object) -> None:
    data = np.arange(8, dtype=F32)
    dev = s.malloc(data.nbytes)
    acl.aclrtMemcpyAsync(dev, data.nbytes, data, data.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE, null)
    acl.aclrtMemsetAsync(dev, data.nbytes, 0x3F, 4, null)  # the first float's bytes
    out = np.zeros_like(data)
    acl.aclrtMemcpyAsync(out, out.nbytes, dev, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST, null)
    acl.aclrtSynchronizeStream(null)
    expected = data.copy()
    expected[:1] = np.frombuffer(b"\x3f" * 4, F32)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("null", NULLS)
def test_phase2_on_the_default_stream(s: Session, null: object) -> None:
    g, x, y, tg, tx, ty = _mse_inputs(s)
    out_addr = s.malloc(16)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, s.tensor(out_addr))
    acl.aclnnMseLossBackward(s.workspace(ws), ws, ex, null)
    acl.aclrtSynchronizeStream(null)
    np.testing.assert_array_equal(s.download(out_addr, (2, 2)), 2 * (x - y) * g)


@pytest.mark.parametrize("sync", ["aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout",
                                  "aclrtSynchronizeDevice"])
@pytest.mark.usefixtures("as_a_device")
def test_a_fault_on_the_default_stream_is_reported_by_its_synchronisation(s: Session, sync: str) -> None:
    g, x, y, tg, tx, ty = _mse_inputs(s)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, s.tensor(_outside(s, "freed")))
    acl.aclnnMseLossBackward(s.workspace(ws), ws, ex, None)
    call = {"aclrtSynchronizeStream": lambda: acl.aclrtSynchronizeStream(None),
            "aclrtSynchronizeStreamWithTimeout": lambda: acl.aclrtSynchronizeStreamWithTimeout(None, -1),
            "aclrtSynchronizeDevice": acl.aclrtSynchronizeDevice}[sync]
    with pytest.raises(errors.RtAicoreExceptionError) as info:
        call()
    assert info.value.status == 507015 and info.value.api == sync
    with pytest.raises(errors.RtAicoreExceptionError):
        call()  # a page fault is sticky: the device stays in failure mode until its last reset


def test_events_on_the_default_stream(s: Session) -> None:
    start, end = acl.aclrtCreateEvent(), acl.aclrtCreateEvent()
    try:
        acl.aclrtRecordEvent(start, None)
        acl.aclrtStreamWaitEvent(None, start)
        acl.aclrtRecordEvent(end, 0)
        acl.aclrtSynchronizeEvent(end)
        assert acl.aclrtEventElapsedTime(start, end) >= 0
    finally:
        acl.aclrtDestroyEvent(start)
        acl.aclrtDestroyEvent(end)


def test_the_default_stream_needs_a_context(s: Session) -> None:
    """A thread with no current context: 107002, as for a real stream (the context check comes
    before DefaultStream_())."""
    dev, host = s.malloc(16), np.zeros(4, F32)
    seen: dict[str, object] = {}

    def body() -> None:
        for name, call in (("memcpy", lambda: acl.aclrtMemcpyAsync(dev, 16, host, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE,
                                                                   None)),
                           ("sync", lambda: acl.aclrtSynchronizeStream(None))):
            try:
                call()
                seen[name] = 0
            except errors.AclError as e:
                seen[name] = e.status

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert seen == {"memcpy": 107002, "sync": 107002}


def test_destroying_the_null_stream_is_100000(s: Session) -> None:
    with pytest.raises(errors.AclError) as info:
        acl.aclrtDestroyStream(None)
    assert info.value.status == 100000 and info.value.api == "aclrtDestroyStream"


def _fault_on_the_default_stream() -> Session:
    """A launch on NULL whose output was freed: its fault waits for the next synchronisation.
    Close the session it returns once that has run (the NULL stream is asynchronous: its inputs
    must outlive the queued kernel)."""
    s = Session()
    _, _, _, tg, tx, ty = _mse_inputs(s)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, s.tensor(_outside(s, "freed")))
    acl.aclnnMseLossBackward(s.workspace(ws), ws, ex, None)
    return s


@pytest.mark.usefixtures("as_a_device")
def test_the_default_stream_and_its_fault_go_with_their_context(backend: str) -> None:
    """The default stream belongs to its context (hicann/runtime context.cc Context::Setup): the
    last aclrtResetDevice tears the default context down (runtime.cc PrimaryContextRelease ->
    ExecutePrimaryTearDown; ResetResourceFieldsAfterTearDown: defaultStream_ = nullptr), and
    aclrtDestroyContext tears down a created context's own one (Context::TearDown). A kernel's
    page fault puts the whole device in failure mode (task_manager.cc PrintErrorInfo ->
    ContextManage::SetGlobalFailureErr: every context of the device), which only the last reset
    ends: destroying the context that launched it does not."""
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    session = _fault_on_the_default_stream()
    with pytest.raises(errors.RtAicoreExceptionError):
        acl.aclrtSynchronizeDevice()
    session.close()
    acl.aclrtResetDevice(0)                 # the last reset: the default context and the fault die
    acl.aclrtSetDevice(0)
    acl.aclrtSynchronizeStream(None)        # a new default stream, a healthy device
    acl.aclrtSynchronizeDevice()
    default = acl.aclrtGetCurrentContext()
    created = acl.aclrtCreateContext(0)     # current from now on, with a default stream of its own
    session = _fault_on_the_default_stream()
    with pytest.raises(errors.RtAicoreExceptionError):
        acl.aclrtSynchronizeStream(None)    # its own context reports it
    session.close()
    acl.aclrtDestroyContext(created)
    acl.aclrtSetCurrentContext(default)
    for sync in (lambda: acl.aclrtSynchronizeStream(None), acl.aclrtSynchronizeDevice):
        with pytest.raises(errors.RtAicoreExceptionError):
            sync()                          # every context of the device, until the last reset
    acl.aclrtResetDevice(0)
    acl.aclrtSetDevice(0)
    acl.aclrtSynchronizeDevice()            # healthy again
    acl.aclrtResetDevice(0)
