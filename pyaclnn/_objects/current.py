"""The device pyaclnn last made current in each thread (CANN keeps one current device per thread).

aclrtSetDevice makes a device current in the calling thread only (hicann/runtime
``ApiImpl::SetDevice`` sets the thread's current context), and every call adds one reference
to the device that aclrtResetDevice takes back (``Runtime::PrimaryContextRetain``: one IncRef
per call, even in the same thread). So a Device calls aclrtSetDevice once when opened (one
reset at close), and pyaclnn remembers per thread which device it made current: when another
one is needed, aclrtSetCurrentContext with that device's default context switches at no
reference cost.
"""
from __future__ import annotations

import os
import threading
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._runtime import Runtime

# This thread's current-device record, the one of pyaclnn: .current, the DeviceState made current;
# .devices, the Devices opened here (the last open one is the thread's device).
class _Thread(threading.local):
    """Each thread's record; the class attributes are every new thread's defaults (a plain read
    then needs no getattr with a default: Device.use reads it before every runtime call)."""
    current: DeviceState | None = None
    devices: list[Any] | None = None


thread = _Thread()


def _forked() -> None:
    # A child forked after pyaclnn initialised cannot use CANN (pyaclnn._objects.backend
    # ._mark_forked). Forgetting the forking thread's device (the child's only thread) sends
    # the child's every Device.use to its slow path, which raises the fork error: so the fast
    # path, taken when this thread's current device is the one asked for, needs no fork test.
    thread.current = None


os.register_at_fork(after_in_child=_forked)
# The threads pyaclnn made a device current in: the exit hook leaves everything to the process's
# end while one of them is still alive (pyaclnn._objects.backend._exit_hook).
users: "weakref.WeakSet[threading.Thread]" = weakref.WeakSet()


class DeviceState:
    """What a Device shares with its release function: id, runtime, the device's default
    context and how many aclrtSetDevice calls close() must give back."""

    __slots__ = ("id", "runtime", "sets", "lock", "closed", "context")

    def __init__(self, device_id: int, runtime: Runtime) -> None:
        self.id, self.runtime = device_id, runtime
        self.sets = 0
        self.lock = threading.Lock()
        self.closed = False
        self.context: Any = None

    def open(self) -> None:
        """aclrtSetDevice (one reference, given back by close), then remember the device's
        default context (aclrtGetCurrentContext) to switch back to it later."""
        self.set_device()
        try:
            self.context = self.runtime.get_current_context()
        except BaseException:
            self.runtime.reset_device(self.id)  # give the reference back: the Device is not made
            self.sets -= 1
            forget()
            raise

    def set_device(self) -> None:
        self.runtime.set_device(self.id)
        with self.lock:
            self.sets += 1
        thread.current = self
        users.add(threading.current_thread())

    def make_current(self) -> None:
        """Make the device current in the calling thread. aclrtSetCurrentContext with the
        device's default context switches device without adding a reference (CANN's
        aclrtSetDevice would add one per call: ``Runtime::PrimaryContextRetain``), so
        switching back and forth costs no resets at close."""
        if self.context is None:
            self.set_device()
            return
        self.runtime.set_current_context(self.context)
        thread.current = self
        users.add(threading.current_thread())


def state() -> DeviceState | None:
    """The device pyaclnn made current in this thread (its DeviceState), or None."""
    return getattr(thread, "current", None)


def opened(device: Any) -> None:
    """``device`` (a Device) was opened in this thread: the thread's device until it is closed
    (aclrtSetDevice makes a device current for the calling thread; pyaclnn's defaults follow)."""
    stack = getattr(thread, "devices", None)
    if stack is None:
        stack = thread.devices = []
    stack.append(device)


def device() -> Any:
    """The last Device opened in this thread and still open, or None."""
    stack = getattr(thread, "devices", None)
    while stack and stack[-1].closed:
        stack.pop()
    return stack[-1] if stack else None


def forget() -> None:
    """The thread's current device changed behind pyaclnn's back (pyaclnn.acl calls)."""
    thread.current = None


def outer_context(runtime: Runtime) -> Any:
    """The calling thread's current context (aclrtGetCurrentContext), for a thread where
    pyaclnn made no device current: the one to give back after a release; None if none."""
    try:
        return runtime.get_current_context()
    except Exception:  # noqa: BLE001 - no context in this thread (107002), or no runtime left
        return None


def restore(previous: DeviceState | None, runtime: Runtime | None = None, outer: Any = None) -> None:
    """Make ``previous`` current again in this thread if a release switched devices (GC-run
    releases must not leave another device current in the thread they happen to run in); when
    pyaclnn had made none current there, give back ``outer`` (from ``outer_context``) with
    aclrtSetCurrentContext."""
    now = getattr(thread, "current", None)
    if previous is not None:
        if not previous.closed and now is not previous:
            previous.make_current()
    elif outer is not None and now is not None and runtime is not None:
        runtime.set_current_context(outer)
        thread.current = None


def other_users() -> list[threading.Thread]:
    """The threads, other than the calling one, that pyaclnn made a device current in and that
    are still running (at exit: daemon threads, or threads a C library started)."""
    me = threading.current_thread()
    return [t for t in list(users) if t is not me and t.is_alive()]
