"""Device bugs the reference used to miss (issue 25, point 5), and one false positive it raised.

Each test runs a small port written with pyaclnn.acl; where CANN answers with a status, both
backends are run (the acl backend through the emulator) and must give the same one."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import pyaclnn
from conftest import on_device_0
from pyaclnn import acl, errors

SOURCE = Path(__file__).read_text().splitlines()


def line_of(marker: str) -> str:
    """``test_hazards_missed.py:<line>`` of the line carrying the comment ``# <marker>``."""
    (n,) = [i + 1 for i, text in enumerate(SOURCE) if text.rstrip().endswith(f"# <{marker}>")]
    return f"test_hazards_missed.py:{n}"


class Streams:
    """Two streams, released at the end."""

    def __init__(self) -> None:
        self.streams = [acl.aclrtCreateStream(), acl.aclrtCreateStream()]
        self.allocs: list[int] = []
        self.tensors: list[Any] = []

    def malloc(self, nbytes: int) -> int:
        addr = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.allocs.append(addr)
        return addr

    def close(self) -> None:
        for t in self.tensors:
            acl.aclDestroyTensor(t)
        for addr in self.allocs:
            acl.aclrtFree(addr)
        for stream in self.streams:
            acl.aclrtDestroyStream(stream)


@pytest.fixture
def port(backend: str) -> Iterator[Streams]:
    with on_device_0(Streams) as p:
        yield p
        acl.aclrtSynchronizeDevice()


@pytest.fixture
def port_numpy(use_backend: Any) -> Iterator[Streams]:
    use_backend("numpy")
    with on_device_0(Streams) as p:
        yield p
        acl.aclrtSynchronizeDevice()


# -- (a) an event with ACL_EVENT_TIME_LINE only cannot order streams --------------------------------
def test_a_time_line_event_cannot_be_waited_on(port: Streams) -> None:
    """hicann/runtime api_error.cc ApiErrorDecorator::StreamWaitEvent: an event without a wait task
    (event.hpp Event::IsEventWithoutWaitTask) is RT_ERROR_FEATURE_NOT_SUPPORT, 207000 from
    rtStreamWaitEvent (api_c_stream.cc); the streams are not ordered."""
    s0, s1 = port.streams
    event = acl.aclrtCreateEventWithFlag(acl.ACL_EVENT_TIME_LINE)
    try:
        acl.aclrtRecordEvent(event, s0)
        with pytest.raises(errors.AclError) as info:
            acl.aclrtStreamWaitEvent(s1, event)
        assert info.value.status == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, info.value
    finally:
        acl.aclrtDestroyEvent(event)


@pytest.mark.parametrize("flag", ["ACL_EVENT_SYNC", "ACL_EVENT_SYNC_TIME_LINE"])
def test_an_event_with_a_wait_task_can_be_waited_on(port: Streams, flag: str) -> None:
    s0, s1 = port.streams
    bits = acl.ACL_EVENT_SYNC | (acl.ACL_EVENT_TIME_LINE if flag.endswith("TIME_LINE") else 0)
    event = acl.aclrtCreateEventWithFlag(bits)
    try:
        acl.aclrtRecordEvent(event, s0)
        acl.aclrtStreamWaitEvent(s1, event)
    finally:
        acl.aclrtDestroyEvent(event)
