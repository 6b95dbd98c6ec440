"""The acl runtime's streams and events: aclrtCreateStream & co., aclrtCreateEvent & co."""
from __future__ import annotations

from typing import Any
from .._lib import check, created, ffi
from .session import AclSession


class AclStreams(AclSession):
    """aclrtCreateStream & co., aclrtCreateEvent & co., aclrtSynchronizeDevice."""

    # -- streams and events --------------------------------------------------------------------
    def create_stream(self) -> Any:
        out = ffi.new("aclrtStream *")
        return created(lambda: self.rt.aclrtCreateStream(out), out, "aclrtCreateStream", self.rt.aclrtDestroyStream)

    def destroy_stream(self, stream: Any) -> None:
        check(self.rt.aclrtDestroyStream(stream), "aclrtDestroyStream")

    def synchronize_stream(self, stream: Any) -> None:
        check(self.rt.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")

    def create_event(self) -> Any:
        out = ffi.new("aclrtEvent *")
        return created(lambda: self.rt.aclrtCreateEvent(out), out, "aclrtCreateEvent", self.rt.aclrtDestroyEvent)

    def record_event(self, event: Any, stream: Any) -> None:
        check(self.rt.aclrtRecordEvent(event, stream), "aclrtRecordEvent")

    def synchronize_event(self, event: Any) -> None:
        check(self.rt.aclrtSynchronizeEvent(event), "aclrtSynchronizeEvent")

    def event_elapsed_time(self, start: Any, end: Any) -> float:
        ms = ffi.new("float *")
        check(self.rt.aclrtEventElapsedTime(ms, start, end), "aclrtEventElapsedTime")
        return float(ms[0])

    def destroy_event(self, event: Any) -> None:
        check(self.rt.aclrtDestroyEvent(event), "aclrtDestroyEvent")

    def synchronize_stream_timeout(self, stream: Any, timeout: int) -> None:
        check(self.rt.aclrtSynchronizeStreamWithTimeout(stream, timeout), "aclrtSynchronizeStreamWithTimeout")

    def synchronize_device(self) -> None:
        check(self.rt.aclrtSynchronizeDevice(), "aclrtSynchronizeDevice")

    def create_event_with_flag(self, flag: int) -> Any:
        out = ffi.new("aclrtEvent *")
        check(self.rt.aclrtCreateEventWithFlag(out, flag), "aclrtCreateEventWithFlag")
        return out[0]

    def query_event_status(self, event: Any) -> int:
        out = ffi.new("aclrtEventRecordedStatus *")
        check(self.rt.aclrtQueryEventStatus(event, out), "aclrtQueryEventStatus")
        return int(out[0])

    def stream_wait_event(self, stream: Any, event: Any) -> None:
        check(self.rt.aclrtStreamWaitEvent(stream, event), "aclrtStreamWaitEvent")
