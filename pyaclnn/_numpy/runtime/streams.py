"""The reference runtime's streams and events: work queued per stream (pyaclnn._numpy.queues),
synchronisation, event records and waits, and the faults a queued task reports."""
from __future__ import annotations

import time
from typing import Any, Sequence
from ..._core.constants import (ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_CONTEXT,
                                ACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACLNN_ERR_RUNTIME_ERROR,
                                ACL_EVENT_EXTERNAL, ACL_EVENT_IPC, ACL_EVENT_SYNC)
from ..queues import Queue
from .session import NumpySession


# The event flags that give an event a wait task: ACL_EVENT_SYNC is RT_EVENT_DDSYNC_NS, 0x4 is
# RT_EVENT_DDSYNC (hicann/runtime pkg_inc/runtime/runtime/event.h; event.hpp Event::IsEventWithoutWaitTask)
_WAIT_TASK_FLAGS = ACL_EVENT_SYNC | 0x4 | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC
_NO_DEVICE = object()  # _need_stream: a stream handle that is not live


def _nothing_to_run() -> None:
    """An event record's task: reaching it is all it does."""


class NumpyStreams(NumpySession):
    """aclrtCreateStream & co., aclrtCreateEvent & co., aclrtSynchronizeDevice."""

    # stream -> the capture recording its work (capture.py; None until the first: _queue's fast path)
    _captures: dict[Any, Any] | None = None

    # -- streams and events --------------------------------------------------------------------
    def create_stream(self) -> int:
        self._need_context("aclrtCreateStream")
        return self._register(self._streams, self._thread.device)

    @staticmethod
    def _is_default(stream: Any) -> bool:
        """NULL is the default stream of the current context: the runtime's handle check lets
        nullptr through (hicann/runtime runtime_handle_guard.cc GetValidatedObjectImpl) and
        ApiImpl::MemcpyAsync / MemsetAsync / EventRecord / StreamWaitEvent / LaunchKernel and
        CheckStreamSynchronizeParam (api_impl.cc) take curCtx->DefaultStream_(); phase 2
        (opbase CommonOpExecutorRun) passes the stream on unchecked."""
        return stream is None or (isinstance(stream, int) and stream == 0)

    def _fault_key(self, stream: Any) -> Any:
        """Where a failed launch waits to be reported: its stream, or the current context's
        default one (each context has its own: hicann/runtime context.cc Context::Setup)."""
        return ("default", self._thread.context) if self._is_default(stream) else stream

    def _queue(self, stream: Any) -> Queue:
        """The queue of ``stream``: its own, or the current context's default stream's."""
        if self._captures and stream in self._captures:  # capturing: its capture's (capture.py)
            return self._capture_task(stream)
        q = self.queues.queues.get(stream) if stream else None
        if q is not None:
            return q
        if self._is_default(stream):
            context = self._thread.context
            return self.queues.queue_of(("default", context), f"the NULL stream (default stream of context "
                                        f"{context or 0:#x})", self._contexts.get(context) if context else None)
        return self.queues.queue_of(stream, f"stream {stream:#x}", self._streams.get(stream))

    def _need_stream(self, stream: Any, api: str, launch: bool = False) -> None:
        if self._is_default(stream):  # always live, and of the current context (the callers check it)
            return
        # Phase 2 reports a refused stream as its runtime error, 361001, as the emulator does.
        device = self._streams.get(stream, _NO_DEVICE)
        if device is _NO_DEVICE:
            raise self._fail(ACLNN_ERR_RUNTIME_ERROR if api.startswith("aclnn") else ACL_ERROR_RT_PARAM_INVALID, api,
                             f"stream {stream!r} is not a live stream")
        # Work goes only to a stream of the thread's current device (CANN: 107003 for runtime
        # calls, 361001 from phase 2), as the one current device per thread demands.
        if launch and device != self._thread.device:
            phase2 = api.startswith("aclnn")
            status = ACLNN_ERR_RUNTIME_ERROR if phase2 else ACL_ERROR_RT_STREAM_CONTEXT
            raise self._fail(status, api, f"stream {stream!r} belongs to device {self._streams[stream]}, "
                                          f"not to this thread's current device {self._thread.device}")

    def destroy_stream(self, stream: int) -> None:
        self._need_init("aclrtDestroyStream")
        if self._is_default(stream):  # aclrtDestroyStreamImpl: ACL_REQUIRES_NOT_NULL (stream.cpp)
            raise self._fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream", "stream is nullptr")
        self._need_context("aclrtDestroyStream")
        self._need_stream(stream, "aclrtDestroyStream", launch=True)
        self._capture_refuse(stream, "aclrtDestroyStream")
        self.queues.retire(stream)  # the runtime runs a stream's work before tearing it down
        with self._lock:
            if self._streams.pop(stream, False) is False:
                raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyStream", f"stream {stream!r} is not live")
            self._faults.pop(stream, None)  # destroying waits for the work; its failure is not reported

    # -- the capture family's hooks (pyaclnn/_numpy/runtime/capture.py overrides them) ------------
    def _capture_task(self, stream: Any) -> Queue:
        """The queue of a capturing stream's work."""
        raise NotImplementedError

    def _capture_refuse(self, stream: Any, api: str) -> None:
        """Refuse ``api`` on a capturing stream."""

    def _capture_refuse_device(self, api: str) -> None:
        """Refuse ``api`` while a stream of the device captures."""

    def _capture_event_use(self, event: Any, api: str) -> None:
        """Refuse ``api`` on an event recorded in a capture."""

    def _capture_record(self, event: Any, stream: Any) -> bool:
        """A record on a capturing stream: True when the capture took it."""
        return False

    def _capture_wait(self, stream: Any, event: Any) -> bool:
        """A wait on a captured event or by a capturing stream: True when the capture took it."""
        return False

    def _device_of(self, stream: Any) -> int | None:
        return self._thread.device if self._is_default(stream) else self._streams.get(stream)

    def _add_fault(self, stream: Any, detail: str) -> None:
        """A kernel's page fault (its only fault here): the stream's next synchronisation
        reports it, and the device stays in failure mode until its last reset (hicann/runtime
        task_manager.cc PrintErrorInfo -> ContextManage::SetGlobalFailureErr)."""
        with self._lock:
            self._faults.setdefault(self._fault_key(stream), detail)
            device = self._device_of(stream)
            if device is not None:
                self._poisoned.setdefault(device, detail)

    def _report_faults(self, streams: Sequence[Any], api: str) -> None:
        """Raise the first failure queued on ``streams``, as the synchronisation ``api`` that waits
        for them returns the status of the failed task: a kernel's own refusal (a data-dependent
        check, raised as its operator raises it), else a device fault; on a device in failure
        mode, every time (context.cc Context::CheckStatus returns the device status)."""
        for s in streams:
            q = self.queues.queues.get(self._fault_key(s))
            if q is not None and q.error is not None:
                error, q.error = q.error, None
                self._thread.error = str(error)
                raise error
        if not self._faults and not self._poisoned:  # the usual case: no lock, no lists
            return
        with self._lock:
            found = [d for d in (self._faults.pop(self._fault_key(s), None) for s in streams) if d is not None]
            found += [self._poisoned[d] for d in map(self._device_of, streams) if d in self._poisoned]
        if found:
            raise self._fail(ACL_ERROR_RT_AICORE_EXCEPTION, api, found[0])

    def _launch_fault(self, stream: Any, api: str) -> None:
        """Work sent to a device in failure mode is refused (context.cc Context::CheckTaskSend):
        the device status, which phase 2 reports as ACLNN_ERR_RUNTIME_ERROR (opbase rts_arg.cpp)."""
        device = self._device_of(stream) if self._poisoned else None
        detail = self._poisoned.get(device) if device is not None else None
        if detail is not None:
            status = ACLNN_ERR_RUNTIME_ERROR if api.startswith("aclnn") else ACL_ERROR_RT_AICORE_EXCEPTION
            raise self._fail(status, api, f"the device is in failure mode since a kernel's page fault ({detail}): "
                                          "reset it (aclrtResetDevice) to use it again")

    def synchronize_stream(self, stream: int) -> None:
        self._synchronize(stream, "aclrtSynchronizeStream")

    def _synchronize(self, stream: Any, api: str) -> None:
        if not self._initialized or self._thread.device is None:  # (_need_context's test, inline)
            self._need_context(api)
        if stream not in self._streams:  # (a live stream passes _need_stream: the others ask it)
            self._need_stream(stream, api)
        if self._captures:  # (a capture is rare: no call otherwise)
            self._capture_refuse(stream, api)
        # the stream's own queue (not capturing: refused above), or the default stream's (_queue)
        queues = self.queues
        q = queues.queues.get(stream) if stream else None
        if q is None:
            q = self._queue(stream)
        queues.flush(q)
        if q.error is not None or self._faults or self._poisoned:
            self._report_faults([stream], api)

    def create_event(self) -> int:
        self._need_context("aclrtCreateEvent")
        return self._register(self._events, None)

    def record_event(self, event: int, stream: int) -> None:
        self._need_context("aclrtRecordEvent")
        self._need_stream(stream, "aclrtRecordEvent", launch=True)
        if event not in self._events:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtRecordEvent", f"event {event!r} is not live")
        self._launch_fault(stream, "aclrtRecordEvent")
        if self._captures and self._capture_record(event, stream):
            return
        self._events[event] = time.perf_counter()
        self._event_at[event] = self.queues.record(self._queue(stream), _nothing_to_run)

    def _reach_event(self, event: int) -> None:
        """Run the work queued before the event's last record (the device got there)."""
        at = self._event_at.get(event)
        if at is not None:
            q = self.queues.queues.get(at[0])
            if q is not None:
                self.queues.flush(q, at[1])

    def synchronize_event(self, event: int) -> None:
        if event not in self._events:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtSynchronizeEvent", f"event {event!r} is not live")
        self._capture_event_use(event, "aclrtSynchronizeEvent")
        self._reach_event(event)

    def event_elapsed_time(self, start: int, end: int) -> float:
        self._capture_event_use(start, "aclrtEventElapsedTime")  # first (api_error.cc EventElapsedTime)
        self._capture_event_use(end, "aclrtEventElapsedTime")
        t0, t1 = self._events.get(start), self._events.get(end)
        if t0 is None or t1 is None:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtEventElapsedTime",
                             "both events must be live and recorded")
        return (t1 - t0) * 1e3

    def destroy_event(self, event: int) -> None:
        with self._lock:
            if self._events.pop(event, False) is False:
                raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyEvent", f"event {event!r} is not live")
            self._event_at.pop(event, None)
            self._unwaitable.discard(event)

    def synchronize_stream_timeout(self, stream: Any, timeout: int) -> None:
        api = "aclrtSynchronizeStreamWithTimeout"
        if timeout < -1:  # -1 waits forever, >= 0 ms (as emu_rt_streams.c, after the context)
            self._need_context(api)
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, f"timeout {timeout} is invalid (-1 or >= 0)")
        self._synchronize(stream, api)  # never times out

    def synchronize_device(self) -> None:
        """Waits for the streams of the thread's current device (Context::SyncStreamsWithTimeout)."""
        self._need_context("aclrtSynchronizeDevice")
        self._capture_refuse_device("aclrtSynchronizeDevice")
        device = self._thread.device
        self.queues.flush_all(lambda q: q.device == device)
        streams = [None] + [s for s, d in list(self._streams.items()) if d == device]  # None: the default one
        self._report_faults(streams, "aclrtSynchronizeDevice")

    def create_event_with_flag(self, flag: int) -> int:
        self._need_context("aclrtCreateEventWithFlag")
        if flag & ~(0x1 | 0x2 | 0x8 | 0x10 | 0x20 | 0x40):  # the ACL_EVENT_* flags (as emu_rt_events.c event_new)
            raise self._fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateEventWithFlag", f"flag {flag:#x} is invalid")
        event = self._register(self._events, None)
        if not flag & _WAIT_TASK_FLAGS:  # e.g. ACL_EVENT_TIME_LINE alone: a timestamp, no wait task
            self._unwaitable.add(event)
        return event

    def query_event_status(self, event: Any) -> int:
        if event not in self._events:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtQueryEventStatus", f"event {event!r} is not live")
        self._capture_event_use(event, "aclrtQueryEventStatus")
        # A device gets there eventually: a program polling for it must see it complete, so asking
        # is where the work before it runs here.
        self._reach_event(event)
        return 1 if self._events[event] is not None else 0  # ACL_EVENT_RECORDED_STATUS_COMPLETE / NOT_READY

    def stream_wait_event(self, stream: Any, event: Any) -> None:
        self._need_context("aclrtStreamWaitEvent")
        self._need_stream(stream, "aclrtStreamWaitEvent")
        if event not in self._events:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtStreamWaitEvent", f"event {event!r} is not live")
        if event in self._unwaitable:
            # hicann/runtime api_error.cc ApiErrorDecorator::StreamWaitEvent refuses an event without a
            # wait task (Event::IsEventWithoutWaitTask) with RT_ERROR_FEATURE_NOT_SUPPORT, which
            # rtStreamWaitEvent (api_c_stream.cc) returns as ACL_ERROR_RT_FEATURE_NOT_SUPPORT: no order
            raise self._fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtStreamWaitEvent",
                             f"event {event:#x} was created by aclrtCreateEventWithFlag without ACL_EVENT_SYNC "
                             "(e.g. ACL_EVENT_TIME_LINE alone: timestamps only): it cannot be waited on. Create it "
                             "with ACL_EVENT_SYNC (or ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE), or with aclrtCreateEvent")
        self._launch_fault(stream, "aclrtStreamWaitEvent")
        if self._captures and self._capture_wait(stream, event):
            return
        self.queues.wait(self._queue(stream), self._event_at.get(event))
