"""Stream: a queue of work on a device (aclrtCreateStream), its workspace, and the thread's default stream."""
from __future__ import annotations

import functools
import itertools
import threading
import weakref
from typing import TYPE_CHECKING, Any

from .._core.constants import ACL_MEM_MALLOC_HUGE_FIRST
from . import backend as _backend
from . import current as _current
from . import lifetimes
from . import unreported as _unreported
from .device import Device, device_arg, free_now, need_device
from .resource import Resource
from ..errors import ClosedError

if TYPE_CHECKING:
    from .graph import Capture


class Stream(Resource):
    """A stream (aclrtCreateStream). ``close()`` synchronizes, then aclrtDestroyStream.

    Work on a stream is asynchronous: ``run(stream)`` only queues the operator. What a queued
    launch uses (tensors' memory, the workspace) stays allocated until the stream has passed it
    (the guide's *Devices, streams and lifetimes*): frees wait for the next ``synchronize()`` or ``close()``, or
    for an Event recorded after the launch to be synchronized.
    Each stream keeps one workspace buffer for the operators it runs: ops on one stream run
    in order, so the buffer can be reused; a bigger one replaces it, and the old one is freed
    once the launches queued on it are done.
    ``Stream.from_handle`` wraps a stream another framework owns (never destroyed by pyaclnn).
    ``pyaclnn.acl`` takes the Stream itself wherever an ``aclrtStream`` goes (the guide's *Devices, streams and lifetimes*).
    Make one with ``Device.create_stream()``.

    Args:
        device: the open Device the stream is created on.
    """
    _what = "Stream"
    ctype = "aclrtStream"
    owned = True

    def __init__(self, device: Device) -> None:
        need_device(device, "Stream")
        device.use()
        self.device = device
        self.runtime = device.runtime
        self.raw = None
        try:  # a KeyboardInterrupt between aclrtCreateStream and _own must not lose the stream
            self.raw = self.runtime.create_stream()
            self.workspace_slot = [0, 0]  # [address, size], shared with the release function
            self._ws_lock = threading.Lock()  # two threads may share a Stream: one grows it at a time
            self.order = _stream_order(device, self.raw)
            self._own(device.backend, device, "stream", _destroy_stream, device, self.raw, self.workspace_slot,
                      self.order)
        except BaseException:
            if self.raw is not None and not self._registered():
                self.runtime.destroy_stream(self.raw)
            raise

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
                handle = device.runtime.pointer_address(handle)
            except TypeError:
                pass
        if isinstance(handle, bool) or not isinstance(handle, int) or handle <= 0:
            raise TypeError(f"Stream.from_handle takes the stream's address as a positive int, got {handle!r}")
        device.use()
        self = object.__new__(cls)
        self.device, self.runtime, self.owned = device, device.runtime, False
        self.raw = self.runtime.handle_from_int(handle)
        self.workspace_slot = [0, 0]
        self._ws_lock = threading.Lock()
        self.order = _stream_order(device, self.raw)
        self._own(device.backend, device, "stream", _forget_stream, device, self.raw, self.workspace_slot,
                  self.order)
        return self

    @property
    def handle(self) -> int:
        """The aclrtStream pointer, as an int."""
        return self.runtime.as_int(self.raw)

    def synchronize(self) -> None:
        """Wait until everything queued on the stream is done (aclrtSynchronizeStream), then
        free what waited for it.

        Raises:
            ClosedError: the stream is closed.
            AclError: a queued kernel failed, e.g. RtAicoreExceptionError (507015) for a tensor
                over memory that is not allocated.
        """
        if not self.is_open:  # (check_open, without its property call: every synchronize asks)
            self.check_open()
        self.order.sync()

    def capture(self, mode: str = "global") -> Capture:
        """Record the work queued on this stream in a ``with`` block into a ``pyaclnn.Graph``
        (aclmdlRICaptureBegin ... aclmdlRICaptureEnd), to replay it later for one call:

        ```python
        with stream.capture() as graph:
            op.run(stream)   # recorded, not run
        graph.replay()       # runs it; out.numpy() waits for it
        ```

        Phase 1 may run before or in the block; what is queued on the stream is captured. In the
        block, CANN refuses what cannot be captured, at the call, with its status and "a
        graph-capture rule" in the message: synchronizing this stream, its events or the device
        (107027/107028), host copies such as ``Tensor.numpy()`` or ``copy_from`` (a synchronous
        aclrtMemcpy: 107030 in mode "global"; "relaxed" lets them run once, not captured).

        Args:
            mode: "global" (default: no thread may make a synchronous copy while it captures),
                "thread_local" (only this thread may not) or "relaxed" (any may).

        Returns:
            A context manager whose ``with`` yields the ``pyaclnn.Graph`` (replay it after the block).

        Raises:
            ValueError: an unknown mode.
            RuntimeError: the stream is capturing already.
            AclError: CANN refused the capture (at Begin or at End, e.g. 107025 for a side
                stream that has not rejoined this one).
        """
        from .graph import Capture
        return Capture(self, mode)

    def workspace(self, size: int) -> int:
        """A device buffer of at least ``size`` bytes for the next op on this stream (0 if size is 0)."""
        if size <= 0:
            return 0
        addr, have = self.workspace_slot  # one list read (atomic): big enough needs no lock
        if size <= have:
            return addr
        with self._ws_lock:  # read, grow and replace as one step (else a buffer leaks or is freed twice)
            addr, have = self.workspace_slot
            if size > have:
                self.device.use()
                new = 0
                try:  # interrupted before the slot holds it: freed (the slot is what frees it later)
                    new = self.runtime.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
                    self.workspace_slot[:] = [new, size]
                except BaseException:
                    if new and self.workspace_slot[0] != new:
                        self.runtime.free(new)
                    raise
                if addr and self.order.graph is not None:  # captured launches use it: the graph keeps it
                    self.order.graph.spare(addr)
                elif addr:  # a queued op may still use the old one: free it once the stream passed it
                    lifetimes.release_after(self.order, free_now, self.device, addr)
            return self.workspace_slot[0]

    def __repr__(self) -> str:
        borrowed = "" if self.owned else " (borrowed)"
        return f"<pyaclnn.Stream {'closed' if self.closed else hex(self.handle)}{borrowed} on device {self.device.id}>"


def open_stream(stream: Stream, op: str) -> Stream:
    """``stream``; TypeError if it is no Stream, ClosedError (as for every closed object) if it
    was closed, e.g. by Device.close(): the runtime would answer 107000 for the stale handle."""
    if not isinstance(stream, Stream):
        raise TypeError(f"aclnn{op}: run takes a pyaclnn.Stream or None, got {type(stream).__name__} "
                        f"{stream!r} (a stream another framework owns: pyaclnn.Stream.from_handle(handle))")
    if not stream.is_open:
        raise ClosedError(f"aclnn{op}: the stream is closed (Device.close() closes its streams); "
                          "run on an open stream")
    return stream


def _stream_order(device: Device, raw: Any) -> lifetimes.Order:
    """The stream's launch bookkeeping; its ``sync`` is aclrtSynchronizeStream on ``raw``, then
    the deferred frees (no reference to the Stream object: storages that remember the stream
    must not keep it alive)."""
    runtime = device.runtime  # (a Device's, fixed when it is made)

    def sync() -> None:
        device.use()
        runtime.synchronize_stream(raw)
        lifetimes.passed(order)
    order = lifetimes.Order(sync)
    return order



def _destroy_stream(device: Device, raw: Any, workspace: list[int], order: lifetimes.Order) -> None:
    device.use()
    runtime = device.runtime
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
                lifetimes.passed(order)


def _forget_stream(device: Device, raw: Any, workspace: list[int], order: lifetimes.Order) -> None:
    """Release a borrowed stream: never destroyed; pyaclnn's workspace and deferred frees go
    once the stream has passed pyaclnn's launches."""
    if order.idle and not workspace[0]:
        return
    device.use()
    try:
        if not order.idle:
            device.runtime.synchronize_stream(raw)
    finally:
        try:
            if workspace[0]:
                addr, workspace[:] = workspace[0], [0, 0]
                device.runtime.free(addr)
        finally:
            lifetimes.passed(order)


Device.stream_class = Stream


# Every thread's default streams, by the thread's key: {key: {id(device): Stream}}. Held here,
# not in the thread's threading.local, so that the end of a thread drops no Stream (see _ThreadEnd).
_by_thread: dict[int, dict[int, Stream]] = {}
_ends: dict[int, weakref.ref] = {}  # key -> the weak reference to the thread's _ThreadEnd
_ended_streams: list[Stream] = []   # default streams of threads that ended, closed by the next default_stream
_keys = itertools.count()
_streams = threading.local()        # .key, .end: this thread's
# every thread's default streams: pyaclnn's own, not the user's to close (pyaclnn check)
default_streams: "weakref.WeakSet[Stream]" = weakref.WeakSet()


class _ThreadEnd:
    """Held only by a thread's threading.local: CPython drops it when the thread ends, while it
    clears the thread's state. Its weak reference's callback (``_thread_ended``) then only hands
    the thread's default streams over; closing them there would run in the dying thread, whose
    threading.local values are gone already: reading one (``Device.use()`` does) makes a new
    per-thread record that is never freed (1.1 KiB per thread on the reference, 3.1 KiB on acl,
    issue 25), and CANN would be called from a thread being torn down."""
    __slots__ = ("__weakref__",)


def _thread_ended(key: int, _ref: weakref.ref) -> None:
    _ends.pop(key, None)
    streams = _by_thread.pop(key, None)
    if streams:
        _ended_streams.extend(streams.values())


def _this_thread() -> dict[int, Stream]:
    key = getattr(_streams, "key", None)
    if key is None:
        key = next(_keys)
        end = _streams.end = _ThreadEnd()
        _ends[key] = weakref.ref(end, functools.partial(_thread_ended, key))
        _by_thread[key] = {}
        _streams.key = key
    return _by_thread[key]


def close_ended() -> None:
    """Close the default streams of threads that have ended (aclrtSynchronizeStream, then
    aclrtDestroyStream), in the calling thread; its current device is given back after. A
    failure (say a hazard of the dead thread's queued work) has no caller to go to: it is
    reported (pyaclnn._objects.unreported)."""
    if not _ended_streams:
        return
    previous = _current.state()
    try:
        while _ended_streams:
            try:
                stream = _ended_streams.pop()
            except IndexError:  # another thread took the last one
                break
            try:
                stream.close()
            except Exception as exc:  # noqa: BLE001 - reported, see the docstring
                _unreported.report("closing the default stream of a thread that ended", exc)
    finally:
        _current.restore(previous)


def default_stream(device: Device) -> Stream:
    """This thread's stream on ``device`` (created on first use, closed with the device, or by
    the next call here in any thread once this thread has ended): where a launch or copy given
    no stream goes."""
    if _ended_streams:
        close_ended()
    cache = _this_thread()
    stream = cache.get(id(device))
    if stream is None or stream.closed or stream.device is not device:
        stream = cache[id(device)] = device.create_stream()
        default_streams.add(stream)
    return stream
