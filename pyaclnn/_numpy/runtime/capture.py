"""Graph capture on the reference backend: the aclmdlRI calls and the capture rules, as CANN has them.

The capture family of ``NumpyRuntime``. The families below call its hooks (``_capture_*``, no-ops
there): the streams module sends work queued on a capturing stream to the capture's queue
(``_queue`` asks ``_captures``) and asks before synchronizing, recording and waiting; the memory
module before a synchronous copy or memset, a captured async copy and a free.

Between aclmdlRICaptureBegin and aclmdlRICaptureEnd the work of the capturing streams (the one
Begin was called on, and those that joined by waiting on an event recorded in the capture) goes
to the capture's own queue, which never runs; aclmdlRIExecuteAsync queues it again on the given
stream as one task, in capture order (one legal schedule of the model's streams), where each
task runs on the views it was launched with: it reads what the captured addresses hold then
(hicann/runtime docs/zh/dev_guide/04-01_single_stream_capture.md, 04-02_cross_stream_capture.md;
src/runtime/feature/aclgraph/context_aclgraph.cc StreamBeginCapture / StreamEndCapture). The
replay is one task of the stream's queue, so the hazard checks cover it: a replay racing other
streams, a host read of what it writes before a synchronize; and memory a model uses that was
freed since its capture is a use after free at the replay (HazardError naming the free and the
captured launch; the device would read or write freed memory: 04-01 limit 7).

The rules, with the sources of the capture notes (issue 26; paths in hicann/runtime): a refused
call changes nothing of the capture (CANN does not invalidate on them); only mixing two captures
invalidates both (107032 at the call, 507903 at their End).
"""
from __future__ import annotations

import threading
from typing import Any

from ..._core.constants import (
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CAPTURE_DEPENDENCY, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
    ACL_ERROR_RT_EVENT_CAPTURED, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED,
    ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, ACL_ERROR_RT_STREAM_CAPTURED, ACL_ERROR_RT_STREAM_NOT_CAPTURED,
    ACL_ERROR_RT_STREAM_UNJOINED, ACL_ERROR_STREAM_CAPTURE_CONFLICT, ACL_EVENT_EXTERNAL,
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, ACL_MODEL_RI_CAPTURE_MODE_RELAXED, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
    ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, ACL_MODEL_RI_CAPTURE_STATUS_NONE)
from ..._core.sites import Site, user_site
from ..pinned import PinnedCopy
from ..queues import Queue, Work, hazard
from .executors import NumpyExecutors

RULE = "capture rule"
_MODES = ("GLOBAL", "THREAD_LOCAL", "RELAXED")


class Model:
    """A capture, then the model it made: its streams' work (``works``, in capture order: None
    while it captures), the streams and events in it, and what was freed under it."""
    __slots__ = ("origin", "mode", "thread", "context", "queue", "works", "streams", "last", "waited",
                 "origin_waited", "events", "invalid", "bases", "freed", "reads", "writes", "marks")

    def __init__(self, origin: int, mode: int, context: Any, queue: Queue) -> None:
        self.origin, self.mode, self.context, self.queue = origin, mode, context, queue
        self.thread = threading.get_ident()
        self.works: list[Work] | None = None
        self.streams: set[Any] = {origin}
        self.last: dict[Any, Any] = {}  # stream -> its last captured task: ("record", event) or "task"
        self.waited: set[Any] = set()  # events a capturing stream waited on
        self.origin_waited: set[Any] = set()  # those the origin stream waited on
        self.events: set[Any] = set()  # events recorded in the capture
        self.invalid = False
        self.bases: set[int] = set()  # allocations its work uses
        self.freed: dict[int, tuple[str, Site]] = {}  # of those, freed since: base -> (call, user's line)
        self.reads: tuple = ()
        self.writes: tuple = ()
        self.marks: tuple = ()


class NumpyCapture(NumpyExecutors):
    """aclmdlRICaptureBegin & co., aclmdlRIExecuteAsync, aclmdlRIDestroy, aclrtCreateEventExWithFlag."""
    _event_flags: dict[int, int] | None = None  # events made by aclrtCreateEventExWithFlag -> flag
    _captured_events: dict[int, Model] | None = None  # event -> the capture its latest record is in

    def create_event_ex_with_flag(self, flag: int) -> int:
        """aclrtCreateEventExWithFlag(&event, flag) -> event (a "new mode" event: the kind a
        capture records and waits on, hicann/runtime api_impl.cc EventRecord / StreamWaitEvent)."""
        self._need_context("aclrtCreateEventExWithFlag")
        if flag & ~(0x1 | 0x2 | 0x8 | 0x10 | 0x20 | 0x40):  # unknown bits (hicann/runtime api_error.cc
            # ApiErrorDecorator::EventCreateEx refuses them; as emu_rt_events.c event_new)
            raise self._fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateEventExWithFlag", f"flag {flag:#x} is invalid")
        event = int(self._register(self._events, None))
        if self._event_flags is None:
            self._event_flags = {}
        self._event_flags[event] = flag
        return event

    # -- the calls -------------------------------------------------------------------------------
    def _capture_stream(self, stream: Any, api: str) -> int:
        """A live, non-NULL stream (model_ri.cpp: NULL is ACL_ERROR_INVALID_PARAM)."""
        self._need_init(api)
        if stream is None or stream == 0:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, "stream is nullptr (the default stream cannot be "
                                                           f"captured: {RULE})")
        if stream not in self._streams:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api, f"stream {stream!r} is not a live stream")
        return int(stream)

    def _model(self, model: Any, api: str) -> Model:
        self._need_init(api)
        if model is None or model == 0:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, "modelRI is nullptr")
        found = (self._models or {}).get(model)
        if found is None:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api, f"modelRI {model!r} is not a live model")
        return found

    def _handle_of(self, model: Model) -> int:
        return next(h for h, m in (self._models or {}).items() if m is model)

    def capture_begin(self, stream: Any, mode: int) -> None:
        """aclmdlRICaptureBegin(stream, mode): api_error_aclgraph.cc (mode), context_aclgraph.cc
        StreamBeginCapture (107027 on a capturing stream)."""
        api = "aclmdlRICaptureBegin"
        stream = self._capture_stream(stream, api)
        if mode not in (0, 1, 2):
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api, f"mode {mode!r} is not in [0, 3)")
        self._need_context(api)
        self._need_stream(stream, api, launch=True)
        if self._captures and stream in self._captures:
            raise self._fail(ACL_ERROR_RT_STREAM_CAPTURED, api, f"stream {stream!r} is already in capture status "
                                                                f"({RULE})")
        model = Model(stream, mode, self._thread.context,
                      Queue(("capture", stream), f"the capture of stream {stream:#x}", self._streams.get(stream),
                            bounded=False))
        if self._models is None:
            self._models, self._captures, self._captured_events = {}, {}, {}
        self._register(self._models, model)
        assert self._captures is not None
        self._captures[stream] = model

    def capture_get_info(self, stream: Any) -> tuple[int, Any]:
        """aclmdlRICaptureGetInfo(stream, &status, &modelRI) -> (status, modelRI or None); a joined
        stream reports its capture's model (api_impl_aclgraph.cc)."""
        stream = self._capture_stream(stream, "aclmdlRICaptureGetInfo")
        model = (self._captures or {}).get(stream)
        if model is None:
            return ACL_MODEL_RI_CAPTURE_STATUS_NONE, None
        return ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, self._handle_of(model)

    def _leave(self, model: Model) -> list[Work]:
        """Every stream and event leaves the capture (capture_model.cc ExitCaptureNotify); its
        work leaves the capture queue without running."""
        assert self._captures is not None and self._captured_events is not None
        for s in model.streams:
            if self._captures.get(s) is model:
                del self._captures[s]
        for e in model.events:
            if self._captured_events.get(e) is model:
                del self._captured_events[e]
        with self.queues.lock:
            works = list(model.queue.pending)
            model.queue.pending.clear()
            for work in works:
                self.queues.forget(work)
        return works

    def capture_end(self, stream: Any) -> int:
        """aclmdlRICaptureEnd(stream, &modelRI) -> modelRI, in context_aclgraph.cc StreamEndCapture's
        order: not capturing 107029, a joined stream 107036 (the capture goes on), another thread
        107038 unless RELAXED (the capture ends without a model), invalidated 507903, a side stream
        not rejoined 107025 (CheckCaptureModelValidity; both destroy the model)."""
        api = "aclmdlRICaptureEnd"
        stream = self._capture_stream(stream, api)
        self._need_context(api)
        self._need_stream(stream, api, launch=True)
        model = (self._captures or {}).get(stream)
        if model is None:
            raise self._fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, api, f"stream {stream!r} is not in capture status, "
                                                                    f"call aclmdlRICaptureBegin first ({RULE})")
        if model.origin != stream:
            raise self._fail(ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, api,
                             f"stream {stream!r} joined the capture of stream {model.origin:#x}: end it on the stream "
                             f"aclmdlRICaptureBegin was called on ({RULE})")
        handle = self._handle_of(model)
        works = self._leave(model)
        assert self._models is not None
        if model.mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED and model.thread != threading.get_ident():
            del self._models[handle]  # the capture is over, without a model
            raise self._fail(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, api,
                             f"end capture in the wrong thread ({RULE}: end it in the thread of "
                             "aclmdlRICaptureBegin, or capture in RELAXED mode)")
        if model.invalid:
            del self._models[handle]
            raise self._fail(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, api,
                             f"the capture was invalidated by an event shared with another capture ({RULE})")
        unjoined = self._unjoined(model)
        if unjoined is not None:
            del self._models[handle]
            raise self._fail(ACL_ERROR_RT_STREAM_UNJOINED, api,
                             f"stream {unjoined:#x} joined the capture and has not rejoined stream {model.origin:#x} "
                             f"({RULE}: its last task must be an event record that the capture stream waits on)")
        model.works = [w for w in works if w.run is not None]
        model.reads = tuple(s for w in model.works for s in w.reads)
        model.writes = tuple(s for w in model.works for s in w.writes)
        model.marks = tuple(a for w in model.works for a in w.mark)
        model.bases = {b for w in model.works for b in w.bases}
        return handle

    @staticmethod
    def _unjoined(model: Model) -> Any:
        """A side stream that has not rejoined (context_aclgraph.cc CheckCaptureModelValidity, via
        capture_adapt_v100.cc): its last task must be an event record a capturing stream waited
        on, and the origin must have waited on at least one of them."""
        sides = [s for s in model.streams if s != model.origin]
        for s in sides:
            last = model.last.get(s)
            if not (isinstance(last, tuple) and last[1] in model.waited):
                return s
        if sides and not any(model.last[s][1] in model.origin_waited for s in sides):
            return sides[0]
        return None

    def capture_thread_exchange_mode(self, mode: int) -> int:
        """aclmdlRICaptureThreadExchangeMode(&mode): the thread's new mode in, its old one out."""
        api = "aclmdlRICaptureThreadExchangeMode"
        self._need_init(api)
        if mode not in (0, 1, 2):
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api, f"mode {mode!r} is not less than 3")
        old = getattr(self._thread, "capture_mode", ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        self._thread.capture_mode = mode
        return int(old)

    def model_execute_async(self, model: Any, stream: Any) -> None:
        """aclmdlRIExecuteAsync(modelRI, stream): the captured work, queued again on ``stream`` as
        one task (api_error.cc ModelExecute: 107027 on a capturing stream)."""
        api = "aclmdlRIExecuteAsync"
        found = self._model(model, api)
        self._need_context(api)
        self._need_stream(stream, api, launch=True)
        self._capture_refuse(stream, api)
        if found.works is None:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api, f"modelRI {model!r} is still being captured")
        self._launch_fault(stream, api)
        works = found.works
        if found.freed:
            works = self._replay_freed(found)
        if not works:
            return

        def replay() -> None:
            for work in works:
                assert work.run is not None
                work.run()
        # each replay copies what its captured pinned sources hold when it runs (pyaclnn._numpy.pinned)
        pinned = tuple(w.run.source for w in works if isinstance(w.run, PinnedCopy))
        self.queues.put(self._queue(stream), api, found.reads, found.writes, replay, mark=found.marks, pinned=pinned)

    def _replay_freed(self, model: Model) -> list[Work]:
        """A use after free at replay: the first captured task on freed memory, named with the
        free; the others replay (what a device does with the freed ones is undefined)."""
        site = user_site()
        kept: list[Work] = []
        reported = False
        for work in model.works or ():
            base = next((b for b in work.bases if b in model.freed), None)
            if base is None:
                kept.append(work)
            elif not reported:
                reported = True
                call, freed_at = model.freed[base]
                hazard(f"aclmdlRIExecuteAsync at {site} replays {work.api}, captured at {work.site}, on device "
                       f"memory at {base:#x} that {call} at {freed_at} freed: a use after free ({RULE}: the memory "
                       f"a graph uses must stay allocated until aclmdlRIDestroy)", site)
        return kept

    def model_destroy(self, model: Any) -> None:
        """aclmdlRIDestroy(modelRI) (a model still capturing: 107000, as the emulator)."""
        found = self._model(model, "aclmdlRIDestroy")
        if found.works is None:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRIDestroy", f"modelRI {model!r} is still being captured")
        assert self._models is not None
        del self._models[model]

    # -- the hooks of the streams and memory families --------------------------------------------
    def _capture_refuse(self, stream: Any, api: str) -> None:
        """A capturing stream cannot be synchronized, destroyed or replayed into (api_error.cc
        StreamSynchronize / StreamDestroy / ModelExecute: 107027)."""
        if self._captures and stream in self._captures:
            raise self._fail(ACL_ERROR_RT_STREAM_CAPTURED, api, f"stream {stream!r} is capturing: not allowed during "
                                                                f"the capture ({RULE}: end the capture first)")

    def _capture_refuse_device(self, api: str) -> None:
        """aclrtSynchronizeDevice while a stream of the device captures (context.cc Context::Synchronize: 107027)."""
        device = self._thread.device
        for stream in self._captures or ():
            if self._streams.get(stream) == device:
                raise self._fail(ACL_ERROR_RT_STREAM_CAPTURED, api, f"stream {stream!r} of this device is capturing: "
                                                                    f"not allowed to synchronize it ({RULE})")

    def _capture_event_use(self, event: Any, api: str) -> None:
        """Synchronizing, querying or timing an event whose latest record is in a capture (api_error.cc
        EventSynchronize / EventQuery / EventElapsedTime: 107028)."""
        if self._captured_events and event in self._captured_events:
            raise self._fail(ACL_ERROR_RT_EVENT_CAPTURED, api, f"event {event!r} was recorded in a capture that is "
                                                               f"still capturing ({RULE})")

    def _capture_record(self, event: Any, stream: Any) -> bool:
        """aclrtRecordEvent on a capturing stream: captured (api_impl.cc EventRecord ->
        api_impl_capture_event.cc CaptureEventRecord); True when it was."""
        model = self._captures.get(stream) if self._captures else None
        if model is None:
            return False
        api = "aclrtRecordEvent"
        flag = (self._event_flags or {}).get(event)
        if flag is None:  # api_impl.cc:2168-2171
            raise self._fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api, f"event {event!r} was made by aclrtCreateEvent"
                             f"(WithFlag): a capture records only aclrtCreateEventExWithFlag's events ({RULE})")
        if flag & ACL_EVENT_EXTERNAL:
            return False
        assert self._captured_events is not None
        other = self._captured_events.get(event)
        if other is not None and other is not model:  # api_impl_capture_event.cc:153-159
            self._conflict(model, other, api, event)
        self._captured_events[event] = model
        model.events.add(event)
        model.last[stream] = ("record", event)
        self._event_at.pop(event, None)
        return True

    def _conflict(self, model: Model, other: Model, api: str, event: Any) -> None:
        model.invalid = other.invalid = True  # cmu.cc TerminateCapture: both
        raise self._fail(ACL_ERROR_STREAM_CAPTURE_CONFLICT, api, f"event {event!r} belongs to another capture: both "
                                                                 f"captures are invalidated ({RULE})")

    def _capture_wait(self, stream: Any, event: Any) -> bool:
        """aclrtStreamWaitEvent with a captured event or on a capturing stream (api_impl.cc
        StreamWaitEvent:1591-1677): a stream not capturing joins the capture; True when handled."""
        api = "aclrtStreamWaitEvent"
        owner = self._captured_events.get(event) if self._captured_events else None
        model = self._captures.get(stream) if self._captures else None
        if owner is not None:
            if self._is_default(stream):
                raise self._fail(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, api, f"the default stream cannot wait on event "
                                                                            f"{event!r} of a capture ({RULE})")
            if model is not None and model is not owner:
                self._conflict(model, owner, api, event)
            if model is None:  # cmu.cc GetCaptureStream: it joins
                assert self._captures is not None
                self._captures[stream] = model = owner
                owner.streams.add(stream)
            model.waited.add(event)
            if stream == model.origin:
                model.origin_waited.add(event)
            model.last[stream] = "task"
            return True
        if model is None:
            return False
        if event not in (self._event_flags or {}):  # api_impl.cc:1645-1652
            raise self._fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api, f"event {event!r} was made by aclrtCreateEvent"
                             f"(WithFlag): a capture waits only on aclrtCreateEventExWithFlag's events ({RULE})")
        if event in self._event_at:  # api_impl.cc:1653-1666
            raise self._fail(ACL_ERROR_RT_CAPTURE_DEPENDENCY, api, f"event {event!r} was recorded outside the capture: "
                                                                   f"its record task is not in the model ({RULE})")
        return True  # never recorded: waits for nothing

    def _capture_sync_copy(self, api: str) -> None:
        """A synchronous aclrtMemcpy / aclrtMemset during a capture (api_impl.cc MemCopySync /
        MemSetSync -> context_aclgraph.cc IsCaptureModeSupport: 107030): GLOBAL refuses it in every
        thread of the context, THREAD_LOCAL in the threads that began a capture, RELAXED nowhere;
        a thread that exchanged its mode to RELAXED is never refused."""
        if not self._captures:
            return
        models = set(self._captures.values())
        context = self._thread.context
        context_modes = [m.mode for m in models if m.context == context]
        exchange = getattr(self._thread, "capture_mode", ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        if not context_modes or exchange == ACL_MODEL_RI_CAPTURE_MODE_RELAXED:
            return
        me = threading.get_ident()
        thread_mode = min((m.mode for m in models if m.thread == me), default=3)
        refused = thread_mode <= ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL or (
            exchange == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL and min(context_modes) == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        if refused:
            raise self._fail(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, api,
                             f"a synchronous copy or memset is not allowed while a capture runs ({RULE}: "
                             f"threadCaptureMode={_MODES[thread_mode] if thread_mode < 3 else 'NONE'}, "
                             f"exchangeCaptureMode={_MODES[exchange]}, contextCaptureMode={_MODES[min(context_modes)]}; "
                             "use the async call on the capturing stream, or aclmdlRICaptureThreadExchangeMode("
                             "RELAXED) around it: it then runs once, not captured)")

    def _capture_async_copy(self, api: str, stream: Any, src: Any, dst: Any) -> None:
        """Pageable host memory in an async copy on a capturing stream (api_error.cc MemcpyAsync:2255-2259: 107000)."""
        if self._captures and stream in self._captures:
            for side in (src, dst):
                if not isinstance(side, int) or self._location(side) == "unregistered":
                    raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api,
                                     f"the pageable memory copy task does not support graph capture ({RULE}: "
                                     "copy from or to aclrtMallocHost memory)")

    def _capture_freed(self, base: int, api: str) -> None:
        """Memory a model uses is freed (allowed: api_impl.cc DevFree): its next replay is a use after free."""
        site: Site | None = None
        for model in (self._models or {}).values():
            if base in model.bases:
                site = site or user_site()
                model.freed.setdefault(base, (api, site))

    def _capture_task(self, stream: Any) -> Queue:
        """Work on a capturing stream goes to its capture's queue."""
        assert self._captures is not None
        model = self._captures[stream]
        model.last[stream] = "task"
        return model.queue
