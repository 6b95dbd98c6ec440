"""The acl backend: each method is one CANN call through cffi, its status through check().

Implements the contract of ``pyaclnn._runtime.Runtime``. Handles are cffi pointers; device
addresses are ints. This module never interprets a status itself.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import errors
from .._registry import OpInfo, Registry, cann_sources
from .._runtime import Runtime
from ..dtypes import DType, to_numpy
from ._ffi import libc, libc_ffi
from .capture import CaptureCalls
from ._lib import Lib, check, ffi, get, loading_hint, recent_error
from ._ops import OpLibraries

NULL = ffi.NULL
# Parsed once: ffi.new/ffi.cast with a C type string parse (or look up) the string every call.
_VOID_P = ffi.typeof("void *")
_U64_P = ffi.typeof("uint64_t *")
_EXECUTOR_PP = ffi.typeof("aclOpExecutor **")
ACL_ERROR_REPEAT_INITIALIZE = 100002
# aclCreate* report failure only by returning NULL; pyaclnn raises ACLNN_ERR_INNER_NULLPTR for it.
NULL_RETURNED = 561103
# acl_meta.h's handle types, by their cffi type: what a handle is, for pyaclnn._handles' TypeError
# (aclrtStream/aclrtEvent/aclrtContext are all void * to C: the runtime checks those itself).
_META_CTYPES = {ffi.typeof(f"{name} *"): f"{name} *" for name in (
    "aclTensor", "aclScalar", "aclIntArray", "aclFloatArray", "aclBoolArray", "aclTensorList", "aclScalarList",
    "aclOpExecutor")}


def _ptr(value: Any, writable: bool = False) -> Any:
    """An int address or a host buffer, as the void* cffi needs (None: nullptr, which the
    library checks itself)."""
    if value is None:
        return NULL
    if isinstance(value, int):
        return ffi.cast("void *", value)
    if isinstance(value, np.ndarray):  # a byte view: bfloat16 has no buffer-protocol format
        if not value.flags.c_contiguous:
            raise ValueError("host arrays passed to aclrtMemcpy must be C-contiguous")
        value = value.reshape(-1).view(np.uint8)
    return ffi.from_buffer(value, require_writable=writable)


def _device_ptr(addr: int | None) -> Any:
    """A device address as void* (None: nullptr, which the library checks itself)."""
    return NULL if addr is None else ffi.cast(_VOID_P, addr)


def _nullable(handle: Any) -> Any:
    """None as nullptr, for the pointer arguments CANN itself checks for NULL."""
    return NULL if handle is None else handle


def _pointers(params: Sequence[Any]) -> tuple[int, ...]:
    """Positions of the char* and void* parameters (``_signature.Param``), converted by ``_c_args``."""
    return tuple(i for i, p in enumerate(params) if p.kind in ("string", "address"))


def _c_args(args: Sequence[Any], strings: tuple[int, ...]) -> list[Any]:
    """An operator's arguments as cffi takes them: None is NULL; at ``strings``, a str becomes a
    char[] (alive for the call) and an int address a void*."""
    c_args = [NULL if a is None else a for a in args]
    for i in strings:
        a = c_args[i]
        if isinstance(a, str):
            c_args[i] = ffi.new("char[]", a.encode())
        elif isinstance(a, int):
            c_args[i] = ffi.cast(_VOID_P, a)
    return c_args


def _made(handle: Any, api: str) -> Any:
    """The handle an aclCreate* returned; they report failure only by returning NULL."""
    if handle == NULL:
        raise errors.from_status(NULL_RETURNED, api, f"{api} returned NULL", recent_error())
    return handle


class AclRuntime(CaptureCalls):  # + the aclmdlRI calls (capture.py)
    name = "acl"
    handle_class = ffi.CData  # what its handles are (pyaclnn.acl passes these through as they are)
    null = NULL               # the nullptr handle pyaclnn.acl gives for None (cffi refuses None)

    def __init__(self, lib: Lib | None = None) -> None:
        self.lib = lib or get()
        self.rt, self.nn, self.op = self.lib.rt, self.lib.nn, self.lib.op
        found = self.lib.found
        # custom packages (those whose library runs the op), pyaclnn's headers/, the toolkit's (_registry)
        self.registry = Registry(cann_sources(found.home, found.layout) if found.home else [])
        self.libraries = OpLibraries(self.lib, self.registry.exports)
        # per operator, resolved on first use: (phase 1 or 2, positions of its char*/void* parameters)
        self._phase1: dict[str, tuple[Any, tuple[int, ...]]] = {}
        self._phase2: dict[str, tuple[Any, tuple[int, ...]]] = {}
        self._outs = threading.local()  # per-thread phase-1 out-parameters, reused call after call
        self._workspace_ptr: tuple[int, Any] = (0, NULL)  # the last workspace address launched, as a void *
        self._inits: list[bool] = []  # one entry per aclInit of pyaclnn: True if it initialised CANN

    # -- init, versions, devices ---------------------------------------------------------------
    def init(self, config_path: str | None = None) -> None:
        """aclInit. 100002 (already initialised, e.g. by the host application) is no error; CANN
        counts every aclInit as a reference either way (hicann/runtime acl.cpp aclInitImpl)."""
        status = self.rt.aclInit(config_path.encode() if config_path else NULL)
        if status != ACL_ERROR_REPEAT_INITIALIZE:  # repeated aclInit is harmless (abi.md §6.3)
            check(status, "aclInit")
        self._inits.append(status == 0)

    def loading_hint(self, error: str) -> str:
        """The libraries CANN could not open and the exact fix, for a failed aclInit ('' if none)."""
        return loading_hint(self.lib, error)

    def finalize(self) -> None:
        """aclFinalize: ends the process's CANN session at once, whoever else uses it."""
        check(self.rt.aclFinalize(), "aclFinalize")
        self._inits.clear()

    def release_init(self) -> None:
        """Give back pyaclnn's own aclInit, leaving a host application's session usable.

        aclFinalizeReference (CANN >= 8.x newer releases) drops one reference and finalizes only
        when it was the last (hicann/runtime acl.cpp aclFinalizeReferenceImpl). Without it, only
        an aclInit that initialised CANN itself (status 0) is undone, with aclFinalize; one that
        got 100002 is left alone: the host that initialised CANN finalizes it.
        """
        while self._inits:
            initialised = self._inits.pop()
            if "aclFinalizeReference" not in self.lib.missing["runtime"]:
                check(self.rt.aclFinalizeReference(NULL), "aclFinalizeReference")
            elif initialised:
                check(self.rt.aclFinalize(), "aclFinalize")
                self._inits.clear()

    def soc_name(self) -> str:
        if "aclrtGetSocName" in self.lib.missing["runtime"]:
            return "unknown"
        name = self.rt.aclrtGetSocName()
        return ffi.string(name).decode() if name != NULL else "unknown"

    def cann_version(self) -> str | None:
        missing = self.lib.missing["runtime"]
        if "aclsysGetVersionStr" not in missing:
            buf = ffi.new("char[128]")
            for pkg in (b"cann", b"runtime"):
                if self.rt.aclsysGetVersionStr(ffi.new("char[]", pkg), buf) == 0 and buf[0] != b"\0":
                    return ffi.string(buf).decode()
            recent_error()  # clear what the failed probe left behind
        if "aclsysGetCANNVersion" not in missing:
            version = ffi.new("aclCANNPackageVersion *")
            if self.rt.aclsysGetCANNVersion(self.rt.ACL_PKG_NAME_CANN, version) == 0:
                return ffi.string(version.version).decode() or None
            recent_error()
        return None

    def device_count(self) -> int:
        count = ffi.new("uint32_t *")
        check(self.rt.aclrtGetDeviceCount(count), "aclrtGetDeviceCount")
        return int(count[0])

    def set_device(self, device_id: int) -> None:
        check(self.rt.aclrtSetDevice(device_id), "aclrtSetDevice")

    def reset_device(self, device_id: int) -> None:
        check(self.rt.aclrtResetDevice(device_id), "aclrtResetDevice")

    def get_device(self) -> int:
        out = ffi.new("int32_t *")
        check(self.rt.aclrtGetDevice(out), "aclrtGetDevice")
        return int(out[0])

    def recent_error(self) -> str | None:
        return recent_error()

    def create_context(self, device_id: int) -> Any:
        out = ffi.new("aclrtContext *")
        check(self.rt.aclrtCreateContext(out, device_id), "aclrtCreateContext")
        return out[0]

    def destroy_context(self, context: Any) -> None:
        check(self.rt.aclrtDestroyContext(context), "aclrtDestroyContext")

    def set_current_context(self, context: Any) -> None:
        check(self.rt.aclrtSetCurrentContext(context), "aclrtSetCurrentContext")

    def get_current_context(self) -> Any:
        out = ffi.new("aclrtContext *")
        check(self.rt.aclrtGetCurrentContext(out), "aclrtGetCurrentContext")
        return out[0]

    def as_int(self, handle: Any) -> int:
        return int(ffi.cast("uintptr_t", handle))

    def handle_from_int(self, value: int) -> Any:
        return ffi.cast(_VOID_P, value)

    def pointer_address(self, handle: Any) -> int:
        """The address of a handle of this layer (a cffi pointer); TypeError for anything else
        (ffi.cast would turn a 1-character str into its code point, a float into an int)."""
        if not isinstance(handle, ffi.CData) or ffi.typeof(handle).kind != "pointer":
            raise TypeError(f"not a pointer handle: {handle!r}")
        return int(ffi.cast("uintptr_t", handle))

    def handle_ctype(self, handle: Any) -> str | None:
        """The C type of a handle of acl_meta.h's types ("aclScalar *"...), read from its cffi
        type; None for anything else (void * included: a stream, an event, an int address)."""
        return _META_CTYPES.get(ffi.typeof(handle)) if isinstance(handle, ffi.CData) else None

    # -- streams and events --------------------------------------------------------------------
    def create_stream(self) -> Any:
        out = ffi.new("aclrtStream *")
        check(self.rt.aclrtCreateStream(out), "aclrtCreateStream")
        return out[0]

    def destroy_stream(self, stream: Any) -> None:
        check(self.rt.aclrtDestroyStream(stream), "aclrtDestroyStream")

    def synchronize_stream(self, stream: Any) -> None:
        check(self.rt.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")

    def create_event(self) -> Any:
        out = ffi.new("aclrtEvent *")
        check(self.rt.aclrtCreateEvent(out), "aclrtCreateEvent")
        return out[0]

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

    # -- memory --------------------------------------------------------------------------------
    def malloc(self, size: int, policy: int) -> int:
        out = ffi.new("void **")
        check(self.rt.aclrtMalloc(out, size, policy), "aclrtMalloc")
        return int(ffi.cast("uintptr_t", out[0]))

    def free(self, ptr: int) -> None:
        check(self.rt.aclrtFree(ffi.cast("void *", ptr)), "aclrtFree")

    def malloc_host(self, size: int) -> int:
        out = ffi.new("void **")
        check(self.rt.aclrtMallocHost(out, size), "aclrtMallocHost")
        return int(ffi.cast("uintptr_t", out[0]))

    def free_host(self, ptr: int) -> None:
        check(self.rt.aclrtFreeHost(ffi.cast("void *", ptr)), "aclrtFreeHost")

    def memcpy(self, dst: Any, dst_max: int, src: Any, count: int, kind: int) -> None:
        check(self.rt.aclrtMemcpy(_ptr(dst, True), dst_max, _ptr(src), count, kind), "aclrtMemcpy")

    def memcpy_async(self, dst: Any, dst_max: int, src: Any, count: int, kind: int, stream: Any) -> None:
        check(self.rt.aclrtMemcpyAsync(_ptr(dst, True), dst_max, _ptr(src), count, kind, stream),
              "aclrtMemcpyAsync")

    def memset(self, ptr: int | None, max_count: int, value: int, count: int) -> None:
        check(self.rt.aclrtMemset(_device_ptr(ptr), max_count, value, count), "aclrtMemset")

    def mem_info(self, attr: int) -> tuple[int, int]:
        free, total = ffi.new("size_t *"), ffi.new("size_t *")
        check(self.rt.aclrtGetMemInfo(attr, free, total), "aclrtGetMemInfo")
        return int(free[0]), int(total[0])

    # -- aclnn meta objects --------------------------------------------------------------------
    def create_tensor(self, shape: Sequence[int], dtype: int, strides: Sequence[int] | None, offset: int,
                      fmt: int, storage_shape: Sequence[int], addr: int) -> Any:
        # cffi passes a list or tuple given for an ``int64_t *`` parameter as a temporary
        # int64_t array alive for the call (aclCreateTensor copies the dims): no ffi.new needed.
        tensor = self.nn.aclCreateTensor(
            shape if shape else NULL, len(shape), dtype, strides if strides else NULL, offset, fmt,
            storage_shape if storage_shape else NULL, len(storage_shape), ffi.cast(_VOID_P, addr))
        if not tensor:  # the constructors report failure by returning NULL
            raise errors.from_status(NULL_RETURNED, "aclCreateTensor", "aclCreateTensor returned NULL",
                                     recent_error())
        return tensor

    def destroy_tensor(self, tensor: Any) -> None:
        status = self.nn.aclDestroyTensor(tensor)
        if status:
            check(status, "aclDestroyTensor")

    def create_bool_array(self, values: Sequence[bool]) -> Any:
        array = self.nn.aclCreateBoolArray(ffi.new("bool[]", list(values)), len(values))
        if array == NULL:
            raise errors.from_status(NULL_RETURNED, "aclCreateBoolArray", "aclCreateBoolArray returned NULL",
                                     recent_error())
        return array

    def destroy_bool_array(self, array: Any) -> None:
        check(self.nn.aclDestroyBoolArray(array), "aclDestroyBoolArray")

    def create_int_array(self, values: Sequence[int]) -> Any:
        array = self.nn.aclCreateIntArray(ffi.new("int64_t[]", list(values)), len(values))
        if array == NULL:
            raise errors.from_status(NULL_RETURNED, "aclCreateIntArray", "aclCreateIntArray returned NULL",
                                     recent_error())
        return array

    def destroy_int_array(self, array: Any) -> None:
        check(self.nn.aclDestroyIntArray(array), "aclDestroyIntArray")

    def create_float_array(self, values: Sequence[float]) -> Any:
        array = self.nn.aclCreateFloatArray(ffi.new("float[]", list(values)), len(values))
        return _made(array, "aclCreateFloatArray")

    def destroy_float_array(self, array: Any) -> None:
        check(self.nn.aclDestroyFloatArray(array), "aclDestroyFloatArray")

    def create_scalar(self, value: Any, dtype: int) -> Any:
        """aclCreateScalar(&value, dtype): ``value`` is a number (converted to ``dtype`` on the
        host, as C code would store it) or a buffer holding the value's bytes."""
        if isinstance(value, (bytes, bytearray, memoryview, np.ndarray)):
            data = ffi.from_buffer(value)
        else:
            try:
                host = np.array(value).astype(to_numpy(DType(dtype)))
            except ValueError:  # not an aclDataType: the library refuses it (NULL)
                host = np.array(value)
            except errors.NotSupportedError as exc:  # no NumPy twin to convert with
                raise errors.NotSupportedError(f"aclCreateScalar: {exc}; pass the value's bytes (a bytes "
                                               "object or a uint8 ndarray) instead of a number") from None
            data = ffi.from_buffer(host.reshape(-1).view(np.uint8))
        return _made(self.nn.aclCreateScalar(ffi.cast(_VOID_P, data), dtype), "aclCreateScalar")

    def destroy_scalar(self, scalar: Any) -> None:
        check(self.nn.aclDestroyScalar(scalar), "aclDestroyScalar")

    def create_tensor_list(self, tensors: Sequence[Any]) -> Any:
        """aclCreateTensorList: the list owns the tensors (aclDestroyTensorList destroys them)."""
        array = ffi.new("aclTensor *[]", list(tensors))
        return _made(self.nn.aclCreateTensorList(array, len(tensors)), "aclCreateTensorList")

    def destroy_tensor_list(self, array: Any) -> None:
        check(self.nn.aclDestroyTensorList(array), "aclDestroyTensorList")

    def create_scalar_list(self, scalars: Sequence[Any]) -> Any:
        array = ffi.new("aclScalar *[]", list(scalars))
        return _made(self.nn.aclCreateScalarList(array, len(scalars)), "aclCreateScalarList")

    def destroy_scalar_list(self, array: Any) -> None:
        check(self.nn.aclDestroyScalarList(array), "aclDestroyScalarList")

    # -- the rest of headers/: one method per C function, out-parameters returned -------------
    def finalize_reference(self) -> int:
        count = ffi.new("uint64_t *")
        check(self.rt.aclFinalizeReference(count), "aclFinalizeReference")
        return int(count[0])

    def cann_package_version(self, name: int) -> dict[str, str]:
        version = ffi.new("aclCANNPackageVersion *")
        check(self.rt.aclsysGetCANNVersion(name, version), "aclsysGetCANNVersion")
        return {field: ffi.string(getattr(version, field)).decode() for field in
                ("version", "majorVersion", "minorVersion", "releaseVersion", "patchVersion")}

    def version_str(self, pkg: str) -> str:
        buf = ffi.new("char[128]")
        check(self.rt.aclsysGetVersionStr(ffi.new("char[]", pkg.encode()), buf), "aclsysGetVersionStr")
        return ffi.string(buf).decode()

    def version_num(self, pkg: str) -> int:
        out = ffi.new("int32_t *")
        check(self.rt.aclsysGetVersionNum(ffi.new("char[]", pkg.encode()), out), "aclsysGetVersionNum")
        return int(out[0])

    def runtime_version(self) -> tuple[int, int, int]:
        a, b, c = ffi.new("int32_t *"), ffi.new("int32_t *"), ffi.new("int32_t *")
        check(self.rt.aclrtGetVersion(a, b, c), "aclrtGetVersion")
        return int(a[0]), int(b[0]), int(c[0])

    def run_mode(self) -> int:
        out = ffi.new("aclrtRunMode *")
        check(self.rt.aclrtGetRunMode(out), "aclrtGetRunMode")
        return int(out[0])

    def synchronize_stream_timeout(self, stream: Any, timeout: int) -> None:
        check(self.rt.aclrtSynchronizeStreamWithTimeout(stream, timeout), "aclrtSynchronizeStreamWithTimeout")

    def synchronize_device(self) -> None:
        check(self.rt.aclrtSynchronizeDevice(), "aclrtSynchronizeDevice")

    def memset_async(self, ptr: int | None, max_count: int, value: int, count: int, stream: Any) -> None:
        check(self.rt.aclrtMemsetAsync(_device_ptr(ptr), max_count, value, count, stream), "aclrtMemsetAsync")

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

    def last_error(self, level: int, peek: bool) -> int:
        """aclrtGetLastError / aclrtPeekAtLastError return a status as their value: not raised."""
        return int(self.rt.aclrtPeekAtLastError(level) if peek else self.rt.aclrtGetLastError(level))

    def device_info(self, device_id: int, attr: int) -> int:
        out = ffi.new("int64_t *")
        check(self.rt.aclrtGetDeviceInfo(device_id, attr, out), "aclrtGetDeviceInfo")
        return int(out[0])

    def device_capability(self, device_id: int, info: int) -> int:
        out = ffi.new("int64_t *")
        check(self.rt.aclGetDeviceCapability(device_id, info, out), "aclGetDeviceCapability")
        return int(out[0])

    def aclnn_init(self, config_path: str | None) -> None:
        check(self.nn.aclnnInit(config_path.encode() if config_path else NULL), "aclnnInit")

    def aclnn_finalize(self) -> None:
        check(self.nn.aclnnFinalize(), "aclnnFinalize")

    def _dims(self, fn: Any, tensor: Any, api: str) -> list[int]:
        data, num = ffi.new("int64_t **"), ffi.new("uint64_t *")
        check(fn(tensor, data, num), api)
        try:
            return [int(data[0][i]) for i in range(int(num[0]))]
        finally:
            if data[0] != NULL:
                libc.free(libc_ffi.cast("void *", int(ffi.cast("uintptr_t", data[0]))))

    def tensor_meta(self, what: str, tensor: Any) -> Any:
        """aclGetViewShape / aclGetStorageShape / aclGetViewStrides (lists), aclGetViewOffset,
        aclGetFormat, aclGetDataType (ints)."""
        if what in ("ViewShape", "StorageShape", "ViewStrides"):
            return self._dims(getattr(self.nn, f"aclGet{what}"), tensor, f"aclGet{what}")
        ctype = {"ViewOffset": "int64_t *", "Format": "aclFormat *", "DataType": "aclDataType *"}[what]
        out = ffi.new(ctype)
        check(getattr(self.nn, f"aclGet{what}")(tensor, out), f"aclGet{what}")
        return int(out[0])

    def meta_size(self, what: str, handle: Any) -> int:
        """aclGet{IntArray,FloatArray,BoolArray,TensorList,ScalarList}Size."""
        out = ffi.new("uint64_t *")
        check(getattr(self.nn, f"aclGet{what}Size")(handle, out), f"aclGet{what}Size")
        return int(out[0])

    def init_tensor(self, tensor: Any, shape: Sequence[int], dtype: int, strides: Sequence[int] | None,
                    offset: int, fmt: int, storage_shape: Sequence[int], addr: int) -> None:
        check(self.nn.aclInitTensor(tensor, list(shape) or NULL, len(shape), dtype,
                                    list(strides) if strides else NULL, offset, fmt,
                                    list(storage_shape) or NULL, len(storage_shape), ffi.cast(_VOID_P, addr)),
              "aclInitTensor")

    def set_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        check(self.nn.aclSetTensorAddr(_nullable(executor), index, _nullable(tensor), ffi.cast(_VOID_P, addr)),
              "aclSetTensorAddr")

    def set_dynamic_tensor_addr(self, which: str, executor: Any, ir_index: int, relative_index: int,
                                tensors: Any, addr: int) -> None:
        """aclSetDynamic{Input,Output,}TensorAddr (``which`` is "Input", "Output" or "")."""
        api = f"aclSetDynamic{which}TensorAddr"
        check(getattr(self.nn, api)(_nullable(executor), ir_index, relative_index, _nullable(tensors),
                                    ffi.cast(_VOID_P, addr)), api)

    def set_raw_tensor_addr(self, tensor: Any, addr: int) -> None:
        check(self.nn.aclSetRawTensorAddr(tensor, ffi.cast(_VOID_P, addr)), "aclSetRawTensorAddr")

    def get_raw_tensor_addr(self, tensor: Any) -> int:
        out = ffi.new("void **")
        check(self.nn.aclGetRawTensorAddr(tensor, out), "aclGetRawTensorAddr")
        return int(ffi.cast("uintptr_t", out[0]))

    # -- operators -------------------------------------------------------------------------------
    def op_info(self, op: str) -> OpInfo:
        """The registry entry of ``op``; UnknownOperatorError if no header declares it."""
        info = self.registry.get(op)
        if info is None:
            raise self.registry.unknown(op)
        return info

    def known(self, op: str) -> None:
        """UnknownOperatorError unless a header declares ``op`` (index only: nothing parsed)."""
        if not self.registry.declares(op):
            raise self.registry.unknown(op)

    def _resolve(self, op: str) -> tuple[Any, tuple[int, ...]]:
        """Find ``op``'s two functions (cdef of its prototype only, in the library exporting it)."""
        info = self.op_info(op)
        if info.signature.problem:
            raise errors.NotSupportedError(f"aclnn{op} cannot be called from pyaclnn: {info.signature.problem}")
        phase1, phase2 = self.libraries.functions(info)
        self._phase2[op] = (phase2, _pointers(info.signature.launch))
        self._phase1[op] = (phase1, _pointers(info.signature.params))
        return self._phase1[op]

    def workspace_size(self, op: str, args: tuple) -> tuple[int, Any]:
        phase1, strings = self._phase1.get(op) or self._resolve(op)
        outs = getattr(self._outs, "pair", None)
        if outs is None:
            outs = self._outs.pair = (ffi.new(_U64_P), ffi.new(_EXECUTOR_PP))
        size, executor = outs
        c_args = [NULL if a is None else a for a in args]  # _c_args inline: this is on every call
        for i in strings:
            a = c_args[i]
            if isinstance(a, str):
                c_args[i] = ffi.new("char[]", a.encode())
            elif isinstance(a, int):
                c_args[i] = ffi.cast(_VOID_P, a)
        status = phase1(*c_args, size, executor)
        if status:
            check(status, f"aclnn{op}GetWorkspaceSize")
        return int(size[0]), executor[0]

    def launch(self, op: str, workspace: int, workspace_size: int, executor: Any, stream: Any,
               *extra: Any) -> None:
        """aclnn<op>(workspace, workspaceSize, executor, <extra>, stream): the launch as the header
        declares it (``extra``: aclnnGaussianBlur's src ... dst, converted as phase 1's)."""
        phase2 = self._phase2.get(op)
        if phase2 is None:
            self._resolve(op)
            phase2 = self._phase2[op]
        fn, strings = phase2
        if workspace:  # the stream's pooled workspace: the same address call after call, cast once
            last = self._workspace_ptr
            if last[0] != workspace:
                last = self._workspace_ptr = (workspace, ffi.cast(_VOID_P, workspace))
            ws = last[1]
        else:
            ws = NULL
        if extra:
            status = fn(ws, workspace_size, NULL if executor is None else executor, *_c_args(extra, strings),
                        NULL if stream is None else stream)
        else:  # no unpacking for the usual four (~0.2 us a call)
            status = fn(ws, workspace_size, NULL if executor is None else executor, NULL if stream is None else stream)
        if status:
            check(status, f"aclnn{op}")

    def set_executor_repeatable(self, executor: Any) -> None:
        check(self.nn.aclSetAclOpExecutorRepeatable(executor), "aclSetAclOpExecutorRepeatable")

    def destroy_executor(self, executor: Any) -> None:
        check(self.nn.aclDestroyAclOpExecutor(executor), "aclDestroyAclOpExecutor")

    def set_input_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        status = self.nn.aclSetInputTensorAddr(_nullable(executor), index, _nullable(tensor), ffi.cast(_VOID_P, addr))
        if status:
            check(status, "aclSetInputTensorAddr")

    def set_output_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        status = self.nn.aclSetOutputTensorAddr(_nullable(executor), index, _nullable(tensor), ffi.cast(_VOID_P, addr))
        if status:
            check(status, "aclSetOutputTensorAddr")


def _conforms(runtime: AclRuntime) -> Runtime:
    """Never called: mypy checks here that AclRuntime implements the contract."""
    return runtime
