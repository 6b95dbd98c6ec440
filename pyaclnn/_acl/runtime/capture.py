"""The acl runtime's graph capture: the aclmdlRI calls of acl_rt.h, one CANN call each. What
these calls do and refuse is CANN's (hicann/runtime src/acl/aclrt_impl/model_ri.cpp, src/runtime/feature/aclgraph/).
"""
from __future__ import annotations

from typing import Any

from .._lib import check, ffi
from .executors import AclExecutors


class AclCapture(AclExecutors):
    """aclmdlRICaptureBegin & co., aclmdlRIExecuteAsync, aclmdlRIDestroy, aclrtCreateEventExWithFlag."""

    def create_event_ex_with_flag(self, flag: int) -> Any:
        """aclrtCreateEventExWithFlag(&event, flag) -> event: the kind of event a capture can
        record and wait on (aclrtCreateEvent's are refused in a capture with 207000)."""
        out = ffi.new("aclrtEvent *")
        check(self.rt.aclrtCreateEventExWithFlag(out, flag), "aclrtCreateEventExWithFlag")
        return out[0]

    def capture_begin(self, stream: Any, mode: int) -> None:
        """aclmdlRICaptureBegin(stream, mode)."""
        check(self.rt.aclmdlRICaptureBegin(stream, mode), "aclmdlRICaptureBegin")

    def capture_get_info(self, stream: Any) -> tuple[int, Any]:
        """aclmdlRICaptureGetInfo(stream, &status, &modelRI) -> (status, modelRI); modelRI is
        NULL when the stream is not capturing."""
        status, model = ffi.new("aclmdlRICaptureStatus *"), ffi.new("aclmdlRI *")
        check(self.rt.aclmdlRICaptureGetInfo(stream, status, model), "aclmdlRICaptureGetInfo")
        return int(status[0]), model[0]

    def capture_end(self, stream: Any) -> Any:
        """aclmdlRICaptureEnd(stream, &modelRI) -> modelRI."""
        out = ffi.new("aclmdlRI *")
        check(self.rt.aclmdlRICaptureEnd(stream, out), "aclmdlRICaptureEnd")
        return out[0]

    def capture_thread_exchange_mode(self, mode: int) -> int:
        """aclmdlRICaptureThreadExchangeMode(&mode): sets the calling thread's mode, returns the old one."""
        inout = ffi.new("aclmdlRICaptureMode *", mode)
        check(self.rt.aclmdlRICaptureThreadExchangeMode(inout), "aclmdlRICaptureThreadExchangeMode")
        return int(inout[0])

    def model_execute_async(self, model: Any, stream: Any) -> None:
        """aclmdlRIExecuteAsync(modelRI, stream): queue one replay of the captured work."""
        check(self.rt.aclmdlRIExecuteAsync(model, stream), "aclmdlRIExecuteAsync")

    def model_destroy(self, model: Any) -> None:
        """aclmdlRIDestroy(modelRI)."""
        check(self.rt.aclmdlRIDestroy(model), "aclmdlRIDestroy")
