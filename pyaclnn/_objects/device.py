"""Device, Stream and Event: the runtime objects of pyaclnn (both backends)."""
from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from . import backend as _backend
from . import current as _current
from . import lifetimes as _streamorder
from .resource import Resource, close_all

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

    CANN keeps ONE current device per thread, so every pyaclnn object calls ``device.use()``
    before touching the runtime: a cheap per-thread check that, when another device (or none)
    is current in the calling thread, switches to this one with ``aclrtSetCurrentContext`` and
    its default context (no reference added: ``close()`` resets once, for the one
    ``aclrtSetDevice`` made when it was opened).
    Closing a device first closes what was created on it (executors, tensors, events, streams).
    Like aclrtSetDevice, opening a Device makes it the current one of the calling thread:
    tensors and executors made there without ``device=`` use it until it is closed.

    Args:
        device_id: the device (``aclrtSetDevice``'s ``deviceId``); the NumPy backend has one, 0.

    Raises:
        TypeError: ``device_id`` is not an int.
        RtInvalidDeviceidError: no such device (107001).
        BackendUnavailableError: ``PYACLNN_BACKEND=acl`` and CANN or a device is missing.

    Examples:
        >>> with pyaclnn.Device(0) as device, device.create_stream() as stream:
        ...     t = pyaclnn.Tensor.from_numpy(np.ones(3, np.float32))
        ...     stream.synchronize()
        >>> t.closed   # closing the device closed what was made on it
        True
    """
    _what = "Device"

    def __init__(self, device_id: int = 0) -> None:
        self.backend = _backend.current()
        if isinstance(device_id, bool) or not isinstance(device_id, (int, np.integer)):
            raise TypeError(f"Device takes a device id (an int), got {type(device_id).__name__} {device_id!r}")
        self.id = int(device_id)
        self._runtime = self.backend.runtime
        self._token = object()  # marks this device's children in the registry
        self._state = _current.DeviceState(self.id, self._runtime)
        self._state.open()
        self._own(self.backend, None, "device", _reset_device, self._token, self._state)
        if not hasattr(_local, "stack"):
            _local.stack = []
        _local.stack.append(self)

    def use(self) -> None:
        """Make this device current in the calling thread (aclrtSetCurrentContext with its
        default context) unless pyaclnn already did and nothing switched it since."""
        if _backend._forked_after_init:
            raise _backend.forked_error()
        if getattr(_current._local, "current", None) is not self._state:
            self._check_open()
            self._state.make_current()

    def create_stream(self) -> "Stream":
        """A new stream on this device (aclrtCreateStream).

        Returns:
            The Stream; ``close()`` (or ``with``) synchronizes and destroys it.
        """
        return Stream(self)

    def create_event(self) -> "Event":
        """A new event on this device (aclrtCreateEvent).

        Returns:
            The Event; ``close()`` (or ``with``) destroys it.
        """
        return Event(self)

    def __repr__(self) -> str:
        state = "closed" if self.closed else self.backend.name
        return f"<pyaclnn.Device {self.id} ({state}, {self.backend.soc})>"


def _reset_device(token: object, state: _current.DeviceState) -> None:
    # The children's releases need the device current here (they call device.use(), which
    # would refuse the device being closed): make it current now.
    if _current.current() is not state:
        state.make_current()
    # A child that fails to close must not stop the others, nor the device reset: the first
    # error is raised once everything else has been released.
    error = close_all(lambda entry: entry[1] is not None and entry[1]._token is token)
    state.closed = True
    if _current.current() is state:
        _current.forget()
    try:
        while state.sets > 0:
            state.sets -= 1
            state.runtime.reset_device(state.id)
    except Exception as exc:  # noqa: BLE001
        error = error or exc
    if error is not None:
        raise error


class Stream(Resource):
    """A stream (aclrtCreateStream). ``close()`` synchronizes, then aclrtDestroyStream.

    Work on a stream is asynchronous: ``run(stream)`` only queues the operator. What a queued
    launch uses (tensors' memory, the workspace) stays allocated until the stream has passed it
    (``pyaclnn._objects.lifetimes``): frees wait for the next ``synchronize()`` or ``close()``, or
    for an Event recorded after the launch to be synchronized.
    Each stream keeps one workspace buffer for the operators it runs: ops on one stream run
    in order, so the buffer can be reused; a bigger one replaces it, and the old one is freed
    once the launches queued on it are done.
    ``Stream.from_handle`` wraps a stream another framework owns (never destroyed by pyaclnn).
    ``pyaclnn.acl`` takes the Stream itself wherever an ``aclrtStream`` goes (pyaclnn._objects.handles).
    Make one with ``Device.create_stream()``.

    Args:
        device: the open Device the stream is created on.
    """
    _what = "Stream"
    _ctype = "aclrtStream"
    owned = True

    def __init__(self, device: Device) -> None:
        _need_device(device, "Stream")
        device.use()
        self.device = device
        self._runtime = device._runtime
        self._raw = self._runtime.create_stream()
        self._workspace = [0, 0]  # [address, size], shared with the release function
        self._ws_lock = threading.Lock()  # two threads may share a Stream: one grows it at a time
        self._order = _stream_order(device, self._raw)
        self._own(device.backend, device, "stream", _destroy_stream, device, self._raw, self._workspace,
                  self._order)

    @classmethod
    def from_handle(cls, handle: Any, device: Device | None = None) -> "Stream":
        """A stream pyaclnn does not own, given as its aclrtStream address (an int, e.g.
        torch_npu's ``torch.npu.current_stream().npu_stream``) or as a ``pyaclnn.acl`` handle.
        Ops run on it like on any Stream; ``device`` (default: the current one) must be the
        device it belongs to.

        pyaclnn never destroys it: ``close()`` only forgets it, after waiting for the stream
        (aclrtSynchronizeStream) if pyaclnn queued work on it since the last synchronize, and
        frees pyaclnn's own workspace for it. ``synchronize()`` is aclrtSynchronizeStream: it
        waits for everything queued on the stream, the owner's work included.

        Args:
            handle: the aclrtStream, as its address (a positive int) or a ``pyaclnn.acl`` handle.
            device: the Device the stream belongs to; None for the current one.

        Returns:
            A Stream with ``owned`` False.

        Raises:
            TypeError: ``handle`` is neither a positive int nor a stream handle, or ``device``
                is not a Device.
        """
        device = device_arg(device, "Stream.from_handle")
        if not isinstance(handle, int):
            try:
                handle = device._runtime.pointer_address(handle)
            except TypeError:
                pass
        if isinstance(handle, bool) or not isinstance(handle, int) or handle <= 0:
            raise TypeError(f"Stream.from_handle takes the stream's address as a positive int, got {handle!r}")
        device.use()
        self = object.__new__(cls)
        self.device, self._runtime, self.owned = device, device._runtime, False
        self._raw = self._runtime.handle_from_int(handle)
        self._workspace = [0, 0]
        self._ws_lock = threading.Lock()
        self._order = _stream_order(device, self._raw)
        self._own(device.backend, device, "stream", _forget_stream, device, self._raw, self._workspace,
                  self._order)
        return self

    @property
    def handle(self) -> int:
        """The aclrtStream pointer, as an int."""
        return self._runtime.as_int(self._raw)

    def synchronize(self) -> None:
        """Wait until everything queued on the stream is done (aclrtSynchronizeStream), then
        free what waited for it.

        Raises:
            ClosedError: the stream is closed.
            AclError: a queued kernel failed, e.g. RtAicoreExceptionError (507015) for a tensor
                over memory that is not allocated.
        """
        self._check_open()
        self._order.sync()

    def workspace(self, size: int) -> int:
        """A device buffer of at least ``size`` bytes for the next op on this stream (0 if size is 0)."""
        if size <= 0:
            return 0
        addr, have = self._workspace  # one list read (atomic): big enough needs no lock
        if size <= have:
            return addr
        with self._ws_lock:  # read, grow and replace as one step (else a buffer leaks or is freed twice)
            addr, have = self._workspace
            if size > have:
                self.device.use()
                new = self._runtime.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
                self._workspace[:] = [new, size]
                if addr:  # a queued op may still use the old one: free it once the stream passed it
                    _streamorder.release_after(self._order, _free_now, self.device, addr)
            return self._workspace[0]

    def __repr__(self) -> str:
        borrowed = "" if self.owned else " (borrowed)"
        return f"<pyaclnn.Stream {'closed' if self.closed else hex(self.handle)}{borrowed} on device {self.device.id}>"


def _stream_order(device: Device, raw: Any) -> _streamorder.Order:
    """The stream's launch bookkeeping; its ``sync`` is aclrtSynchronizeStream on ``raw``, then
    the deferred frees (no reference to the Stream object: storages that remember the stream
    must not keep it alive)."""
    def sync() -> None:
        device.use()
        device._runtime.synchronize_stream(raw)
        _streamorder.passed(order)
    order = _streamorder.Order(sync)
    return order


def _free_now(device: Device, addr: int) -> None:
    """aclrtFree with the device current (a deferred free may run in any thread)."""
    device.use()
    device._runtime.free(addr)


def _destroy_stream(device: Device, raw: Any, workspace: list[int], order: _streamorder.Order) -> None:
    device.use()
    runtime = device._runtime
    try:
        runtime.synchronize_stream(raw)
    finally:
        try:
            runtime.destroy_stream(raw)  # waits for queued work too (CANN's aclrtDestroyStream)
        finally:  # a refused destroy must not keep the memory alive
            try:
                if workspace[0]:
                    addr, workspace[:] = workspace[0], [0, 0]
                    runtime.free(addr)
            finally:
                _streamorder.passed(order)


def _forget_stream(device: Device, raw: Any, workspace: list[int], order: _streamorder.Order) -> None:
    """Release a borrowed stream: never destroyed; pyaclnn's workspace and deferred frees go
    once the stream has passed pyaclnn's launches."""
    if order.idle and not workspace[0]:
        return
    device.use()
    try:
        if not order.idle:
            device._runtime.synchronize_stream(raw)
    finally:
        try:
            if workspace[0]:
                addr, workspace[:] = workspace[0], [0, 0]
                device._runtime.free(addr)
        finally:
            _streamorder.passed(order)


class Event(Resource):
    """An event (aclrtCreateEvent), for timing work on a stream and waiting for part of it.
    ``pyaclnn.acl`` takes the Event itself wherever an ``aclrtEvent`` goes (pyaclnn._objects.handles).
    Make one with ``Device.create_event()``; another stream waits for it with
    ``pyaclnn.acl.aclrtStreamWaitEvent(stream, event)``.

    Args:
        device: the open Device the event is created on.
    """
    _what = "Event"
    _ctype = "aclrtEvent"

    def __init__(self, device: Device) -> None:
        _need_device(device, "Event")
        device.use()
        self.device = device
        self._runtime = device._runtime
        self._raw = self._runtime.create_event()
        self._mark: tuple[_streamorder.Order, int] | None = None  # (stream, launches) at the record
        self._own(device.backend, device, "event", _destroy_event, device, self._raw)

    @property
    def handle(self) -> int:
        """The aclrtEvent pointer, as an int."""
        self._check_open()
        return self._runtime.as_int(self._raw)

    def record(self, stream: Stream) -> None:
        """aclrtRecordEvent on ``stream``: the event completes when the work queued on it so
        far is done.

        Args:
            stream: the pyaclnn Stream whose queued work the event marks.

        Raises:
            TypeError: ``stream`` is not a pyaclnn Stream.
            ClosedError: the event is closed.
        """
        self._check_open()
        if not isinstance(stream, Stream):
            raise TypeError(f"Event.record takes a pyaclnn.Stream, got {type(stream).__name__} {stream!r}")
        self.device.use()
        self._runtime.record_event(self._raw, stream._raw)
        self._mark = (stream._order, stream._order.launches)

    def synchronize(self) -> None:
        """Wait until the work queued before the latest record is done (aclrtSynchronizeEvent);
        memory that only that work used is then freed."""
        self._check_open()
        self.device.use()
        self._runtime.synchronize_event(self._raw)
        if self._mark is not None:
            _streamorder.passed(*self._mark)

    def elapsed_ms(self, end: "Event") -> float:
        """Milliseconds from this event to ``end`` (aclrtEventElapsedTime); both recorded.

        Args:
            end: an Event recorded after this one.

        Returns:
            The time between the two records, in milliseconds.

        Raises:
            TypeError: ``end`` is not a pyaclnn Event.
        """
        self._check_open()
        if not isinstance(end, Event):
            raise TypeError(f"Event.elapsed_ms takes a pyaclnn.Event, got {type(end).__name__} {end!r}")
        end._check_open()
        self.device.use()
        return self._runtime.event_elapsed_time(self._raw, end._raw)


def _destroy_event(device: Device, raw: Any) -> None:
    device.use()
    device._runtime.destroy_event(raw)


def _need_device(device: Any, what: str) -> None:
    if not isinstance(device, Device):
        raise TypeError(f"{what} takes a pyaclnn.Device, got {type(device).__name__} {device!r} "
                        f"(device.create_{what.lower()}() makes one)")


def device_arg(device: Any, what: str) -> Device:
    """A ``device=`` argument: the Device given, or the default one for None; TypeError for
    anything else (``device=0`` must not read as 'no device given')."""
    if device is None:
        return default_device()
    if not isinstance(device, Device):
        hint = f" (open it with pyaclnn.Device({device}))" if isinstance(device, int) else ""
        raise TypeError(f"{what}: device takes a pyaclnn.Device or None, got {type(device).__name__} "
                        f"{device!r}{hint}")
    return device


def default_device() -> Device:
    """The thread's current Device if one is open, else the backend's default device
    (PYACLNN_DEVICE, default 0); made current in the calling thread."""
    device = current_device()
    if device is not None:
        device.use()
        return device
    backend = _backend.current()
    device = backend.default_device
    if device is None or device.closed:
        with backend.lock:
            device = backend.default_device
            if device is None or device.closed:
                from .._core import env as _env
                device = backend.default_device = Device(_env.device_id())
    device.use()
    return device


_streams = threading.local()
# every thread's default streams: pyaclnn's own, not the user's to close (pyaclnn check)
default_streams: "weakref.WeakSet[Stream]" = weakref.WeakSet()


def default_stream(device: Device) -> Stream:
    """This thread's stream on ``device`` (created on first use, closed with the device): where
    a launch or copy given no stream goes."""
    cache = getattr(_streams, "by_device", None)
    if cache is None:
        cache = _streams.by_device = {}
    stream = cache.get(id(device))
    if stream is None or stream.closed or stream.device is not device:
        stream = cache[id(device)] = device.create_stream()
        default_streams.add(stream)
    return stream
