"""The acl runtime's session: aclInit/aclFinalize, versions, devices and contexts (cffi calls into
the runtime library; statuses checked by ``_lib.check``)."""
from __future__ import annotations

import threading
from typing import Any
from ..._core.constants import ACL_ERROR_REPEAT_INITIALIZE
from ..._registry.operators import Registry
from ..._registry.sources import cann_sources
from .._lib import Lib, check, ffi, get, loading_hint, recent_error
from .._ops import OpLibraries


NULL = ffi.NULL

# Parsed once: ffi.new/ffi.cast with a C type string parse (or look up) the string every call.
VOID_P = ffi.typeof("void *")

# acl_meta.h's handle types, by their cffi type: what a handle is, for pyaclnn._objects.handles' TypeError
# (aclrtStream/aclrtEvent/aclrtContext are all void * to C: the runtime checks those itself).
_META_CTYPES = {ffi.typeof(f"{name} *"): f"{name} *" for name in (
    "aclTensor", "aclScalar", "aclIntArray", "aclFloatArray", "aclBoolArray", "aclTensorList", "aclScalarList",
    "aclOpExecutor")}


class AclSession:
    """aclInit, devices, contexts, versions."""

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
        self._data_ptrs: dict[int, Any] = {}  # tensor data addresses as void *, cast once (create_tensor)
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
        return ffi.cast(VOID_P, value)

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

    # -- the rest of headers/: one method per C function, out-parameters returned -------------
    def finalize_reference(self) -> int:
        count = ffi.new("uint64_t *")
        check(self.rt.aclFinalizeReference(count), "aclFinalizeReference")
        if count[0] == 0:  # the last reference: pyaclnn's are gone too (as after finalize)
            self._inits.clear()
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
