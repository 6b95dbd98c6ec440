"""The stream-bug classes of test_hazards.py on an aten-tier operator (issue 24): aclnnMul, computed
by aten's CPU kernel, runs through the same launch as the exact references (queued on its stream,
hazard-checked, its written bytes recorded), so each broken port raises HazardError there too,
and the fixed port reads the right values (the tests' own product, a * b)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pytest

pytest.importorskip("torch")

import pyaclnn  # noqa: E402
from aten_support import aten_backend  # noqa: E402
from conftest import on_device_0  # noqa: E402
from pyaclnn import acl  # noqa: E402

F32 = np.float32
H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
A = np.array([[1, 2], [3, 4]], F32)
B = np.array([[0.5, -1], [2, 3]], F32)


class Port:
    def __init__(self) -> None:
        self.streams = [acl.aclrtCreateStream(), acl.aclrtCreateStream()]
        self.allocs: list[int] = []
        self.tensors: list[object] = []

    def malloc(self) -> int:
        addr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.allocs.append(addr)
        return addr

    def upload(self, array: np.ndarray) -> int:
        addr = self.malloc()
        acl.aclrtMemcpy(addr, 16, array, 16, H2D)
        return addr

    def tensor(self, addr: int) -> object:
        t = acl.aclCreateTensor([2, 2], 2, acl.ACL_FLOAT, [2, 1], 0, acl.ACL_FORMAT_ND, [2, 2], 2, addr)
        self.tensors.append(t)
        return t

    def mul(self, a: int, b: int, out: int, stream: object) -> None:
        ws, ex = acl.aclnnMulGetWorkspaceSize(self.tensor(a), self.tensor(b), self.tensor(out))
        assert ws == 0
        acl.aclnnMul(None, 0, ex, stream)

    def close(self) -> None:
        for t in self.tensors:
            acl.aclDestroyTensor(t)
        for addr in self.allocs:
            acl.aclrtFree(addr)
        for stream in self.streams:
            acl.aclrtDestroyStream(stream)


def download(addr: int) -> np.ndarray:
    out = np.empty((2, 2), F32)
    acl.aclrtMemcpy(out, 16, addr, 16, D2H)
    return out


def read_without_sync(p: Port, fixed: bool) -> np.ndarray:
    out = p.malloc()
    p.mul(p.upload(A), p.upload(B), out, p.streams[0])
    if fixed:
        acl.aclrtSynchronizeStream(p.streams[0])
    return download(out)


def host_write_under_queued_read(p: Port, fixed: bool) -> np.ndarray:
    a, out = p.upload(A), p.malloc()
    p.mul(a, p.upload(B), out, p.streams[0])
    if fixed:
        acl.aclrtSynchronizeStream(p.streams[0])
    acl.aclrtMemcpy(a, 16, np.zeros((2, 2), F32), 16, H2D)
    acl.aclrtSynchronizeStream(p.streams[0])
    return download(out)


def race_across_streams(p: Port, fixed: bool) -> np.ndarray:
    """Stream 0 computes d = a * b; stream 1 computes d * b from it."""
    b, d, out = p.upload(B), p.malloc(), p.malloc()
    p.mul(p.upload(A), b, d, p.streams[0])
    if fixed:
        event = acl.aclrtCreateEvent()
        acl.aclrtRecordEvent(event, p.streams[0])
        acl.aclrtStreamWaitEvent(p.streams[1], event)
    p.mul(d, b, out, p.streams[1])
    acl.aclrtSynchronizeStream(p.streams[1])
    acl.aclrtSynchronizeStream(p.streams[0])
    if fixed:
        acl.aclrtDestroyEvent(event)
    return download(out)


def uninitialised_input(p: Port, fixed: bool) -> np.ndarray:
    a = p.malloc()
    if fixed:
        acl.aclrtMemcpy(a, 16, A, 16, H2D)
    out = p.malloc()
    p.mul(a, p.upload(B), out, p.streams[0])
    acl.aclrtSynchronizeStream(p.streams[0])
    return download(out)


SCENARIOS = {  # scenario, what the fixed port reads, words the hazard's message holds
    "read_without_sync": (read_without_sync, A * B, ["aclrtMemcpy", "aclnnMul", "Synchronize"]),
    "host_write_under_queued_read": (host_write_under_queued_read, A * B, ["aclrtMemcpy", "aclnnMul", "reads"]),
    "race_across_streams": (race_across_streams, A * B * B, ["no event between the two streams"]),
    "uninitialised_input": (uninitialised_input, A * B, ["never written since aclrtMalloc"]),
}


@pytest.fixture
def port(use_backend: Callable[..., object], tmp_path: Path) -> Iterator[Port]:
    aten_backend(use_backend, tmp_path)
    with on_device_0(Port) as p:
        yield p
        acl.aclrtSynchronizeDevice()


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_broken_port_of_an_aten_operator_raises(port: Port, name: str) -> None:
    scenario, _, words = SCENARIOS[name]
    with pytest.raises(pyaclnn.HazardError) as info:
        scenario(port, False)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_fixed_port_reads_the_product(port: Port, name: str) -> None:
    scenario, want, _ = SCENARIOS[name]
    np.testing.assert_array_equal(scenario(port, True), want)
