"""The object layer, written once for both backends: the backend choice, Device, Stream, Event,
Tensor, executors, handles, the launch routine, stream-ordered lifetimes, the resource registry,
interop."""

# A Device makes streams and events through the classes stream.py and event.py set on it
# (Device.stream_class, .event_class: they import device.py, so it cannot import them): loading
# the layer loads them, whichever of its modules is asked for first (``import pyaclnn`` is lazy).
from . import event, stream  # noqa: E402,F401
