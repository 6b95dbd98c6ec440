"""The graph-capture part of the runtime contract (``pyaclnn._runtime.Runtime`` includes it).

Each method is one aclmdlRI call of acl_rt.h (issue 26), with C semantics as the rest of the
contract: out-parameters returned, handles opaque, a failing status raised as its ``AclError``.
The acl backend implements it in ``pyaclnn._acl.capture``, the NumPy backend in
``pyaclnn._numpy.capture``.
"""
from __future__ import annotations

from typing import Any, Protocol

Handle = Any


class CaptureRuntime(Protocol):
    def create_event_ex_with_flag(self, flag: int) -> Handle: ...  # aclrtCreateEventExWithFlag
    def capture_begin(self, stream: Handle, mode: int) -> None: ...  # aclmdlRICaptureBegin
    def capture_get_info(self, stream: Handle) -> tuple[int, Handle]: ...  # aclmdlRICaptureGetInfo -> (status, model)
    def capture_end(self, stream: Handle) -> Handle: ...  # aclmdlRICaptureEnd -> model
    def capture_thread_exchange_mode(self, mode: int) -> int: ...  # aclmdlRICaptureThreadExchangeMode -> old mode
    def model_execute_async(self, model: Handle, stream: Handle) -> None: ...  # aclmdlRIExecuteAsync
    def model_destroy(self, model: Handle) -> None: ...  # aclmdlRIDestroy
