"""Synchronous aclrtMemcpy with every (kind, src location, dst location), on both backends.

The rule (hicann/runtime: aclrtMemcpyImpl checks only that the kind is one MemcpyKindTranslate
knows; api_error.cc ApiErrorDecorator::MemCopySync only its range; ApiImpl::MemCopySync ->
NpuDriver::MemCopySync -> drvMemcpy takes no kind, and the driver resolves the addresses it is
given, hicann/driver svm_master_memcpy.c): a side the kind calls device memory must be memory the
runtime knows (aclrtMalloc, or aclrtMallocHost, which is in the SVM range too), else the driver
fails and the runtime reports ACL_ERROR_RT_DRV_INTERNAL_ERROR (507899). The kinds naming a device
destination are H2D, D2D and HOST_TO_BUF_TO_DEVICE; a device source, D2H and D2D. ACL_MEMCPY_DEFAULT
and H2H name none; a device side the kind calls host is copied by address. The NumPy backend
accepted every combination before (a host array where the kind says device was copied).

Oracle: the expectation table below, written from that rule, and the bytes read back.
"""
from __future__ import annotations

import itertools
from typing import Iterator

import numpy as np
import pytest

from conftest import on_device_0
from pyaclnn import acl, errors

KINDS = {"H2H": 0, "H2D": 1, "D2H": 2, "D2D": 3, "DEFAULT": 4, "H2B2D": 5}
WHERE = ("device", "pinned", "array")
DATA = np.arange(1, 17, dtype=np.uint8)

# kind -> (dst must be runtime memory, src must be runtime memory)
DEVICE_SIDES = {"H2H": (False, False), "H2D": (True, False), "D2H": (False, True), "D2D": (True, True),
                "DEFAULT": (False, False), "H2B2D": (True, False)}


def expected(kind: str, src: str, dst: str) -> int:
    dst_dev, src_dev = DEVICE_SIDES[kind]
    if (dst_dev and dst == "array") or (src_dev and src == "array"):
        return 507899
    return 0


class Mem:
    def __init__(self) -> None:
        self.dev = [acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST) for _ in range(2)]
        self.pin = [acl.aclrtMallocHost(16) for _ in range(2)]

    def fill(self, where: str, slot: int, data: np.ndarray) -> object:
        """A 16-byte buffer at ``where`` holding ``data`` (written by a kind-correct copy)."""
        if where == "array":
            return data.copy()
        if where == "device":
            acl.aclrtMemcpy(self.dev[slot], 16, data, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
            return self.dev[slot]
        acl.aclrtMemcpy(self.pin[slot], 16, data, 16, acl.ACL_MEMCPY_HOST_TO_HOST)
        return self.pin[slot]

    def read(self, buf: object) -> np.ndarray:
        if isinstance(buf, np.ndarray):
            return buf
        out = np.zeros(16, np.uint8)
        kind = acl.ACL_MEMCPY_DEVICE_TO_HOST if buf in self.dev else acl.ACL_MEMCPY_HOST_TO_HOST
        acl.aclrtMemcpy(out, 16, buf, 16, kind)
        return out

    def close(self) -> None:
        for p in self.dev:
            acl.aclrtFree(p)
        for p in self.pin:
            acl.aclrtFreeHost(p)


@pytest.fixture
def m(backend: str) -> Iterator[Mem]:
    with on_device_0(Mem) as mem:
        yield mem


def test_the_rule_table_is_not_trivial() -> None:
    statuses = [expected(k, s, d) for k, s, d in itertools.product(KINDS, WHERE, WHERE)]
    assert statuses.count(507899) == 14 and statuses.count(0) == 40


@pytest.mark.parametrize("kind", list(KINDS))
def test_sync_copy_status_for_every_location_pair(m: Mem, kind: str) -> None:
    for src, dst in itertools.product(WHERE, WHERE):
        zeros = np.zeros(16, np.uint8)
        d = m.fill(dst, 0, zeros)
        s = m.fill(src, 1, DATA)
        want = expected(kind, src, dst)
        case = f"{kind} from {src} to {dst}"
        if want:
            with pytest.raises(errors.AclError) as info:
                acl.aclrtMemcpy(d, 16, s, 16, KINDS[kind])
            assert (info.value.status, info.value.api) == (want, "aclrtMemcpy"), case
            assert isinstance(info.value, errors.RtDrvInternalError), case
            np.testing.assert_array_equal(m.read(d), zeros, err_msg=case)  # nothing copied
        else:
            acl.aclrtMemcpy(d, 16, s, 16, KINDS[kind])
            np.testing.assert_array_equal(m.read(d), DATA, err_msg=case)
