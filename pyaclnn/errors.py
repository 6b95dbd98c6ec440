"""The one exception hierarchy of pyaclnn, shared by both backends.

Every CANN status code (acl, runtime and aclnn; taken from ``headers/``) has its own class,
generated below by ``tools/gen_errors.py``. ``from_status`` turns a raw status into the
right instance. This module imports nothing native, so the NumPy backend raises exactly the
classes the device path raises, and exceptions pickle across processes.

``pyaclnn`` itself re-exports the hierarchy and the status classes users meet most
(``pyaclnn.AclnnParamInvalidError``...); every class is here.
"""
from typing import Any, ClassVar

__all__ = [
    "PyaclnnError", "BackendUnavailableError", "ClosedError", "ExecutorConsumedError",
    "NotSupportedError", "UnknownOperatorError", "OutputTooLargeError", "HazardError", "HazardWarning", "AclError", "AclParamError", "AclResourceError", "AclRuntimeError",
    "AclInternalError", "from_status", "class_for_status",
]


class PyaclnnError(Exception):
    """Base class of every error pyaclnn raises on purpose."""


class BackendUnavailableError(PyaclnnError, ImportError):
    """The requested backend cannot be used (libraries missing, aclInit failed, no device)."""


class ClosedError(PyaclnnError, ValueError):
    """An object was used after ``close()``."""


class ExecutorConsumedError(PyaclnnError, RuntimeError):
    """Phase 2 was called on a single-use executor that had already been launched."""


class NotSupportedError(PyaclnnError, NotImplementedError):
    """A feature missing from the loaded CANN (optional symbol) or from NumPy (dtype)."""


class UnknownOperatorError(NotSupportedError, AttributeError):
    """No header the backend searched declares ``aclnn<Name>GetWorkspaceSize``.

    Both backends raise it for an operator name they do not know, and ``pyaclnn.acl`` raises it
    for the attribute ``aclnn<Name>GetWorkspaceSize`` / ``aclnn<Name>`` of such an operator: an
    AttributeError there (so ``hasattr`` is False), a NotSupportedError everywhere.
    ``close_name`` is a known operator whose name is close ("Add" for "Addd"), or None."""

    close_name: str | None = None


class OutputTooLargeError(PyaclnnError, ValueError):
    """The outputs a NumPy-in/NumPy-out call would allocate exceed this machine's memory.

    Raised before anything is allocated. Not a status class: the library sets no size limit
    (it would accept the call), and no C function failed; the arrays are pyaclnn's own."""


class HazardError(PyaclnnError, RuntimeError):
    """A call that would misbehave on a device, refused by the NumPy reference backend.

    A device gives stale data, garbage or a fault where a program reads what queued work has
    not written yet (a missing synchronize), frees memory queued work uses, races two streams
    without an event, reads device memory never written, or reaches outside an allocation. That
    is undefined behaviour there, so refusing it changes no defined result. The message names
    the C call and the user's source line of both sides. ``PYACLNN_HAZARDS=warn`` makes it a
    ``HazardWarning`` instead, ``off`` silent (both then behave as a device)."""


class HazardWarning(UserWarning):
    """``HazardError``'s finding, as a warning (``PYACLNN_HAZARDS=warn``)."""


_BY_STATUS: dict[int, type["AclError"]] = {}

# Plain-language meaning of the codes users meet most (abi.md §4, aclnn_return_code.md).
_MEANINGS = {
    161001: "illegal nullptr argument",
    161002: "parameter check failed (dtype, shape or attribute not supported)",
    361001: "an NPU runtime call inside the API failed",
    561000: "internal error",
    561001: "shape inference failed",
    561002: "tiling failed (shape not supported)",
    561003: "kernel not found: is the op binary package installed?",
    561103: "internal nullptr",
    561107: "ASCEND_OPP_PATH is not set",
    100000: "invalid parameter",
    100001: "AscendCL is not initialised",
    107002: "no current context in this thread",
    200000: "memory allocation failed",
    207001: "device memory allocation failed",
    207004: "no device",
    207018: "device out of memory",
}

# What to do about it, for the codes that have a well-known fix.
_HINTS = {
    561107: "source set_env.sh of your CANN install, or set ASCEND_OPP_PATH=<toolkit>/opp",
    561003: "install the operator binary package (ops) matching your CANN version",
    107002: "every thread must call aclrtSetDevice (pyaclnn.Device(id)) before using the runtime",
    100001: "call aclInit first (pyaclnn does this on first use)",
    207004: "no Ascend device visible: check the driver (npu-smi info) or use PYACLNN_BACKEND=numpy",
    207018: "free device memory or use smaller tensors",
    207001: "free device memory or use smaller tensors",
}


class AclError(PyaclnnError):
    """A CANN call returned a failing status.

    Each status has its own subclass (``class_for_status``), under the family of its first
    digit: ``AclParamError`` (1xxxxx), ``AclResourceError`` (2xxxxx), ``AclRuntimeError``
    (3xxxxx), ``AclInternalError`` (5xxxxx). Both backends raise the same class for the same
    call.

    Attributes:
        status: the CANN status code (int).
        name: the CANN symbol, e.g. ``ACLNN_ERR_PARAM_INVALID``.
        api: the C function that returned the status.
        detail: which rule failed, when known.
        cann_message: the text of ``aclGetRecentErrMsg``, copied when the error happened.
        meaning: a plain-language meaning, for the codes users meet most (else None).
        hint: what to do about it, for the codes with a well-known fix (else None).

    Examples:
        >>> try:
        ...     pyaclnn.mse_loss_backward(np.ones(2, np.float32), np.ones(2, np.float32),
        ...                               np.ones(3, np.float32))
        ... except pyaclnn.AclError as e:
        ...     print(type(e).__name__, e.status, e.name, e.api)
        AclnnParamInvalidError 161002 ACLNN_ERR_PARAM_INVALID aclnnMseLossBackwardGetWorkspaceSize
    """

    status: ClassVar[int] = -1
    symbol: ClassVar[str] = "UNKNOWN_STATUS"

    def __init_subclass__(cls, status: int | None = None, symbol: str | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if status is not None:
            cls.status, cls.symbol = status, symbol or cls.symbol
            _BY_STATUS[status] = cls

    def __init__(self, api: str = "", detail: str | None = None, cann_message: str | None = None,
                 status: int | None = None) -> None:
        if status is not None and type(self).status != status:
            # only the generic class may carry an arbitrary (unknown) status
            self.__dict__["status"] = status
        self.api, self.detail, self.cann_message = api, detail, cann_message
        self.call_hints: tuple[str, ...] = ()
        super().__init__(self._text())

    @property
    def name(self) -> str:
        """The CANN symbol of the status, e.g. ``ACLNN_ERR_PARAM_INVALID``."""
        return self.symbol

    @property
    def meaning(self) -> str | None:
        """A plain-language meaning of the status, for the codes users meet most."""
        return _MEANINGS.get(self.status)

    @property
    def hint(self) -> str | None:
        """What to do about the status, for the codes with a well-known fix."""
        return _HINTS.get(self.status)

    def add_hint(self, text: str) -> None:
        """Add advice about this call that pyaclnn knows and the library does not (e.g. an
        argument was a Python float, read as float64). The status and detail stay the library's."""
        self.call_hints += (text,)
        self.args = (self._text(),)

    def _text(self) -> str:
        text = f"{self.api}: {self.symbol} ({self.status})"
        reason = self.detail or self.meaning
        if reason:
            text += f": {reason}"
        if self.cann_message:
            text += f"\n  CANN: {self.cann_message.strip()}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        for hint in self.call_hints:
            text += f"\n  hint: {hint}"
        return text

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.status, self.api, self.detail, self.cann_message, self.call_hints))


def _rebuild(status: int, api: str, detail: str | None, cann_message: str | None,
             call_hints: tuple[str, ...] = ()) -> AclError:
    error = from_status(status, api, detail, cann_message)
    for hint in call_hints:
        error.add_hint(hint)
    return error


class AclParamError(AclError):
    """Status family 1xxxxx: the caller passed something wrong (includes aclnn 161xxx)."""


class AclResourceError(AclError):
    """Status family 2xxxxx: resources (memory, devices, streams) ran out or are missing."""


class AclRuntimeError(AclError):
    """Status family 3xxxxx: storage or runtime failures (includes aclnn 361xxx)."""


class AclInternalError(AclError):
    """Status family 5xxxxx: internal errors of CANN (includes aclnn 561xxx)."""


def class_for_status(status: int) -> type[AclError]:
    """The exception class for a CANN status (``AclError`` itself for an unknown code).

    Args:
        status: a CANN status code.

    Returns:
        The ``AclError`` subclass of that status.

    Examples:
        >>> pyaclnn.errors.class_for_status(507015).__name__
        'RtAicoreExceptionError'
    """
    return _BY_STATUS.get(status, AclError)


def from_status(status: int, api: str, detail: str | None = None,
                cann_message: str | None = None) -> AclError:
    """Build the exception for a failing ``status`` returned by the C function ``api``.

    Args:
        status: the status the C function returned.
        api: the C function's name.
        detail: which rule failed, when known.
        cann_message: the text of ``aclGetRecentErrMsg``.

    Returns:
        An instance of ``class_for_status(status)`` (not raised).
    """
    cls = _BY_STATUS.get(status)
    if cls is None:
        return AclError(api, detail, cann_message, status=status)
    return cls(api, detail, cann_message)


# --- generated by tools/gen_errors.py: start ---
class AclInvalidParamError(AclParamError, status=100000, symbol="ACL_ERROR_INVALID_PARAM"): pass
class AclUninitializeError(AclParamError, status=100001, symbol="ACL_ERROR_UNINITIALIZE"): pass
class AclRepeatInitializeError(AclParamError, status=100002, symbol="ACL_ERROR_REPEAT_INITIALIZE"): pass
class AclInvalidFileError(AclParamError, status=100003, symbol="ACL_ERROR_INVALID_FILE"): pass
class AclWriteFileError(AclParamError, status=100004, symbol="ACL_ERROR_WRITE_FILE"): pass
class AclInvalidFileSizeError(AclParamError, status=100005, symbol="ACL_ERROR_INVALID_FILE_SIZE"): pass
class AclParseFileError(AclParamError, status=100006, symbol="ACL_ERROR_PARSE_FILE"): pass
class AclFileMissingAttrError(AclParamError, status=100007, symbol="ACL_ERROR_FILE_MISSING_ATTR"): pass
class AclFileAttrInvalidError(AclParamError, status=100008, symbol="ACL_ERROR_FILE_ATTR_INVALID"): pass
class AclInvalidDumpConfigError(AclParamError, status=100009, symbol="ACL_ERROR_INVALID_DUMP_CONFIG"): pass
class AclInvalidProfilingConfigError(AclParamError, status=100010, symbol="ACL_ERROR_INVALID_PROFILING_CONFIG"): pass
class AclInvalidModelIdError(AclParamError, status=100011, symbol="ACL_ERROR_INVALID_MODEL_ID"): pass
class AclDeserializeModelError(AclParamError, status=100012, symbol="ACL_ERROR_DESERIALIZE_MODEL"): pass
class AclParseModelError(AclParamError, status=100013, symbol="ACL_ERROR_PARSE_MODEL"): pass
class AclReadModelFailureError(AclParamError, status=100014, symbol="ACL_ERROR_READ_MODEL_FAILURE"): pass
class AclModelSizeInvalidError(AclParamError, status=100015, symbol="ACL_ERROR_MODEL_SIZE_INVALID"): pass
class AclModelMissingAttrError(AclParamError, status=100016, symbol="ACL_ERROR_MODEL_MISSING_ATTR"): pass
class AclModelInputNotMatchError(AclParamError, status=100017, symbol="ACL_ERROR_MODEL_INPUT_NOT_MATCH"): pass
class AclModelOutputNotMatchError(AclParamError, status=100018, symbol="ACL_ERROR_MODEL_OUTPUT_NOT_MATCH"): pass
class AclModelNotDynamicError(AclParamError, status=100019, symbol="ACL_ERROR_MODEL_NOT_DYNAMIC"): pass
class AclOpTypeNotMatchError(AclParamError, status=100020, symbol="ACL_ERROR_OP_TYPE_NOT_MATCH"): pass
class AclOpInputNotMatchError(AclParamError, status=100021, symbol="ACL_ERROR_OP_INPUT_NOT_MATCH"): pass
class AclOpOutputNotMatchError(AclParamError, status=100022, symbol="ACL_ERROR_OP_OUTPUT_NOT_MATCH"): pass
class AclOpAttrNotMatchError(AclParamError, status=100023, symbol="ACL_ERROR_OP_ATTR_NOT_MATCH"): pass
class AclOpNotFoundError(AclParamError, status=100024, symbol="ACL_ERROR_OP_NOT_FOUND"): pass
class AclOpLoadFailedError(AclParamError, status=100025, symbol="ACL_ERROR_OP_LOAD_FAILED"): pass
class AclUnsupportedDataTypeError(AclParamError, status=100026, symbol="ACL_ERROR_UNSUPPORTED_DATA_TYPE"): pass
class AclFormatNotMatchError(AclParamError, status=100027, symbol="ACL_ERROR_FORMAT_NOT_MATCH"): pass
class AclBinSelectorNotRegisteredError(AclParamError, status=100028, symbol="ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED"): pass
class AclKernelNotFoundError(AclParamError, status=100029, symbol="ACL_ERROR_KERNEL_NOT_FOUND"): pass
class AclBinSelectorAlreadyRegisteredError(AclParamError, status=100030, symbol="ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED"): pass
class AclKernelAlreadyRegisteredError(AclParamError, status=100031, symbol="ACL_ERROR_KERNEL_ALREADY_REGISTERED"): pass
class AclInvalidQueueIdError(AclParamError, status=100032, symbol="ACL_ERROR_INVALID_QUEUE_ID"): pass
class AclRepeatSubscribeError(AclParamError, status=100033, symbol="ACL_ERROR_REPEAT_SUBSCRIBE"): pass
class AclStreamNotSubscribeError(AclParamError, status=100034, symbol="ACL_ERROR_STREAM_NOT_SUBSCRIBE"): pass
class AclThreadNotSubscribeError(AclParamError, status=100035, symbol="ACL_ERROR_THREAD_NOT_SUBSCRIBE"): pass
class AclWaitCallbackTimeoutError(AclParamError, status=100036, symbol="ACL_ERROR_WAIT_CALLBACK_TIMEOUT"): pass
class AclRepeatFinalizeError(AclParamError, status=100037, symbol="ACL_ERROR_REPEAT_FINALIZE"): pass
class AclNotStaticAippError(AclParamError, status=100038, symbol="ACL_ERROR_NOT_STATIC_AIPP"): pass
class AclCompilingStubModeError(AclParamError, status=100039, symbol="ACL_ERROR_COMPILING_STUB_MODE"): pass
class AclGroupNotSetError(AclParamError, status=100040, symbol="ACL_ERROR_GROUP_NOT_SET"): pass
class AclGroupNotCreateError(AclParamError, status=100041, symbol="ACL_ERROR_GROUP_NOT_CREATE"): pass
class AclProfAlreadyRunError(AclParamError, status=100042, symbol="ACL_ERROR_PROF_ALREADY_RUN"): pass
class AclProfNotRunError(AclParamError, status=100043, symbol="ACL_ERROR_PROF_NOT_RUN"): pass
class AclDumpAlreadyRunError(AclParamError, status=100044, symbol="ACL_ERROR_DUMP_ALREADY_RUN"): pass
class AclDumpNotRunError(AclParamError, status=100045, symbol="ACL_ERROR_DUMP_NOT_RUN"): pass
class AclStreamCaptureConflictError(AclParamError, status=107032, symbol="ACL_ERROR_STREAM_CAPTURE_CONFLICT"): pass
class AclStreamTaskGroupStatusError(AclParamError, status=107033, symbol="ACL_ERROR_STREAM_TASK_GROUP_STATUS"): pass
class AclStreamTaskGroupIntrError(AclParamError, status=107034, symbol="ACL_ERROR_STREAM_TASK_GROUP_INTR"): pass
class AclProfRepeatSubscribeError(AclParamError, status=148046, symbol="ACL_ERROR_PROF_REPEAT_SUBSCRIBE"): pass
class AclProfApiConflictError(AclParamError, status=148047, symbol="ACL_ERROR_PROF_API_CONFLICT"): pass
class AclInvalidMaxOpqueueNumConfigError(AclParamError, status=148048, symbol="ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG"): pass
class AclInvalidOppPathError(AclParamError, status=148049, symbol="ACL_ERROR_INVALID_OPP_PATH"): pass
class AclOpUnsupportedDynamicError(AclParamError, status=148050, symbol="ACL_ERROR_OP_UNSUPPORTED_DYNAMIC"): pass
class AclRelativeResourceNotClearedError(AclParamError, status=148051, symbol="ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED"): pass
class AclUnsupportedJpegError(AclParamError, status=148052, symbol="ACL_ERROR_UNSUPPORTED_JPEG"): pass
class AclInvalidBundleModelIdError(AclParamError, status=148053, symbol="ACL_ERROR_INVALID_BUNDLE_MODEL_ID"): pass
class AclBadAllocError(AclResourceError, status=200000, symbol="ACL_ERROR_BAD_ALLOC"): pass
class AclApiNotSupportError(AclResourceError, status=200001, symbol="ACL_ERROR_API_NOT_SUPPORT"): pass
class AclInvalidDeviceError(AclResourceError, status=200002, symbol="ACL_ERROR_INVALID_DEVICE"): pass
class AclMemoryAddressUnalignedError(AclResourceError, status=200003, symbol="ACL_ERROR_MEMORY_ADDRESS_UNALIGNED"): pass
class AclResourceNotMatchError(AclResourceError, status=200004, symbol="ACL_ERROR_RESOURCE_NOT_MATCH"): pass
class AclInvalidResourceHandleError(AclResourceError, status=200005, symbol="ACL_ERROR_INVALID_RESOURCE_HANDLE"): pass
class AclFeatureUnsupportedError(AclResourceError, status=200006, symbol="ACL_ERROR_FEATURE_UNSUPPORTED"): pass
class AclProfModulesUnsupportedError(AclResourceError, status=200007, symbol="ACL_ERROR_PROF_MODULES_UNSUPPORTED"): pass
class AclStorageOverLimitError(AclRuntimeError, status=300000, symbol="ACL_ERROR_STORAGE_OVER_LIMIT"): pass
class AclGenericInternalError(AclInternalError, status=500000, symbol="ACL_ERROR_INTERNAL_ERROR"): pass
class AclFailureError(AclInternalError, status=500001, symbol="ACL_ERROR_FAILURE"): pass
class AclGeFailureError(AclInternalError, status=500002, symbol="ACL_ERROR_GE_FAILURE"): pass
class AclDrvFailureError(AclInternalError, status=500004, symbol="ACL_ERROR_DRV_FAILURE"): pass
class AclProfilingFailureError(AclInternalError, status=500005, symbol="ACL_ERROR_PROFILING_FAILURE"): pass
class AclSnapshotLockTimeoutError(AclInternalError, status=507905, symbol="ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT"): pass
class AclSnapshotLockFailedError(AclInternalError, status=507906, symbol="ACL_ERROR_SNAPSHOT_LOCK_FAILED"): pass
class AclSnapshotUnlockFailedError(AclInternalError, status=507907, symbol="ACL_ERROR_SNAPSHOT_UNLOCK_FAILED"): pass
class AclSnapshotBackupFailedError(AclInternalError, status=507908, symbol="ACL_ERROR_SNAPSHOT_BACKUP_FAILED"): pass
class AclSnapshotRestoreFailedError(AclInternalError, status=507909, symbol="ACL_ERROR_SNAPSHOT_RESTORE_FAILED"): pass
class AclHostMemoryAlreadyRegisteredError(AclInternalError, status=507910, symbol="ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED"): pass
class AclHostMemoryNotRegisteredError(AclInternalError, status=507911, symbol="ACL_ERROR_HOST_MEMORY_NOT_REGISTERED"): pass
class AclSnapshotCallbackFailedError(AclInternalError, status=507912, symbol="ACL_ERROR_SNAPSHOT_CALLBACK_FAILED"): pass
class AclSnapshotRegisterCallbackFailedError(AclInternalError, status=507913, symbol="ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED"): pass
class RtParamInvalidError(AclParamError, status=107000, symbol="ACL_ERROR_RT_PARAM_INVALID"): pass
class RtInvalidDeviceidError(AclParamError, status=107001, symbol="ACL_ERROR_RT_INVALID_DEVICEID"): pass
class RtContextNullError(AclParamError, status=107002, symbol="ACL_ERROR_RT_CONTEXT_NULL"): pass
class RtStreamContextError(AclParamError, status=107003, symbol="ACL_ERROR_RT_STREAM_CONTEXT"): pass
class RtModelContextError(AclParamError, status=107004, symbol="ACL_ERROR_RT_MODEL_CONTEXT"): pass
class RtStreamModelError(AclParamError, status=107005, symbol="ACL_ERROR_RT_STREAM_MODEL"): pass
class RtEventTimestampInvalidError(AclParamError, status=107006, symbol="ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID"): pass
class RtEventTimestampReversalError(AclParamError, status=107007, symbol="ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL"): pass
class RtAddrUnalignedError(AclParamError, status=107008, symbol="ACL_ERROR_RT_ADDR_UNALIGNED"): pass
class RtFileOpenError(AclParamError, status=107009, symbol="ACL_ERROR_RT_FILE_OPEN"): pass
class RtFileWriteError(AclParamError, status=107010, symbol="ACL_ERROR_RT_FILE_WRITE"): pass
class RtStreamSubscribeError(AclParamError, status=107011, symbol="ACL_ERROR_RT_STREAM_SUBSCRIBE"): pass
class RtThreadSubscribeError(AclParamError, status=107012, symbol="ACL_ERROR_RT_THREAD_SUBSCRIBE"): pass
class RtGroupNotSetError(AclParamError, status=107013, symbol="ACL_ERROR_RT_GROUP_NOT_SET"): pass
class RtGroupNotCreateError(AclParamError, status=107014, symbol="ACL_ERROR_RT_GROUP_NOT_CREATE"): pass
class RtStreamNoCbRegError(AclParamError, status=107015, symbol="ACL_ERROR_RT_STREAM_NO_CB_REG"): pass
class RtInvalidMemoryTypeError(AclParamError, status=107016, symbol="ACL_ERROR_RT_INVALID_MEMORY_TYPE"): pass
class RtInvalidHandleError(AclParamError, status=107017, symbol="ACL_ERROR_RT_INVALID_HANDLE"): pass
class RtInvalidMallocTypeError(AclParamError, status=107018, symbol="ACL_ERROR_RT_INVALID_MALLOC_TYPE"): pass
class RtWaitTimeoutError(AclParamError, status=107019, symbol="ACL_ERROR_RT_WAIT_TIMEOUT"): pass
class RtTaskTimeoutError(AclParamError, status=107020, symbol="ACL_ERROR_RT_TASK_TIMEOUT"): pass
class RtSysparamoptNotSetError(AclParamError, status=107021, symbol="ACL_ERROR_RT_SYSPARAMOPT_NOT_SET"): pass
class RtDeviceTaskAbortError(AclParamError, status=107022, symbol="ACL_ERROR_RT_DEVICE_TASK_ABORT"): pass
class RtStreamAbortError(AclParamError, status=107023, symbol="ACL_ERROR_RT_STREAM_ABORT"): pass
class RtCaptureDependencyError(AclParamError, status=107024, symbol="ACL_ERROR_RT_CAPTURE_DEPENDENCY"): pass
class RtStreamUnjoinedError(AclParamError, status=107025, symbol="ACL_ERROR_RT_STREAM_UNJOINED"): pass
class RtModelCapturedError(AclParamError, status=107026, symbol="ACL_ERROR_RT_MODEL_CAPTURED"): pass
class RtStreamCapturedError(AclParamError, status=107027, symbol="ACL_ERROR_RT_STREAM_CAPTURED"): pass
class RtEventCapturedError(AclParamError, status=107028, symbol="ACL_ERROR_RT_EVENT_CAPTURED"): pass
class RtStreamNotCapturedError(AclParamError, status=107029, symbol="ACL_ERROR_RT_STREAM_NOT_CAPTURED"): pass
class RtCaptureModeNotSupportError(AclParamError, status=107030, symbol="ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT"): pass
class RtStreamCaptureImplicitError(AclParamError, status=107031, symbol="ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT"): pass
class RtTaskAbortStopError(AclParamError, status=107035, symbol="ACL_ERROR_RT_TASK_ABORT_STOP"): pass
class RtStreamCaptureUnmatchedError(AclParamError, status=107036, symbol="ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED"): pass
class RtModelRunningError(AclParamError, status=107037, symbol="ACL_ERROR_RT_MODEL_RUNNING"): pass
class RtStreamCaptureWrongThreadError(AclParamError, status=107038, symbol="ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD"): pass
class RtInsufficientInputArrayError(AclParamError, status=107039, symbol="ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY"): pass
class RtModelUpdateFailedError(AclParamError, status=107040, symbol="ACL_ERROR_RT_MODEL_UPDATE_FAILED"): pass
class RtCaptureModeBlockAsyncError(AclParamError, status=107041, symbol="ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC"): pass
class RtSymbolNotFoundError(AclParamError, status=107042, symbol="ACL_ERROR_RT_SYMBOL_NOT_FOUND"): pass
class RtInvalidSymbolError(AclParamError, status=107043, symbol="ACL_ERROR_RT_INVALID_SYMBOL"): pass
class RtInvalidDeviceFunctionError(AclParamError, status=107044, symbol="ACL_ERROR_RT_INVALID_DEVICE_FUNCTION"): pass
class RtSubAclgraphIsCapturingError(AclParamError, status=107045, symbol="ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING"): pass
class RtFeatureNotSupportError(AclResourceError, status=207000, symbol="ACL_ERROR_RT_FEATURE_NOT_SUPPORT"): pass
class RtMemoryAllocationError(AclResourceError, status=207001, symbol="ACL_ERROR_RT_MEMORY_ALLOCATION"): pass
class RtMemoryFreeError(AclResourceError, status=207002, symbol="ACL_ERROR_RT_MEMORY_FREE"): pass
class RtAicoreOverFlowError(AclResourceError, status=207003, symbol="ACL_ERROR_RT_AICORE_OVER_FLOW"): pass
class RtNoDeviceError(AclResourceError, status=207004, symbol="ACL_ERROR_RT_NO_DEVICE"): pass
class RtResourceAllocFailError(AclResourceError, status=207005, symbol="ACL_ERROR_RT_RESOURCE_ALLOC_FAIL"): pass
class RtNoPermissionError(AclResourceError, status=207006, symbol="ACL_ERROR_RT_NO_PERMISSION"): pass
class RtNoEventResourceError(AclResourceError, status=207007, symbol="ACL_ERROR_RT_NO_EVENT_RESOURCE"): pass
class RtNoStreamResourceError(AclResourceError, status=207008, symbol="ACL_ERROR_RT_NO_STREAM_RESOURCE"): pass
class RtNoNotifyResourceError(AclResourceError, status=207009, symbol="ACL_ERROR_RT_NO_NOTIFY_RESOURCE"): pass
class RtNoModelResourceError(AclResourceError, status=207010, symbol="ACL_ERROR_RT_NO_MODEL_RESOURCE"): pass
class RtNoCdqResourceError(AclResourceError, status=207011, symbol="ACL_ERROR_RT_NO_CDQ_RESOURCE"): pass
class RtOverLimitError(AclResourceError, status=207012, symbol="ACL_ERROR_RT_OVER_LIMIT"): pass
class RtQueueEmptyError(AclResourceError, status=207013, symbol="ACL_ERROR_RT_QUEUE_EMPTY"): pass
class RtQueueFullError(AclResourceError, status=207014, symbol="ACL_ERROR_RT_QUEUE_FULL"): pass
class RtRepeatedInitError(AclResourceError, status=207015, symbol="ACL_ERROR_RT_REPEATED_INIT"): pass
class RtAivecOverFlowError(AclResourceError, status=207016, symbol="ACL_ERROR_RT_AIVEC_OVER_FLOW"): pass
class RtOverFlowError(AclResourceError, status=207017, symbol="ACL_ERROR_RT_OVER_FLOW"): pass
class RtDeviceOomError(AclResourceError, status=207018, symbol="ACL_ERROR_RT_DEVICE_OOM"): pass
class RtFeatureNotSupportUpdateOpError(AclResourceError, status=207019, symbol="ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP"): pass
class RtTimeoutError(AclResourceError, status=207020, symbol="ACL_ERROR_RT_TIMEOUT"): pass
class RtLinkTypeNotSupportedError(AclResourceError, status=207021, symbol="ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED"): pass
class RtFailureError(AclInternalError, status=500003, symbol="ACL_ERROR_RT_FAILURE"): pass
class RtInternalError(AclInternalError, status=507000, symbol="ACL_ERROR_RT_INTERNAL_ERROR"): pass
class RtTsError(AclInternalError, status=507001, symbol="ACL_ERROR_RT_TS_ERROR"): pass
class RtStreamTaskFullError(AclInternalError, status=507002, symbol="ACL_ERROR_RT_STREAM_TASK_FULL"): pass
class RtStreamTaskEmptyError(AclInternalError, status=507003, symbol="ACL_ERROR_RT_STREAM_TASK_EMPTY"): pass
class RtStreamNotCompleteError(AclInternalError, status=507004, symbol="ACL_ERROR_RT_STREAM_NOT_COMPLETE"): pass
class RtEndOfSequenceError(AclInternalError, status=507005, symbol="ACL_ERROR_RT_END_OF_SEQUENCE"): pass
class RtEventNotCompleteError(AclInternalError, status=507006, symbol="ACL_ERROR_RT_EVENT_NOT_COMPLETE"): pass
class RtContextReleaseError(AclInternalError, status=507007, symbol="ACL_ERROR_RT_CONTEXT_RELEASE_ERROR"): pass
class RtSocVersionError(AclInternalError, status=507008, symbol="ACL_ERROR_RT_SOC_VERSION"): pass
class RtTaskTypeNotSupportError(AclInternalError, status=507009, symbol="ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT"): pass
class RtLostHeartbeatError(AclInternalError, status=507010, symbol="ACL_ERROR_RT_LOST_HEARTBEAT"): pass
class RtModelExecuteError(AclInternalError, status=507011, symbol="ACL_ERROR_RT_MODEL_EXECUTE"): pass
class RtReportTimeoutError(AclInternalError, status=507012, symbol="ACL_ERROR_RT_REPORT_TIMEOUT"): pass
class RtSysDmaError(AclInternalError, status=507013, symbol="ACL_ERROR_RT_SYS_DMA"): pass
class RtAicoreTimeoutError(AclInternalError, status=507014, symbol="ACL_ERROR_RT_AICORE_TIMEOUT"): pass
class RtAicoreExceptionError(AclInternalError, status=507015, symbol="ACL_ERROR_RT_AICORE_EXCEPTION"): pass
class RtAicoreTrapExceptionError(AclInternalError, status=507016, symbol="ACL_ERROR_RT_AICORE_TRAP_EXCEPTION"): pass
class RtAicpuTimeoutError(AclInternalError, status=507017, symbol="ACL_ERROR_RT_AICPU_TIMEOUT"): pass
class RtAicpuExceptionError(AclInternalError, status=507018, symbol="ACL_ERROR_RT_AICPU_EXCEPTION"): pass
class RtAicpuDatadumpRspError(AclInternalError, status=507019, symbol="ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR"): pass
class RtAicpuModelRspError(AclInternalError, status=507020, symbol="ACL_ERROR_RT_AICPU_MODEL_RSP_ERR"): pass
class RtProfilingError(AclInternalError, status=507021, symbol="ACL_ERROR_RT_PROFILING_ERROR"): pass
class RtIpcError(AclInternalError, status=507022, symbol="ACL_ERROR_RT_IPC_ERROR"): pass
class RtModelAbortNormalError(AclInternalError, status=507023, symbol="ACL_ERROR_RT_MODEL_ABORT_NORMAL"): pass
class RtKernelUnregisteringError(AclInternalError, status=507024, symbol="ACL_ERROR_RT_KERNEL_UNREGISTERING"): pass
class RtRingbufferNotInitError(AclInternalError, status=507025, symbol="ACL_ERROR_RT_RINGBUFFER_NOT_INIT"): pass
class RtRingbufferNoDataError(AclInternalError, status=507026, symbol="ACL_ERROR_RT_RINGBUFFER_NO_DATA"): pass
class RtKernelLookupError(AclInternalError, status=507027, symbol="ACL_ERROR_RT_KERNEL_LOOKUP"): pass
class RtKernelDuplicateError(AclInternalError, status=507028, symbol="ACL_ERROR_RT_KERNEL_DUPLICATE"): pass
class RtDebugRegisterFailError(AclInternalError, status=507029, symbol="ACL_ERROR_RT_DEBUG_REGISTER_FAIL"): pass
class RtDebugUnregisterFailError(AclInternalError, status=507030, symbol="ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL"): pass
class RtLabelContextError(AclInternalError, status=507031, symbol="ACL_ERROR_RT_LABEL_CONTEXT"): pass
class RtProgramUseOutError(AclInternalError, status=507032, symbol="ACL_ERROR_RT_PROGRAM_USE_OUT"): pass
class RtDevSetupError(AclInternalError, status=507033, symbol="ACL_ERROR_RT_DEV_SETUP_ERROR"): pass
class RtVectorCoreTimeoutError(AclInternalError, status=507034, symbol="ACL_ERROR_RT_VECTOR_CORE_TIMEOUT"): pass
class RtVectorCoreExceptionError(AclInternalError, status=507035, symbol="ACL_ERROR_RT_VECTOR_CORE_EXCEPTION"): pass
class RtVectorCoreTrapExceptionError(AclInternalError, status=507036, symbol="ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION"): pass
class RtCdqBatchAbnormalError(AclInternalError, status=507037, symbol="ACL_ERROR_RT_CDQ_BATCH_ABNORMAL"): pass
class RtDieModeChangeError(AclInternalError, status=507038, symbol="ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR"): pass
class RtDieSetError(AclInternalError, status=507039, symbol="ACL_ERROR_RT_DIE_SET_ERROR"): pass
class RtInvalidDieidError(AclInternalError, status=507040, symbol="ACL_ERROR_RT_INVALID_DIEID"): pass
class RtDieModeNotSetError(AclInternalError, status=507041, symbol="ACL_ERROR_RT_DIE_MODE_NOT_SET"): pass
class RtAicoreTrapReadOverflowError(AclInternalError, status=507042, symbol="ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW"): pass
class RtAicoreTrapWriteOverflowError(AclInternalError, status=507043, symbol="ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW"): pass
class RtVectorCoreTrapReadOverflowError(AclInternalError, status=507044, symbol="ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW"): pass
class RtVectorCoreTrapWriteOverflowError(AclInternalError, status=507045, symbol="ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW"): pass
class RtStreamSyncTimeoutError(AclInternalError, status=507046, symbol="ACL_ERROR_RT_STREAM_SYNC_TIMEOUT"): pass
class RtEventSyncTimeoutError(AclInternalError, status=507047, symbol="ACL_ERROR_RT_EVENT_SYNC_TIMEOUT"): pass
class RtFftsPlusTimeoutError(AclInternalError, status=507048, symbol="ACL_ERROR_RT_FFTS_PLUS_TIMEOUT"): pass
class RtFftsPlusExceptionError(AclInternalError, status=507049, symbol="ACL_ERROR_RT_FFTS_PLUS_EXCEPTION"): pass
class RtFftsPlusTrapExceptionError(AclInternalError, status=507050, symbol="ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION"): pass
class RtSendMsgError(AclInternalError, status=507051, symbol="ACL_ERROR_RT_SEND_MSG"): pass
class RtCopyDataError(AclInternalError, status=507052, symbol="ACL_ERROR_RT_COPY_DATA"): pass
class RtDeviceMemError(AclInternalError, status=507053, symbol="ACL_ERROR_RT_DEVICE_MEM_ERROR"): pass
class RtHbmMultiBitEccError(AclInternalError, status=507054, symbol="ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR"): pass
class RtSuspectDeviceMemError(AclInternalError, status=507055, symbol="ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR"): pass
class RtLinkError(AclInternalError, status=507056, symbol="ACL_ERROR_RT_LINK_ERROR"): pass
class RtSuspectRemoteError(AclInternalError, status=507057, symbol="ACL_ERROR_RT_SUSPECT_REMOTE_ERROR"): pass
class RtDrvInternalError(AclInternalError, status=507899, symbol="ACL_ERROR_RT_DRV_INTERNAL_ERROR"): pass
class RtAicpuInternalError(AclInternalError, status=507900, symbol="ACL_ERROR_RT_AICPU_INTERNAL_ERROR"): pass
class RtSocketCloseError(AclInternalError, status=507901, symbol="ACL_ERROR_RT_SOCKET_CLOSE"): pass
class RtAicpuInfoLoadRspError(AclInternalError, status=507902, symbol="ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR"): pass
class RtStreamCaptureInvalidatedError(AclInternalError, status=507903, symbol="ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED"): pass
class RtCommOpRetryFailError(AclInternalError, status=507904, symbol="ACL_ERROR_RT_COMM_OP_RETRY_FAIL"): pass
class RtL3PortError(AclInternalError, status=507914, symbol="ACL_ERROR_RT_L3_PORT_ERROR"): pass
class RtCcuTimeoutError(AclInternalError, status=507915, symbol="ACL_ERROR_RT_CCU_TIMEOUT"): pass
class RtCcuExceptionError(AclInternalError, status=507916, symbol="ACL_ERROR_RT_CCU_EXCEPTION"): pass
class AclnnParamNullptrError(AclParamError, status=161001, symbol="ACLNN_ERR_PARAM_NULLPTR"): pass
class AclnnParamInvalidError(AclParamError, ValueError, status=161002, symbol="ACLNN_ERR_PARAM_INVALID"): pass
class AclnnRuntimeError(AclRuntimeError, status=361001, symbol="ACLNN_ERR_RUNTIME_ERROR"): pass
class AclnnInnerError(AclInternalError, status=561000, symbol="ACLNN_ERR_INNER"): pass
class AclnnInnerInfershapeError(AclInternalError, status=561001, symbol="ACLNN_ERR_INNER_INFERSHAPE_ERROR"): pass
class AclnnInnerTilingError(AclInternalError, status=561002, symbol="ACLNN_ERR_INNER_TILING_ERROR"): pass
class AclnnInnerFindKernelError(AclInternalError, status=561003, symbol="ACLNN_ERR_INNER_FIND_KERNEL_ERROR"): pass
class AclnnInnerCreateExecutorError(AclInternalError, status=561101, symbol="ACLNN_ERR_INNER_CREATE_EXECUTOR"): pass
class AclnnInnerNotTransExecutorError(AclInternalError, status=561102, symbol="ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR"): pass
class AclnnInnerNullptrError(AclInternalError, status=561103, symbol="ACLNN_ERR_INNER_NULLPTR"): pass
class AclnnInnerWrongAttrInfoSizeError(AclInternalError, status=561104, symbol="ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE"): pass
class AclnnInnerKeyConflictError(AclInternalError, status=561105, symbol="ACLNN_ERR_INNER_KEY_CONFLICT"): pass
class AclnnInnerInvalidImplModeError(AclInternalError, status=561106, symbol="ACLNN_ERR_INNER_INVALID_IMPL_MODE"): pass
class AclnnInnerOppPathNotFoundError(AclInternalError, status=561107, symbol="ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND"): pass
class AclnnInnerLoadJsonFailedError(AclInternalError, status=561108, symbol="ACLNN_ERR_INNER_LOAD_JSON_FAILED"): pass
class AclnnInnerJsonValueNotFoundError(AclInternalError, status=561109, symbol="ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND"): pass
class AclnnInnerJsonFormatInvalidError(AclInternalError, status=561110, symbol="ACLNN_ERR_INNER_JSON_FORMAT_INVALID"): pass
class AclnnInnerJsonDtypeInvalidError(AclInternalError, status=561111, symbol="ACLNN_ERR_INNER_JSON_DTYPE_INVALID"): pass
class AclnnInnerOppKernelPkgNotFoundError(AclInternalError, status=561112, symbol="ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND"): pass
class AclnnInnerOpFileInvalidError(AclInternalError, status=561113, symbol="ACLNN_ERR_INNER_OP_FILE_INVALID"): pass
class AclnnInnerAttrNumOutOfBoundError(AclInternalError, status=561114, symbol="ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND"): pass
class AclnnInnerAttrLenNotEnoughError(AclInternalError, status=561115, symbol="ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH"): pass
class AclnnInnerInputNumInJsonTooLargeError(AclInternalError, status=561116, symbol="ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE"): pass
class AclnnInnerInputJsonIsNullError(AclInternalError, status=561117, symbol="ACLNN_ERR_INNER_INPUT_JSON_IS_NULL"): pass
class AclnnInnerStaticWorkspaceInvalidError(AclInternalError, status=561118, symbol="ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID"): pass
class AclnnInnerStaticBlockDimInvalidError(AclInternalError, status=561119, symbol="ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID"): pass
# --- generated by tools/gen_errors.py: end ---

__all__ += [_n for _n, _v in list(globals().items())
            if isinstance(_v, type) and issubclass(_v, AclError) and _n not in __all__]

# The classes pyaclnn re-exports are shown and pickled under the name users write
# (pyaclnn.AclnnParamInvalidError): pyaclnn/__init__.py, which always runs first, lists them.
for _n in getattr(__import__("sys").modules.get("pyaclnn"), "__all__", ()):
    _v = globals().get(_n)
    if isinstance(_v, type) and _v.__module__ == __name__:
        _v.__module__ = "pyaclnn"
