"""The hazard checker covers graphs on the reference backend: memory a graph uses freed before a
replay (a use after free naming the free and the captured launch), a replay racing another
stream, and a host read of a replay's output before a synchronize. On a device each is undefined
behaviour (hicann/runtime docs/zh/dev_guide/04-01_single_stream_capture.md, limit 7: the memory
a model's tasks use must stay valid until aclmdlRIDestroy); here it is a HazardError at the call.
"""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl
from helpers.sites import marked_line  # noqa: E402

H2D = acl.ACL_MEMCPY_HOST_TO_DEVICE


@pytest.fixture
def rt(use_backend):
    use_backend("numpy")
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    yield
    acl.aclrtResetDevice(0)


def _put(values):
    ptr = acl.aclrtMalloc(values.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemcpy(ptr, values.nbytes, values, values.nbytes, H2D)
    shape = list(values.shape)
    return ptr, acl.aclCreateTensor(shape, 1, acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, shape, 1, ptr)


def _captured_add(stream):
    """A model of x += y on ``stream`` (x, y device memory); returns (model, px, py, tensors)."""
    (px, tx), (py, ty) = _put(np.zeros(4, np.float32)), _put(np.ones(4, np.float32))
    alpha = acl.aclCreateScalar(1.0, acl.ACL_FLOAT)
    ws, ex = acl.aclnnInplaceAddGetWorkspaceSize(tx, ty, alpha)
    acl.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    acl.aclnnInplaceAdd(None, 0, ex, stream)  # <captured-launch>
    model = acl.aclmdlRICaptureEnd(stream)
    acl.aclDestroyScalar(alpha)
    return model, px, py, (tx, ty)


def test_a_freed_captured_input_is_a_use_after_free_at_replay(rt):
    s = acl.aclrtCreateStream()
    model, px, py, tensors = _captured_add(s)
    acl.aclrtFree(py)  # <free-it>
    with pytest.raises(pyaclnn.HazardError) as info:
        acl.aclmdlRIExecuteAsync(model, s)
    text = str(info.value)
    assert "use after free" in text and "aclrtFree" in text and "aclnnInplaceAdd" in text
    assert marked_line(__file__, "free-it") in text and marked_line(__file__, "captured-launch") in text
    acl.aclmdlRIDestroy(model)
    for t in tensors:
        acl.aclDestroyTensor(t)
    acl.aclrtFree(px)
    acl.aclrtDestroyStream(s)


def test_a_replay_racing_another_stream_is_a_hazard(rt):
    s, other = acl.aclrtCreateStream(), acl.aclrtCreateStream()
    model, px, py, tensors = _captured_add(s)
    acl.aclrtMemsetAsync(py, 16, 0, 16, other)  # queued on another stream, no event between
    with pytest.raises(pyaclnn.HazardError, match="no event between the two streams"):
        acl.aclmdlRIExecuteAsync(model, s)
    acl.aclrtSynchronizeStream(other)
    acl.aclmdlRIExecuteAsync(model, s)  # ordered now: fine
    acl.aclrtSynchronizeStream(s)
    acl.aclmdlRIDestroy(model)
    for t in tensors:
        acl.aclDestroyTensor(t)
    for p in (px, py):
        acl.aclrtFree(p)
    for st in (s, other):
        acl.aclrtDestroyStream(st)


def test_reading_a_replays_output_before_a_synchronize_is_a_hazard(rt):
    s = acl.aclrtCreateStream()
    model, px, py, tensors = _captured_add(s)
    acl.aclmdlRIExecuteAsync(model, s)
    out = np.empty(4, np.float32)
    with pytest.raises(pyaclnn.HazardError, match="aclmdlRIExecuteAsync"):
        acl.aclrtMemcpy(out, 16, px, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    acl.aclrtSynchronizeStream(s)
    acl.aclrtMemcpy(out, 16, px, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    np.testing.assert_array_equal(out, np.ones(4))
    acl.aclmdlRIDestroy(model)
    for t in tensors:
        acl.aclDestroyTensor(t)
    for p in (px, py):
        acl.aclrtFree(p)
    acl.aclrtDestroyStream(s)


def test_a_capture_longer_than_a_streams_queue_runs_nothing_before_replay(rt):
    """A stream's queue is bounded (its oldest tasks are taken as run): a capture's is not."""
    from pyaclnn._numpy.queues import DEPTH
    s = acl.aclrtCreateStream()
    ptr = acl.aclrtMalloc(4, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemset(ptr, 4, 0, 4)
    pinned = acl.aclrtMallocHost(4)
    acl.aclmdlRICaptureBegin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    for _ in range(DEPTH + 8):
        acl.aclrtMemsetAsync(ptr, 4, 7, 4, s)
    model = acl.aclmdlRICaptureEnd(s)
    acl.aclrtMemcpy(pinned, 4, ptr, 4, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    out = np.empty(4, np.uint8)
    acl.aclrtMemcpy(out, 4, pinned, 4, acl.ACL_MEMCPY_HOST_TO_HOST)
    assert not out.any()  # nothing captured ran
    acl.aclmdlRIExecuteAsync(model, s)
    acl.aclrtSynchronizeStream(s)
    acl.aclrtMemcpy(out, 4, ptr, 4, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert (out == 7).all()
    acl.aclmdlRIDestroy(model)
    acl.aclrtFreeHost(pinned)
    acl.aclrtFree(ptr)
    acl.aclrtDestroyStream(s)
