"""pyaclnn.acl's graph-capture calls (aclmdlRI*) on both backends (acl through the emulator).

A port of the runtime's single-stream capture sample (hicann/runtime
docs/zh/dev_guide/04-01_single_stream_capture.md) with an accumulating operator: phase 1 before
aclmdlRICaptureBegin, phase 2 captured, then replays. The oracle is NumPy on the values put in.
"""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl


@pytest.fixture
def stream(backend):
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    s = acl.aclrtCreateStream()
    yield s
    if acl.aclmdlRICaptureGetInfo(s)[0] != acl.ACL_MODEL_RI_CAPTURE_STATUS_NONE:
        acl.aclmdlRIDestroy(acl.aclmdlRICaptureEnd(s))
    acl.aclrtDestroyStream(s)
    acl.aclrtResetDevice(0)


def _device(values: np.ndarray) -> tuple[int, object]:
    ptr = acl.aclrtMalloc(values.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemcpy(ptr, values.nbytes, values, values.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    shape = list(values.shape)
    return ptr, acl.aclCreateTensor(shape, len(shape), acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, shape,
                                    len(shape), ptr)


def _read(ptr: int, n: int) -> np.ndarray:
    out = np.empty(n, np.float32)
    acl.aclrtMemcpy(out, out.nbytes, ptr, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return out


def test_capture_records_phase_2_and_each_replay_runs_it_again(stream):
    x0, y = np.arange(4, dtype=np.float32), np.full(4, 0.5, np.float32)
    (px, tx), (py, ty) = _device(x0), _device(y)
    alpha = acl.aclCreateScalar(2.0, acl.ACL_FLOAT)
    ws, executor = acl.aclnnInplaceAddGetWorkspaceSize(tx, ty, alpha)   # phase 1 before the capture
    workspace = acl.aclrtMalloc(ws, acl.ACL_MEM_MALLOC_HUGE_FIRST) if ws else None
    assert acl.aclmdlRICaptureGetInfo(stream) == (acl.ACL_MODEL_RI_CAPTURE_STATUS_NONE, None)
    acl.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    status, capturing = acl.aclmdlRICaptureGetInfo(stream)
    assert status == acl.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE and capturing is not None
    acl.aclnnInplaceAdd(workspace, ws, executor, stream)
    model = acl.aclmdlRICaptureEnd(stream)
    acl.aclrtSynchronizeStream(stream)
    np.testing.assert_array_equal(_read(px, 4), x0)                      # captured, not run
    for n in (1, 2, 3):
        acl.aclmdlRIExecuteAsync(model, stream)
        acl.aclrtSynchronizeStream(stream)
        np.testing.assert_array_equal(_read(px, 4), x0 + n * 2.0 * y)    # one update per replay
    y2 = np.full(4, -1.0, np.float32)
    acl.aclrtMemcpy(py, 16, y2, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)       # a new input between replays
    acl.aclmdlRIExecuteAsync(model, stream)
    acl.aclrtSynchronizeStream(stream)
    np.testing.assert_array_equal(_read(px, 4), x0 + 3 * 2.0 * y + 2.0 * y2)
    acl.aclmdlRIDestroy(model)
    for t in (tx, ty):
        acl.aclDestroyTensor(t)
    acl.aclDestroyScalar(alpha)
    for p in (px, py, workspace):
        if p:
            acl.aclrtFree(p)


def test_capture_calls_refuse_as_cann(stream):
    def status(call, *args):
        with pytest.raises(pyaclnn.AclError) as info:
            call(*args)
        return info.value.status

    assert status(acl.aclmdlRICaptureBegin, None, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == acl.ACL_ERROR_INVALID_PARAM
    assert status(acl.aclmdlRICaptureBegin, stream, 3) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert status(acl.aclmdlRICaptureEnd, stream) == acl.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    assert status(acl.aclmdlRICaptureThreadExchangeMode, 3) == acl.ACL_ERROR_RT_PARAM_INVALID
    acl.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    assert status(acl.aclmdlRICaptureBegin, stream, 0) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert status(acl.aclrtSynchronizeStream, stream) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert status(acl.aclrtSynchronizeDevice) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert status(acl.aclrtDestroyStream, stream) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    model = acl.aclmdlRICaptureEnd(stream)
    assert acl.aclmdlRICaptureThreadExchangeMode(acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == 0
    assert acl.aclmdlRICaptureThreadExchangeMode(acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 2
    acl.aclmdlRIExecuteAsync(model, stream)      # an empty model replays nothing
    acl.aclrtSynchronizeStream(stream)
    acl.aclmdlRIDestroy(model)
    assert status(acl.aclmdlRIDestroy, None) == acl.ACL_ERROR_INVALID_PARAM
    event = acl.aclrtCreateEventExWithFlag(acl.ACL_EVENT_SYNC)
    acl.aclrtDestroyEvent(event)
