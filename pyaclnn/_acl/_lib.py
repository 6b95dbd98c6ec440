"""The binding core: the loaded libraries, symbol probing, and the one ``check()``.

Every raw status of the acl backend becomes an exception here and only here; the library's
own text (``aclGetRecentErrMsg``, per-thread and cleared on read) is copied into it at once.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from .. import errors
from .._core import env as _env
from .._core.sites import capture_rule
from ._ffi import FUNCTIONS, ffi
from ._loader import Discovery, Loaded, discover, load, loading_fix, missing_libraries

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
        self.by_name_errors = loaded.by_name_errors  # libraries CANN opens by name that did not preload
        self.by_name_skipped = loaded.by_name_skipped  # found, not preloaded (another implementation's)
        self.missing: dict[str, list[str]] = {}
        for role, lib in (("runtime", self.rt), ("nnopbase", self.nn), ("opapi", self.op)):
            self.missing[role] = [name for name in FUNCTIONS[role] if not has(lib, name)]
        self.has_recent_err_msg = "aclGetRecentErrMsg" not in self.missing["runtime"]

    def required_missing(self) -> list[str]:
        return [n for names in self.missing.values() for n in names if n not in OPTIONAL]


def has(lib: Any, name: str) -> bool:
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
            set_env_defaults(found)
            try:
                loaded = load(found)
            except OSError as exc:
                names = missing_libraries(found, str(exc))
                raise errors.BackendUnavailableError(
                    f"CANN found at {found.home} but failed to load: {exc}"
                    + (f"\n  missing: {', '.join(names)}" if names else "")
                    + f"\n  fix: {loading_fix(found, names)}") from exc
            lib = Lib(found, loaded)
            missing = lib.required_missing()
            if missing:
                raise errors.BackendUnavailableError(
                    f"CANN at {found.home} lacks required functions: {', '.join(missing)}")
            _lib = lib
    return _lib


def set_env_defaults(found: Discovery) -> None:
    """What set_env.sh exports and CANN reads, for this process when unset: ASCEND_OPP_PATH (aclnn
    fails with 561107 without it), ASCEND_HOME_PATH (nnopbase finds lib64/libopapi_*.so with it)
    and ASCEND_AICPU_PATH (AI CPU kernels), each the install found."""
    if found.home is None:
        return
    home, opp = found.home, found.home / "opp"
    for name, value in (("ASCEND_OPP_PATH", opp if opp.is_dir() else None), ("ASCEND_HOME_PATH", home),
                        ("ASCEND_AICPU_PATH", home)):
        if value is not None and _env.set_default(name, str(value)):
            found.attempts.append(f"{name} was unset: set to {value}")


def loaded() -> Lib | None:
    return _lib


def loading_hint(lib: Lib, error: str) -> str:
    """For a failed aclInit: the libraries that could not be opened, and the exact fix ('' when
    the error names none)."""
    names = missing_libraries(lib.found, *lib.by_name_errors.values(), error)
    if not names:
        return ""
    return f"\n  missing: {', '.join(names)}\n  fix: {loading_fix(lib.found, names)}"


_seen = threading.local()  # per thread: the whole text aclGetRecentErrMsg returned last


def recent_error() -> str | None:
    """This thread's error text since the previous call (None: nothing new), copied now.

    The documentation says aclGetRecentErrMsg clears on read, but CANN 9's implementation
    (hicann/runtime acl.cpp aclGetRecentErrMsgImpl) prepends the new text to everything it
    returned before in the thread, and a read with nothing new returns the old text again. So
    the part already seen is cut off the end; with a runtime that clears, nothing is cut.
    """
    lib = _lib
    if lib is None or not lib.has_recent_err_msg:
        return None
    msg = lib.rt.aclGetRecentErrMsg()
    if msg == ffi.NULL:
        return None
    text = ffi.string(msg).decode("utf-8", errors="replace")
    seen, _seen.text = getattr(_seen, "text", ""), text
    if seen:
        if text == seen:
            return None
        if text.endswith("\n" + seen):
            text = text[:-len(seen) - 1]
    return text or None


def check(status: int, api: str) -> None:
    """Raise the AclError subclass for a failing ``status`` returned by C function ``api``."""
    if status:
        raise errors.from_status(status, api, capture_rule(status, None), cann_message=recent_error())


def created(call: Callable[[], int], out: Any, api: str, release: Callable[[Any], Any],
            value: Callable[[Any], Any] = lambda handle: handle) -> Any:
    """``check(call(), api)`` for a C call that makes a handle into ``out[0]``, and
    ``value(out[0])``. Interrupted before that is returned (a KeyboardInterrupt: Python runs signal
    handlers once a C call returns), the handle is released with ``release``: nothing holds it yet."""
    try:
        check(call(), api)
        return value(out[0])
    except BaseException:
        if out[0] != ffi.NULL:
            release(out[0])
        raise
