"""The C-shaped layer, for porting CANN C/C++ samples line by line.

Names are the C names; enum constants are those of CANN's headers (``ACL_FLOAT``,
``ACL_FORMAT_ND``, ``ACL_MEM_MALLOC_HUGE_FIRST``, ``ACL_MEMCPY_HOST_TO_DEVICE``, status codes...).
Out-parameters become return values::

    ws_size, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(g, x, y, 1, out)

A failing status raises ``pyaclnn.AclError`` (the right subclass), so there are no return
codes to check. Host buffers are NumPy arrays, other buffer objects or DLPack host tensors (a
torch CPU tensor: its memory is read or written in place); device addresses are ints; ``None``
is nullptr. It runs on both backends: on the NumPy backend device memory, streams and
executors are emulated, so a ported sample runs in CI unchanged.
"""
from typing import Any, Sequence

from . import _backend, _current
from ._interop import host_array
# Enum constants and status codes, exactly as headers/ declares them (generated: tools/gen_constants.py).
from ._constants import *  # noqa: F401,F403

Handle = Any
Buffer = Any  # a host buffer (NumPy array, bytearray, torch CPU tensor...) or an int address


def _rt() -> Any:
    # The backend's fast path; after a fork the backend is forgotten, so current() raises.
    return (_backend._current or _backend.current()).runtime


# -- initialisation, devices -------------------------------------------------------------------
def aclInit(configPath: str | None = None) -> None:
    """aclInit. A repeated call is harmless (CANN's ACL_ERROR_REPEAT_INITIALIZE is ignored)."""
    _rt().init(configPath)


def aclFinalize() -> None:
    """aclFinalize."""
    _rt().finalize()


def aclGetRecentErrMsg() -> str | None:
    """aclGetRecentErrMsg: the text of this thread's last failure, cleared on read."""
    return _rt().recent_error()


def aclrtSetDevice(deviceId: int) -> None:
    _rt().set_device(deviceId)
    _current.forget()  # the thread's current device changed behind pyaclnn's objects


def aclrtResetDevice(deviceId: int) -> None:
    _rt().reset_device(deviceId)
    _current.forget()


def aclrtGetDevice() -> int:
    """aclrtGetDevice(&deviceId) -> deviceId."""
    return _rt().get_device()


def aclrtGetDeviceCount() -> int:
    """aclrtGetDeviceCount(&count) -> count."""
    return _rt().device_count()


def aclrtGetSocName() -> str:
    return _rt().soc_name()


def aclrtCreateContext(deviceId: int) -> Handle:
    """aclrtCreateContext(&context, deviceId) -> context (it becomes this thread's context)."""
    context = _rt().create_context(deviceId)
    _current.forget()
    return context


def aclrtDestroyContext(context: Handle) -> None:
    _rt().destroy_context(context)
    _current.forget()


def aclrtSetCurrentContext(context: Handle) -> None:
    _rt().set_current_context(context)
    _current.forget()


def aclrtGetCurrentContext() -> Handle:
    """aclrtGetCurrentContext(&context) -> context."""
    return _rt().get_current_context()


# -- streams, events -----------------------------------------------------------------------------
def aclrtCreateStream() -> Handle:
    """aclrtCreateStream(&stream) -> stream."""
    return _rt().create_stream()


def aclrtDestroyStream(stream: Handle) -> None:
    _rt().destroy_stream(stream)


def aclrtSynchronizeStream(stream: Handle) -> None:
    _rt().synchronize_stream(stream)


def aclrtCreateEvent() -> Handle:
    """aclrtCreateEvent(&event) -> event."""
    return _rt().create_event()


def aclrtRecordEvent(event: Handle, stream: Handle) -> None:
    _rt().record_event(event, stream)


def aclrtSynchronizeEvent(event: Handle) -> None:
    _rt().synchronize_event(event)


def aclrtEventElapsedTime(startEvent: Handle, endEvent: Handle) -> float:
    """aclrtEventElapsedTime(&ms, start, end) -> ms."""
    return _rt().event_elapsed_time(startEvent, endEvent)


def aclrtDestroyEvent(event: Handle) -> None:
    _rt().destroy_event(event)


# -- memory ----------------------------------------------------------------------------------------
def aclrtMalloc(size: int, policy: int) -> int:
    """aclrtMalloc(&devPtr, size, policy) -> devPtr (an int)."""
    return _rt().malloc(size, policy)


def aclrtFree(devPtr: int) -> None:
    _rt().free(devPtr)


def aclrtMallocHost(size: int) -> int:
    """aclrtMallocHost(&hostPtr, size) -> hostPtr (an int; pinned host memory)."""
    return _rt().malloc_host(size)


def aclrtFreeHost(hostPtr: int) -> None:
    _rt().free_host(hostPtr)


def _host(buffer: Buffer, writable: bool = False) -> Buffer:
    """A DLPack object (torch CPU tensor...) as an ndarray viewing its memory; addresses, None,
    ndarrays and other buffer objects as they are."""
    return host_array(buffer, in_place=writable) if hasattr(buffer, "__dlpack__") else buffer


def aclrtMemcpy(dst: Buffer, destMax: int, src: Buffer, count: int, kind: int) -> None:
    """aclrtMemcpy. Host sides are NumPy arrays/buffers or DLPack tensors (``dst`` writable: the
    copy lands in its memory), device sides ints."""
    _rt().memcpy(_host(dst, True), destMax, _host(src), count, kind)


def aclrtMemcpyAsync(dst: Buffer, destMax: int, src: Buffer, count: int, kind: int, stream: Handle) -> None:
    """aclrtMemcpyAsync. Keep host buffers alive and unchanged until the stream is synchronized."""
    _rt().memcpy_async(_host(dst, True), destMax, _host(src), count, kind, stream)


def aclrtMemset(devPtr: int, maxCount: int, value: int, count: int) -> None:
    _rt().memset(devPtr, maxCount, value, count)


def aclrtGetMemInfo(attr: int) -> tuple[int, int]:
    """aclrtGetMemInfo(attr, &free, &total) -> (free, total)."""
    return _rt().mem_info(attr)


def aclDataTypeSize(dataType: int) -> int:
    from .dtypes import itemsize
    return itemsize(dataType)


# -- aclnn meta objects ----------------------------------------------------------------------------
def aclCreateTensor(viewDims: Sequence[int], viewDimsNum: int, dataType: int, stride: Sequence[int] | None,
                    offset: int, format: int, storageDims: Sequence[int], storageDimsNum: int,
                    tensorData: int) -> Handle:
    """aclCreateTensor -> aclTensor*. ``stride`` None means contiguous; counts must match.
    Lists and tuples go to C as they are; other sequences (a NumPy array...) become lists."""
    if len(viewDims) != viewDimsNum or len(storageDims) != storageDimsNum:
        from .errors import AclnnParamInvalidError
        raise AclnnParamInvalidError("aclCreateTensor", f"viewDimsNum {viewDimsNum} / storageDimsNum "
                                     f"{storageDimsNum} do not match {len(viewDims)} / {len(storageDims)} dims")
    # inline checks, not a helper call per sequence: this sits on every ported operator call
    if not isinstance(viewDims, (list, tuple)):
        viewDims = [int(v) for v in viewDims]
    if stride is not None and not isinstance(stride, (list, tuple)):
        stride = [int(v) for v in stride]
    if not isinstance(storageDims, (list, tuple)):
        storageDims = [int(v) for v in storageDims]
    return _rt().create_tensor(viewDims, dataType, stride, offset, format, storageDims, tensorData)


def aclDestroyTensor(tensor: Handle) -> None:
    _rt().destroy_tensor(tensor)


def aclCreateBoolArray(value: Sequence[bool], size: int) -> Handle:
    """aclCreateBoolArray(value, size) -> aclBoolArray* (the values are copied)."""
    return _rt().create_bool_array(list(value)[:size])


def aclDestroyBoolArray(array: Handle) -> None:
    _rt().destroy_bool_array(array)


def aclCreateIntArray(value: Sequence[int], size: int) -> Handle:
    """aclCreateIntArray(value, size) -> aclIntArray* (the values are copied)."""
    return _rt().create_int_array(list(value)[:size])


def aclDestroyIntArray(array: Handle) -> None:
    _rt().destroy_int_array(array)


def aclSetAclOpExecutorRepeatable(executor: Handle) -> None:
    _rt().set_executor_repeatable(executor)


def aclDestroyAclOpExecutor(executor: Handle) -> None:
    _rt().destroy_executor(executor)


def aclSetInputTensorAddr(executor: Handle, index: int, tensor: Handle, addr: int) -> None:
    _rt().set_input_tensor_addr(executor, index, tensor, addr)


def aclSetOutputTensorAddr(executor: Handle, index: int, tensor: Handle, addr: int) -> None:
    _rt().set_output_tensor_addr(executor, index, tensor, addr)


# -- the four operators: phase 1 returns (workspaceSize, executor); phase 2 launches -----------------
def aclnnMseLossBackwardGetWorkspaceSize(gradOutput: Handle, self: Handle, target: Handle, reduction: int,
                                         out: Handle) -> tuple[int, Handle]:
    return _rt().workspace_size("MseLossBackward", (gradOutput, self, target, reduction, out))


def aclnnMseLossBackward(workspace: int | None, workspaceSize: int, executor: Handle, stream: Handle) -> None:
    _rt().launch("MseLossBackward", workspace or 0, workspaceSize, executor, stream)


def aclnnGroupNormBackwardGetWorkspaceSize(gradOut: Handle, input: Handle, mean: Handle, rstd: Handle,
                                           gamma: Handle, N: int, C: int, HxW: int, group: int,
                                           outputMask: Handle, gradInput: Handle, gradGammaOut: Handle,
                                           gradBetaOut: Handle) -> tuple[int, Handle]:
    return _rt().workspace_size("GroupNormBackward", (gradOut, input, mean, rstd, gamma, N, C, HxW, group,
                                                      outputMask, gradInput, gradGammaOut, gradBetaOut))


def aclnnGroupNormBackward(workspace: int | None, workspaceSize: int, executor: Handle, stream: Handle) -> None:
    _rt().launch("GroupNormBackward", workspace or 0, workspaceSize, executor, stream)


def aclnnCrossEntropyLossGradGetWorkspaceSize(gradLoss: Handle, logProb: Handle, target: Handle,
                                              weightOptional: Handle, gradZlossOptional: Handle,
                                              lseForZlossOptional: Handle, reductionOptional: str | None,
                                              ignoreIndex: int, labelSmoothing: float,
                                              lseSquareScaleForZloss: float, out: Handle) -> tuple[int, Handle]:
    """``reductionOptional`` is passed through as given (None is nullptr: the library's "mean")."""
    return _rt().workspace_size("CrossEntropyLossGrad", (gradLoss, logProb, target, weightOptional,
                                                         gradZlossOptional, lseForZlossOptional,
                                                         reductionOptional, ignoreIndex, labelSmoothing,
                                                         lseSquareScaleForZloss, out))


def aclnnCrossEntropyLossGrad(workspace: int | None, workspaceSize: int, executor: Handle, stream: Handle) -> None:
    _rt().launch("CrossEntropyLossGrad", workspace or 0, workspaceSize, executor, stream)


def aclnnPreluBackwardGetWorkspaceSize(gradOutput: Handle, self: Handle, weight: Handle, gradInput: Handle,
                                       gradWeight: Handle) -> tuple[int, Handle]:
    return _rt().workspace_size("PreluBackward", (gradOutput, self, weight, gradInput, gradWeight))


def aclnnPreluBackward(workspace: int | None, workspaceSize: int, executor: Handle, stream: Handle) -> None:
    _rt().launch("PreluBackward", workspace or 0, workspaceSize, executor, stream)
