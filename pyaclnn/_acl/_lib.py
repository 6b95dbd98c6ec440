"""The binding core: the loaded libraries, symbol probing, and the one ``check()``.

Every raw status of the acl backend becomes an exception here and only here; the library's
own text (``aclGetRecentErrMsg``, per-thread and cleared on read) is copied into it at once.
"""
from __future__ import annotations

import threading
from typing import Any

from .. import _env, errors
from ._ffi import FUNCTIONS, ffi
from ._loader import Discovery, Loaded, discover, load

__all__ = ["ffi", "Lib", "get", "check", "recent_error"]

# Functions only newer CANN releases export (abi.md §2.1): probed, never required.
OPTIONAL = frozenset({
    "aclsysGetVersionStr", "aclsysGetVersionNum", "aclrtGetDeviceInfo", "aclFinalizeReference",
    "aclsysGetCANNVersion", "aclrtGetVersion", "aclrtPeekAtLastError", "aclrtGetLastError",
    "aclGetRecentErrMsg", "aclrtCreateEventWithFlag", "aclrtGetSocName", "aclGetDeviceCapability",
    "aclrtSynchronizeStreamWithTimeout", "aclSetDynamicInputTensorAddr",
    "aclSetDynamicOutputTensorAddr", "aclSetDynamicTensorAddr", "aclSetRawTensorAddr",
    "aclGetRawTensorAddr", "aclGetFloatArraySize", "aclGetTensorListSize", "aclGetScalarListSize",
})


class Lib:
    """The three CANN libraries and which declared functions each of them exports."""

    def __init__(self, found: Discovery, loaded: Loaded) -> None:
        self.found = found
        self.rt, self.nn, self.op = loaded.runtime, loaded.nnopbase, loaded.opapi
        self._keep = loaded
        self.missing: dict[str, list[str]] = {}
        for role, lib in (("runtime", self.rt), ("nnopbase", self.nn), ("opapi", self.op)):
            self.missing[role] = [name for name in FUNCTIONS[role] if not _has(lib, name)]
        self.has_recent_err_msg = "aclGetRecentErrMsg" not in self.missing["runtime"]

    def required_missing(self) -> list[str]:
        return [n for names in self.missing.values() for n in names if n not in OPTIONAL]


def _has(lib: Any, name: str) -> bool:
    try:
        getattr(lib, name)
    except AttributeError:  # ABI mode: a missing symbol fails on first access
        return False
    return True


_lock = threading.Lock()
_lib: Lib | None = None


def get(found: Discovery | None = None) -> Lib:
    """Load the libraries once (thread-safe). Raises BackendUnavailableError with every attempt."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            found = found or discover()
            if not found.found:
                raise errors.BackendUnavailableError(
                    "CANN not found:\n  - " + "\n  - ".join(found.attempts)
                    + "\n  fix: install the CANN toolkit, or set ASCEND_HOME_PATH to it "
                      "(source <toolkit>/set_env.sh)")
            opp = found.home / "opp" if found.home else None
            if opp is not None and opp.is_dir() and _env.set_default("ASCEND_OPP_PATH", str(opp)):
                # aclnn needs it (561107 otherwise); set_env.sh would have set it to this.
                found.attempts.append(f"ASCEND_OPP_PATH was unset: set to {opp}")
            try:
                loaded = load(found)
            except OSError as exc:
                raise errors.BackendUnavailableError(f"CANN found at {found.home} but failed to load: {exc}") from exc
            lib = Lib(found, loaded)
            missing = lib.required_missing()
            if missing:
                raise errors.BackendUnavailableError(
                    f"CANN at {found.home} lacks required functions: {', '.join(missing)}")
            _lib = lib
    return _lib


def loaded() -> Lib | None:
    return _lib


def recent_error() -> str | None:
    """Copy aclGetRecentErrMsg() now: the pointer is per-thread and cleared on read."""
    lib = _lib
    if lib is None or not lib.has_recent_err_msg:
        return None
    msg = lib.rt.aclGetRecentErrMsg()
    if msg == ffi.NULL:
        return None
    return ffi.string(msg).decode("utf-8", errors="replace") or None


def check(status: int, api: str) -> None:
    """Raise the AclError subclass for a failing ``status`` returned by C function ``api``."""
    if status:
        raise errors.from_status(status, api, cann_message=recent_error())
