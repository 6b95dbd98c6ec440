"""Pinned host memory (aclrtMallocHost) as the "device" side of a copy, on both backends.

Real CANN (cited where the backends implement it):

- aclrtMemcpy: the kind does not reach the driver (hicann/runtime npu_driver_mem.cc
  NpuDriver::MemCopySync -> MemCopySyncAdapter -> drvMemcpy, which takes no kind); the SVM copy
  picks its direction from the addresses (hicann/driver svm_master_memcpy.c
  devmm_find_memcpy_dir: pinned host memory to or from other host memory is H2H). So pinned
  memory where the kind says device is copied (the NumPy backend did; the emulator said 507899).
- aclrtMemcpyAsync checks the kind against the memory first (api_error.cc
  MemcpyAsyncCheckLocation -> MemcpyKindAutoCorrect, MemcpyKindReviseMap; the A2/A3 driver
  reports the locations, devmm_svm.c svm_support_get_user_malloc_attr): pinned memory is HOST,
  other host memory UNREGISTERED. HOST with UNREGISTERED allows only H2H and the kind from or to
  a device, so H2D into pinned memory from a NumPy array (or D2H out of it) is 107000; two known
  locations force the kind: pinned -> device runs as H2D whatever the kind, and pinned -> pinned
  becomes H2H, which the async copy refuses (207000). The NumPy backend accepted all of these.

Oracle: the bytes written, read back through another path.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

from conftest import on_device_0
from pyaclnn import acl, errors

H2H, H2D, D2H, D2D = (acl.ACL_MEMCPY_HOST_TO_HOST, acl.ACL_MEMCPY_HOST_TO_DEVICE,
                      acl.ACL_MEMCPY_DEVICE_TO_HOST, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)
DATA = np.arange(16, dtype=np.uint8)


class Mem:
    """Pinned and device buffers of 16 bytes and a stream, released at the end."""

    def __init__(self) -> None:
        self.stream = acl.aclrtCreateStream()
        self.pinned = [acl.aclrtMallocHost(16) for _ in range(2)]
        self.device = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)

    def read(self, addr: int) -> np.ndarray:
        """Host-to-host read of pinned memory (no device side: accepted before this change too)."""
        out = np.zeros(16, np.uint8)
        acl.aclrtMemcpy(out, 16, addr, 16, H2H)
        return out

    def read_device(self) -> np.ndarray:
        out = np.zeros(16, np.uint8)
        acl.aclrtMemcpy(out, 16, self.device, 16, D2H)
        return out

    def close(self) -> None:
        acl.aclrtSynchronizeStream(self.stream)
        for p in self.pinned:
            acl.aclrtFreeHost(p)
        acl.aclrtFree(self.device)
        acl.aclrtDestroyStream(self.stream)


@pytest.fixture
def m(backend: str) -> Iterator[Mem]:
    with on_device_0(Mem) as mem:
        yield mem


def test_sync_copy_into_and_out_of_pinned_memory_with_device_kinds(m: Mem) -> None:
    acl.aclrtMemcpy(m.pinned[0], 16, DATA, 16, H2D)  # the driver copies it as H2H
    np.testing.assert_array_equal(m.read(m.pinned[0]), DATA)
    out = np.zeros(16, np.uint8)
    acl.aclrtMemcpy(out, 16, m.pinned[0], 16, D2H)
    np.testing.assert_array_equal(out, DATA)
    acl.aclrtMemcpy(m.pinned[1], 16, m.pinned[0], 16, D2D)
    np.testing.assert_array_equal(m.read(m.pinned[1]), DATA)


@pytest.mark.parametrize("direction", ["H2D into pinned", "D2H out of pinned"])
def test_async_copy_between_pinned_and_pageable_memory_with_a_device_kind_is_107000(m: Mem, direction: str) -> None:
    acl.aclrtMemcpy(m.pinned[0], 16, np.zeros(16, np.uint8), 16, H2H)
    host = DATA.copy()
    with pytest.raises(errors.RtParamInvalidError) as info:
        if direction == "H2D into pinned":
            acl.aclrtMemcpyAsync(m.pinned[0], 16, host, 16, H2D, m.stream)
        else:
            acl.aclrtMemcpyAsync(host, 16, m.pinned[0], 16, D2H, m.stream)
    assert info.value.status == 107000 and info.value.api == "aclrtMemcpyAsync"
    acl.aclrtSynchronizeStream(m.stream)
    np.testing.assert_array_equal(m.read(m.pinned[0]), np.zeros(16, np.uint8))  # nothing copied
    np.testing.assert_array_equal(host, DATA)


@pytest.mark.parametrize("kind", [H2D, D2D, D2H])
def test_async_copy_from_pinned_to_device_runs_as_h2d_whatever_the_kind(m: Mem, kind: int) -> None:
    acl.aclrtMemcpy(m.pinned[0], 16, DATA, 16, H2H)
    acl.aclrtMemcpyAsync(m.device, 16, m.pinned[0], 16, kind, m.stream)
    acl.aclrtSynchronizeStream(m.stream)
    np.testing.assert_array_equal(m.read_device(), DATA)


def test_async_copy_between_two_pinned_buffers_is_h2h_refused(m: Mem) -> None:
    with pytest.raises(errors.AclError) as info:
        acl.aclrtMemcpyAsync(m.pinned[1], 16, m.pinned[0], 16, H2D, m.stream)
    assert info.value.status == 207000 and info.value.api == "aclrtMemcpyAsync"
