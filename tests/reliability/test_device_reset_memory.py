"""Device memory goes with its device: the last aclrtResetDevice (or the destroy of the last
context made on a device already reset) closes the device, and what aclrtMalloc gave out there is
freed (issue 25, point 5), on both backends.

What CANN does: the last reference's teardown deletes the Device (hicann/runtime runtime.cc
Runtime::DeviceRelease -> FinalizeDeviceRelease; raw_device.cc ~RawDevice -> NpuDriver::DeviceClose
-> halDeviceClose), and the driver's memory close destroys the device's heaps (hicann/driver
src/ascend_hal/svm/v2/devmm/devmm_svm.c _drvMemDeviceCloseInner -> devmm_heap_close). A later
aclrtFree of such a pointer finds no heap: DRV_ERROR_INVALID_VALUE -> ACL_ERROR_RT_PARAM_INVALID
(107000; devmm_free_managed_nomal, errcode_manage.cc). A kernel on it faults; the reference names
the reset at the launch (a HazardError), the emulator faults it at the synchronize.
"""
from __future__ import annotations


import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl, errors
from helpers.sites import marked_line  # noqa: E402



def line_of(marker: str) -> str:
    return marked_line(__file__, marker)


def _free_status(ptr: int) -> int:
    try:
        acl.aclrtFree(ptr)
    except errors.AclError as exc:
        return exc.status
    return 0


def test_memory_goes_with_the_last_reset_of_its_device(backend: str) -> None:
    acl.aclrtSetDevice(0)
    ptr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtResetDevice(0)  # <reset>
    acl.aclrtSetDevice(0)
    try:
        with pytest.raises(errors.AclError) as info:
            acl.aclrtFree(ptr)  # the driver has no heap there any more: 107000, as a double free
        assert info.value.status == 107000, info.value
        if backend == "numpy":
            assert "aclrtResetDevice" in str(info.value) and line_of("reset") in str(info.value), info.value
    finally:
        acl.aclrtResetDevice(0)


def test_memory_survives_a_reset_that_is_not_the_last(backend: str) -> None:
    acl.aclrtSetDevice(0)
    acl.aclrtSetDevice(0)
    ptr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtResetDevice(0)  # one reference left: the device lives
    try:
        assert _free_status(ptr) == 0
    finally:
        acl.aclrtResetDevice(0)


def test_a_created_context_keeps_the_device_and_its_memory(backend: str) -> None:
    """aclrtCreateContext holds the device too (the Device is released with its last context):
    memory outlives the last reset while a created context lives, and goes with that context."""
    acl.aclrtSetDevice(0)
    context = acl.aclrtCreateContext(0)  # (the thread's current context now)
    kept = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    lost = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtResetDevice(0)
    assert _free_status(kept) == 0  # the created context holds the device open
    acl.aclrtDestroyContext(context)  # the device's last context: it closes
    acl.aclrtSetDevice(0)
    try:
        assert _free_status(lost) == 107000
    finally:
        acl.aclrtResetDevice(0)


def test_a_launch_on_memory_freed_by_the_reset_faults(backend: str) -> None:
    """A tensor made over device memory before the last reset, launched after a new aclrtSetDevice."""
    acl.aclrtSetDevice(0)
    ptr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemset(ptr, 64, 0, 64)
    stale = acl.aclCreateTensor([16], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [16], 1, ptr)
    acl.aclrtResetDevice(0)  # <reset before launch>
    acl.aclrtSetDevice(0)
    out = acl.aclrtMalloc(1 << 20, acl.ACL_MEM_MALLOC_HUGE_FIRST)  # (too large to land where ptr was)
    stream = acl.aclrtCreateStream()
    tensors = [stale, acl.aclCreateTensor([16], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [16], 1, out)]
    alpha = acl.aclCreateScalar(np.float32(1), acl.ACL_FLOAT)
    try:
        ws, ex = acl.aclnnAddGetWorkspaceSize(stale, stale, alpha, tensors[1])
        if backend == "numpy":
            with pytest.raises(pyaclnn.HazardError) as info:
                acl.aclnnAdd(None, 0, ex, stream)
            assert "aclrtResetDevice" in str(info.value) and line_of("reset before launch") in str(info.value)
        else:  # the emulator: the kernel's fault, reported at the synchronize
            acl.aclnnAdd(None, 0, ex, stream)
            with pytest.raises(errors.AclError):
                acl.aclrtSynchronizeStream(stream)
    finally:
        acl.aclDestroyScalar(alpha)
        for t in tensors:
            acl.aclDestroyTensor(t)
        acl.aclrtDestroyStream(stream)
        acl.aclrtFree(out)
        acl.aclrtResetDevice(0)


def test_pyaclnn_objects_on_memory_the_users_reset_freed_close_cleanly(backend: str) -> None:
    """The user's extra reset takes pyaclnn's only reference: the device closes with the memory
    of pyaclnn's tensors. Closing them afterwards frees nothing twice and raises nothing, and the
    next high-level call opens a new device."""
    x = pyaclnn.Tensor.from_numpy(np.arange(4, dtype=np.float32))
    acl.aclrtResetDevice(0)  # pyaclnn's only reference on device 0
    x.close()
    y = pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
    np.testing.assert_array_equal(y.numpy(), np.ones(4, np.float32))
    y.close()
