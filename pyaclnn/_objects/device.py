"""Device: an Ascend device made current (aclrtSetDevice), the default device, and a ``device=`` argument.

Streams and events (pyaclnn._objects.stream, .event) sit above it: they need a Device, and a
Device makes them through the classes they set on it when imported (``Device.stream_class``,
``Device.event_class``; the package pyaclnn._objects imports both)."""
from __future__ import annotations


from typing import Any

import numpy as np

from . import backend as _backend
from . import current as _current
from . import lifetimes
from .resource import Resource, close_all

_thread = _current.thread  # (one global read per use: it runs before every runtime call)


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
        self.runtime = self.backend.runtime
        self.token = object()  # marks this device's children in the registry
        self.state = _current.DeviceState(self.id, self.runtime)
        self.state.open()
        self._own(self.backend, None, "device", _reset_device, self.token, self.state)
        _current.opened(self)

    def use(self) -> None:
        """Make this device current in the calling thread (aclrtSetCurrentContext with its
        default context) unless pyaclnn already did and nothing switched it since."""
        if _thread.current is not self.state:  # (in a forked child never: current._forked)
            if _backend.forked_after_init:
                raise _backend.forked_error()
            self.check_open()
            self.state.make_current()

    stream_class: Any  # pyaclnn._objects.stream.Stream, set when that module is imported
    event_class: Any   # pyaclnn._objects.event.Event, likewise

    def create_stream(self) -> Any:
        """A new stream on this device (aclrtCreateStream).

        Returns:
            The Stream; ``close()`` (or ``with``) synchronizes and destroys it.
        """
        return self.stream_class(self)

    def create_event(self) -> Any:
        """A new event on this device (aclrtCreateEvent).

        Returns:
            The Event; ``close()`` (or ``with``) destroys it.
        """
        return self.event_class(self)

    def __repr__(self) -> str:
        state = "closed" if self.closed else self.backend.name
        return f"<pyaclnn.Device {self.id} ({state}, {self.backend.soc})>"


def _reset_device(token: object, state: _current.DeviceState) -> None:
    # The children's releases need the device current here (they call device.use(), which
    # would refuse the device being closed): make it current now.
    if _current.state() is not state:
        state.make_current()
    # A child that fails to close must not stop the others, nor the device reset: the first
    # error is raised once everything else has been released.
    error = close_all(lambda entry: entry[1] is not None and entry[1].token is token)
    state.closed = True
    if _current.state() is state:
        _current.forget()
    try:
        while state.sets > 0:
            state.sets -= 1
            state.runtime.reset_device(state.id)
    except Exception as exc:  # noqa: BLE001
        error = error or exc
    if error is not None:
        raise error

def free_now(device: Device, addr: int) -> None:
    """aclrtFree with the device current (a deferred free may run in any thread)."""
    device.use()
    device.runtime.free(addr)


def need_device(device: Any, what: str) -> None:
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
    device = _current.device()
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
