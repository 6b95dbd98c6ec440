"""The C-shaped layer, for porting CANN C/C++ samples line by line.

Names are the C names; enum constants are those of CANN's headers (``ACL_FLOAT``,
``ACL_FORMAT_ND``, ``ACL_MEM_MALLOC_HUGE_FIRST``, ``ACL_MEMCPY_HOST_TO_DEVICE``, status codes...).
Out-parameters become return values::

    ws_size, executor = acl.aclnnAddGetWorkspaceSize(x, y, alpha, out)

A failing status raises ``pyaclnn.AclError`` (the right subclass), so there are no return
codes to check. Host buffers are NumPy arrays, other buffer objects or DLPack host tensors (a
torch CPU tensor: its memory is read or written in place); device addresses are ints; ``None``
is nullptr. It runs on both backends: on the NumPy backend device memory, streams and
executors are emulated, so a ported sample runs in CI unchanged.

Where a handle goes, a function takes the handle, None, its int address, or the pyaclnn object
of that C type: ``Tensor`` for ``aclTensor *``, ``Stream`` for ``aclrtStream``, ``Event`` for
``aclrtEvent``, which stays the owner (``pyaclnn._handles`` says exactly what that means)::

    x = pyaclnn.Tensor.from_numpy(a)
    ws_size, executor = acl.aclnnAddGetWorkspaceSize(x, x, alpha, out)
    acl.aclnnAdd(None, ws_size, executor, stream)   # stream: a pyaclnn.Stream
    acl.aclrtSynchronizeStream(stream)

Every function of ``headers/`` is here, and ``aclnn<Name>GetWorkspaceSize`` / ``aclnn<Name>``
for any operator the backend finds (custom packages, the installed CANN's aclnnop headers,
pyaclnn's headers/; ``python -m pyaclnn ops``): made on first access, with the C parameters its
header declares (a launch may declare more than the four: ops-cv's ``aclnnGaussianBlur(workspace,
workspaceSize, executor, src, ksize, sigmaX, sigmaY, borderType, dst, stream)``). For a name no header declares, the attribute does not exist: accessing it raises
``pyaclnn.UnknownOperatorError`` (an AttributeError, so ``hasattr`` is False) naming where the
backend looked. On the NumPy backend an operator without a reference raises NotSupportedError
when called.
"""
import keyword as _keyword
import re
import sys as _sys
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as _np

from . import _backend, _current, _handles, errors as _errors
# The handle types of the signatures below, exported (``X as X``) for users' own annotations.
from ._handles import (AclBoolArray as AclBoolArray, AclFloatArray as AclFloatArray, AclIntArray as AclIntArray,
                       AclOpExecutor as AclOpExecutor, AclScalar as AclScalar, AclScalarArray as AclScalarArray,
                       AclScalarList as AclScalarList, AclTensor as AclTensor, AclTensorArray as AclTensorArray,
                       AclTensorList as AclTensorList, AclrtContext as AclrtContext, AclrtEvent as AclrtEvent,
                       AclrtStream as AclrtStream)
from ._registry import Registry as _Registry, pyaclnn_source as _pyaclnn_source
from ._interop import host_array
from ._signature import c_element as _c_element, c_values as _c_values
# Enum constants and status codes, exactly as headers/ declares them (generated: tools/gen_constants.py).
from ._constants import *  # noqa: F401,F403

if TYPE_CHECKING:
    from ._runtime import Runtime

Handle = Any
Buffer = Any  # a host buffer (NumPy array, bytearray, torch CPU tensor...) or an int address


def _rt() -> "Runtime":
    # The backend's fast path; after a fork the backend is forgotten, so current() raises.
    return (_backend._current or _backend.current()).runtime


# -- initialisation, devices -------------------------------------------------------------------
def aclInit(configPath: str | None = None) -> None:
    """aclInit. A repeated call is harmless (CANN's ACL_ERROR_REPEAT_INITIALIZE is ignored)."""
    _rt().init(configPath)


def aclFinalize() -> None:
    """aclFinalize."""
    _rt().finalize()


def aclFinalizeReference() -> int:
    """aclFinalizeReference(&refCount) -> refCount: drop one aclInit reference (finalizes at 0)."""
    return _rt().finalize_reference()


def aclsysGetCANNVersion(name: int) -> dict[str, str]:
    """aclsysGetCANNVersion(name, &version) -> the aclCANNPackageVersion fields as a dict
    (version, majorVersion, minorVersion, releaseVersion, patchVersion)."""
    return _rt().cann_package_version(name)


def aclsysGetVersionStr(pkgName: str) -> str:
    """aclsysGetVersionStr(pkgName, versionStr) -> versionStr."""
    return _rt().version_str(pkgName)


def aclsysGetVersionNum(pkgName: str) -> int:
    """aclsysGetVersionNum(pkgName, &versionNum) -> versionNum."""
    return _rt().version_num(pkgName)


def aclrtGetVersion() -> tuple[int, int, int]:
    """aclrtGetVersion(&major, &minor, &patch) -> (major, minor, patch)."""
    return _rt().runtime_version()


def aclrtGetRunMode() -> int:
    """aclrtGetRunMode(&runMode) -> runMode (ACL_DEVICE or ACL_HOST)."""
    return _rt().run_mode()


def aclrtGetLastError(level: int) -> int:
    """aclrtGetLastError(level) -> the thread's last failing status (0 if none), cleared. Its
    value is a status to read, so it is returned, never raised."""
    return _rt().last_error(level, peek=False)


def aclrtPeekAtLastError(level: int) -> int:
    """aclrtPeekAtLastError(level) -> the thread's last failing status, not cleared."""
    return _rt().last_error(level, peek=True)


def aclrtGetDeviceInfo(deviceId: int, attr: int) -> int:
    """aclrtGetDeviceInfo(deviceId, attr, &value) -> value."""
    return _rt().device_info(deviceId, attr)


def aclGetDeviceCapability(deviceId: int, deviceInfo: int) -> int:
    """aclGetDeviceCapability(deviceId, deviceInfo, &value) -> value."""
    return _rt().device_capability(deviceId, deviceInfo)


def aclFloat16ToFloat(value: int) -> float:
    """aclFloat16ToFloat: the IEEE half whose bits are ``value`` (a uint16) as a float."""
    import numpy as np
    return float(np.array(value & 0xFFFF, np.uint16).view(np.float16))


def aclFloatToFloat16(value: float) -> int:
    """aclFloatToFloat16: ``value`` rounded to IEEE half (nearest even), as its uint16 bits."""
    import numpy as np
    with np.errstate(over="ignore"):  # overflow is inf, as in C
        return int(np.array(value, np.float32).astype(np.float16).view(np.uint16))


def aclnnInit(configPath: str | None = None) -> None:
    """aclnnInit (libnnopbase)."""
    _rt().aclnn_init(configPath)


def aclnnFinalize() -> None:
    """aclnnFinalize (libnnopbase)."""
    _rt().aclnn_finalize()


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


def aclrtDestroyContext(context: AclrtContext) -> None:
    _rt().destroy_context(context)
    _current.forget()


def aclrtSetCurrentContext(context: AclrtContext) -> None:
    _rt().set_current_context(context)
    _current.forget()


def aclrtGetCurrentContext() -> Handle:
    """aclrtGetCurrentContext(&context) -> context."""
    return _rt().get_current_context()


# -- streams, events -----------------------------------------------------------------------------
def aclrtCreateStream() -> Handle:
    """aclrtCreateStream(&stream) -> stream."""
    return _rt().create_stream()


def aclrtDestroyStream(stream: AclrtStream) -> None:
    _rt().destroy_stream(stream)


def aclrtSynchronizeStream(stream: AclrtStream) -> None:
    _rt().synchronize_stream(stream)


def aclrtSynchronizeStreamWithTimeout(stream: AclrtStream, timeout: int) -> None:
    """aclrtSynchronizeStreamWithTimeout (timeout in ms; -1 waits forever)."""
    _rt().synchronize_stream_timeout(stream, timeout)


def aclrtSynchronizeDevice() -> None:
    """aclrtSynchronizeDevice: wait for every stream of the current device."""
    _rt().synchronize_device()


def aclrtStreamWaitEvent(stream: AclrtStream, event: AclrtEvent) -> None:
    _rt().stream_wait_event(stream, event)


def aclrtCreateEvent() -> Handle:
    """aclrtCreateEvent(&event) -> event."""
    return _rt().create_event()


def aclrtCreateEventWithFlag(flag: int) -> Handle:
    """aclrtCreateEventWithFlag(&event, flag) -> event (ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE...)."""
    return _rt().create_event_with_flag(flag)


def aclrtQueryEventStatus(event: AclrtEvent) -> int:
    """aclrtQueryEventStatus(event, &status) -> status (ACL_EVENT_RECORDED_STATUS_COMPLETE...)."""
    return _rt().query_event_status(event)


def aclrtRecordEvent(event: AclrtEvent, stream: AclrtStream) -> None:
    _rt().record_event(event, stream)


def aclrtSynchronizeEvent(event: AclrtEvent) -> None:
    _rt().synchronize_event(event)


def aclrtEventElapsedTime(startEvent: AclrtEvent, endEvent: AclrtEvent) -> float:
    """aclrtEventElapsedTime(&ms, start, end) -> ms."""
    return _rt().event_elapsed_time(startEvent, endEvent)


def aclrtDestroyEvent(event: AclrtEvent) -> None:
    _rt().destroy_event(event)


def aclrtCreateEventExWithFlag(flag: int) -> Handle:
    """aclrtCreateEventExWithFlag(&event, flag) -> event: the events a graph capture records and
    waits on (ACL_EVENT_SYNC); CANN refuses aclrtCreateEvent's in a capture (207000)."""
    return _rt().create_event_ex_with_flag(flag)


# -- graph capture (aclmdlRI) ------------------------------------------------------------------------
def aclmdlRICaptureBegin(stream: AclrtStream, mode: int) -> None:
    """aclmdlRICaptureBegin(stream, mode): work launched on ``stream`` is recorded, not run, until
    aclmdlRICaptureEnd (mode: ACL_MODEL_RI_CAPTURE_MODE_GLOBAL / _THREAD_LOCAL / _RELAXED)."""
    _rt().capture_begin(stream, mode)


def aclmdlRICaptureGetInfo(stream: AclrtStream) -> tuple[int, Handle]:
    """aclmdlRICaptureGetInfo(stream, &status, &modelRI) -> (status, modelRI): status is
    ACL_MODEL_RI_CAPTURE_STATUS_NONE / _ACTIVE / _INVALIDATED; modelRI is None when not capturing."""
    status, model = _rt().capture_get_info(stream)
    return status, _none_if_null(model)


def aclmdlRICaptureEnd(stream: AclrtStream) -> Handle:
    """aclmdlRICaptureEnd(stream, &modelRI) -> modelRI, the captured model."""
    return _rt().capture_end(stream)


def aclmdlRICaptureThreadExchangeMode(mode: int) -> int:
    """aclmdlRICaptureThreadExchangeMode(&mode): sets the calling thread's capture mode and
    returns its previous one (RELAXED lets aclrtMemcpy/aclrtMemset run during a GLOBAL capture)."""
    return _rt().capture_thread_exchange_mode(mode)


def aclmdlRIExecuteAsync(modelRI: Handle, stream: AclrtStream) -> None:
    """aclmdlRIExecuteAsync(modelRI, stream): queue one replay of the captured work on ``stream``."""
    _rt().model_execute_async(_null_if_none(modelRI), stream)


def aclmdlRIDestroy(modelRI: Handle) -> None:
    """aclmdlRIDestroy(modelRI)."""
    _rt().model_destroy(_null_if_none(modelRI))


def _none_if_null(handle: Handle) -> Handle:
    """A nullptr handle out of the runtime as None (cffi's NULL on acl)."""
    return None if handle is None or handle == _rt().null else handle


def _null_if_none(handle: Handle) -> Handle:
    """None in as the runtime's nullptr (cffi refuses None where a pointer goes)."""
    return _rt().null if handle is None else handle


# -- memory ----------------------------------------------------------------------------------------
def aclrtMalloc(size: int, policy: int) -> int:
    """aclrtMalloc(&devPtr, size, policy) -> devPtr (an int).

    Args:
        size: bytes, > 0.
        policy: an ``aclrtMemMallocPolicy``, e.g. ``ACL_MEM_MALLOC_HUGE_FIRST``.

    Returns:
        The device address, as an int.

    Raises:
        AclError: the status, e.g. 100000 for size 0, 207001 when out of memory.

    Examples:
        >>> from pyaclnn import acl
        >>> acl.aclrtSetDevice(0)
        >>> ptr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        >>> acl.aclrtMemcpy(ptr, 16, np.arange(4, dtype=np.float32), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        >>> out = np.zeros(4, np.float32)
        >>> acl.aclrtMemcpy(out, 16, ptr, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        >>> out
        array([0., 1., 2., 3.], dtype=float32)
        >>> acl.aclrtFree(ptr)
        >>> acl.aclrtResetDevice(0)
    """
    return _rt().malloc(_size_t("aclrtMalloc", size), policy)


def aclrtFree(devPtr: int) -> None:
    _rt().free(devPtr)


def aclrtMallocHost(size: int) -> int:
    """aclrtMallocHost(&hostPtr, size) -> hostPtr (an int; pinned host memory)."""
    return _rt().malloc_host(_size_t("aclrtMallocHost", size))


def _size_t(api: str, value: Any) -> int:
    """A ``size_t`` size: an int (NumPy integers too, not bools) >= 0, else a TypeError or
    ValueError naming it, on both backends (cffi said only "an integer is required" or "can't
    convert negative number to unsigned", the reference failed inside its allocator)."""
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise TypeError(f"{api}: size (size_t) must be an int, got {type(value).__name__} {value!r}")
    if not 0 <= value < 2 ** 64:
        raise ValueError(f"{api}: size (size_t) = {value} is out of the size_t range [0, 2**64)")
    return int(value)


def aclrtFreeHost(hostPtr: int) -> None:
    _rt().free_host(hostPtr)


def _host(buffer: Buffer, writable: bool = False) -> Buffer:
    """A DLPack object (torch CPU tensor...) as an ndarray viewing its memory; addresses, None,
    ndarrays and other buffer objects as they are."""
    return host_array(buffer, in_place=writable) if hasattr(buffer, "__dlpack__") else buffer


def _host_side(api: str, name: str, buffer: Buffer, count: int, writable: bool = False) -> Buffer:
    """One side of a copy, checked before CANN is called: a host buffer C would read or write as
    ``count`` plain bytes must be C-contiguous, writable for ``dst`` and hold ``count`` bytes (C
    cannot know, and would read or write past it). Ints (addresses) and None go through as they
    are. TypeError for what is no buffer, ValueError for a buffer that cannot serve."""
    if buffer is None or (isinstance(buffer, int) and not isinstance(buffer, bool)):
        return buffer
    buffer = _host(buffer, writable)
    if isinstance(buffer, _np.ndarray):  # flags, not memoryview: bfloat16 has no buffer-protocol format
        contiguous, readonly, nbytes = buffer.flags.c_contiguous, not buffer.flags.writeable, buffer.nbytes
    else:
        try:
            view = memoryview(buffer)
        except TypeError:
            raise TypeError(f"{api}: {name} must be a host buffer (NumPy array, bytearray, DLPack CPU tensor...), "
                            f"an int address or None, not {type(buffer).__name__}") from None
        contiguous, readonly, nbytes = view.c_contiguous, view.readonly, view.nbytes
    if not contiguous:
        fix = ("copy into np.ascontiguousarray(dst), then assign it back" if writable
               else "pass np.ascontiguousarray(src)")
        raise ValueError(f"{api}: {name} is not C-contiguous (C copies count plain bytes from its start): {fix}")
    if writable and readonly:
        raise ValueError(f"{api}: {name} is read-only, and the copy writes into it: pass a writable buffer "
                         f"(e.g. {name}.copy() or np.empty_like({name}))")
    if count > nbytes:
        raise ValueError(f"{api}: count {count} exceeds {name}'s {nbytes} bytes: pass count <= {nbytes} "
                         f"or a larger {name}")
    return buffer


def aclrtMemcpy(dst: Buffer, destMax: int, src: Buffer, count: int, kind: int) -> None:
    """aclrtMemcpy. Host sides are NumPy arrays/buffers or DLPack tensors (``dst`` writable: the
    copy lands in its memory; both C-contiguous, of at least ``count`` bytes: else ValueError,
    before CANN is called), device sides ints; None is nullptr.

    Args:
        dst: where to copy to: a host buffer or a device address.
        destMax: the bytes ``dst`` can hold.
        src: what to copy: a host buffer or a device address.
        count: the bytes to copy (0 succeeds at once).
        kind: ``ACL_MEMCPY_HOST_TO_DEVICE``, ``ACL_MEMCPY_DEVICE_TO_HOST``, ...

    Raises:
        ValueError: a host buffer that is not C-contiguous, read-only for ``dst``, or smaller
            than ``count``.
        TypeError: a host side that is no buffer.
        AclError: CANN's status, e.g. 107000 (``count`` over ``destMax``), 507899 (a device
            side that is not inside a live allocation).
    """
    api = "aclrtMemcpy"
    _rt().memcpy(_host_side(api, "dst", dst, count, True), destMax, _host_side(api, "src", src, count), count, kind)


def aclrtMemcpyAsync(dst: Buffer, destMax: int, src: Buffer, count: int, kind: int, stream: AclrtStream) -> None:
    """aclrtMemcpyAsync (host sides as for aclrtMemcpy). Keep host buffers alive and unchanged
    until the stream is synchronized."""
    api = "aclrtMemcpyAsync"
    _rt().memcpy_async(_host_side(api, "dst", dst, count, True), destMax, _host_side(api, "src", src, count),
                       count, kind, stream)


def aclrtMemset(devPtr: int | None, maxCount: int, value: int, count: int) -> None:
    _rt().memset(devPtr, maxCount, value, count)


def aclrtMemsetAsync(devPtr: int | None, maxCount: int, value: int, count: int, stream: AclrtStream) -> None:
    _rt().memset_async(devPtr, maxCount, value, count, stream)


def aclrtGetMemInfo(attr: int) -> tuple[int, int]:
    """aclrtGetMemInfo(attr, &free, &total) -> (free, total)."""
    return _rt().mem_info(attr)


def aclDataTypeSize(dataType: int) -> int:
    from .dtypes import itemsize
    if type(dataType) is not int:
        dataType = _data_type("aclDataTypeSize", dataType)
    return itemsize(dataType)


def _data_type(api: str, value: Any) -> int:
    """An ``aclDataType`` argument that is not a plain int. The C parameter is an int enum, so
    anything that is no integer (a NumPy dtype or type, a torch dtype, text) is a TypeError
    naming the parameter and the constant to pass, on both backends (cffi would say only "an
    integer is required", the reference would look it up as an unknown value)."""
    if isinstance(value, (int, _np.integer)) and not isinstance(value, bool):  # pyaclnn.DType.FLOAT, np.int32(0)
        return int(value)
    fix = "a constant such as pyaclnn.acl.ACL_FLOAT"
    if value is not None and not isinstance(value, bool):
        try:
            from .dtypes import from_numpy
            fix = f"pyaclnn.acl.{from_numpy(value).c_name} (pyaclnn.dtypes.from_numpy(dtype) converts a NumPy dtype)"
        except (TypeError, ValueError, _errors.NotSupportedError):
            pass
    if isinstance(value, type):
        module = "" if value.__module__ == "builtins" else value.__module__ + "."
        what = f"the type {module}{value.__qualname__}"
    else:
        what = repr(value) if isinstance(value, _np.dtype) else f"{type(value).__name__} {value!r}"
    raise TypeError(f"{api}: dataType must be an aclDataType (an int), got {what}; pass {fix}")


# -- aclnn meta objects ----------------------------------------------------------------------------
def aclCreateTensor(viewDims: Sequence[int], viewDimsNum: int, dataType: int, stride: Sequence[int] | None,
                    offset: int, format: int, storageDims: Sequence[int], storageDimsNum: int,
                    tensorData: int) -> Handle:
    """aclCreateTensor -> aclTensor*. ``stride`` None means contiguous; counts must match.
    Lists and tuples go to C as they are; other sequences (a NumPy array...) become lists.

    Args:
        viewDims: the shape.
        viewDimsNum: ``len(viewDims)``.
        dataType: an ``aclDataType`` (``ACL_FLOAT``...).
        stride: the strides, in elements; None for contiguous.
        offset: the first element's offset from ``tensorData``, in elements.
        format: an ``aclFormat``, e.g. ``ACL_FORMAT_ND``.
        storageDims: the shape of the memory the view lies in.
        storageDimsNum: ``len(storageDims)``.
        tensorData: the device address (an int; None is nullptr).

    Returns:
        The aclTensor handle; free it with ``aclDestroyTensor``.

    Raises:
        AclnnParamInvalidError: a count that does not match its dims.
        TypeError: a ``tensorData`` that is no address (a host array: aclrtMemcpy it first).
    """
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
    if type(dataType) is not int:
        dataType = _data_type("aclCreateTensor", dataType)
    if type(tensorData) is not int:
        tensorData = _device_address("aclCreateTensor", "tensorData", tensorData)
    return _rt().create_tensor(viewDims, dataType, stride, offset, format, storageDims, tensorData)


def _device_address(api: str, name: str, value: Any) -> int:
    """A ``void *`` device address that is not a plain int: None is nullptr (0), a NumPy integer
    its value; anything else (a host array given for the device memory it should have been
    copied to) is a TypeError naming the parameter, on both backends."""
    if value is None:
        return 0
    if isinstance(value, _np.integer):
        return int(value)
    raise TypeError(f"{api}: {name} (void *) takes a device address (an int from aclrtMalloc) or None, got "
                    f"{type(value).__name__}; copy host data to device memory with aclrtMemcpy first")


def aclDestroyTensor(tensor: AclTensor) -> None:
    _rt().destroy_tensor(tensor)


def aclCreateBoolArray(value: Sequence[bool], size: int) -> Handle:
    """aclCreateBoolArray(value, size) -> aclBoolArray* (the values are copied)."""
    return _rt().create_bool_array(_elements("aclCreateBoolArray", value, size, "bool"))


def _elements(api: str, values: Sequence[Any], size: int, kind: str) -> list[Any]:
    """The first ``size`` values, each checked as C would need it (``_signature.c_element``): on
    both backends a value of no C meaning is a TypeError, never cast."""
    out = []
    for i, v in enumerate(list(values)[:size]):
        try:
            out.append(_c_element(v, kind))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{api}: value[{i}] must be {_ELEMENT[kind]}: {exc}") from None
    return out


_ELEMENT = {"int": "an int (int64_t)", "float": "a real number (float)", "bool": "a bool"}


def aclDestroyBoolArray(array: AclBoolArray) -> None:
    _rt().destroy_bool_array(array)


def aclCreateIntArray(value: Sequence[int], size: int) -> Handle:
    """aclCreateIntArray(value, size) -> aclIntArray* (the values are copied)."""
    return _rt().create_int_array(_elements("aclCreateIntArray", value, size, "int"))


def aclDestroyIntArray(array: AclIntArray) -> None:
    _rt().destroy_int_array(array)


def aclCreateFloatArray(value: Sequence[float], size: int) -> Handle:
    """aclCreateFloatArray(value, size) -> aclFloatArray* (the values are copied, as float32)."""
    return _rt().create_float_array(_elements("aclCreateFloatArray", value, size, "float"))


def aclDestroyFloatArray(array: AclFloatArray) -> None:
    _rt().destroy_float_array(array)


def aclCreateScalar(value: Any, dataType: int) -> Handle:
    """aclCreateScalar(&value, dataType) -> aclScalar*. ``value`` is a number (stored as
    ``dataType``, as the C sample's typed variable holds it) or a buffer with its bytes. Text is
    a TypeError; a number ``dataType`` cannot hold at all (2**70 for ACL_INT64) a ValueError."""
    if isinstance(value, str):
        raise TypeError(f"aclCreateScalar: value must be a number or a buffer of its bytes, got str {value!r}")
    if type(dataType) is not int:
        dataType = _data_type("aclCreateScalar", dataType)
    try:
        return _rt().create_scalar(value, dataType)
    except OverflowError as exc:  # raised by the host-side conversion, before any handle exists
        raise ValueError(f"aclCreateScalar: {value!r} does not fit aclDataType {dataType} ({exc})") from None


def aclDestroyScalar(scalar: AclScalar) -> None:
    _rt().destroy_scalar(scalar)


def aclCreateTensorList(value: AclTensorArray, size: int) -> Handle:
    """aclCreateTensorList(value, size) -> aclTensorList*. The list owns the tensors from now
    on: aclDestroyTensorList destroys them (do not aclDestroyTensor them yourself). A
    pyaclnn.Tensor element gets a descriptor of its own, the list's; the Tensor keeps its own
    and is kept alive until aclDestroyTensorList (do not close() it before)."""
    return _handles.create_tensor_list(_rt(), value, size)


def aclDestroyTensorList(array: AclTensorList) -> None:
    """aclDestroyTensorList: the list and its elements (descriptors made for Tensors included)."""
    rt = _rt()
    rt.destroy_tensor_list(array)
    _handles.list_destroyed(rt, array)


def aclCreateScalarList(value: AclScalarArray, size: int) -> Handle:
    """aclCreateScalarList(value, size) -> aclScalarList* (owns the scalars, as a tensor list does)."""
    return _rt().create_scalar_list(list(value)[:size])


def aclDestroyScalarList(array: AclScalarList) -> None:
    _rt().destroy_scalar_list(array)


def aclInitTensor(tensor: AclTensor, viewDims: Sequence[int], viewDimsNum: int, dataType: int,
                  stride: Sequence[int] | None, offset: int, format: int, storageDims: Sequence[int],
                  storageDimsNum: int, tensorDataAddr: int) -> None:
    """aclInitTensor: re-describe an existing aclTensor (same arguments as aclCreateTensor)."""
    if len(viewDims) != viewDimsNum or len(storageDims) != storageDimsNum:
        from .errors import AclnnParamInvalidError
        raise AclnnParamInvalidError("aclInitTensor", f"viewDimsNum {viewDimsNum} / storageDimsNum "
                                     f"{storageDimsNum} do not match {len(viewDims)} / {len(storageDims)} dims")
    if type(dataType) is not int:
        dataType = _data_type("aclInitTensor", dataType)
    _rt().init_tensor(tensor, [int(v) for v in viewDims], dataType,
                      None if stride is None else [int(v) for v in stride], offset, format,
                      [int(v) for v in storageDims], tensorDataAddr)


def aclGetViewShape(tensor: AclTensor) -> list[int]:
    """aclGetViewShape(tensor, &viewDims, &viewDimsNum) -> viewDims (the C array is freed)."""
    return _rt().tensor_meta("ViewShape", tensor)


def aclGetStorageShape(tensor: AclTensor) -> list[int]:
    """aclGetStorageShape(tensor, &storageDims, &storageDimsNum) -> storageDims."""
    return _rt().tensor_meta("StorageShape", tensor)


def aclGetViewStrides(tensor: AclTensor) -> list[int]:
    """aclGetViewStrides(tensor, &stridesValue, &stridesNum) -> strides (in elements)."""
    return _rt().tensor_meta("ViewStrides", tensor)


def aclGetViewOffset(tensor: AclTensor) -> int:
    """aclGetViewOffset(tensor, &offset) -> offset (in elements)."""
    return _rt().tensor_meta("ViewOffset", tensor)


def aclGetFormat(tensor: AclTensor) -> int:
    """aclGetFormat(tensor, &format) -> format."""
    return _rt().tensor_meta("Format", tensor)


def aclGetDataType(tensor: AclTensor) -> int:
    """aclGetDataType(tensor, &dataType) -> dataType."""
    return _rt().tensor_meta("DataType", tensor)


def aclGetIntArraySize(array: AclIntArray) -> int:
    return _rt().meta_size("IntArray", array)


def aclGetFloatArraySize(array: AclFloatArray) -> int:
    return _rt().meta_size("FloatArray", array)


def aclGetBoolArraySize(array: AclBoolArray) -> int:
    return _rt().meta_size("BoolArray", array)


def aclGetTensorListSize(tensorList: AclTensorList) -> int:
    return _rt().meta_size("TensorList", tensorList)


def aclGetScalarListSize(scalarList: AclScalarList) -> int:
    return _rt().meta_size("ScalarList", scalarList)


def aclSetAclOpExecutorRepeatable(executor: AclOpExecutor) -> None:
    rt = _rt()
    rt.set_executor_repeatable(executor)
    _handles.made_repeatable(rt, executor)


def aclDestroyAclOpExecutor(executor: AclOpExecutor) -> None:
    rt = _rt()
    try:
        rt.destroy_executor(executor)
    finally:  # what pyaclnn.acl kept for it (its Planned: pyaclnn._handles) goes with it
        if _handles._plans:
            _handles.destroyed(rt, executor)


# ``tensor`` of the three below: a handle (a live one passes as it is: the repeat loop), or a
# pyaclnn.Tensor the executor's phase 1 got, which stands for the descriptor that phase 1 gave
# CANN (moved to ``addr`` here; the Tensor never is).
def aclSetInputTensorAddr(executor: AclOpExecutor, index: int, tensor: Any, addr: int) -> None:
    rt = _rt()
    if type(tensor) is not rt.handle_class or not tensor:
        tensor = _handles.executor_tensor(rt, executor, tensor, "aclSetInputTensorAddr")
    try:
        rt.set_input_tensor_addr(executor, index, tensor, addr)
    except Exception:
        _handles.refused("aclSetInputTensorAddr", (("tensor", "aclTensor *", "aclTensor *", tensor),))
        raise


def aclSetOutputTensorAddr(executor: AclOpExecutor, index: int, tensor: Any, addr: int) -> None:
    rt = _rt()
    if type(tensor) is not rt.handle_class or not tensor:
        tensor = _handles.executor_tensor(rt, executor, tensor, "aclSetOutputTensorAddr")
    try:
        rt.set_output_tensor_addr(executor, index, tensor, addr)
    except Exception:
        _handles.refused("aclSetOutputTensorAddr", (("tensor", "aclTensor *", "aclTensor *", tensor),))
        raise


def aclSetTensorAddr(executor: AclOpExecutor, index: int, tensor: Any, addr: int) -> None:
    """aclSetTensorAddr: ``index`` counts the inputs, then the outputs."""
    rt = _rt()
    if type(tensor) is not rt.handle_class or not tensor:
        tensor = _handles.executor_tensor(rt, executor, tensor, "aclSetTensorAddr")
    try:
        rt.set_tensor_addr(executor, index, tensor, addr)
    except Exception:
        _handles.refused("aclSetTensorAddr", (("tensor", "aclTensor *", "aclTensor *", tensor),))
        raise


def aclSetDynamicInputTensorAddr(executor: AclOpExecutor, irIndex: int, relativeIndex: int, tensors: AclTensorList,
                                 addr: int) -> None:
    _rt().set_dynamic_tensor_addr("Input", executor, irIndex, relativeIndex, tensors, addr)


def aclSetDynamicOutputTensorAddr(executor: AclOpExecutor, irIndex: int, relativeIndex: int, tensors: AclTensorList,
                                  addr: int) -> None:
    _rt().set_dynamic_tensor_addr("Output", executor, irIndex, relativeIndex, tensors, addr)


def aclSetDynamicTensorAddr(executor: AclOpExecutor, irIndex: int, relativeIndex: int, tensors: AclTensorList,
                            addr: int) -> None:
    _rt().set_dynamic_tensor_addr("", executor, irIndex, relativeIndex, tensors, addr)


def aclSetRawTensorAddr(tensor: AclTensor, addr: int) -> None:
    """aclSetRawTensorAddr: the device address the tensor describes from now on."""
    _rt().set_raw_tensor_addr(tensor, addr)


def aclGetRawTensorAddr(tensor: AclTensor) -> int:
    """aclGetRawTensorAddr(tensor, &addr) -> addr (an int)."""
    return _rt().get_raw_tensor_addr(tensor)


# -- any operator: aclnn<Name>GetWorkspaceSize / aclnn<Name>, made on first access -----------------
_PHASE1 = re.compile(r"aclnn(\w+?)GetWorkspaceSize")
_PHASE2 = re.compile(r"aclnn([A-Z]\w*)")
_NOT_OPS = frozenset({"aclnnInit", "aclnnFinalize"})


def _phase1(op: str) -> Callable[..., tuple[int, Handle]]:
    # the runtime last called, the signature it found, its handle parameters (pyaclnn._handles)
    seen: list[Any] = [None, None, None]

    def phase1(*args: Any) -> tuple[int, Handle]:
        rt = _rt()
        if seen[0] is not rt:
            sig = rt.op_info(op).signature
            seen[1], seen[2], seen[0] = sig, _handles.HandleSlots(sig), rt
        sig = seen[1]
        if len(args) != len(sig.params) and not sig.problem:  # (a problem: the runtime says it)
            raise TypeError(f"aclnn{op}GetWorkspaceSize takes {len(sig.params)} arguments "
                            f"({', '.join(p.name for p in sig.params)}), got {len(args)}; the two "
                            "out-parameters are returned")
        if sig.values:  # plain values of a wrong Python type: a TypeError naming the C parameter
            args = _c_values(sig, args)
        native = rt.handle_class
        for i in seen[2].positions:  # the ported call: live handles of the backend, as they are
            if type(args[i]) is not native or not args[i]:  # objects, ints, None...: converted
                return _handles.phase1(rt, op, seen[2], args)
        try:
            return rt.workspace_size(op, args)
        except Exception:  # a handle of another type is named (pyaclnn._handles.refused)
            seen[2].refused(args)
            raise
    phase1.__name__ = phase1.__qualname__ = f"aclnn{op}GetWorkspaceSize"
    phase1.__doc__ = (f"aclnn{op}GetWorkspaceSize(<its C parameters>) -> (workspaceSize, executor).\n\n"
                      "The parameters are those of the operator's header, in order, without the two "
                      "out-parameters: aclTensor*/aclScalar*/array/list handles (a pyaclnn.Tensor for "
                      "aclTensor*; None is nullptr), ints, floats, bools, str for char*. `python -m pyaclnn "
                      "ops` lists signatures.")
    return phase1


def _phase2(op: str, sig: Any) -> Callable[..., None]:
    """aclnn<op> with the C parameters its header declares: (workspace, workspaceSize, executor,
    stream), or with the extra ones of a launch such as aclnnGaussianBlur's (workspace,
    workspaceSize, executor, src, ksize, sigmaX, sigmaY, borderType, dst, stream)."""
    if sig is None or not sig.launch:
        def phase2(workspace: int | None, workspaceSize: int, executor: AclOpExecutor, stream: AclrtStream) -> None:
            rt = _rt()
            native = rt.handle_class
            if (type(executor) is native and executor and type(stream) is native and stream  # the ported call
                    and not _handles._plans):
                _handles.launch(rt, op, None, workspace, workspaceSize, executor, stream)
            else:  # objects, ints, None, or an executor planned on pyaclnn Tensors
                _handles.phase2(rt, op, workspace, workspaceSize, executor, stream)
        phase2.__name__ = phase2.__qualname__ = f"aclnn{op}"
        phase2.__doc__ = (f"aclnn{op}(workspace, workspaceSize, executor, stream): phase 2 (queues the work; "
                          "stream: a handle or a pyaclnn.Stream).")
        return phase2
    # the header's own parameter names (a Python keyword gets a trailing _), generated so that a
    # call binds them as C does, by position or name
    names = [p.name + "_" if _keyword.iskeyword(p.name) or p.name in ("workspace", "workspaceSize", "executor",
                                                                         "stream") else p.name for p in sig.launch]
    code = (f"def aclnn{op}(workspace, workspaceSize, executor, {', '.join(names)}, stream):\n"
            f"    _launch_with(_op, workspace, workspaceSize, executor, ({', '.join(names)},), stream)\n")
    namespace: dict[str, Any] = {"_launch_with": _launch_with, "_op": op}
    exec(compile(code, f"{_handles.__file__}<aclnn{op}>", "exec"), namespace)  # noqa: S102 - the header's names only
    fn = namespace[f"aclnn{op}"]
    fn.__doc__ = (f"aclnn{op}(workspace, workspaceSize, executor, {', '.join(p.name for p in sig.launch)}, stream): "
                  "phase 2 as its header declares it (queues the work; stream: a handle or a pyaclnn.Stream; the "
                  "other handles as phase 1 takes them).")
    return fn


def _launch_with(op: str, workspace: int | None, workspaceSize: int, executor: Any, extra: tuple, stream: Any) -> None:
    """A launch with extra parameters: each converted as the same parameter of phase 1 is
    (``_signature.c_values``; handles by ``pyaclnn._handles``), then the one launch routine."""
    rt = _rt()
    sig = rt.op_info(op).signature
    _handles.phase2(rt, op, workspace, workspaceSize, executor, stream, _c_values(sig, extra, launch=True))


# The operators of pyaclnn's headers/: every backend searches headers/, so they are known
# whichever runs, and their functions stay module attributes.
_SHIPPED = _Registry([_pyaclnn_source()])
_MADE: set[str] = set()  # the other operator functions made: valid for the backend that knew them


def _forget_ops() -> None:
    """A backend was chosen: the operators the previous one knew are not necessarily known."""
    for name in list(_MADE):
        globals().pop(name, None)
    _MADE.clear()


_backend.on_choose.append(_forget_ops)


def __getattr__(name: str) -> Any:
    """``aclnn<Name>GetWorkspaceSize`` and ``aclnn<Name>`` for an operator the backend knows
    (a header declares it; from the header index, nothing parsed): made once, then a plain
    module attribute. UnknownOperatorError (an AttributeError) for any other operator name."""
    m = _PHASE1.fullmatch(name)
    if m:
        op = m.group(1)
    elif _PHASE2.fullmatch(name) and name not in _NOT_OPS:
        op = name[len("aclnn"):]
    else:
        raise AttributeError(f"module 'pyaclnn.acl' has no attribute {name!r}")
    shipped = _SHIPPED.declares(op)
    if not shipped:
        try:
            _rt().known(op)
        except _errors.UnknownOperatorError as exc:
            text = str(exc)
            if exc.close_name:  # spelled as this module's attribute: aclnnAdd, not Add
                spelled = f"aclnn{exc.close_name}" + ("GetWorkspaceSize" if m else "")
                text = text.replace(f"(did you mean {exc.close_name!r}?)", f"(did you mean {spelled!r}?)")
            error = _errors.UnknownOperatorError(f"module 'pyaclnn.acl' has no attribute {name!r}: {text}")
            error.close_name = exc.close_name
            error.name, error.obj = name, _sys.modules[__name__]
            raise error from None
    if m:
        fn: Any = _phase1(op)
    else:  # the launch's prototype: parsed now (its parameters are the function's)
        info = _SHIPPED.get(op) if shipped else _rt().registry.get(op)
        fn = _phase2(op, None if info is None else info.signature)
    globals()[name] = fn
    if not shipped:
        _MADE.add(name)
    return fn


def __dir__() -> list[str]:
    """The module's names with the two functions of every operator of headers/ and, once a
    backend is chosen (never chosen here), of every operator it knows (header index only)."""
    ops = set(_SHIPPED.names())
    backend = _backend._current
    if backend is not None:
        ops |= backend.runtime.registry.names()
    return sorted(set(globals()) | {f"aclnn{op}{phase}" for op in ops for phase in ("GetWorkspaceSize", "")})


# Every function above with a handle parameter (annotated AclTensor, AclrtStream...) takes
# pyaclnn objects and int addresses there too: converted in one place, pyaclnn._handles.
for _name, _fn in list(globals().items()):
    if _name.startswith("acl") and callable(_fn) and getattr(_fn, "__module__", None) == __name__:
        globals()[_name] = _handles.accepting_objects(_fn)
del _name, _fn
