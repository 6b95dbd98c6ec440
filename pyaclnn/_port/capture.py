"""``pyaclnn.acl``: graph capture (the capture family of pyaclnn._runtime): aclmdlRICaptureBegin
& co., aclmdlRIExecuteAsync, aclmdlRIDestroy, aclrtCreateEventExWithFlag.

Part of ``pyaclnn.acl`` (which re-exports every ``acl*`` function here): see its docstring."""
from __future__ import annotations

from .._objects.handles import AclrtStream
from .common import Handle, active_runtime, enum_arg, uint32_arg

__all__ = ["aclrtCreateEventExWithFlag", "aclmdlRICaptureBegin", "aclmdlRICaptureGetInfo", "aclmdlRICaptureEnd",
           "aclmdlRICaptureThreadExchangeMode", "aclmdlRIExecuteAsync", "aclmdlRIDestroy"]


def aclrtCreateEventExWithFlag(flag: int) -> Handle:
    """aclrtCreateEventExWithFlag(&event, flag) -> event: the events a graph capture records and
    waits on (ACL_EVENT_SYNC); CANN refuses aclrtCreateEvent's in a capture (207000)."""
    return active_runtime().create_event_ex_with_flag(uint32_arg("aclrtCreateEventExWithFlag", "flag", flag))


def aclmdlRICaptureBegin(stream: AclrtStream, mode: int) -> None:
    """aclmdlRICaptureBegin(stream, mode): work launched on ``stream`` is recorded, not run, until
    aclmdlRICaptureEnd (mode: ACL_MODEL_RI_CAPTURE_MODE_GLOBAL / _THREAD_LOCAL / _RELAXED)."""
    active_runtime().capture_begin(stream, enum_arg("aclmdlRICaptureBegin", "mode", mode, "aclmdlRICaptureMode"))


def aclmdlRICaptureGetInfo(stream: AclrtStream) -> tuple[int, Handle]:
    """aclmdlRICaptureGetInfo(stream, &status, &modelRI) -> (status, modelRI): status is
    ACL_MODEL_RI_CAPTURE_STATUS_NONE / _ACTIVE / _INVALIDATED; modelRI is None when not capturing."""
    status, model = active_runtime().capture_get_info(stream)
    return status, _none_if_null(model)


def aclmdlRICaptureEnd(stream: AclrtStream) -> Handle:
    """aclmdlRICaptureEnd(stream, &modelRI) -> modelRI, the captured model."""
    return active_runtime().capture_end(stream)


def aclmdlRICaptureThreadExchangeMode(mode: int) -> int:
    """aclmdlRICaptureThreadExchangeMode(&mode): sets the calling thread's capture mode and
    returns its previous one (RELAXED lets aclrtMemcpy/aclrtMemset run during a GLOBAL capture)."""
    return active_runtime().capture_thread_exchange_mode(enum_arg("aclmdlRICaptureThreadExchangeMode", "mode", mode,
                                                                   "aclmdlRICaptureMode"))


def aclmdlRIExecuteAsync(modelRI: Handle, stream: AclrtStream) -> None:
    """aclmdlRIExecuteAsync(modelRI, stream): queue one replay of the captured work on ``stream``."""
    active_runtime().model_execute_async(_null_if_none(modelRI), stream)


def aclmdlRIDestroy(modelRI: Handle) -> None:
    """aclmdlRIDestroy(modelRI)."""
    active_runtime().model_destroy(_null_if_none(modelRI))


def _none_if_null(handle: Handle) -> Handle:
    """A nullptr handle out of the runtime as None (cffi's NULL on acl)."""
    return None if handle is None or handle == active_runtime().null else handle


def _null_if_none(handle: Handle) -> Handle:
    """None in as the runtime's nullptr (cffi refuses None where a pointer goes)."""
    return active_runtime().null if handle is None else handle
