"""Event: a marker on a stream (aclrtCreateEvent), for timing and for waiting on part of a stream's work."""
from __future__ import annotations

from typing import Any

from . import lifetimes
from .device import Device, need_device
from .resource import Resource
from .stream import Stream


class Event(Resource):
    """An event (aclrtCreateEvent), for timing work on a stream and waiting for part of it.
    ``pyaclnn.acl`` takes the Event itself wherever an ``aclrtEvent`` goes (the guide's *Devices, streams and lifetimes*).
    Make one with ``Device.create_event()``; another stream waits for it with
    ``pyaclnn.acl.aclrtStreamWaitEvent(stream, event)``.

    Args:
        device: the open Device the event is created on.
    """
    _what = "Event"
    ctype = "aclrtEvent"

    def __init__(self, device: Device) -> None:
        need_device(device, "Event")
        device.use()
        self.device = device
        self.runtime = device.runtime
        self.raw = None
        try:  # a KeyboardInterrupt between aclrtCreateEvent and _own must not lose the event
            self.raw = self.runtime.create_event()
            self._mark: tuple[lifetimes.Order, int] | None = None  # (stream, launches) at the record
            self._own(device.backend, device, "event", _destroy_event, device, self.raw)
        except BaseException:
            if self.raw is not None and not self._registered():
                self.runtime.destroy_event(self.raw)
            raise

    @property
    def handle(self) -> int:
        """The aclrtEvent pointer, as an int."""
        self.check_open()
        return self.runtime.as_int(self.raw)

    def record(self, stream: Stream) -> None:
        """aclrtRecordEvent on ``stream``: the event completes when the work queued on it so
        far is done.

        Args:
            stream: the pyaclnn Stream whose queued work the event marks.

        Raises:
            TypeError: ``stream`` is not a pyaclnn Stream.
            ClosedError: the event is closed.
        """
        self.check_open()
        if not isinstance(stream, Stream):
            raise TypeError(f"Event.record takes a pyaclnn.Stream, got {type(stream).__name__} {stream!r}")
        self.device.use()
        self.runtime.record_event(self.raw, stream.raw)
        self._mark = (stream.order, stream.order.launches)

    def synchronize(self) -> None:
        """Wait until the work queued before the latest record is done (aclrtSynchronizeEvent);
        memory that only that work used is then freed."""
        self.check_open()
        self.device.use()
        self.runtime.synchronize_event(self.raw)
        if self._mark is not None:
            lifetimes.passed(*self._mark)

    def elapsed_ms(self, end: "Event") -> float:
        """Milliseconds from this event to ``end`` (aclrtEventElapsedTime); both recorded.

        Args:
            end: an Event recorded after this one.

        Returns:
            The time between the two records, in milliseconds.

        Raises:
            TypeError: ``end`` is not a pyaclnn Event.
        """
        self.check_open()
        if not isinstance(end, Event):
            raise TypeError(f"Event.elapsed_ms takes a pyaclnn.Event, got {type(end).__name__} {end!r}")
        end.check_open()
        self.device.use()
        return self.runtime.event_elapsed_time(self.raw, end.raw)


def _destroy_event(device: Device, raw: Any) -> None:
    device.use()
    device.runtime.destroy_event(raw)


Device.event_class = Event
