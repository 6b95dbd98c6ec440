"""The acl backend: each method is one CANN call through cffi, its status through check().

Implements the contract of ``pyaclnn._runtime.Runtime``. Handles are cffi pointers; device
addresses are ints. This module never interprets a status itself.
"""
from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from .. import errors
from ._lib import Lib, check, ffi, get, loading_hint, recent_error

NULL = ffi.NULL
# Parsed once: ffi.new/ffi.cast with a C type string parse (or look up) the string every call.
_VOID_P = ffi.typeof("void *")
_U64_P = ffi.typeof("uint64_t *")
_EXECUTOR_PP = ffi.typeof("aclOpExecutor **")
ACL_ERROR_REPEAT_INITIALIZE = 100002
# aclCreate* report failure only by returning NULL; pyaclnn raises ACLNN_ERR_INNER_NULLPTR for it.
NULL_RETURNED = 561103


def _ptr(value: Any, writable: bool = False) -> Any:
    """An int address or a host buffer, as the void* cffi needs."""
    if isinstance(value, int):
        return ffi.cast("void *", value)
    if isinstance(value, np.ndarray):  # a byte view: bfloat16 has no buffer-protocol format
        if not value.flags.c_contiguous:
            raise ValueError("host arrays passed to aclrtMemcpy must be C-contiguous")
        value = value.reshape(-1).view(np.uint8)
    return ffi.from_buffer(value, require_writable=writable)


class AclRuntime:
    name = "acl"

    def __init__(self, lib: Lib | None = None) -> None:
        self.lib = lib or get()
        self.rt, self.nn, self.op = self.lib.rt, self.lib.nn, self.lib.op
        self._phase1 = {op: getattr(self.op, f"aclnn{op}GetWorkspaceSize") for op in
                        ("MseLossBackward", "GroupNormBackward", "CrossEntropyLossGrad", "PreluBackward")}
        self._phase2 = {op: getattr(self.op, f"aclnn{op}") for op in self._phase1}
        self._outs = threading.local()  # per-thread phase-1 out-parameters, reused call after call
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

    def memset(self, ptr: int, max_count: int, value: int, count: int) -> None:
        check(self.rt.aclrtMemset(ffi.cast("void *", ptr), max_count, value, count), "aclrtMemset")

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

    # -- operators -------------------------------------------------------------------------------
    def workspace_size(self, op: str, args: tuple) -> tuple[int, Any]:
        outs = getattr(self._outs, "pair", None)
        if outs is None:
            outs = self._outs.pair = (ffi.new(_U64_P), ffi.new(_EXECUTOR_PP))
        size, executor = outs
        if op == "CrossEntropyLossGrad":  # the only op with a char* (reductionOptional)
            c_args = [NULL if a is None else (ffi.new("char[]", a.encode()) if isinstance(a, str) else a)
                      for a in args]
        else:
            c_args = [NULL if a is None else a for a in args]
        status = self._phase1[op](*c_args, size, executor)
        if status:
            check(status, f"aclnn{op}GetWorkspaceSize")
        return int(size[0]), executor[0]

    def launch(self, op: str, workspace: int, workspace_size: int, executor: Any, stream: Any) -> None:
        status = self._phase2[op](ffi.cast(_VOID_P, workspace) if workspace else NULL, workspace_size,
                                  executor, stream)
        if status:
            check(status, f"aclnn{op}")

    def set_executor_repeatable(self, executor: Any) -> None:
        check(self.nn.aclSetAclOpExecutorRepeatable(executor), "aclSetAclOpExecutorRepeatable")

    def destroy_executor(self, executor: Any) -> None:
        check(self.nn.aclDestroyAclOpExecutor(executor), "aclDestroyAclOpExecutor")

    def set_input_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        status = self.nn.aclSetInputTensorAddr(executor, index, tensor, ffi.cast(_VOID_P, addr))
        if status:
            check(status, "aclSetInputTensorAddr")

    def set_output_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        status = self.nn.aclSetOutputTensorAddr(executor, index, tensor, ffi.cast(_VOID_P, addr))
        if status:
            check(status, "aclSetOutputTensorAddr")
