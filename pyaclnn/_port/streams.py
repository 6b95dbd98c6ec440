"""``pyaclnn.acl``: streams and events (the streams family of pyaclnn._runtime).

Part of ``pyaclnn.acl`` (which re-exports every ``acl*`` function here): see its docstring."""
from __future__ import annotations

from .._objects.handles import AclrtEvent, AclrtStream
from .common import Handle, active_runtime, timeout_arg, uint32_arg

__all__ = ["aclrtCreateStream", "aclrtDestroyStream", "aclrtSynchronizeStream",
           "aclrtSynchronizeStreamWithTimeout", "aclrtSynchronizeDevice", "aclrtStreamWaitEvent",
           "aclrtCreateEvent", "aclrtCreateEventWithFlag", "aclrtQueryEventStatus", "aclrtRecordEvent",
           "aclrtSynchronizeEvent", "aclrtEventElapsedTime", "aclrtDestroyEvent"]


def aclrtCreateStream() -> Handle:
    """aclrtCreateStream(&stream) -> stream."""
    return active_runtime().create_stream()


def aclrtDestroyStream(stream: AclrtStream) -> None:
    active_runtime().destroy_stream(stream)


def aclrtSynchronizeStream(stream: AclrtStream) -> None:
    active_runtime().synchronize_stream(stream)


def aclrtSynchronizeStreamWithTimeout(stream: AclrtStream, timeout: int) -> None:
    """aclrtSynchronizeStreamWithTimeout (timeout in ms; -1 waits forever)."""
    active_runtime().synchronize_stream_timeout(stream, timeout_arg("aclrtSynchronizeStreamWithTimeout", "timeout",
                                                                     timeout))


def aclrtSynchronizeDevice() -> None:
    """aclrtSynchronizeDevice: wait for every stream of the current device."""
    active_runtime().synchronize_device()


def aclrtStreamWaitEvent(stream: AclrtStream, event: AclrtEvent) -> None:
    active_runtime().stream_wait_event(stream, event)


def aclrtCreateEvent() -> Handle:
    """aclrtCreateEvent(&event) -> event."""
    return active_runtime().create_event()


def aclrtCreateEventWithFlag(flag: int) -> Handle:
    """aclrtCreateEventWithFlag(&event, flag) -> event (ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE...)."""
    return active_runtime().create_event_with_flag(uint32_arg("aclrtCreateEventWithFlag", "flag", flag))


def aclrtQueryEventStatus(event: AclrtEvent) -> int:
    """aclrtQueryEventStatus(event, &status) -> status (ACL_EVENT_RECORDED_STATUS_COMPLETE...)."""
    return active_runtime().query_event_status(event)


def aclrtRecordEvent(event: AclrtEvent, stream: AclrtStream) -> None:
    active_runtime().record_event(event, stream)


def aclrtSynchronizeEvent(event: AclrtEvent) -> None:
    active_runtime().synchronize_event(event)


def aclrtEventElapsedTime(startEvent: AclrtEvent, endEvent: AclrtEvent) -> float:
    """aclrtEventElapsedTime(&ms, start, end) -> ms."""
    return active_runtime().event_elapsed_time(startEvent, endEvent)


def aclrtDestroyEvent(event: AclrtEvent) -> None:
    active_runtime().destroy_event(event)
