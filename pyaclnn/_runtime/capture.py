"""Graph capture: aclmdlRICaptureBegin & co., aclmdlRIExecuteAsync, aclmdlRIDestroy, and
aclrtCreateEventExWithFlag (the events a capture records and waits on).

One family of the runtime contract (``pyaclnn._runtime.Runtime``: its docstring says the rules);
both backends implement it in a module of the same name (pyaclnn/_acl/runtime/, pyaclnn/_numpy/runtime/).
The calls are those of hicann/runtime include/external/acl/acl_rt.h (issue 26)."""
from __future__ import annotations

from typing import Protocol

from .session import Handle


class Capture(Protocol):
    def create_event_ex_with_flag(self, flag: int) -> Handle: ...  # aclrtCreateEventExWithFlag
    def capture_begin(self, stream: Handle, mode: int) -> None: ...  # aclmdlRICaptureBegin
    def capture_get_info(self, stream: Handle) -> tuple[int, Handle]: ...  # aclmdlRICaptureGetInfo -> (status, model)
    def capture_end(self, stream: Handle) -> Handle: ...  # aclmdlRICaptureEnd -> model
    def capture_thread_exchange_mode(self, mode: int) -> int: ...  # aclmdlRICaptureThreadExchangeMode -> old mode
    def model_execute_async(self, model: Handle, stream: Handle) -> None: ...  # aclmdlRIExecuteAsync
    def model_destroy(self, model: Handle) -> None: ...  # aclmdlRIDestroy
