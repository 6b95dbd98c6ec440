"""The reference backend's emulation of the CANN runtime (implements ``_runtime.Runtime``).

It keeps CANN's rules so that code written against pyaclnn behaves the same on both
backends: aclInit first, a device set in every thread that uses the runtime, handles that
must be live, single-use executors consumed by phase 2 even when it fails, and the op checks
of the real library in phase 1 (each operator's spec, ``pyaclnn.ops``). Work goes only to streams of the thread's
current device, as on CANN (one current device per thread).

It runs as a device does (``pyaclnn._numpy.queues``): phase 2, async copies and memsets and
event records are queued on their stream and run when the device would have finished them
(at a synchronize, an event wait, stream destroy, device reset), and a call whose result
would depend on that timing (a race) is a ``pyaclnn.HazardError`` naming both sites.
"""
from __future__ import annotations

import itertools
import math
import threading

from .._sites import Site, user_site as _user_site
import time
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from .. import errors
from ..dtypes import DType, to_numpy
from .._registry import OpInfo, Registry, reference_sources
from .._runtime import HostRuntime
from .._strides import byte_boxes, contiguous_strides, dense, extent
from . import ops
from .memory import Access, AddressSpace, Elements
from .capture import CaptureMixin
from .queues import Queue, Queues, hazard

ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_REPEAT_FINALIZE = 100037
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_STREAM_CONTEXT = 107003
ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000
ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007
ACL_ERROR_RT_AICORE_EXCEPTION = 507015
ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899
ACLNN_ERR_RUNTIME_ERROR = 361001
ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_INNER_NULLPTR = 561103
ACL_MEMCPY_HOST_TO_HOST = 0
# aclrtMemcpyAsync's kind against the memory (hicann/runtime api_error.cc MemcpyAsyncCheckLocation
# -> MemcpyKindAutoCorrect, MemcpyKindReviseMap; NpuDriver::PtrGetRealLocation: aclrtMalloc memory is
# DEVICE, aclrtMallocHost memory HOST, other host memory UNREGISTERED). Two known locations force the
# kind; with an unregistered side, these kinds (H2H 0, H2D 1, D2H 2, D2D 3) are allowed, others 107000.
_FORCED_KIND = {("host", "device"): 1, ("device", "host"): 2, ("host", "host"): 0, ("device", "device"): 3}
_ALLOWED_KINDS = {("unregistered", "device"): (1, 3), ("device", "unregistered"): (2, 3),
                  ("host", "unregistered"): (0, 1), ("unregistered", "host"): (0, 2),
                  ("unregistered", "unregistered"): (0, 1, 2, 3)}
MEMCPY_KINDS = range(0, 6)  # the acl layer's MemcpyKindTranslate: HOST_TO_HOST .. HOST_TO_BUF_TO_DEVICE
VERSION = "8.1.RC1"  # the CANN release whose ABI the emulation follows (headers are a superset)


# What the NumPy backend looks for besides headers/, for an unknown operator's message.
_SEARCHED = (("custom", "custom operator package (ASCEND_CUSTOM_OPP_PATH, $ASCEND_OPP_PATH/vendors/config.ini)"),
             ("builtin", "CANN aclnnop headers (ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, /usr/local/Ascend)"))


@dataclass
class TensorDesc:
    shape: tuple[int, ...]
    dtype: DType
    strides: tuple[int, ...]
    offset: int
    fmt: int
    storage_shape: tuple[int, ...]
    addr: int
    cached_span: tuple[int, int, int] | None = None  # (addr, start, end) of the last span_of
    dense: bool | None = None  # whether its elements fill that span, exactly once (None: not asked yet)
    known_written: tuple[int, int] | None = None  # memory (frees, unwrites) when its bytes were known written
    cached_view: tuple[int, int, np.ndarray] | None = None  # (addr, memory frees, view) of the last _view

    def meta(self) -> ops.TensorMeta:
        return ops.TensorMeta(self.shape, self.dtype, self.strides)


@dataclass
class Scalar:
    value: Any
    dtype: DType


@dataclass
class Executor:
    op: str
    args: tuple                  # C-shaped args with TensorDesc in tensor positions
    empty: bool
    inputs: list[TensorDesc | None]
    outputs: list[TensorDesc | None]  # None: a NULL optional slot (index rule "position")
    repeatable: bool = False
    workspace_size: int = 0
    workspace_used: bool = False  # the kernels read or write it (a 0-byte tiling request is never touched)
    handles: tuple[int, ...] = ()  # the aclTensors phase 1 captured (list elements included)
    names: tuple[str, ...] = ()    # the C parameter names, for messages
    spans: tuple | None = None     # what a launch reads and writes (_io_spans), for pyaclnn._numpy.queues
    written: tuple[int | None, ...] | None = None  # per output, the elements its kernel writes (None: all;
    #                                                the spec's ``written``); None: every output whole
    generated: bool = False      # a generated (nnopbase) op: phase 2 is NnopbaseRunWithWorkspace
    kernel: Callable[[tuple], None] | None = None  # its phase 2, once made (NumpyRuntime._kernel)
    fills_empty: bool = False    # an empty call whose phase 2 still writes (the spec's ``empty_fills``)


class LiveHandle(NamedTuple):
    """A handle still alive in the emulated runtime (``NumpyRuntime.live_handles``)."""
    kind: str          # a key of live_counts() ("tensor", "stream", "device_alloc"...), or "init"
    handle: Any        # the handle, the address, or the device id ("device_set")
    site: Site | None  # the user's line that made it (None: made while sites were not tracked)
    detail: str        # what it holds, e.g. "shape (2, 2) FLOAT", "16 bytes", "aclnnMseLossBackward"
    key: Any           # its identity across snapshots (handles are never reused; addresses may be)


class _Thread(threading.local):
    """Per-thread state, as CANN keeps it: current device and context, recent error text."""

    def __init__(self) -> None:
        self.device: int | None = None
        self.context: int | None = None
        self.error: str | None = None
        self.status = 0          # aclrtGetLastError / aclrtPeekAtLastError


class NumpyRuntime(CaptureMixin):  # + the aclmdlRI calls (capture.py)
    name = "numpy"
    handle_class = int  # its handles are ints (aligned fake addresses)
    null = None         # the nullptr handle

    def __init__(self, soc: str, device_count: int = 1) -> None:
        self.soc = soc
        self._device_count = device_count
        self._lock = threading.Lock()
        self._initialized = False
        self._ids = itertools.count(0x1000)
        self._thread = _Thread()
        self.memory = AddressSpace()
        self.queues = Queues(self.memory, self._task_failed)
        self._event_at: dict[int, tuple[Any, int, dict[Any, int]]] = {}  # event -> its last record's position
        self._contexts: dict[int, int] = {}
        self._set_counts: dict[int, int] = {}  # aclrtSetDevice references, per device (all threads)
        self._default_contexts: dict[int, int] = {}  # device -> its default context
        self._streams: dict[int, int | None] = {}  # stream -> device it was created on
        self._faults: dict[Any, str] = {}  # stream -> its first failed launch, for the next sync
        self._poisoned: dict[int, str] = {}  # device -> the page fault that put it in failure mode
        self._events: dict[int, float | None] = {}
        self._tensors: dict[int, TensorDesc] = {}
        self._bool_arrays: dict[int, tuple[bool, ...]] = {}
        self._int_arrays: dict[int, tuple[int, ...]] = {}
        self._float_arrays: dict[int, tuple[float, ...]] = {}
        self._scalars: dict[int, Scalar] = {}
        self._tensor_lists: dict[int, tuple[int, ...]] = {}   # element handles (owned by the list)
        self._scalar_lists: dict[int, tuple[int, ...]] = {}
        self._executors: dict[int, Executor] = {}
        # For the leak report (live_handles): the user's line behind each handle while sites are
        # tracked (track_sites), each device's aclrtSetDevice references, and the user's aclInit.
        self._sites: dict[int, Site] | None = None
        self._prune_sites_at = 4096
        self._set_sites: dict[int, list[Site]] = {}
        self._inits = 0
        self._init_site: Site | None = None
        # the operators this backend knows: pyaclnn's headers/ (those with a reference run), then
        # those of the custom packages and CANN headers found here (known, so named right, not run)
        self.registry = Registry(reference_sources())
        self._kinds: dict[str, tuple[dict[int, Any], str]] = {
            "tensor": (self._tensors, "aclTensor"), "scalar": (self._scalars, "aclScalar"),
            "int_array": (self._int_arrays, "aclIntArray"), "float_array": (self._float_arrays, "aclFloatArray"),
            "bool_array": (self._bool_arrays, "aclBoolArray"), "tensor_list": (self._tensor_lists, "aclTensorList"),
            "scalar_list": (self._scalar_lists, "aclScalarList")}

    # -- failure bookkeeping: every raise leaves a per-thread "recent error" like CANN --------
    def _fail(self, status: int, api: str, detail: str) -> errors.AclError:
        self._thread.error, self._thread.status = f"{api}: {detail}", status
        return errors.from_status(status, api, detail)

    def _need_init(self, api: str) -> None:
        if not self._initialized:
            raise self._fail(ACL_ERROR_UNINITIALIZE, api, "aclInit has not been called")

    def _need_context(self, api: str) -> None:
        self._need_init(api)
        if self._thread.device is None:
            raise self._fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                             "no device set in this thread (call aclrtSetDevice first)")

    def _register(self, table: dict, value: Any) -> int:
        """A new handle (an aligned fake address) for ``value`` in ``table``."""
        handle = next(self._ids) * 0x40
        with self._lock:
            table[handle] = value
        if self._sites is not None:
            self._note_site(handle)
        return handle

    # -- the leak report (pyaclnn check) ---------------------------------------------------------
    def track_sites(self, on: bool = True) -> None:
        """Record, from now on, the user's line that makes each handle (about a microsecond
        each), for ``live_handles``; off by default (allocations always record theirs)."""
        if on and self._sites is None:
            self._sites = {}
        elif not on:
            self._sites = None

    def _note_site(self, handle: int) -> None:
        sites = self._sites
        if sites is None:
            return
        sites[handle] = _user_site()
        if len(sites) > self._prune_sites_at:  # forget destroyed handles now and then (amortised)
            with self._lock:
                live = [h for table in self._live_tables() for h in table]
            self._sites = sites = {h: sites[h] for h in live if h in sites}
            self._prune_sites_at = max(4096, 2 * len(sites))

    def _live_tables(self) -> list[dict[int, Any]]:
        return [table for table, _ in self._kinds.values()] + [self._executors, self._streams, self._events,
                                                               self._contexts]

    def live_handles(self) -> list[LiveHandle]:
        """Every handle alive now, with the user's line that made it where sites were tracked:
        what a C program would still have to release. A list's elements go with the list
        (aclDestroyTensorList destroys them), a device's default context with its last
        aclrtResetDevice, and pyaclnn's own aclInit with the backend: none is listed alone."""
        sites = self._sites or {}
        out: list[LiveHandle] = []
        with self._lock:
            listed = {h for table in (self._tensor_lists, self._scalar_lists) for hs in table.values() for h in hs}
            defaults = set(self._default_contexts.values())
            for kind, (table, _) in self._kinds.items():
                for h, value in table.items():
                    if h not in listed:
                        out.append(LiveHandle(kind, h, sites.get(h), _describe(kind, value), h))
            out += [LiveHandle("executor", h, sites.get(h), f"aclnn{ex.op}", h) for h, ex in self._executors.items()]
            out += [LiveHandle("stream", h, sites.get(h), f"device {d}", h) for h, d in self._streams.items()]
            out += [LiveHandle("event", h, sites.get(h), "", h) for h in self._events]
            out += [LiveHandle("context", h, sites.get(h), f"device {d}", h)
                    for h, d in self._contexts.items() if h not in defaults]
            for device, count in self._set_counts.items():
                made = self._set_sites.get(device, [])
                out += [LiveHandle("device_set", device, made[i] if i < len(made) else None, f"device {device}",
                                   ("device_set", device, i)) for i in range(count)]
            if self._initialized and self._init_site is not None:
                out.append(LiveHandle("init", None, self._init_site, "", "init"))
        out += [LiveHandle(f"{a.kind}_alloc", a.base, a.site, f"{a.size} bytes", a) for a in self.memory.live_allocations()]
        return out

    def _destroy(self, table: dict, handle: Any, api: str, what: str) -> None:
        """aclDestroy*: NULL is a no-op (they return 0); anything else must be live."""
        if handle is None:
            return
        with self._lock:
            if table.pop(handle, None) is None:
                raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"{handle!r} is not a live {what}")

    def live_counts(self) -> dict[str, int]:
        """Live emulated handles, for tests and leak checks."""
        return {"tensor": len(self._tensors), "bool_array": len(self._bool_arrays),
                "int_array": len(self._int_arrays), "float_array": len(self._float_arrays),
                "scalar": len(self._scalars), "tensor_list": len(self._tensor_lists),
                "scalar_list": len(self._scalar_lists), "executor": len(self._executors),
                "stream": len(self._streams), "event": len(self._events), "context": len(self._contexts),
                "device_set": sum(self._set_counts.values()),
                "device_alloc": self.memory.live("device"), "host_alloc": self.memory.live("host")}

    # -- init, versions, devices ---------------------------------------------------------------
    def init(self, config_path: str | None = None) -> None:
        # The first aclInit is pyaclnn's own (the backend's); a later one is the user's, which a
        # C program must give back with aclFinalize (the leak report names its line).
        site = _user_site() if self._inits else None
        with self._lock:
            self._initialized = True  # a repeated aclInit returns 100002, which callers ignore
            self._inits += 1
            self._init_site = self._init_site or site

    def finalize(self) -> None:
        with self._lock:
            if not self._initialized:
                raise self._fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize", "aclFinalize called twice")
            self._initialized = False
            self._init_site = None
            self._poisoned.clear()  # aclFinalize resets the devices, failure mode and all

    def release_init(self) -> None:
        """The emulated runtime belongs to pyaclnn alone: giving back its aclInit finalizes it."""
        with self._lock:
            self._initialized = False
            self._init_site = None
            self._poisoned.clear()

    def soc_name(self) -> str:
        return self.soc

    def cann_version(self) -> str | None:
        return None

    def device_count(self) -> int:
        return self._device_count

    def set_device(self, device_id: int) -> None:
        self._need_init("aclrtSetDevice")
        if not 0 <= device_id < self._device_count:
            raise self._fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice",
                             f"device {device_id} does not exist ({self._device_count} device(s))")
        site = _user_site()  # for the leak report: one per reference, given back by a reset
        with self._lock:
            self._set_counts[device_id] = self._set_counts.get(device_id, 0) + 1
            self._set_sites.setdefault(device_id, []).append(site)
            context = self._default_contexts.get(device_id)
        if context is None:  # the device's default context, shared by every thread that sets it
            context = self._default_contexts[device_id] = self._register(self._contexts, device_id)
        self._thread.device, self._thread.context = device_id, context

    def reset_device(self, device_id: int) -> None:
        """One reset per aclrtSetDevice, counted per device over all threads (as CANN does)."""
        with self._lock:
            count = self._set_counts.get(device_id, 0)
            if count == 0:  # hicann/runtime runtime.cc PrimaryContextRelease: RT_ERROR_CONTEXT_DEL
                raise self._fail(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, "aclrtResetDevice",
                                 f"device {device_id} is not set (more resets than aclrtSetDevice calls)")
            self._set_counts[device_id] = count - 1
            if count == 1:  # the last reset waits for the device's queued work (and forgets its streams')
                self.queues.flush_all(lambda q: q.device == device_id)
            made = self._set_sites.get(device_id)
            if made:  # the latest reference goes first (references are counted, not named)
                made.pop()
            context = self._default_contexts.pop(device_id, None) if count == 1 else None
            if context is not None:  # the default context dies with the last reset, and its
                self._poisoned.pop(device_id, None)  # device leaves failure mode
                self._contexts.pop(context, None)  # default stream with it, unreported fault and all
                self._faults.pop(("default", context), None)  # (runtime.cc PrimaryContextRelease ->
                # ExecutePrimaryTearDown; context.cc ResetResourceFieldsAfterTearDown: defaultStream_ = nullptr)
                self.queues.retire(("default", context))
        t = self._thread
        if count == 1 and t.device == device_id:
            t.device = t.context = None

    def get_device(self) -> int:
        self._need_context("aclrtGetDevice")
        assert self._thread.device is not None
        return self._thread.device

    def create_context(self, device_id: int) -> int:
        """A context is bound to a device; like CANN, creating one makes it current here."""
        self._need_init("aclrtCreateContext")
        if not 0 <= device_id < self._device_count:
            raise self._fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtCreateContext", f"device {device_id} does not exist")
        handle = self._register(self._contexts, device_id)
        self._thread.device, self._thread.context = device_id, handle
        return handle

    def destroy_context(self, context: int) -> None:
        if context in self._default_contexts.values():
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyContext",
                             f"{context!r} is a device's default context (use aclrtResetDevice)")
        with self._lock:
            if self._contexts.pop(context, None) is None:
                raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyContext", f"{context!r} is not a live context")
            # its own default stream goes with it (context.cc Context::TearDown: TearDownContextStream)
            self.queues.retire(("default", context))
            self._faults.pop(("default", context), None)
        if self._thread.context == context:
            self._thread.context = None

    def set_current_context(self, context: int) -> None:
        device = self._contexts.get(context)
        if device is None:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtSetCurrentContext", f"{context!r} is not a live context")
        self._thread.device, self._thread.context = device, context  # switching context switches device

    def get_current_context(self) -> int:
        self._need_context("aclrtGetCurrentContext")
        if self._thread.context is None:
            raise self._fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetCurrentContext", "no current context in this thread")
        return self._thread.context

    def recent_error(self) -> str | None:
        msg, self._thread.error = self._thread.error, None
        return msg

    def as_int(self, handle: Any) -> int:
        return int(handle)

    def handle_from_int(self, value: int) -> int:
        return int(value)

    def pointer_address(self, handle: Any) -> int:
        """Handles of this runtime are ints (caught before this): anything else is not one."""
        raise TypeError(f"not a handle: {handle!r}")

    def handle_ctype(self, handle: Any) -> str | None:
        """The C type of a live handle of acl_meta.h's types ("aclScalar *"...), as the acl
        backend reads it from the cffi type; None for anything else (streams, events and
        contexts are all void * to C: their calls check them, 107000 on both backends)."""
        if type(handle) is not int:
            return None
        for table, what in self._kinds.values():
            if handle in table:
                return f"{what} *"
        return "aclOpExecutor *" if handle in self._executors else None

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
        if self._captures and stream in self._captures:  # capturing: its model's (capture.py)
            return self._captures[stream].queue
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
        phase2 = api.startswith("aclnn")
        if stream not in self._streams:
            raise self._fail(ACLNN_ERR_RUNTIME_ERROR if phase2 else ACL_ERROR_RT_PARAM_INVALID, api,
                             f"stream {stream!r} is not a live stream")
        # Work goes only to a stream of the thread's current device (CANN: 107003 for runtime
        # calls, 361001 from phase 2), as the one current device per thread demands.
        if launch and self._streams[stream] != self._thread.device:
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

    def _task_failed(self, q: Queue, detail: str) -> None:
        """A queued task failed on the device: the queue's next synchronisation reports it."""
        with self._lock:
            self._faults.setdefault(q.key, detail)

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
        self._need_context(api)
        self._need_stream(stream, api)
        self._capture_refuse(stream, api)
        self.queues.flush(self._queue(stream))
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
        self._reach_event(event)

    def event_elapsed_time(self, start: int, end: int) -> float:
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

    # -- memory --------------------------------------------------------------------------------
    def malloc(self, size: int, policy: int) -> int:
        self._need_context("aclrtMalloc")
        return self.memory.allocate(size, "device", "aclrtMalloc")

    def free(self, ptr: int) -> None:
        self._need_context("aclrtFree")
        self._freeing(ptr, "device", "aclrtFree")
        self.memory.release(ptr, "device", "aclrtFree")

    def _freeing(self, ptr: int, kind: str, api: str) -> None:
        """A free frees at once (hicann/runtime ApiImpl::DevFree): queued work on it is a hazard."""
        alloc = self.memory.find(ptr) if isinstance(ptr, int) else None
        if alloc is not None and alloc.base == ptr and alloc.kind == kind:
            self.queues.freed(api, (ptr, ptr + alloc.size))

    def malloc_host(self, size: int) -> int:
        self._need_context("aclrtMallocHost")
        return self.memory.allocate(size, "host", "aclrtMallocHost")

    def free_host(self, ptr: int) -> None:
        self._freeing(ptr, "host", "aclrtFreeHost")
        self.memory.release(ptr, "host", "aclrtFreeHost")

    # -- copies and memsets: each layer's checks in the real order (emu_rt_memory.c cites them) -
    # 1. acl layer (hicann/runtime src/acl/aclrt_impl/memory.cpp aclrt{Memcpy,Memset}{,Async}Impl):
    #    count 0 succeeds before anything else; then NULL pointers and the memcpy kind, 100000.
    # 2. the async entry points validate the stream handle (api_c.cc rtMemcpyAsync/rtMemsetAsync).
    # 3. count > destMax (maxCount): 107000 (api_error.cc ApiErrorDecorator::MemCopySync,
    #    MemcpyAsync, MemsetAsync; aclrtMemset's is the driver's drvMemsetD8, after the context).
    # 4. the context (api_impl.cc ApiImpl::*: 107002), then the memory (the driver: 507899).
    def _memcpy_args(self, api: str, dst: Any, src: Any, count: int, kind: int) -> bool:
        """Step 1 of a copy; True when there is nothing to do (count 0: the call succeeds)."""
        if count == 0:
            return True
        for name, value in (("dst", dst), ("src", src)):
            if value is None or (isinstance(value, int) and value == 0):
                raise self._fail(ACL_ERROR_INVALID_PARAM, api, f"{name} is nullptr")
        if kind not in MEMCPY_KINDS:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, f"invalid aclrtMemcpyKind {kind} (MemcpyKindTranslate takes "
                                                           "ACL_MEMCPY_HOST_TO_HOST .. ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)")
        return False

    def _max_check(self, api: str, name: str, maximum: int, count: int) -> None:
        """Step 3: RT_ERROR_INVALID_VALUE, reported as ACL_ERROR_RT_PARAM_INVALID."""
        if count > maximum:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api, f"count {count} exceeds {name} {maximum} "
                                                              f"(range (0, {maximum}])")

    def _bytes(self, where: Any, count: int, api: str, writable: bool) -> np.ndarray:
        if isinstance(where, int):
            return self._device_bytes(where, count, api)
        if isinstance(where, np.ndarray):  # a byte view: bfloat16 has no buffer-protocol format
            if not where.flags.c_contiguous:
                raise self._fail(ACL_ERROR_INVALID_PARAM, api, "host array must be C-contiguous")
            if writable and not where.flags.writeable:
                raise self._fail(ACL_ERROR_INVALID_PARAM, api, "destination host array is read-only")
            flat = where.reshape(-1).view(np.uint8)
        else:
            view = memoryview(where)
            if not view.c_contiguous:
                raise self._fail(ACL_ERROR_INVALID_PARAM, api, "host buffer must be C-contiguous")
            if writable and view.readonly:
                raise self._fail(ACL_ERROR_INVALID_PARAM, api, "destination host buffer is read-only")
            flat = np.frombuffer(view.cast("B"), dtype=np.uint8)
        if count > flat.size:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api,
                             f"count {count} exceeds the host buffer's {flat.size} bytes")
        return flat[:count]

    def _device_bytes(self, addr: int, count: int, api: str) -> np.ndarray:
        """The device side of a copy or memset. Neither the acl layer nor the runtime checks the
        address: the driver does. On A2/A3 (hicann/driver src/ascend_hal/svm/v2: _drvMemcpyInner
        and drvMemsetD8Inner, then the SVM ioctls: devmm_memcpy_para_check in
        src/sdk_driver/svm/v2/master/comm/svm_master_memcpy.c, devmm_ioctl_memset_device_check in
        svm_master_memset.c) a range it cannot resolve fails with -EINVAL / -EADDRNOTAVAIL, i.e.
        DRV_ERROR_PARA_ERROR / DRV_ERROR_IOCRL_FAIL, which the runtime's ErrorcodeManage
        (src/runtime/core/src/common/errcode_manage.cc) reports as ACL_ERROR_RT_DRV_INTERNAL_ERROR;
        the async calls' drvMemGetAttribute fails the same way for an address in no heap. Closest
        model: refused at the call, 507899. (A small overrun inside a mapped page, or a host
        address outside the SVM range, which the driver copies or sets as host memory, goes
        unnoticed on a device.) Pinned host memory (aclrtMallocHost) is accepted too."""
        view = self.memory.bytes_at(addr, count)
        if view is None:
            raise self._fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api,
                             f"[{addr:#x}, +{count}) is not inside one live allocation (freed, or past its end?)")
        return view

    def memcpy(self, dst: Any, dst_max: int, src: Any, count: int, kind: int) -> None:
        api = "aclrtMemcpy"
        if self._memcpy_args(api, dst, src, count, kind):
            return
        self._max_check(api, "destMax", dst_max, count)
        self._need_context(api)
        self._sync_kind_sides(api, dst, src, count, kind)
        out = self._bytes(dst, count, api, writable=True)
        data = self._bytes(src, count, api, writable=False)
        # it waits for no stream (ApiImpl::MemCopySync): queued work on that memory is a race
        device_src, device_dst = isinstance(src, int), isinstance(dst, int)
        if device_src:
            self.queues.host_access(api, ((src, src + count),), write=False)
        if device_dst:
            self.queues.host_access(api, ((dst, dst + count),), write=True)
        if device_src and device_dst:
            self._check_written(api, src, count)
        out[...] = data
        if device_dst:
            if device_src:
                self.memory.copy_written(dst, src, count)
            else:
                self.memory.mark_written(dst, dst + count)

    def _check_written(self, api: str, start: int, count: int) -> None:
        """A device-to-device copy reads its source: bytes never written are a hazard."""
        if self.memory.unwritten((start, start + count)) is not None:
            self.queues.check_written(api, _user_site(), ((start, start + count),))

    def _sync_kind_sides(self, api: str, dst: Any, src: Any, count: int, kind: int) -> None:
        """The sides the kind calls device memory (H2D, D2D, H2B2D: dst; D2H, D2D: src) must be
        aclrtMalloc or aclrtMallocHost memory: the driver copies by address (NpuDriver::MemCopySync
        -> drvMemcpy takes no kind; hicann/driver svm_master_memcpy.c devmm_memcpy_para_check
        cannot resolve a pageable host address given as device memory: -EINVAL ->
        ACL_ERROR_RT_DRV_INTERNAL_ERROR, errcode_manage.cc). A host array where the kind says host
        is not looked at. As the emulator (emu_rt_memory.c memcpy_device_checks), dst first."""
        for name, where, device_kinds in (("dst", dst, (1, 3, 5)), ("src", src, (2, 3))):
            if kind in device_kinds and not isinstance(where, int):
                raise self._fail(ACL_ERROR_RT_DRV_INTERNAL_ERROR, api,
                                 f"{name} (+{count} bytes) is host memory, not inside a live device allocation, "
                                 f"but kind {kind} copies {'to' if name == 'dst' else 'from'} the device")

    def memcpy_async(self, dst: Any, dst_max: int, src: Any, count: int, kind: int, stream: int) -> None:
        """Steps 1-4, then (api_error.cc MemcpyAsync) H2H, which an online runtime refuses with
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT, then the stream's device (ApiImpl::MemcpyAsync)."""
        api = "aclrtMemcpyAsync"
        if self._memcpy_args(api, dst, src, count, kind):
            return
        self._need_stream(stream, api)
        self._max_check(api, "destMax", dst_max, count)
        self._need_context(api)
        out = self._bytes(dst, count, api, writable=True)
        data = self._bytes(src, count, api, writable=False)
        kind = self._async_kind(api, dst, src, kind)
        if kind == ACL_MEMCPY_HOST_TO_HOST:
            raise self._fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, api,
                             "ACL_MEMCPY_HOST_TO_HOST is not supported by the async copy")
        self._need_stream(stream, api, launch=True)
        self._launch_fault(stream, api)
        reads = ((src, src + count),) if isinstance(src, int) else ()
        writes = ((dst, dst + count),) if isinstance(dst, int) else ()
        both = bool(reads and writes and self._location(src) == "device" == self._location(dst))

        def copy() -> None:
            out[...] = data
        self.queues.put(self._queue(stream), api, reads, writes, copy, check_init=reads if both else ())

    def _location(self, where: Any) -> str:
        alloc = self.memory.find(where) if isinstance(where, int) else None
        if alloc is None or alloc.kind == "registered":  # a registered address is no copy's memory (the docs of
            return "unregistered"  # aclrtHostRegister): the host memory it is, as the driver sees it
        return alloc.kind  # "device" or "host" (pinned)

    def _async_kind(self, api: str, dst: Any, src: Any, kind: int) -> int:
        """The kind the async copy runs with (see _FORCED_KIND), or 107000 for a kind its memory
        cannot have (pinned host memory given as the device side of a copy with pageable memory)."""
        if kind > 3:  # ACL_MEMCPY_DEFAULT, ..._HOST_TO_BUF_TO_DEVICE: not modelled
            return kind
        where = (self._location(src), self._location(dst))
        if where in _FORCED_KIND:
            return _FORCED_KIND[where]
        if kind not in _ALLOWED_KINDS[where]:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, api,
                             f"kind {kind} does not match the memory: src is {where[0]}, dst is {where[1]} memory "
                             f"(aclrtMallocHost memory is host memory: use a HOST kind)")
        return kind

    def memset(self, ptr: int | None, max_count: int, value: int, count: int) -> None:
        """The context, then the driver (drvMemsetD8Inner): count > maxCount, then the address."""
        api = "aclrtMemset"
        if count == 0:  # step 1
            return
        if not ptr:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is nullptr")
        self._need_context(api)
        self._max_check(api, "maxCount", max_count, count)
        view = self._device_bytes(ptr, count, api)
        self.queues.host_access(api, ((ptr, ptr + count),), write=True)
        view[...] = value & 0xFF
        self.memory.mark_written(ptr, ptr + count)

    def memset_async(self, ptr: int | None, max_count: int, value: int, count: int, stream: Any) -> None:
        """The stream handle, count > maxCount, the context, the stream's device
        (ApiImpl::MemsetAsync), then the address (memory_common.cc MemSetAsync)."""
        api = "aclrtMemsetAsync"
        if count == 0:  # step 1
            return
        if not ptr:
            raise self._fail(ACL_ERROR_INVALID_PARAM, api, "devPtr is nullptr")
        self._need_stream(stream, api)
        self._max_check(api, "maxCount", max_count, count)
        self._need_context(api)
        self._need_stream(stream, api, launch=True)
        view = self._device_bytes(ptr, count, api)
        self._launch_fault(stream, api)

        def fill() -> None:
            view[...] = value & 0xFF
        self.queues.put(self._queue(stream), api, (), ((ptr, ptr + count),), fill)

    def mem_info(self, attr: int) -> tuple[int, int]:
        self._need_context("aclrtGetMemInfo")
        total = 64 << 30
        return total, total

    # -- aclnn meta objects --------------------------------------------------------------------
    def create_tensor(self, shape: Sequence[int], dtype: int, strides: Sequence[int] | None, offset: int,
                      fmt: int, storage_shape: Sequence[int], addr: int) -> int:
        shape = tuple(map(int, shape))  # (map, min: no generator frames: this runs for every tensor)
        try:
            dt = dtype if type(dtype) is DType else DType(dtype)  # the object layer passes a DType: no enum call
        except ValueError:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclCreateTensor",
                             f"aclCreateTensor returned NULL: unknown aclDataType {dtype}") from None
        if (shape and min(shape) < 0) or (strides is not None and len(strides) != len(shape)):
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclCreateTensor",
                             f"aclCreateTensor returned NULL: bad shape {shape} / strides {strides}")
        desc = TensorDesc(shape, dt, tuple(strides) if strides is not None else contiguous_strides(shape),
                          int(offset), int(fmt), tuple(storage_shape), int(addr))
        return self._register(self._tensors, desc)

    def destroy_tensor(self, tensor: Any) -> None:
        self._destroy(self._tensors, tensor, "aclDestroyTensor", "aclTensor")

    def create_bool_array(self, values: Sequence[bool]) -> int:
        return self._register(self._bool_arrays, tuple(bool(v) for v in values))

    def destroy_bool_array(self, array: Any) -> None:
        self._destroy(self._bool_arrays, array, "aclDestroyBoolArray", "aclBoolArray")

    def create_int_array(self, values: Sequence[int]) -> int:
        return self._register(self._int_arrays, tuple(int(v) for v in values))

    def destroy_int_array(self, array: Any) -> None:
        self._destroy(self._int_arrays, array, "aclDestroyIntArray", "aclIntArray")

    def create_float_array(self, values: Sequence[float]) -> int:
        return self._register(self._float_arrays, tuple(float(np.float32(v)) for v in values))

    def destroy_float_array(self, array: Any) -> None:
        self._destroy(self._float_arrays, array, "aclDestroyFloatArray", "aclFloatArray")

    def create_scalar(self, value: Any, dtype: int) -> int:
        """aclCreateScalar: ``value`` is a number (stored as ``dtype``) or the bytes of one."""
        try:
            dt = DType(dtype)
            npdt = to_numpy(dt)
        except (ValueError, errors.NotSupportedError):
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclCreateScalar",
                             f"aclCreateScalar returned NULL: unsupported aclDataType {dtype}") from None
        if isinstance(value, (bytes, bytearray, memoryview, np.ndarray)):
            raw = value.reshape(-1).view(np.uint8) if isinstance(value, np.ndarray) else memoryview(value).cast("B")
            number = np.frombuffer(bytes(raw[:npdt.itemsize]), npdt)[0]
        else:
            number = np.array(value).astype(npdt)[()]
        return self._register(self._scalars, Scalar(number.item(), dt))

    def destroy_scalar(self, scalar: Any) -> None:
        self._destroy(self._scalars, scalar, "aclDestroyScalar", "aclScalar")

    def _create_list(self, table: dict, members: dict, handles: Sequence[Any], api: str, what: str) -> int:
        handles = tuple(handles)
        if any(h not in members for h in handles):  # CANN reads each element: a stale one is garbage
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"{api} returned NULL: an element is not a live {what}")
        return self._register(table, handles)

    def _destroy_list(self, table: dict, members: dict, handle: Any, api: str, what: str) -> None:
        """Destroying a list destroys its elements too (acl_meta.h aclDestroyTensorList)."""
        if handle is None:
            return
        with self._lock:
            elements = table.pop(handle, None)
            if elements is None:
                raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"{handle!r} is not a live {what}List")
            for element in elements:
                members.pop(element, None)

    def create_tensor_list(self, tensors: Sequence[Any]) -> int:
        return self._create_list(self._tensor_lists, self._tensors, tensors, "aclCreateTensorList", "aclTensor")

    def destroy_tensor_list(self, array: Any) -> None:
        self._destroy_list(self._tensor_lists, self._tensors, array, "aclDestroyTensorList", "aclTensor")

    def create_scalar_list(self, scalars: Sequence[Any]) -> int:
        return self._create_list(self._scalar_lists, self._scalars, scalars, "aclCreateScalarList", "aclScalar")

    def destroy_scalar_list(self, array: Any) -> None:
        self._destroy_list(self._scalar_lists, self._scalars, array, "aclDestroyScalarList", "aclScalar")

    def meta(self, kind: str, handle: Any, api: str) -> Any:
        """What a live handle of ``kind`` holds (a TensorDesc, a tuple of values...)."""
        table, what = self._kinds[kind]
        value = table.get(handle)
        if value is None:
            raise self._fail(ACLNN_ERR_PARAM_NULLPTR if handle is None else ACLNN_ERR_PARAM_INVALID, api,
                             f"{handle!r} is not a live {what}")
        return value

    # -- the rest of headers/: as the acl runtime, emulated --------------------------------------
    def finalize_reference(self) -> int:
        """The emulated runtime keeps one reference (a repeated aclInit adds none): finalizes."""
        self.finalize()
        return 0

    def cann_package_version(self, name: int) -> dict[str, str]:
        raise errors.NotSupportedError("aclsysGetCANNVersion: the NumPy backend emulates no CANN package")

    def version_str(self, pkg: str) -> str:
        raise errors.NotSupportedError("aclsysGetVersionStr: the NumPy backend emulates no CANN package")

    def version_num(self, pkg: str) -> int:
        raise errors.NotSupportedError("aclsysGetVersionNum: the NumPy backend emulates no CANN package")

    def runtime_version(self) -> tuple[int, int, int]:
        raise errors.NotSupportedError("aclrtGetVersion: the NumPy backend emulates no CANN runtime version")

    def run_mode(self) -> int:
        self._need_init("aclrtGetRunMode")
        return 1  # ACL_HOST: the host drives the device

    def synchronize_stream_timeout(self, stream: Any, timeout: int) -> None:
        self._synchronize(stream, "aclrtSynchronizeStreamWithTimeout")  # never times out

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
        return self._register(self._events, None)

    def query_event_status(self, event: Any) -> int:
        if event not in self._events:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtQueryEventStatus", f"event {event!r} is not live")
        # A device gets there eventually: a program polling for it must see it complete, so asking
        # is where the work before it runs here.
        self._reach_event(event)
        return 1 if self._events[event] is not None else 0  # ACL_EVENT_RECORDED_STATUS_COMPLETE / NOT_READY

    def stream_wait_event(self, stream: Any, event: Any) -> None:
        self._need_context("aclrtStreamWaitEvent")
        self._need_stream(stream, "aclrtStreamWaitEvent")
        if event not in self._events:
            raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtStreamWaitEvent", f"event {event!r} is not live")
        self._launch_fault(stream, "aclrtStreamWaitEvent")
        self.queues.wait(self._queue(stream), self._event_at.get(event))

    def last_error(self, level: int, peek: bool) -> int:
        status = self._thread.status
        if not peek:
            self._thread.status = 0
        return status

    _DEVICE_INFO = {0: 20, 1: 40, 2: 192 << 20}  # aclDeviceInfo: AI cores, vector cores, L2 (Ascend910B)
    _DEV_ATTR = {101: 20, 102: 20, 201: 40, 302: 192 << 20, 301: 64 << 30, 501: 0}  # aclrtDevAttr, alike

    def device_info(self, device_id: int, attr: int) -> int:
        self._need_init("aclrtGetDeviceInfo")
        if not 0 <= device_id < self._device_count:
            raise self._fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtGetDeviceInfo", f"device {device_id} does not exist")
        if attr not in self._DEV_ATTR:
            raise self._fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceInfo",
                             f"aclrtDevAttr {attr} is not emulated by the NumPy backend")
        return self._DEV_ATTR[attr]

    def device_capability(self, device_id: int, info: int) -> int:
        self._need_init("aclGetDeviceCapability")
        if not 0 <= device_id < self._device_count or info not in self._DEVICE_INFO:
            raise self._fail(ACL_ERROR_INVALID_PARAM, "aclGetDeviceCapability",
                             f"device {device_id} / aclDeviceInfo {info} is invalid")
        return self._DEVICE_INFO[info]

    def aclnn_init(self, config_path: str | None) -> None:
        pass  # nothing to load: the references are Python

    def aclnn_finalize(self) -> None:
        pass

    def tensor_meta(self, what: str, tensor: Any) -> Any:
        desc = self.meta("tensor", tensor, f"aclGet{what}")
        return {"ViewShape": list(desc.shape), "StorageShape": list(desc.storage_shape),
                "ViewStrides": list(desc.strides), "ViewOffset": desc.offset, "Format": desc.fmt,
                "DataType": int(desc.dtype)}[what]

    def meta_size(self, what: str, handle: Any) -> int:
        kind = {"IntArray": "int_array", "FloatArray": "float_array", "BoolArray": "bool_array",
                "TensorList": "tensor_list", "ScalarList": "scalar_list"}[what]
        return len(self.meta(kind, handle, f"aclGet{what}Size"))

    def init_tensor(self, tensor: Any, shape: Sequence[int], dtype: int, strides: Sequence[int] | None,
                    offset: int, fmt: int, storage_shape: Sequence[int], addr: int) -> None:
        self.meta("tensor", tensor, "aclInitTensor")
        fresh = self.create_tensor(shape, dtype, strides, offset, fmt, storage_shape, addr)
        with self._lock:
            self._tensors[tensor] = self._tensors.pop(fresh)

    def _need_tensor_arg(self, tensor: Any, api: str, name: str = "tensor") -> None:
        """aclSet*TensorAddr check their tensor (list) first, before the executor: hicann/opbase
        src/nnopbase/common/api/acl_op_api.cpp, NNOPBASE_ASSERT_NULLPTR_WITH_RETURN(tensor,
        ACLNN_ERR_INNER_NULLPTR), whose message is OP_LOGE_FOR_INVALID_ARGUMENT_NULL_POINTER's
        (common/inc/nnopbase_error_msg.h). A destroyed one is refused there too, with the same
        status: the real call's first act, tensor->SetStorageAddr(addr), writes into freed memory
        (use after free), so the closest safe behaviour is the emulator's (emu_nnopbase.c
        set_addr, set_dynamic): ACLNN_ERR_INNER_NULLPTR, nothing changed."""
        if tensor is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"{api} failed because {name} cannot be a NULL pointer.")
        table, what = self._kinds["tensor" if name == "tensor" else "tensor_list"]
        if type(tensor) is not int or tensor not in table:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"{name} {tensor!r} is not a live {what} (destroyed?): "
                                                           "pass the live one the executor was made with")

    def set_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        self._need_tensor_arg(tensor, "aclSetTensorAddr")
        ex = self._executors.get(executor)
        if ex is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclSetTensorAddr", f"{executor!r} is not a live executor")
        n = len(ex.inputs)  # inputs first, then the outputs continue the numbering
        self._set_addr(executor, index if index < n else index - n, tensor, addr, output=index >= n)

    def set_dynamic_tensor_addr(self, which: str, executor: Any, ir_index: int, relative_index: int,
                                tensors: Any, addr: int) -> None:
        api = f"aclSetDynamic{which}TensorAddr"
        self._need_tensor_arg(tensors, api, "tensors")
        if executor not in self._executors:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"{executor!r} is not a live executor")
        raise self._fail(ACLNN_ERR_PARAM_INVALID, api, ("the NumPy reference does not model aclSetDynamic*TensorAddr (moving one "
                                                        "member of an executor's aclTensorList): make a new executor"))

    def set_raw_tensor_addr(self, tensor: Any, addr: int) -> None:
        self.meta("tensor", tensor, "aclSetRawTensorAddr").addr = int(addr)

    def get_raw_tensor_addr(self, tensor: Any) -> int:
        return int(self.meta("tensor", tensor, "aclGetRawTensorAddr").addr)

    # -- operators -------------------------------------------------------------------------------
    def op_info(self, op: str) -> OpInfo:
        """The registry entry of ``op``; NotSupportedError unless it has a NumPy reference
        (UnknownOperatorError if no header declares it)."""
        info = self.registry.get(op) if op in ops.references() else None
        if info is None or not info.has_reference:
            exc = self._cannot_run(op)
            self._thread.error = str(exc)
            raise exc
        return info

    def known(self, op: str) -> None:
        """UnknownOperatorError unless a header declares ``op`` (index only: nothing parsed)."""
        if not self.registry.declares(op):
            raise self._unknown(op)

    def _unknown(self, op: str) -> errors.UnknownOperatorError:
        kinds = {s.kind for s in self.registry.sources}
        missing = [what for kind, what in _SEARCHED if kind not in kinds]
        return self.registry.unknown(op, (f"; found no {' and no '.join(missing)}" if missing else "")
                                     + f". Operators with a NumPy reference: {', '.join(ops.references())}")

    def _cannot_run(self, op: str) -> errors.NotSupportedError:
        """Why this backend cannot run ``op``: not declared anywhere, or no NumPy reference."""
        return ops.no_reference(op) if self.registry.declares(op) else self._unknown(op)

    def _resolve(self, info: OpInfo, args: tuple, api: str) -> tuple:
        """Replace handles by what they hold, checking they are live (CANN: 161002 otherwise)."""
        out = []
        for kind, value in zip(info.kinds, args):
            if value is None or kind not in self._kinds:
                out.append(value)
                continue
            table, what = self._kinds[kind]
            if type(value) is not int:  # handles are ints here (cdata on acl): cffi's TypeError there
                raise TypeError(f"{api}: {type(value).__name__} {value!r} is no {what} handle")
            held = table.get(value)
            if held is None:
                raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"{value!r} is not a live {what}")
            if kind == "tensor_list":
                held = tuple(self._tensors[h] for h in held)
            elif kind == "scalar_list":
                held = tuple(self._scalars[h] for h in held)
            out.append(held)
        return tuple(out)

    def workspace_size(self, op: str, args: tuple) -> tuple[int, int]:
        api = f"aclnn{op}GetWorkspaceSize"
        info = self.op_info(op)
        if len(args) != len(info.kinds):
            raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"expected {len(info.kinds)} arguments, got {len(args)}")
        resolved = self._resolve(info, args, api)
        metas = ops.metas(resolved)
        try:
            empty = ops.check(op, self.soc, metas)
        except errors.AclError as exc:
            self._thread.error = str(exc)
            raise
        inputs, outputs = _split_io(info, resolved)
        by_name = ops.written(op, self.soc, metas)
        written = _written_counts(info, resolved, by_name) if by_name else None
        handles = [h for kind, a in zip(info.kinds, args) if a is not None
                   for h in ((a,) if kind == "tensor" else self._tensor_lists[a] if kind == "tensor_list" else ())]
        ws = ops.workspace_size(op, self.soc, metas)  # what the real operator asks for
        fills = empty and ops.fills_when_empty(op, self.soc, metas)
        return ws.size, self._register(self._executors, Executor(op, resolved, empty, inputs, outputs,
                                                                 workspace_size=ws.size, workspace_used=ws.used,
                                                                 handles=tuple(handles), names=tuple(info.names),
                                                                 generated=info.index_rule == "position",
                                                                 written=written, fills_empty=fills))

    def launch(self, op: str, workspace: int, workspace_size: int, executor: Any, stream: Any,
               *extra: Any) -> None:
        # ``extra``: the launch arguments a header declares beyond the four; no operator with a
        # reference has any (an operator without one never gets an executor here)
        api = f"aclnn{op}"
        if executor is None:  # opbase CommonOpExecutorRun: checked first, ACLNN_ERR_PARAM_NULLPTR
            if op not in ops.references():  # ... of an operator this backend can run at all
                raise self._cannot_run(op)
            raise self._fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor is nullptr")
        with self._lock:
            ex = self._executors.get(executor)
            if ex is not None and ex.generated and ex.op == op:
                # NnopbaseRunWithWorkspace (opbase individual_op_api.cpp) checks the workspace
                # before it runs the executor: refused there, the executor stays live
                if workspace_size > 0 and not workspace:
                    raise self._fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspace is nullptr but workspaceSize > 0 "
                                                                   "(the executor was not run: it is still live)")
                if workspace_size < ex.workspace_size:
                    raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"The passed workspace size {workspace_size} does "
                                                                   f"not meet the minimum workspace size "
                                                                   f"{ex.workspace_size} actually required by the "
                                                                   "operator (the executor was not run: it is still live)")
            if ex is not None and not ex.repeatable:
                del self._executors[executor]  # phase 2 consumes it, whatever the result
        if ex is None and op not in ops.references():
            raise self._cannot_run(op)
        if ex is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api,
                             f"executor {executor!r} is not live (already launched or destroyed?)")
        made_by = ""
        if ex.op != op:
            self._other_op(api, op, ex.op)
            made_by = f" (an executor of aclnn{ex.op}, which it runs)"
            op = ex.op  # it runs as the operator that made it
        self._launch_workspace(api, made_by, op, ex.workspace_size, workspace, workspace_size)
        self._need_context(api)
        self._need_stream(stream, api, launch=True)
        if ex.empty and not ex.fills_empty:
            return
        dead = next((h for h in ex.handles if h not in self._tensors), None)
        if dead is not None:  # phase 2 would read a freed aclTensor: refused, as the emulator does
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"tensor {dead!r} was destroyed before phase 2 "
                                                           f"(keep the tensors alive until phase 2 has returned){made_by}")
        self._launch_fault(stream, api)
        if ex.workspace_used and not workspace:  # a composite op's kernels fault on it
            self._add_fault(stream, f"{api}{made_by} queued on stream {stream!r}: the kernels' workspace "
                                    f"({ex.workspace_size} bytes, as phase 1 reported) is at NULL: the kernel's "
                                    f"AI Core exception (allocate workspaceSize bytes and pass them)")
            return
        view = self._view
        views = tuple([view(a) if type(a) is TensorDesc else _list_views(view, a) for a in ex.args])
        bad = _outside(ex.args, views)
        if bad is not None:
            # Phase 2 does not look at tensor addresses (opbase CommonOpExecutorRun launches the
            # kernels; the launch is asynchronous): the kernel's out-of-bounds access is an AI
            # Core exception on the device, which the next synchronisation of the stream reports
            # (hicann/runtime errcode_manage.cc: RT_ERROR_TSFW_AICORE_EXCEPTION ->
            # ACL_ERROR_RT_AICORE_EXCEPTION; an AIV-only kernel reports 507035 instead). The
            # reference names it here first: a hazard, at the line that launched it.
            name = next((f"{n}[{a.index(bad)}]" if isinstance(a, tuple) else n) for n, a in zip(ex.names, ex.args)
                        if a is bad or isinstance(a, tuple) and any(t is bad for t in a)) if ex.names else "a tensor"
            site = _user_site()
            hazard(f"{api} at {site}: {name} at {bad.addr:#x} (offset {bad.offset}, shape {bad.shape}, strides "
                   f"{bad.strides}, {to_numpy(bad.dtype)}) reaches outside its device allocation: the kernel would "
                   "read or write out of bounds (an AI Core exception at the next synchronize on a device, or "
                   "garbage inside the allocator's padding)", site)
            self._add_fault(stream, f"{api}{made_by} queued on stream {stream!r}: tensor at {bad.addr:#x} (offset "
                                    f"{bad.offset}, shape {bad.shape}, strides {bad.strides}) reaches outside "
                                    f"its device allocation: the kernel's AI Core exception")
            return
        spans = ex.spans
        if spans is None:  # until aclSet*TensorAddr moves one of its tensors
            spans = ex.spans = _io_spans(ex)
        # A tensor whose bytes were found written (or marked, as a launch's output), with no free
        # or un-write of memory since, needs neither again: only the others are checked and marked.
        # The race checks take each tensor's span; the uninitialised-read check and the marking
        # its elements' bytes exactly (a strided tensor's gaps are neither read nor written).
        memory = self.memory
        key = (memory.frees, memory.unwrites)
        reads, check = _spans_and_unknown(spans[0], key)
        writes, mark = _spans_and_unknown(spans[1], key)
        if spans[2]:  # outputs the kernel writes in part (the spec's ``written``): only that part
            for span, access in spans[2]:
                writes.append(span)
                mark.append(access)
        if workspace_size > 0 and workspace:
            writes.append((int(workspace), int(workspace) + workspace_size))
        run = self._kernel(ex)

        def kernel() -> None:
            run(views)
        try:
            self.queues.put(self._queue(stream), api, tuple(reads), tuple(writes), kernel, check_init=tuple(check),
                            mark=tuple(mark))
        except BaseException:  # a hazard: nothing was queued, so nothing is known written
            for d in spans[0] + spans[1]:
                d.known_written = None
            raise

    def _launch_workspace(self, api: str, made_by: str, op: str, need: int, workspace: Any,
                          workspace_size: int) -> None:
        """Phase 2's workspace checks. Both runners look at the workspaceSize argument, not at
        what phase 1 reported (hicann/opbase op_executor.cpp CommonOpExecutorRun,
        individual_op_api.cpp NnopbaseRunWithWorkspace): NULL with a size > 0 is 161001. Only a
        generated op compares the size with its executor's (161002); a composite op's kernels use
        the address they get (a NULL one faults, ``launch``). A workspace that is not ``need``
        bytes of device memory is refused as the emulator does (emu_nnopbase.c, 361001)."""
        if workspace_size > 0 and not workspace:
            raise self._fail(ACLNN_ERR_PARAM_NULLPTR, api, f"workspace is nullptr but workspaceSize is "
                                                           f"{workspace_size} (phase 1 asked for {need}){made_by}")
        if self._generated(op) and workspace_size < need:  # (of another generated op: the same check)
            raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"The passed workspace size {workspace_size} does not "
                                                           f"meet the minimum workspace size {need} actually "
                                                           f"required by the operator{made_by}")
        if need > 0 and workspace and not self._in_device_allocation(int(workspace), need):
            raise self._fail(ACLNN_ERR_RUNTIME_ERROR, api, f"workspace {int(workspace):#x} (+{need} bytes) is not "
                                                           f"inside a live aclrtMalloc allocation{made_by}")

    def _in_device_allocation(self, addr: int, count: int) -> bool:
        """Whether [addr, addr+count) lies inside one live aclrtMalloc allocation (one lookup)."""
        alloc = self.memory.find(addr)
        return alloc is not None and alloc.kind == "device" and addr + count <= alloc.base + alloc.size

    def _generated(self, op: str) -> bool:
        """A generated op (nnopbase executor): its header is generated (the registry's "position" rule)."""
        info = self.registry.get(op)
        return info is not None and info.index_rule == "position"

    def _other_op(self, api: str, op: str, made_by: str) -> None:
        """Phase 2 of ``op`` given an executor of ``made_by``. Phase 2 does not know which operator
        made an executor: a composite op's (hicann/opbase op_executor.cpp CommonOpExecutorRun)
        runs the kernels the aclOpExecutor holds, a generated op's (individual_op_api.cpp
        NnopbaseRunWithWorkspace) the NnopbaseExecutor's own opType; so an executor of the same kind
        runs as the operator that made it. Across the kinds each would read the other's object as
        its own (PtrCastTo), undefined behaviour on a device: refused, 561103, as the emulator does
        (emu_nnopbase.c launch). The executor is consumed either way (the caller took it)."""
        generated = self._generated(op)
        if generated != self._generated(made_by):
            kind = "composite (aclOpExecutor)" if generated else "generated (nnopbase)"
            runner = "NnopbaseRunWithWorkspace" if generated else "CommonOpExecutorRun"
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api,
                             f"{api} was given an executor made by aclnn{made_by}GetWorkspaceSize: a {kind} executor, "
                             f"which {runner} would read as its own kind (undefined behaviour on a device); "
                             f"launch it with aclnn{made_by}")

    def host_view(self, addr: int, shape: Sequence[int], dtype: np.dtype, strides: Sequence[int],
                  offset: int) -> np.ndarray | None:
        """The ndarray a tensor on emulated device memory is (zero copy); None when it reaches
        outside its allocation (freed, or past its end)."""
        return self.memory.view(addr, shape, np.dtype(dtype), strides, offset)

    def register_host(self, buf: np.ndarray) -> int | None:
        """Host bytes ``buf`` (a contiguous uint8 view) as device memory, in place: the device
        address a tensor on them takes (their own), or None when they cannot be (they reach into
        an allocation that does not hold all of them). Modelled on aclrtHostRegister (hicann/runtime
        docs/zh/api_ref/11-02_host_memory_management.md: host memory mapped for the device, which
        the kernels then use without a copy); unlike it, a registration is counted, so calls that
        share an array each keep it (pyaclnn._numpy.memory.AddressSpace.register)."""
        return self.memory.register(buf)

    def unregister_host(self, addr: int) -> None:
        """Give back one ``register_host`` that returned ``addr`` (aclrtHostUnregister)."""
        self.memory.unregister(addr)

    def executor_kernel(self, executor: Any) -> Callable[[tuple], None]:
        """The phase-2 kernel a live executor's launch runs: a function of the C arguments with
        ndarray views in the tensor slots (outputs written in place), valid for any arguments of
        the same metadata and plain values, which are all phase 1 looked at. Not a CANN call:
        the NumPy-in/out functions keep it for a repeated call (pyaclnn._hostcall)."""
        ex = self._executors.get(executor)
        if ex is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "executor_kernel", f"{executor!r} is not a live executor")
        return self._kernel(ex)

    def _kernel(self, ex: Executor) -> Callable[[tuple], None]:
        """The operator's kernel bound to ``ex``'s plain values (made once per executor);
        nothing to run on an empty call that writes nothing (``fills_empty``)."""
        run = ex.kernel
        if run is None:
            writes = not ex.empty or ex.fills_empty
            run = ex.kernel = ops.prepare(ex.op, self.soc, ex.args, ex.empty) if writes else _nothing
        return run

    def _view(self, desc: TensorDesc) -> np.ndarray | None:
        """The ndarray a tensor's kernel reads or writes (None: outside its allocation). Kept
        with the descriptor while its address is the same and nothing was freed since (a free
        may end the allocation under it): a launch then costs no new view."""
        memory = self.memory
        cached = desc.cached_view
        if cached is not None and cached[0] == desc.addr and cached[1] == memory.frees:
            return cached[2]
        view = memory.view(desc.addr, desc.shape, to_numpy(desc.dtype), desc.strides, desc.offset,
                           _span_of(desc))  # (its span is kept: the launch's hazard spans use it too)
        desc.cached_view = (desc.addr, memory.frees, view) if view is not None else None
        return view

    def set_executor_repeatable(self, executor: Any) -> None:
        ex = self._executors.get(executor)
        if ex is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclSetAclOpExecutorRepeatable", f"{executor!r} is not a live executor")
        ex.repeatable = True

    def destroy_executor(self, executor: Any) -> None:
        with self._lock:
            if self._executors.pop(executor, None) is None:
                raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclDestroyAclOpExecutor", f"{executor!r} is not a live executor")

    def _set_addr(self, executor: Any, index: int, tensor: Any, addr: int, output: bool) -> None:
        api = "aclSetOutputTensorAddr" if output else "aclSetInputTensorAddr"
        self._need_tensor_arg(tensor, api)
        ex = self._executors.get(executor)
        if ex is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"{executor!r} is not a live executor")
        group = ex.outputs if output else ex.inputs
        if not 0 <= index < len(group):
            raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"index {index} out of range [0, {len(group)})")
        slot = group[index]
        if slot is None:  # a generated op's NULL optional slot (NnopbaseSetInputTensorAddr)
            raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"The {index}th {'output' if output else 'input'} in "
                             f"operator {ex.op} is a null pointer. The address cannot be updated")
        if self._tensors.get(tensor) is not slot:
            raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"tensor is not {'output' if output else 'input'} {index} of this executor")
        slot.addr = int(addr)
        slot.known_written = None
        ex.spans = None

    def set_input_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        self._set_addr(executor, index, tensor, addr, output=False)

    def set_output_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        self._set_addr(executor, index, tensor, addr, output=True)


def _nothing_to_run() -> None:
    """An event record's task: reaching it is all it does."""


def _span_of(desc: TensorDesc) -> tuple[int, int]:
    """The bytes [start, end) a tensor's shape, strides and offset reach (kept until its
    address changes: aclSet*TensorAddr)."""
    cached = desc.cached_span
    if cached is not None and cached[0] == desc.addr:
        return cached[1], cached[2]
    lo, hi = extent(desc.shape, desc.strides)
    item = to_numpy(desc.dtype).itemsize
    start, end = desc.addr + (lo + desc.offset) * item, desc.addr + (hi + desc.offset + 1) * item
    desc.cached_span = (desc.addr, start, end)
    return start, end


def _io_spans(ex: Executor) -> tuple[tuple[TensorDesc, ...], tuple[TensorDesc, ...],
                                      tuple[tuple[tuple[int, int], Access], ...]]:
    """What a launch of ``ex`` touches: its non-empty inputs, the non-empty outputs its kernel
    writes whole, and (span, exact bytes) of what it writes of those it writes in part only
    (``written``; an output it does not write at all is in none of them: the device's kernel
    never touches it)."""
    inputs = tuple(d for d in ex.inputs if d is not None and 0 not in d.shape)
    if ex.written is None:
        return inputs, tuple(d for d in ex.outputs if d is not None and 0 not in d.shape), ()
    whole, part = [], []
    for d, n in zip(ex.outputs, ex.written):
        if d is None or 0 in d.shape or n == 0:
            continue
        if n is None or n >= math.prod(d.shape):
            whole.append(d)
        else:
            access = _written_bytes(d, n)
            part.append(((access[0], access[1]), access))
    return inputs, tuple(whole), tuple(part)


def _written_bytes(desc: TensorDesc, count: int | None = None) -> Access:
    """The bytes of the elements of a non-empty ``desc`` (with ``count``, of its first ``count``
    in row-major order of its view): one span for a contiguous tensor's first elements, else the
    elements of a strided one (its gaps, and its later elements, are not in them)."""
    item = to_numpy(desc.dtype).itemsize
    first = desc.addr + desc.offset * item
    if count is not None and tuple(desc.strides) == contiguous_strides(desc.shape):
        return first, first + count * item
    boxes = tuple((first + start, dims) for start, dims in byte_boxes(desc.shape, desc.strides, item, count))
    end = max(start + sum((d - 1) * s for s, d in dims) + 1 for start, dims in boxes)
    return Elements(min(start for start, _ in boxes), end, boxes)


def _written_counts(info: OpInfo, args: tuple, by_name: dict[str, Any]) -> tuple[int | None, ...] | None:
    """The spec's ``written`` (C output parameter name -> elements, or a tuple per list member)
    as one count per output of ``_split_io``, in its order (None: written whole); None when every
    output is written whole."""
    assert info.outputs is not None
    unknown = set(by_name) - {info.names[i] for i in info.outputs}
    if unknown:
        raise ValueError(f"aclnn{info.name}: the spec's written() names no output {sorted(unknown)}")
    keep_null = info.index_rule == "position"
    counts: list[int | None] = []
    for i in info.outputs:
        if not keep_null and args[i] is None:
            continue
        n = by_name.get(info.names[i])
        if isinstance(args[i], tuple):  # a list's members one by one, as _split_io counts them
            counts += n if n is not None else (None,) * len(args[i])
        else:
            counts.append(n)
    return tuple(counts) if any(n is not None for n in counts) else None


def _describe(kind: str, value: Any) -> str:
    """What a handle of ``kind`` holds, in a few words, for the leak report."""
    if kind == "tensor":
        return f"shape {value.shape} {value.dtype.name}, data at {value.addr:#x}"
    if kind == "scalar":
        return f"{value.value!r} {value.dtype.name}"
    if kind in ("tensor_list", "scalar_list"):
        return f"{len(value)} element(s)"
    return repr(list(value)) if len(value) <= 8 else f"{len(value)} values"


def _spans_and_unknown(descs: tuple[TensorDesc, ...], key: tuple[int, int]
                       ) -> tuple[list[tuple[int, int]], list[Access]]:
    """The spans of ``descs`` (for the race checks), and the exact bytes (``_written_bytes``) of
    those not known written under ``key`` (the memory's (frees, unwrites)), which are from now on
    (as an input: checked; as an output: marked)."""
    spans: list[tuple[int, int]] = []
    unknown: list[Access] = []
    for d in descs:
        span = _span_of(d)
        spans.append(span)
        if d.known_written != key:
            d.known_written = key
            if d.dense is None:  # (worked out once per tensor)
                d.dense = dense(d.shape, d.strides)
            unknown.append(span if d.dense else _written_bytes(d))
    return spans, unknown


def _is_list(value: Any) -> bool:
    """Whether a resolved argument is an aclTensorList's tensors (a tuple of TensorDesc or views;
    an aclScalarList is a tuple of Scalar, an aclBoolArray one of bools)."""
    return isinstance(value, tuple) and bool(value) and isinstance(value[0], (TensorDesc, np.ndarray))


def _list_views(view: Callable[[TensorDesc], np.ndarray | None], value: Any) -> Any:
    """An aclTensorList's members as a tuple of ndarray views (None: outside its allocation);
    any other value as it is."""
    return tuple(view(d) for d in value) if _is_list(value) else value


def _outside(args: tuple, views: tuple) -> TensorDesc | None:
    """The first tensor (or list member) whose view is None: it reaches outside its allocation."""
    for a, v in zip(args, views):
        if isinstance(a, TensorDesc) and v is None:
            return a
        if _is_list(a):
            for d, w in zip(a, v):
                if w is None:
                    return d
    return None


def _nothing(args: tuple) -> None:
    """Phase 2 of a call on empty inputs: nothing to compute (outputs are left as they are)."""


def _split_io(info: OpInfo, args: tuple) -> tuple[list[Any], list[Any]]:
    """The tensors aclSetInputTensorAddr / aclSetOutputTensorAddr index, by the op's rule:
    the non-null ones in parameter order, or every position (NULL optional slots included)."""
    keep_null = info.index_rule == "position"
    assert info.inputs is not None and info.outputs is not None  # ops with a reference have roles
    def tensors(positions: tuple[int, ...]) -> list[Any]:  # a list's members count one by one, in order
        return [t for i in positions if keep_null or args[i] is not None
                for t in (args[i] if isinstance(args[i], tuple) else (args[i],))]
    return tensors(info.inputs), tensors(info.outputs)


def _conforms(runtime: NumpyRuntime) -> HostRuntime:
    """Never called: mypy checks here that NumpyRuntime implements the contract."""
    return runtime
