"""The reference runtime's read back (aclrtMemcpy device to host, pyaclnn/_numpy/runtime/memory.py
``_read_back``) keeps the bytes it found for its last source while no memory is freed: a free, and
the allocation made again at the same address, must be seen at the next read back."""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl

H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST


@pytest.fixture
def device(use_backend: Any) -> Iterator[None]:
    use_backend("numpy")
    with pyaclnn.Device(0):
        acl.aclrtSetDevice(0)
        try:
            yield None
        finally:
            acl.aclrtResetDevice(0)


def _read(addr: int, n: int = 16) -> np.ndarray:
    out = np.empty(n, np.uint8)
    acl.aclrtMemcpy(out, n, addr, n, D2H)
    return out


def test_a_read_back_after_the_free_is_refused(device: None) -> None:
    """Read, free, read the same bytes again: the driver's refusal (507899), not the old bytes."""
    addr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemcpy(addr, 16, np.arange(16, dtype=np.uint8), 16, H2D)
    np.testing.assert_array_equal(_read(addr), np.arange(16))
    np.testing.assert_array_equal(_read(addr), np.arange(16))
    acl.aclrtFree(addr)
    with pytest.raises(pyaclnn.AclError) as info:
        _read(addr)
    assert info.value.status == acl.ACL_ERROR_RT_DRV_INTERNAL_ERROR


def test_memory_made_again_is_read_as_it_is_now(device: None) -> None:
    """Allocations freed and made again (at the same address or not): each read back gives the
    bytes of the live allocation, never a freed one's."""
    for k in range(20):
        addr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        data = np.full(16, k, np.uint8)
        acl.aclrtMemcpy(addr, 16, data, 16, H2D)
        np.testing.assert_array_equal(_read(addr), data)
        acl.aclrtFree(addr)
        again = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        acl.aclrtMemcpy(again, 16, data + 100, 16, H2D)
        np.testing.assert_array_equal(_read(again), data + 100)
        if again != addr:
            with pytest.raises(pyaclnn.AclError):
                _read(addr)
        acl.aclrtFree(again)
