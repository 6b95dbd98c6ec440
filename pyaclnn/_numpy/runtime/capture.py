"""Graph capture on the reference backend: the aclmdlRI calls, as CANN answers them.

The capture family of ``NumpyRuntime`` (its streams module sends work queued on a capturing
stream here: ``_queue`` asks ``_captures``, and refuses synchronizing it: ``_capture_refuse``). Between aclmdlRICaptureBegin and aclmdlRICaptureEnd
that work goes to the capture's own queue, which never runs; aclmdlRIExecuteAsync queues it again
on the given stream, where it runs on the views it was launched with, so it reads what the
captured addresses hold then (hicann/runtime: the dev guide docs/zh/dev_guide/04-01_single_stream_capture.md;
src/runtime/feature/aclgraph/context_aclgraph.cc StreamBeginCapture / StreamEndCapture).

The calls' own checks follow CANN (src/acl/aclrt_impl/model_ri.cpp: a NULL stream or model is
ACL_ERROR_INVALID_PARAM; api_error_aclgraph.cc: a mode out of range 107000;
context_aclgraph.cc: Begin on a capturing stream 107027, End on one that is not 107029, End in
another thread than Begin's 107038 unless RELAXED, which ends the capture). Synchronizing or
destroying a capturing stream, or the device, is refused with 107027 (api_error.cc
StreamSynchronize / StreamDestroy, context.cc Context::Synchronize).

Not yet here (the reference backend's graph support, issue 26 points 3-4; the rules with their
sources: the capture notes): streams joining a capture through events, the capture-mode check of
aclrtMemcpy/aclrtMemset (107030), captured events (107028), pageable memory in captured copies
(107000), and the hazard checks of replays.
"""
from __future__ import annotations

import threading
from typing import Any

from ..._core.constants import (ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
                                ACL_ERROR_RT_STREAM_CAPTURED, ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                                ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
                                ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, ACL_MODEL_RI_CAPTURE_STATUS_NONE)
from ..queues import Queue, Work
from .executors import NumpyExecutors


class Model:
    """A captured model: the work recorded while it captured (``works``, in order)."""
    __slots__ = ("stream", "mode", "thread", "queue", "works")

    def __init__(self, stream: int, mode: int, queue: Queue) -> None:
        self.stream, self.mode, self.queue = stream, mode, queue
        self.thread = threading.get_ident()
        self.works: list[Work] | None = None  # None while it captures


class NumpyCapture(NumpyExecutors):
    """aclmdlRICaptureBegin & co., aclmdlRIExecuteAsync, aclmdlRIDestroy, aclrtCreateEventExWithFlag."""
    _models: dict[int, Model] | None = None

    def create_event_ex_with_flag(self, flag: int) -> int:
        """aclrtCreateEventExWithFlag(&event, flag) -> event."""
        self._need_context("aclrtCreateEventExWithFlag")
        return int(self._register(self._events, None))

    def _capture_stream(self, stream: Any, api: str) -> int:
        """A live, non-NULL stream (model_ri.cpp: NULL is ACL_ERROR_INVALID_PARAM)."""
        self._need_init(api)
        if stream is None or stream == 0:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, "stream is nullptr (the default stream cannot be captured)")
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

    def _capture_refuse(self, stream: Any, api: str) -> None:
        """A capturing stream cannot be synchronized or destroyed (api_error.cc, 107027)."""
        if self._captures and stream in self._captures:
            raise self._fail(ACL_ERROR_RT_STREAM_CAPTURED, api, f"stream {stream!r} during the capture stage is not "
                                                                "supported (capture rule: end the capture first)")

    def _capture_refuse_device(self, api: str) -> None:
        """aclrtSynchronizeDevice while a stream of the device captures (context.cc, 107027)."""
        device = self._thread.device
        for stream in self._captures or ():
            if self._streams.get(stream) == device:
                raise self._fail(ACL_ERROR_RT_STREAM_CAPTURED, api, f"not allowed to synchronize captured stream "
                                                                    f"{stream!r} (capture rule)")

    def capture_begin(self, stream: Any, mode: int) -> None:
        """aclmdlRICaptureBegin(stream, mode)."""
        api = "aclmdlRICaptureBegin"
        stream = self._capture_stream(stream, api)
        if mode not in (0, 1, 2):
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api, f"mode {mode!r} is not in [0, 3)")
        self._need_context(api)
        self._need_stream(stream, api, launch=True)
        if self._captures and stream in self._captures:
            raise self._fail(ACL_ERROR_RT_STREAM_CAPTURED, api, f"stream {stream!r} is already in capture status")
        model = Model(stream, mode, Queue(("capture", stream), f"the capture of stream {stream:#x}",
                                          self._streams.get(stream)))
        if self._models is None:
            self._models, self._captures = {}, {}
        self._register(self._models, model)
        assert self._captures is not None
        self._captures[stream] = model

    def capture_get_info(self, stream: Any) -> tuple[int, Any]:
        """aclmdlRICaptureGetInfo(stream, &status, &modelRI) -> (status, modelRI or None)."""
        stream = self._capture_stream(stream, "aclmdlRICaptureGetInfo")
        model = (self._captures or {}).get(stream)
        if model is None:
            return ACL_MODEL_RI_CAPTURE_STATUS_NONE, None
        return ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, self._handle_of(model)

    def _handle_of(self, model: Model) -> int:
        return next(h for h, m in (self._models or {}).items() if m is model)

    def capture_end(self, stream: Any) -> int:
        """aclmdlRICaptureEnd(stream, &modelRI) -> modelRI."""
        api = "aclmdlRICaptureEnd"
        stream = self._capture_stream(stream, api)
        self._need_context(api)
        self._need_stream(stream, api, launch=True)
        model = (self._captures or {}).pop(stream, None)
        if model is None:
            raise self._fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, api, f"stream {stream!r} is not in capture status, "
                                                                    "call aclmdlRICaptureBegin first")
        with self.queues.lock:  # its work left the capture queue without running
            works = list(model.queue.pending)
            model.queue.pending.clear()
            for work in works:
                self.queues._done(work)
        handle = self._handle_of(model)
        if model.mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED and model.thread != threading.get_ident():
            assert self._models is not None
            del self._models[handle]  # the capture is over, without a model
            raise self._fail(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, api,
                             "end capture in the wrong thread (capture rule: end it in the thread of "
                             "aclmdlRICaptureBegin, or capture in RELAXED mode)")
        model.works = works
        return handle

    def capture_thread_exchange_mode(self, mode: int) -> int:
        """aclmdlRICaptureThreadExchangeMode(&mode): the thread's new mode in, its old one out.
        (Kept for the capture-mode check of aclrtMemcpy/aclrtMemset, which is not here yet.)"""
        api = "aclmdlRICaptureThreadExchangeMode"
        self._need_init(api)
        if mode not in (0, 1, 2):
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api, f"mode {mode!r} is not less than 3")
        old = getattr(self._thread, "capture_mode", ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        self._thread.capture_mode = mode
        return int(old)

    def model_execute_async(self, model: Any, stream: Any) -> None:
        """aclmdlRIExecuteAsync(modelRI, stream): the captured work, queued again on ``stream``."""
        api = "aclmdlRIExecuteAsync"
        found = self._model(model, api)
        self._need_context(api)
        self._need_stream(stream, api, launch=True)
        self._capture_refuse(stream, api)  # api_error.cc ModelExecute: 107027
        if found.works is None:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api, f"modelRI {model!r} is still being captured")
        self._launch_fault(stream, api)
        q = self._queue(stream)
        for work in found.works:
            if work.run is not None:
                self.queues.put(q, work.api, work.reads, work.writes, work.run, mark=work.mark)

    def model_destroy(self, model: Any) -> None:
        """aclmdlRIDestroy(modelRI)."""
        found = self._model(model, "aclmdlRIDestroy")
        if found.works is None:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRIDestroy", f"modelRI {model!r} is still being captured")
        assert self._models is not None
        del self._models[model]

