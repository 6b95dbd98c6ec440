"""``pyaclnn.acl``: aclInit/aclFinalize, versions, devices and contexts (the session family of pyaclnn._runtime).

Part of ``pyaclnn.acl`` (which re-exports every ``acl*`` function here): see its docstring."""
from __future__ import annotations

from .._objects import backend as _backend
from .._objects import current as _current
from .._objects.handles import AclrtContext
from .common import Handle, active_runtime, c_string_arg, enum_arg, int32_arg, uint32_arg

__all__ = ["aclInit", "aclFinalize", "aclFinalizeReference", "aclsysGetCANNVersion", "aclsysGetVersionStr",
           "aclsysGetVersionNum", "aclrtGetVersion", "aclrtGetRunMode", "aclrtGetLastError",
           "aclrtPeekAtLastError", "aclrtGetDeviceInfo", "aclGetDeviceCapability", "aclFloat16ToFloat",
           "aclFloatToFloat16", "aclnnInit", "aclnnFinalize", "aclGetRecentErrMsg", "aclrtSetDevice",
           "aclrtResetDevice", "aclrtGetDevice", "aclrtGetDeviceCount", "aclrtGetSocName", "aclrtCreateContext",
           "aclrtDestroyContext", "aclrtSetCurrentContext", "aclrtGetCurrentContext"]


def aclInit(configPath: str | None = None) -> None:
    """aclInit. A repeated call is harmless (CANN's ACL_ERROR_REPEAT_INITIALIZE is ignored)."""
    active_runtime().init(c_string_arg("aclInit", "configPath", configPath))


def aclFinalize() -> None:
    """aclFinalize. pyaclnn's own aclInit reference goes with it (the count is cleared): the next
    high-level pyaclnn call takes one back (devices, streams and memory survive aclFinalize)."""
    active_runtime().finalize()
    _session_ended("aclFinalize()")


def aclFinalizeReference() -> int:
    """aclFinalizeReference(&refCount) -> refCount: drop one aclInit reference (finalizes at 0;
    then, as after aclFinalize, the next high-level pyaclnn call takes a reference back)."""
    count = active_runtime().finalize_reference()
    if count == 0:
        _session_ended("aclFinalizeReference()")
    return count


def _session_ended(call: str) -> None:
    # pyaclnn's reference was cleared with the others: tell the backend (Backend.recover)
    backend = _backend.active
    if backend is not None:
        backend.lost, backend.init_lost = call, True


def aclsysGetCANNVersion(name: int) -> dict[str, str]:
    """aclsysGetCANNVersion(name, &version) -> the aclCANNPackageVersion fields as a dict
    (version, majorVersion, minorVersion, releaseVersion, patchVersion)."""
    return active_runtime().cann_package_version(enum_arg("aclsysGetCANNVersion", "name", name, "aclCANNPackageName"))


def aclsysGetVersionStr(pkgName: str) -> str:
    """aclsysGetVersionStr(pkgName, versionStr) -> versionStr."""
    return active_runtime().version_str(c_string_arg("aclsysGetVersionStr", "pkgName", pkgName, False))


def aclsysGetVersionNum(pkgName: str) -> int:
    """aclsysGetVersionNum(pkgName, &versionNum) -> versionNum."""
    return active_runtime().version_num(c_string_arg("aclsysGetVersionNum", "pkgName", pkgName, False))


def aclrtGetVersion() -> tuple[int, int, int]:
    """aclrtGetVersion(&major, &minor, &patch) -> (major, minor, patch)."""
    return active_runtime().runtime_version()


def aclrtGetRunMode() -> int:
    """aclrtGetRunMode(&runMode) -> runMode (ACL_DEVICE or ACL_HOST)."""
    return active_runtime().run_mode()


def aclrtGetLastError(level: int) -> int:
    """aclrtGetLastError(level) -> the thread's last failing status (0 if none), cleared. Its
    value is a status to read, so it is returned, never raised."""
    return active_runtime().last_error(enum_arg("aclrtGetLastError", "level", level, "aclrtLastErrLevel"), peek=False)


def aclrtPeekAtLastError(level: int) -> int:
    """aclrtPeekAtLastError(level) -> the thread's last failing status, not cleared."""
    return active_runtime().last_error(enum_arg("aclrtPeekAtLastError", "level", level, "aclrtLastErrLevel"),
                                      peek=True)


def aclrtGetDeviceInfo(deviceId: int, attr: int) -> int:
    """aclrtGetDeviceInfo(deviceId, attr, &value) -> value."""
    api = "aclrtGetDeviceInfo"
    return active_runtime().device_info(uint32_arg(api, "deviceId", deviceId), enum_arg(api, "attr", attr, "aclrtDevAttr"))


def aclGetDeviceCapability(deviceId: int, deviceInfo: int) -> int:
    """aclGetDeviceCapability(deviceId, deviceInfo, &value) -> value."""
    api = "aclGetDeviceCapability"
    return active_runtime().device_capability(uint32_arg(api, "deviceId", deviceId),
                                              enum_arg(api, "deviceInfo", deviceInfo, "aclDeviceInfo"))


def aclFloat16ToFloat(value: int) -> float:
    """aclFloat16ToFloat: the IEEE half whose bits are ``value`` (a uint16) as a float."""
    import numpy as np
    from .common import _integer
    if type(value) is not int or not 0 <= value < 1 << 16:
        value = _integer("aclFloat16ToFloat", "value", value, "aclFloat16 (uint16_t)", 0, 1 << 16)
    return float(np.array(value, np.uint16).view(np.float16))


def aclFloatToFloat16(value: float) -> int:
    """aclFloatToFloat16: ``value`` rounded to IEEE half (nearest even), as its uint16 bits."""
    import numpy as np
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"aclFloatToFloat16: value (float) must be a real number, got {type(value).__name__} {value!r}")
    with np.errstate(over="ignore"):  # overflow is inf, as in C
        return int(np.array(value, np.float32).astype(np.float16).view(np.uint16))


def aclnnInit(configPath: str | None = None) -> None:
    """aclnnInit (libnnopbase)."""
    active_runtime().aclnn_init(c_string_arg("aclnnInit", "configPath", configPath))


def aclnnFinalize() -> None:
    """aclnnFinalize (libnnopbase)."""
    active_runtime().aclnn_finalize()


def aclGetRecentErrMsg() -> str | None:
    """aclGetRecentErrMsg: the text of this thread's last failure, cleared on read."""
    return active_runtime().recent_error()


def aclrtSetDevice(deviceId: int) -> None:
    """aclrtSetDevice(deviceId): one reference on the device, which becomes the thread's."""
    deviceId = int32_arg("aclrtSetDevice", "deviceId", deviceId)
    active_runtime().set_device(deviceId)
    _current.forget()  # the thread's current device changed behind pyaclnn's objects
    backend = _backend.active
    if backend is not None:  # the user's reference (Backend.recover)
        backend.user_sets[deviceId] = backend.user_sets.get(deviceId, 0) + 1


def aclrtResetDevice(deviceId: int) -> None:
    """aclrtResetDevice. One beyond your own aclrtSetDevice calls takes one of pyaclnn's
    references: the next high-level pyaclnn call repairs that (Backend.recover)."""
    deviceId = int32_arg("aclrtResetDevice", "deviceId", deviceId)
    active_runtime().reset_device(deviceId)
    _current.forget()
    backend = _backend.active
    if backend is not None:
        left = backend.user_sets.get(deviceId, 0) - 1
        backend.user_sets[deviceId] = max(left, 0)
        if left < 0:
            backend.taken_sets[deviceId] = backend.taken_sets.get(deviceId, 0) + 1
            backend.lost = backend.lost or f"aclrtResetDevice({deviceId})"


def aclrtGetDevice() -> int:
    """aclrtGetDevice(&deviceId) -> deviceId."""
    return active_runtime().get_device()


def aclrtGetDeviceCount() -> int:
    """aclrtGetDeviceCount(&count) -> count."""
    return active_runtime().device_count()


def aclrtGetSocName() -> str:
    return active_runtime().soc_name()


def aclrtCreateContext(deviceId: int) -> Handle:
    """aclrtCreateContext(&context, deviceId) -> context (it becomes this thread's context)."""
    context = active_runtime().create_context(int32_arg("aclrtCreateContext", "deviceId", deviceId))
    _current.forget()
    return context


def aclrtDestroyContext(context: AclrtContext) -> None:
    active_runtime().destroy_context(context)
    _current.forget()


def aclrtSetCurrentContext(context: AclrtContext) -> None:
    active_runtime().set_current_context(context)
    _current.forget()


def aclrtGetCurrentContext() -> Handle:
    """aclrtGetCurrentContext(&context) -> context."""
    return active_runtime().get_current_context()
