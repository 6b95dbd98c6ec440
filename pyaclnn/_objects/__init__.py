"""The object layer, written once for both backends: the backend choice, Device, Stream, Event,
Tensor, executors, handles, the launch routine, stream-ordered lifetimes, the resource registry,
interop."""
