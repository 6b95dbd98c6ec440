"""Choose the backend once, own its lifetime, and report why it was chosen.

``import pyaclnn`` loads nothing native. The first use calls ``current()``, which (once, under a
lock) picks the backend from PYACLNN_BACKEND:
- ``numpy``: the reference backend, emulating PYACLNN_SOC;
- ``acl``: CANN must load, aclInit must succeed and a device must exist, else
  BackendUnavailableError listing every attempt;
- ``auto`` (default): acl when all of that holds, else numpy with the reason kept.
This is the only module that branches on the backend. Its atexit hook closes every live
pyaclnn object in dependency order and then gives back pyaclnn's aclInit (never from GC; never
a host application's session).
"""
from __future__ import annotations

import atexit
import os
import threading
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .. import errors
from .._core import env as _env
from .._spec import soc_family

if TYPE_CHECKING:
    from .._runtime import Runtime



class Backend:
    """The chosen runtime plus what ``backend_info()`` reports and the live-object registry."""

    def __init__(self, runtime: Runtime, name: str, reason: str, soc: str, soc_name: str,
                 cann_version: str | None, paths: dict[str, Any], simulator: str | None = None) -> None:
        self.runtime, self.name, self.reason = runtime, name, reason
        self.soc, self.soc_name, self.cann_version, self.paths = soc, soc_name, cann_version, paths
        self.simulator = simulator  # the NPU Simulator's chip when acl runs on it
        self.pid = os.getpid()
        self.finalized = False
        # False once finalized, and in a forked child (the handles are the parent's): then
        # releasing a handle does nothing. A flag, not a getpid() per release: it is on every close.
        self.releases = True
        self.default_device: Any = None  # the Device the high-level API uses (pyaclnn._objects.tensor)
        self._local = threading.local()
        self.lock = threading.Lock()
        self.zeros: Any = np.zeros  # new_output's allocator (the numpy backend sets its own)
        # The NumPy-in/NumPy-out calls' memos, by their arguments' metadata (pyaclnn._functions.hostcall).
        self.call_memos: dict[tuple, Any] = {}
        # The user's call (through pyaclnn.acl) that took what pyaclnn's session holds, e.g.
        # "aclFinalize()"; current() then repairs it (recover).
        self.lost: str | None = None
        self.init_lost = False  # that call ended the aclInit count, pyaclnn's reference included
        self._recover_lock = threading.RLock()  # not self.lock: current() runs under that one
        # pyaclnn.acl's aclrtSetDevice calls not yet reset, per device (the user's references),
        # and the resets the user made beyond them (pyaclnn's references they took), per device
        self.user_sets: dict[int, int] = {}
        self.taken_sets: dict[int, int] = {}

    def new_output(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A zeroed host ndarray for an operator's output (the NumPy-in/NumPy-out functions).
        numpy: a large one has its pages faulted in by the kernel threads first (see
        zeros_faulted_in)."""
        return self.zeros(shape, dtype)

    def info(self) -> dict[str, Any]:
        return {"backend": self.name, "reason": self.reason, "soc": self.soc, "soc_name": self.soc_name,
                "cann_version": self.cann_version, "paths": dict(self.paths), "simulator": self.simulator}

    def recover(self) -> None:
        """Repair what the user's calls through pyaclnn.acl took from pyaclnn's session.

        After aclFinalize (or the last aclFinalizeReference): take pyaclnn's aclInit reference
        back. aclFinalize de-initialises acl only: devices, contexts, streams and memory survive it and
        aclInit may be called again (hicann/runtime acl.cpp aclFinalizeInternal, aclInitImpl), so
        an aclInit is all pyaclnn's session needs (100002 after the user's own aclInit is one
        reference too, given back at exit). After aclrtResetDevice beyond the user's own
        aclrtSetDevice calls: see _recover_device. /work/notes/i25-sessions.md has the trace.
        """
        with self._recover_lock:
            lost = self.lost
            if lost is None:
                return
            try:
                if self.init_lost:
                    self.runtime.init()
                    self.init_lost = False
                for device_id, taken in list(self.taken_sets.items()):
                    self._recover_device(device_id, taken)
                    del self.taken_sets[device_id]
            except errors.AclError as exc:
                raise errors.PyaclnnError(
                    f"pyaclnn's CANN session was broken by your {lost}, and pyaclnn could not start "
                    f"it again: {exc}. Give pyaclnn.acl's aclInit / aclrtSetDevice calls back with "
                    f"as many aclFinalize / aclrtResetDevice calls, no more.") from exc
            self.lost = None

    def _recover_device(self, device_id: int, taken: int) -> None:
        """The user reset device ``device_id`` ``taken`` times beyond their own aclrtSetDevice
        calls, i.e. took as many of pyaclnn's references. aclrtResetDevice counts references per
        device and releases the device at 0: its default context, the streams made in it
        (context.cc TearDown) and, when the device closes, its memory (hicann/driver devmm_svm.c
        drvMemDeviceCloseInner); one more reset then gives 507007 (runtime.cc
        PrimaryContextRelease). So: if pyaclnn held more, the device lives on and pyaclnn takes its
        references back (aclrtSetDevice); else pyaclnn's Devices there, and all made on them, are
        dropped without calling CANN (their handles are gone) and the high-level calls open a new
        Device. (A host application's own aclrtSetDevice, outside pyaclnn.acl, is not counted.)"""
        from . import current as _current
        from .resource import forget_all, live
        devices = [entry for _, entry in live(self) if entry[2] == "device" and entry[4][1].id == device_id]
        states = [entry[4][1] for entry in devices]
        held = sum(state.sets for state in states)
        if held > taken:
            for _ in range(taken):
                self.runtime.set_device(device_id)
            _current.forget()  # the thread's current context: set again by the next use()
            return
        tokens = {entry[4][0] for entry in devices}
        forget_all(lambda entry: entry[0] is self and (
            (entry[2] == "device" and entry[4][0] in tokens) or
            (entry[1] is not None and getattr(entry[1], "token", None) in tokens)))
        for state in states:
            state.sets, state.closed = 0, True
            if _current.state() is state:
                _current.forget()

    def shutdown(self) -> list[Exception]:
        """Close every live object in dependency order, then give back pyaclnn's aclInit (a
        host application's CANN session stays usable: ``runtime.release_init``). Idempotent.
        Returns what the closes raised, each reported on stderr (pyaclnn._objects.unreported):
        e.g. a hazard of queued work that only runs at the streams' last synchronize."""
        if self.finalized or os.getpid() != self.pid:
            return []
        # executors, tensors, storage, events, streams, then devices (abi.md §6.3); exit must go
        # on whatever fails, so the errors are reported rather than raised.
        from .resource import close_all
        from .unreported import report
        failed: list[Exception] = []
        close_all(lambda entry: entry[0] is self, failed.append)
        for exc in failed:
            report("closing what was left open", exc)
        self.finalized = True
        self.releases = False
        try:
            self.runtime.release_init()
        except errors.AclError:
            pass
        return failed


def _exit_hook(backend: Backend) -> None:
    """pyaclnn's atexit hook: ``backend.shutdown()``. A HazardError there is a bug of the
    program as much as one at a synchronize: the process exits 1 where it would exit 0.

    Not while another thread that used pyaclnn still runs (a daemon thread: Python does not
    wait for those): it may be inside a C call with any of the handles (an aclrtMemcpy into
    memory the shutdown frees ended in SIGSEGV, issue 25), and it goes on running until the
    interpreter stops it. Then nothing is released or finalized: the process's end gives
    everything back (the driver frees a process's device resources when it exits)."""
    from .current import other_users
    if other_users():
        backend.finalized, backend.releases = True, False
        return
    if any(isinstance(exc, errors.HazardError) for exc in backend.shutdown()):
        from .exiting import exit_failed
        exit_failed(_exit_hook)


_lock = threading.Lock()
active: Backend | None = None  # the chosen backend (None until the first use, and in a forked child)
# Called (no argument) each time a backend is chosen: pyaclnn.acl forgets the operator
# functions it made for the previous one (what one backend knows, another may not).
on_choose: list[Callable[[], None]] = []
forked_after_init = False


def _mark_forked() -> None:
    # In a child forked after initialisation, forget the backend: the next current() then
    # raises the fork error, and callers holding no backend reference cannot reach CANN.
    global forked_after_init, active
    if active is not None:
        forked_after_init = True
        active.releases = False
        active = None


os.register_at_fork(after_in_child=_mark_forked)


def current() -> Backend:
    """The backend, initialising it on first use (thread-safe, once)."""
    backend = active
    if backend is not None and not forked_after_init:
        if backend.lost is not None:  # the user's aclFinalize (pyaclnn.acl): see recover
            backend.recover()
        return backend
    return _initialise()


def forked_error() -> errors.PyaclnnError:
    return errors.PyaclnnError(
        "pyaclnn was initialised before this process was forked; CANN (and so pyaclnn, on "
        "either backend) cannot be used in a forked child. Use the 'spawn' or 'forkserver' "
        "start method, or first use pyaclnn in the child only.")


def _initialise() -> Backend:
    global active
    with _lock:
        if forked_after_init:
            raise forked_error()
        if active is None:
            backend = _choose()
            atexit.register(_exit_hook, backend)
            active = backend
            for hook in on_choose:
                hook()
    return active


def _numpy_backend(reason: str) -> Backend:
    from .._numpy.kernels._parallel import zeros_faulted_in
    from .._numpy.runtime import NumpyRuntime
    soc = _env.soc()
    _env.hazards()  # a bad PYACLNN_HAZARDS fails here, not at the first hazard (read again there)
    runtime = NumpyRuntime(soc)
    runtime.init()
    backend = Backend(runtime, "numpy", reason, soc, soc, None, {})
    backend.zeros = zeros_faulted_in
    return backend


def _acl_backend() -> Backend:
    """Load CANN, aclInit, and prove a device exists; raise BackendUnavailableError if not."""
    from .._acl.runtime import AclRuntime
    runtime = AclRuntime()  # loads CANN once; BackendUnavailableError lists every attempt
    lib = runtime.lib
    try:
        runtime.init()
    except errors.AclError as exc:
        raise errors.BackendUnavailableError(f"aclInit failed: {exc}{runtime.loading_hint(str(exc))}") from exc
    try:
        count = runtime.device_count()
    except errors.AclError as exc:
        count, why = 0, str(exc)
    else:
        why = "aclrtGetDeviceCount reports 0 devices"
    if count == 0:
        runtime.release_init()
        raise errors.BackendUnavailableError(
            f"CANN loaded from {lib.found.home} but no Ascend device is usable ({why}); "
            "a toolkit without a driver only has stub libraries")
    soc_name = runtime.soc_name()
    paths = {"home": str(lib.found.home), "layout": lib.found.layout, "runtime": str(lib.found.runtime),
             "nnopbase": str(lib.found.nnopbase), "opapi": str(lib.found.opapi)}
    reason = f"CANN {lib.found.layout} at {lib.found.home}, {count} device(s)"
    sim = lib.found.simulator
    if sim is not None:
        paths["simulator"] = str(sim.lib)
        reason = f"acl on the NPU Simulator ({sim.chip}): {reason}"
    return Backend(runtime, "acl", reason, soc_family(soc_name), soc_name, runtime.cann_version(), paths,
                   None if sim is None else sim.chip)


def _choose() -> Backend:
    choice = _env.backend()
    if choice == "numpy":
        return _numpy_backend("PYACLNN_BACKEND=numpy")
    try:
        return _acl_backend()
    except errors.BackendUnavailableError as exc:
        if choice == "acl":
            raise errors.BackendUnavailableError(f"PYACLNN_BACKEND=acl but {exc}") from exc
        return _numpy_backend(f"auto: acl unavailable: {exc}")


def backend_info() -> dict[str, Any]:
    """Which backend runs, why, the SoC (emulated or real), CANN version and library paths.

    The first call chooses the backend (``PYACLNN_BACKEND``) if nothing used pyaclnn yet.

    Returns:
        A new dict with ``backend`` ('acl' or 'numpy'), ``reason`` (why it was chosen: the
            variable, or why the device could not be used under 'auto'), ``soc`` (the SoC family
            whose tables apply, e.g. 'Ascend910B'), ``soc_name`` (``aclrtGetSocName`` on a
            device, e.g. 'Ascend910B3'; the emulated SoC on the NumPy backend), ``cann_version``
            (None on the NumPy backend), ``paths`` (the CANN libraries loaded, by role; under the
            NPU Simulator also ``simulator``, its lib folder) and ``simulator`` (the chip of the
            NPU Simulator acl runs on, e.g. 'Ascend950PR'; None on a device or the NumPy
            backend; ``reason`` then starts ``acl on the NPU Simulator (<chip>)``).

    Raises:
        BackendUnavailableError: ``PYACLNN_BACKEND=acl`` and CANN or a device is missing.
        ValueError: a ``PYACLNN_BACKEND`` or ``PYACLNN_SOC`` value pyaclnn does not know.

    Examples:
        >>> info = pyaclnn.backend_info()
        >>> info["backend"] in ("acl", "numpy"), sorted(info)
        (True, ['backend', 'cann_version', 'paths', 'reason', 'simulator', 'soc', 'soc_name'])
    """
    return current().info()


def reset_for_tests() -> None:
    """Shut the current backend down and forget it, so the next use chooses again."""
    global active, forked_after_init
    with _lock:
        if active is not None:
            active.shutdown()
            atexit.unregister(_exit_hook)
        active, forked_after_init = None, False
