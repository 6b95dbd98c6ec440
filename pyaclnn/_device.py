"""Device, Stream and Event: the runtime objects of pyaclnn (both backends)."""
from __future__ import annotations

import threading
from typing import Any

from . import _backend
from ._resource import Resource, close_all

ACL_MEM_MALLOC_HUGE_FIRST = 0

_local = threading.local()


def current_device() -> "Device | None":
    """The last Device opened in this thread and still open (aclrtSetDevice makes a device
    current for the calling thread; pyaclnn's defaults follow the same rule)."""
    stack = getattr(_local, "stack", None)
    while stack and stack[-1].closed:
        stack.pop()
    return stack[-1] if stack else None


class Device(Resource):
    """An Ascend device made current with ``aclrtSetDevice``; ``close()`` is ``aclrtResetDevice``.

    CANN keeps the current device per thread, so every pyaclnn object calls ``device.use()``
    before touching the runtime: the first use in a thread calls ``aclrtSetDevice`` there.
    Closing a device first closes what was created on it (executors, tensors, events, streams).
    Like aclrtSetDevice, opening a Device makes it the current one of the calling thread:
    tensors and executors made there without ``device=`` use it until it is closed.
    """
    _what = "Device"

    def __init__(self, device_id: int = 0) -> None:
        self.backend = _backend.current()
        self.id = int(device_id)
        self._runtime = self.backend.runtime
        self._tls = threading.local()
        self._token = object()  # marks this device's children in the registry
        self._runtime.set_device(self.id)
        self._tls.set = True
        # aclrtSetDevice calls made for this Device in all threads: aclrtResetDevice is
        # reference-counted per device, so close() resets once per set (abi.md §6.3).
        self._sets = [1]
        self._sets_lock = threading.Lock()
        self._own(self.backend, None, "device", _reset_device, self._runtime, self.id, self._token, self._sets,
                  self._tls)
        if not hasattr(_local, "stack"):
            _local.stack = []
        _local.stack.append(self)

    def use(self) -> None:
        """Make this device current in the calling thread (aclrtSetDevice, once per thread)."""
        if _backend._forked_after_init:
            raise _backend.forked_error()
        if not getattr(self._tls, "set", False):
            self._check_open()
            self._runtime.set_device(self.id)
            with self._sets_lock:
                self._sets[0] += 1
            self._tls.set = True

    def create_stream(self) -> "Stream":
        """A new stream on this device (aclrtCreateStream)."""
        return Stream(self)

    def create_event(self) -> "Event":
        return Event(self)

    def __repr__(self) -> str:
        state = "closed" if self.closed else self.backend.name
        return f"<pyaclnn.Device {self.id} ({state}, {self.backend.soc})>"


def _reset_device(runtime: Any, device_id: int, token: object, sets: list[int], tls: threading.local) -> None:
    if not getattr(tls, "set", False):  # closing from a thread that never used the device:
        runtime.set_device(device_id)   # the children's releases need it current here
        sets[0] += 1
        tls.set = True
    # A child that fails to close must not stop the others, nor the device reset: the first
    # error is raised once everything else has been released.
    error = close_all(lambda entry: entry[1] is not None and entry[1]._token is token)
    try:
        while sets[0] > 0:
            sets[0] -= 1
            runtime.reset_device(device_id)
    except Exception as exc:  # noqa: BLE001
        error = error or exc
    if error is not None:
        raise error


class Stream(Resource):
    """A stream (aclrtCreateStream). ``close()`` synchronizes, then aclrtDestroyStream.

    Each stream keeps one workspace buffer for the operators it runs: ops on one stream run
    in order, so the buffer can be reused; it only grows (after a synchronize).
    """
    _what = "Stream"

    def __init__(self, device: Device) -> None:
        device.use()
        self.device = device
        self._runtime = device._runtime
        self._raw = self._runtime.create_stream()
        self._workspace = [0, 0]  # [address, size], shared with the release function
        self._own(device.backend, device, "stream", _destroy_stream, device, self._raw, self._workspace)

    @property
    def handle(self) -> int:
        """The aclrtStream pointer, as an int."""
        return self._runtime.as_int(self._raw)

    def synchronize(self) -> None:
        """Wait until everything queued on the stream is done (aclrtSynchronizeStream)."""
        self._check_open()
        self.device.use()
        self._runtime.synchronize_stream(self._raw)

    def workspace(self, size: int) -> int:
        """A device buffer of at least ``size`` bytes for the next op on this stream (0 if size is 0)."""
        if size <= 0:
            return 0
        self.device.use()
        addr, have = self._workspace
        if size > have:
            if addr:
                self._runtime.synchronize_stream(self._raw)  # a queued op may still use it
                self._workspace[:] = [0, 0]
                self._runtime.free(addr)
            self._workspace[:] = [self._runtime.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST), size]
        return self._workspace[0]

    def __repr__(self) -> str:
        return f"<pyaclnn.Stream {'closed' if self.closed else hex(self.handle)} on device {self.device.id}>"


def _destroy_stream(device: Device, raw: Any, workspace: list[int]) -> None:
    device.use()
    runtime = device._runtime
    try:
        runtime.synchronize_stream(raw)
    finally:
        try:
            if workspace[0]:
                addr, workspace[:] = workspace[0], [0, 0]
                runtime.free(addr)
        finally:  # a refused free must not keep the stream alive
            runtime.destroy_stream(raw)


class Event(Resource):
    """An event (aclrtCreateEvent), for timing work on a stream."""
    _what = "Event"

    def __init__(self, device: Device) -> None:
        device.use()
        self.device = device
        self._runtime = device._runtime
        self._raw = self._runtime.create_event()
        self._own(device.backend, device, "event", _destroy_event, device, self._raw)

    def record(self, stream: Stream) -> None:
        """aclrtRecordEvent on ``stream``."""
        self._check_open()
        self.device.use()
        self._runtime.record_event(self._raw, stream._raw)

    def synchronize(self) -> None:
        self._check_open()
        self.device.use()
        self._runtime.synchronize_event(self._raw)

    def elapsed_ms(self, end: "Event") -> float:
        """Milliseconds from this event to ``end`` (aclrtEventElapsedTime); both recorded."""
        self._check_open()
        end._check_open()
        self.device.use()
        return self._runtime.event_elapsed_time(self._raw, end._raw)


def _destroy_event(device: Device, raw: Any) -> None:
    device.use()
    device._runtime.destroy_event(raw)
