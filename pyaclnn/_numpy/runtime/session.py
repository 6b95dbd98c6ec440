"""The reference runtime's session: aclInit/aclFinalize, versions, devices and contexts, and the
state every family shares (handle tables, per-thread device, leak tracking)."""
from __future__ import annotations

import itertools
import os
import threading
from ..._core.sites import Site, capture_rule as _capture_rule, user_site as _user_site
from typing import Any, NamedTuple
from ... import errors
from ..._core.constants import (ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INVALID_PARAM, ACL_ERROR_UNINITIALIZE, ACL_ERROR_REPEAT_FINALIZE,
                                ACL_ERROR_INVALID_FILE,
                                ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_INVALID_DEVICEID,
                                ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                                ACLNN_ERR_PARAM_INVALID)
from ..._registry.operators import Registry
from ..._registry.sources import reference_sources
from ..memory import AddressSpace
from ..queues import Queue, Queues
from ..records import ExecutorRecord, Scalar, TensorDesc

VERSION = "8.1.RC1"  # the CANN release whose ABI the emulation follows (headers are a superset)


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


def _tables(tables: list[dict[int, Any]]) -> list[dict[int, Any]]:
    """A copy of each handle table, to read whole: ``dict.copy`` is one C call that runs no Python
    code (int keys), so no other thread's handle set or pop (``_register``, ``_destroy``, which
    take no lock) lands in the middle of it, where iterating a table itself could fail with
    "dictionary changed size during iteration"."""
    return [table.copy() for table in tables]


def _describe(kind: str, value: Any) -> str:
    """What a handle of ``kind`` holds, in a few words, for the leak report."""
    if kind == "tensor":
        return f"shape {value.shape} {value.dtype.name}, data at {value.addr:#x}"
    if kind == "scalar":
        return f"{value.value!r} {value.dtype.name}"
    if kind in ("tensor_list", "scalar_list"):
        return f"{len(value)} element(s)"
    return repr(list(value)) if len(value) <= 8 else f"{len(value)} values"


class NumpySession:
    """aclInit, devices, contexts, versions; owns the state the other families use."""

    name = "numpy"

    handle_class = int  # its handles are ints (aligned fake addresses)

    null = None         # the nullptr handle
    _models: dict[int, Any] | None = None  # captured models (aclmdlRI: the capture family's)

    def __init__(self, soc: str, device_count: int = 1) -> None:
        self.soc = soc
        self._device_count = device_count
        self._lock = threading.Lock()
        self._initialized = False
        self._ids = itertools.count(0x1000 * 0x40, 0x40)  # handles: aligned fake addresses, never reused
        self._thread = _Thread()
        self.memory = AddressSpace()
        self.queues = Queues(self.memory, self._task_failed)
        self._event_at: dict[int, tuple[Any, int, dict[Any, int]]] = {}  # event -> its last record's position
        self._contexts: dict[int, int] = {}
        self._set_counts: dict[int, int] = {}  # aclrtSetDevice references, per device (all threads)
        self._default_contexts: dict[int, int] = {}  # device -> its default context
        self._streams: dict[int, int | None] = {}  # stream -> device it was created on
        self._captures: dict[Any, Any] | None = None  # (NumpyStreams'; on the instance: read per launch and sync)
        self._faults: dict[Any, str] = {}  # stream -> its first failed launch, for the next sync
        self._poisoned: dict[int, str] = {}  # device -> the page fault that put it in failure mode
        self._events: dict[int, float | None] = {}
        self._unwaitable: set[int] = set()  # events whose flags give them no wait task (stream_wait_event)
        self._tensors: dict[int, TensorDesc] = {}
        self._bool_arrays: dict[int, tuple[bool, ...]] = {}
        self._int_arrays: dict[int, tuple[int, ...]] = {}
        self._float_arrays: dict[int, tuple[float, ...]] = {}
        self._scalars: dict[int, Scalar] = {}
        self._tensor_lists: dict[int, tuple[int, ...]] = {}   # element handles (owned by the list)
        self._scalar_lists: dict[int, tuple[int, ...]] = {}
        self._executors: dict[int, ExecutorRecord] = {}
        # For the leak report (live_handles): the user's line behind each handle while sites are
        # tracked (track_sites), each device's aclrtSetDevice references, and the user's aclInit.
        self._sites: dict[int, Site] | None = None
        self._prune_sites_at = 4096
        self._set_sites: dict[int, list[Site]] = {}
        self._inits = 0
        self._init_refs = 0  # aclInit references not yet given back (aclFinalizeReference)
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
        return errors.from_status(status, api, _capture_rule(status, detail))

    def _need_init(self, api: str) -> None:
        if not self._initialized:
            raise self._fail(ACL_ERROR_UNINITIALIZE, api, "aclInit has not been called")

    def _need_context(self, api: str) -> None:
        if not self._initialized:  # (_need_init, inline: every call that needs a device asks)
            self._need_init(api)
        if self._thread.device is None:
            raise self._fail(ACL_ERROR_RT_CONTEXT_NULL, api,
                             "no device set in this thread (call aclrtSetDevice first)")

    def _register(self, table: dict, value: Any) -> int:
        """A new handle (an aligned fake address) for ``value`` in ``table``. Without the lock (it
        cost 0.1 us per handle): one dict item set is atomic (the Python FAQ, "What kinds of global
        value mutation are thread-safe?": D[x] = y), and what reads a table whole reads a copy
        (``_tables``); a handle is never reused, so no other thread sets or pops this one."""
        handle = next(self._ids)
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
            live = [h for table in self._live_tables() for h in table]
            self._sites = sites = {h: sites[h] for h in live if h in sites}
            self._prune_sites_at = max(4096, 2 * len(sites))

    def _live_tables(self) -> list[dict[int, Any]]:
        """A copy of each handle table (``_tables``)."""
        return _tables([table for table, _ in self._kinds.values()] + [self._executors, self._streams, self._events,
                                                                       self._contexts, self._models or {}])

    def live_handles(self) -> list[LiveHandle]:
        """Every handle alive now, with the user's line that made it where sites were tracked:
        what a C program would still have to release. A list's elements go with the list
        (aclDestroyTensorList destroys them), a device's default context with its last
        aclrtResetDevice, and pyaclnn's own aclInit with the backend: none is listed alone."""
        sites = self._sites or {}
        out: list[LiveHandle] = []
        with self._lock:
            kinds = dict(zip(self._kinds, _tables([table for table, _ in self._kinds.values()])))
            executors, streams, events, contexts, models = _tables([self._executors, self._streams, self._events,
                                                                    self._contexts, self._models or {}])
            listed = {h for kind in ("tensor_list", "scalar_list") for hs in kinds[kind].values() for h in hs}
            defaults = set(self._default_contexts.values())
            for kind, table in kinds.items():
                for h, value in table.items():
                    if h not in listed:
                        out.append(LiveHandle(kind, h, sites.get(h), _describe(kind, value), h))
            out += [LiveHandle("executor", h, sites.get(h), f"aclnn{ex.op}", h) for h, ex in executors.items()]
            out += [LiveHandle("stream", h, sites.get(h), f"device {d}", h) for h, d in streams.items()]
            out += [LiveHandle("event", h, sites.get(h), "", h) for h in events]
            out += [LiveHandle("model", h, sites.get(h), "", h) for h in models]
            out += [LiveHandle("context", h, sites.get(h), f"device {d}", h)
                    for h, d in contexts.items() if h not in defaults]
            for device, count in self._set_counts.items():
                made = self._set_sites.get(device, [])
                out += [LiveHandle("device_set", device, made[i] if i < len(made) else None, f"device {device}",
                                   ("device_set", device, i)) for i in range(count)]
            if self._initialized and self._init_site is not None:
                out.append(LiveHandle("init", None, self._init_site, "", "init"))
        out += [LiveHandle(f"{a.kind}_alloc", a.base, a.site, f"{a.size} bytes", a) for a in self.memory.live_allocations()]
        # memory never freed before its device closed went with the device, yet aclrtFree never gave it back
        out += [LiveHandle("device_alloc", base, site, f"{size} bytes", ("closed", serial))
                for base, size, site, serial in self.memory.closed_unfreed]
        return out

    def _destroy(self, table: dict, handle: Any, api: str, what: str) -> None:
        """aclDestroy*: NULL is a no-op (they return 0); anything else must be live."""
        if handle is None:
            return
        if table.pop(handle, None) is None:  # (one atomic pop, as _register's set: no lock)
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
        if config_path and not self._initialized and not os.access(config_path, os.R_OK):
            # a first aclInit reads its config file (acl.cpp aclInitImpl -> GetStrFromConfigPath);
            # a repeat returns 100002 before that
            raise self._fail(ACL_ERROR_INVALID_FILE, "aclInit", f"cannot open config file {config_path}")
        with self._lock:
            self._initialized = True  # a repeated aclInit returns 100002, which callers ignore
            self._inits += 1
            self._init_refs += 1  # each one a reference (acl.cpp aclInitImpl)
            self._init_site = self._init_site or site

    def finalize(self) -> None:
        with self._lock:
            if not self._initialized:
                raise self._fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize", "aclFinalize called twice")
            # acl only (hicann/runtime acl.cpp aclFinalizeInternal): no device is reset, so a
            # device's failure mode, its contexts, streams and memory stay; the count is cleared
            self._initialized = False
            self._init_refs = self._inits = 0  # the next aclInit starts a session (not a leak)
            self._init_site = None

    def release_init(self) -> None:
        """The emulated runtime belongs to pyaclnn alone: giving back its aclInit finalizes it."""
        with self._lock:
            self._initialized = False
            self._init_refs = 0
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
                if device_id not in self._contexts.values():  # no context holds the device: it closes
                    self._close_device(device_id, "aclrtResetDevice")
        t = self._thread
        if count == 1 and t.device == device_id and t.context in (context, None):
            # only a thread on the default context loses it (runtime.cc ExecutePrimaryTearDown:
            # SetCurCtx(previousCtx == ctx ? nullptr : previousCtx)): a created one stays current
            t.device = t.context = None

    def _close_device(self, device_id: int, api: str) -> None:
        """No context holds the device any more (the last aclrtResetDevice, or the destroy of the
        last context made on it after that): the device closes, and the memory aclrtMalloc gave
        out on it goes with it. hicann/runtime runtime.cc Runtime::DeviceRelease ->
        FinalizeDeviceRelease deletes the Device (raw_device.cc ~RawDevice ->
        ReleaseDriverResourcesOnDestroy -> NpuDriver::DeviceClose -> halDeviceClose), and the
        driver's memory close (hicann/driver src/ascend_hal/svm/v2/devmm/devmm_svm.c
        _drvMemDeviceCloseInner) destroys the device's heaps. So a later aclrtFree of such a
        pointer is 107000 (devmm_free_managed_nomal: no heap, DRV_ERROR_INVALID_VALUE ->
        ACL_ERROR_RT_PARAM_INVALID), and a launch, copy or memset on it faults on a device: here
        the address space's recent frees name this call (memory.AddressSpace.release_device).
        Pinned host memory (aclrtMallocHost) is the host's: it stays. Queued work on the device
        ran before (the caller flushed its queues)."""
        for base in self.memory.release_device(device_id, api):
            self._capture_freed(base, api)  # a graph using it: its next replay is a use after free

    def _capture_freed(self, base: int, api: str) -> None:
        """An allocation a graph may use is freed (the capture family overrides it)."""

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
            device = self._contexts.pop(context, None)
            if device is None:
                raise self._fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyContext", f"{context!r} is not a live context")
            # its own default stream goes with it (context.cc Context::TearDown: TearDownContextStream)
            self.queues.retire(("default", context))
            self._faults.pop(("default", context), None)
            if device not in self._contexts.values():  # the last context of a device already reset
                self._close_device(device, "aclrtDestroyContext")
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

    def _task_failed(self, q: Queue, detail: str) -> None:
        """A queued task failed on the device: the queue's next synchronisation reports it."""
        with self._lock:
            self._faults.setdefault(q.key, detail)

    # -- the rest of headers/: as the acl runtime, emulated --------------------------------------
    def finalize_reference(self) -> int:
        """One aclInit reference back; the last one finalizes (hicann/runtime acl.cpp
        aclFinalizeReferenceImpl); none left: 100037."""
        with self._lock:
            if self._initialized and self._init_refs > 1:
                self._init_refs -= 1
                if self._init_refs == 1:  # back to one: nothing the user owes
                    self._init_site = None
                return self._init_refs
        if not self._initialized:
            raise self._fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalizeReference", "no aclInit reference left")
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
        if attr not in self._DEV_ATTR:  # as the emulator (emu_rt_devices.c aclrtGetDeviceInfo)
            raise self._fail(ACL_ERROR_FEATURE_UNSUPPORTED, "aclrtGetDeviceInfo", f"aclrtDevAttr {attr} is not supported")
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
