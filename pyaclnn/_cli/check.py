"""``pyaclnn check SCRIPT [ARGS...]``: run a script as a device would judge it, and list what it leaks.

The script runs as ``python SCRIPT ARGS`` would (``__name__ == "__main__"``, ``sys.argv``), on the
NumPy reference backend (``PYACLNN_BACKEND=numpy``) with hazards raised (``PYACLNN_HAZARDS=raise``
unless it is set: ``warn`` lets the script go on past each hazard, and every one is reported).

Findings (any of them: exit 1; none: exit 0 and one "clean" line; all on stderr, so the
script's stdout is left as it is):
- a ``pyaclnn.HazardError``: its message and the script's own frames (no pyaclnn internals);
- each ``pyaclnn.HazardWarning`` (``PYACLNN_HAZARDS=warn``);
- the script's own failure: an exception, or ``sys.exit`` with a non-zero status (then the
  leaks are not listed: a script that stopped half-way has not released anything yet);
- every handle left alive when the script has finished (its globals still alive, as at
  interpreter exit), each with the user's line that made it (``pyaclnn._core.sites.user_site``):
  what a C program must release, i.e. tensors, scalars, int/float/bool arrays, tensor and
  scalar lists, executors neither launched nor destroyed, streams, events, contexts, device
  and pinned host memory, aclrtSetDevice without aclrtResetDevice, and a script's own aclInit
  without aclFinalize (the official op examples, hicann/ops-math and ops-nn
  examples/test_aclnn_*.cpp, release all of these and end with aclrtResetDevice, aclFinalize);
  and the pyaclnn objects left open (a Tensor never closed), named with their creation line,
  whose aclTensor and memory are not listed again.

Not the user's leaks, because pyaclnn keeps them for itself and releases them at exit:
- the high-level API's default device (made when a Tensor or call needs a device and none is
  open) and the default streams pyaclnn makes per device and thread for ``run()`` without a
  stream, with their workspaces and the frees waiting for them;
- pyaclnn's own aclInit (the backend's), and a device's default context (it goes with the
  device's last aclrtResetDevice);
- the aclTensor descriptors pyaclnn.acl makes when phase 1 is given pyaclnn Tensors: they go
  with that executor (a leaked executor is one finding);
- memory whose free waits for a stream to pass the work using it (``pyaclnn._objects.lifetimes``) is
  counted with that stream.
An object dropped without ``close()`` was released by the garbage collector: no leak.

The same check runs in pytest: ``pyaclnn.testing``.
"""
from __future__ import annotations

import contextlib
import gc
import os
import runpy
import sys
import threading
import traceback
import warnings
from pathlib import Path
from typing import Any, Iterator, NamedTuple, Sequence

from .._core import env as _env
from .._objects import resource as _resource
from .._objects import unreported as _unreported
from .._core import sites as _sites
from ..errors import HazardError, HazardWarning, PyaclnnError

PROG = "pyaclnn check"
CLEAN, FOUND, USAGE = 0, 1, 2

# kind of a runtime handle -> (what it is, the call that releases it)
_RELEASE = {
    "tensor": ("aclTensor", "aclDestroyTensor"), "scalar": ("aclScalar", "aclDestroyScalar"),
    "int_array": ("aclIntArray", "aclDestroyIntArray"), "float_array": ("aclFloatArray", "aclDestroyFloatArray"),
    "bool_array": ("aclBoolArray", "aclDestroyBoolArray"), "tensor_list": ("aclTensorList", "aclDestroyTensorList"),
    "scalar_list": ("aclScalarList", "aclDestroyScalarList"), "stream": ("stream", "aclrtDestroyStream"),
    "model": ("aclmdlRI (a captured graph)", "aclmdlRIDestroy"),
    "event": ("event", "aclrtDestroyEvent"), "context": ("context", "aclrtDestroyContext"),
}


class Finding(NamedTuple):
    """One leak: the user's line that made it (None: made before sites were tracked) and what."""
    site: _sites.Site | None
    text: str

    def __str__(self) -> str:
        return f"{self.site or 'line unknown'}: {self.text}"


class Snapshot(NamedTuple):
    """What was alive before (``snapshot``): left out of a later ``leaks``."""
    objects: frozenset   # the registry's weak references (pyaclnn._objects.resource.live)
    handles: frozenset   # LiveHandle.key of the runtime's handles


def enable_tracking(backend: Any) -> None:
    """From now on, objects and the NumPy runtime's handles remember the user's line that made them."""
    _resource.track_sites = True
    track = getattr(backend.runtime, "track_sites", None)
    if track is not None:
        track(True)


def _live_handles(backend: Any) -> list[Any]:
    live = getattr(backend.runtime, "live_handles", None)
    return live() if live is not None else []  # a device runtime lists nothing: objects only


def snapshot(backend: Any) -> Snapshot:
    return Snapshot(frozenset(r for r, _ in _resource.live(backend)),
                    frozenset(h.key for h in _live_handles(backend)))


def _internal(backend: Any) -> set[int]:
    """ids of the objects pyaclnn keeps for itself: the default device, the default streams."""
    from .._objects import stream as _stream
    keep = {id(backend.default_device)} if backend.default_device is not None else set()
    keep |= {id(s) for s in list(_stream.default_streams)}
    return keep


def _holds(obj: Any, kind: str) -> set[tuple[str, int]]:
    """The runtime handles ("h", handle) and allocations ("mem", address) an open object owns."""
    held: set[tuple[str, int]] = set()
    if kind == "tensor":
        held.add(("h", obj.raw))
        if obj.storage.owned and obj.storage.addr:
            held.add(("mem", obj.storage.addr))
    elif kind == "storage":
        if obj.owned and obj.addr:
            held.add(("mem", obj.addr))
    elif kind == "stream":
        if obj.owned:
            held.add(("h", obj.raw))
        if obj.workspace_slot[0]:
            held.add(("mem", obj.workspace_slot[0]))
        for _, _release, args in list(obj.order.deferred):  # frees waiting for this stream
            held |= {("mem", a) for a in args if type(a) is int}
    elif kind == "event":
        held.add(("h", obj.raw))
    elif kind == "graph":  # its aclmdlRI, its workspaces and the memory of what it captured
        held |= obj.held()
    elif kind == "executor":  # its aclOpExecutor until phase 2, what was made for it, its uploads
        planned = obj.planned
        if planned.handle is not None:
            held.add(("h", planned.handle))
        held |= {("h", h) for _, h in planned.owned}
        for t in obj.uploads:
            held |= _holds(t, "tensor")
    return held


def _describe(obj: Any, kind: str) -> str:
    if kind == "tensor":
        return f"pyaclnn.Tensor of shape {obj.shape} {obj.dtype}"
    if kind == "executor":
        return f"pyaclnn.{type(obj).__name__} (aclnn{obj.op})"
    if kind == "device":
        return f"pyaclnn.Device({obj.id})"
    if kind == "graph":
        return f"pyaclnn.Graph ({obj.launches} captured launch(es), its memory kept alive)"
    return f"pyaclnn.{type(obj).__name__} on device {obj.device.id}"


def _runtime_text(h: Any) -> str:
    if h.kind == "device_set":
        return f"aclrtSetDevice({h.handle}) is never matched by aclrtResetDevice({h.handle})"
    if h.kind == "init":
        return "aclInit is never matched by aclFinalize"
    if h.kind in ("device_alloc", "host_alloc"):
        what, call = ("device memory", "aclrtFree") if h.kind == "device_alloc" else ("pinned host memory",
                                                                                      "aclrtFreeHost")
        return f"{what} at {h.handle:#x} ({h.detail}) is never freed: call {call}"
    if h.kind == "executor":
        return (f"aclOpExecutor {h.handle:#x} of {h.detail}GetWorkspaceSize is never launched nor destroyed: "
                f"pass it to {h.detail}, or call aclDestroyAclOpExecutor")
    what, call = _RELEASE[h.kind]
    detail = f" ({h.detail})" if h.detail else ""
    return f"{what} {h.handle:#x}{detail} is never destroyed: call {call}"


def leaks(backend: Any, since: Snapshot | None = None) -> list[Finding]:
    """Every handle alive now that was not in ``since`` and that pyaclnn does not keep for
    itself (module docstring), sorted by the line that made it."""
    gc.collect()  # objects dropped without close() are released now, as they would be anyway
    found: list[Finding] = []
    internal = _internal(backend)
    claimed: set[tuple[str, int]] = set()
    device_sets: list[tuple[int, _sites.Site | None]] = []  # (device, site) held by open Devices
    objects = []
    for ref, entry in _resource.live(backend):
        obj = ref()
        if obj is None:
            continue
        kind = entry[2]
        held = _holds(obj, kind)
        claimed |= held
        if kind == "device":
            device_sets += [(obj.id, obj.site)] * obj.state.sets
        objects.append((ref, obj, kind, held))
    uploads = {id(t) for _, obj, kind, _ in objects if kind == "executor" for t in obj.uploads}
    # pyaclnn.acl's phase 1 on pyaclnn Tensors gives CANN descriptors of its own, destroyed with
    # the executor: they go with the raw executor, reported alone if it is never launched
    from .._objects import handles as _handles
    claimed |= {("h", h) for plan in list(_handles.plans.values()) for _, h in plan.owned}
    for ref, obj, kind, held in objects:
        if since is not None and ref in since.objects:
            continue
        if kind == "storage" or id(obj) in internal or id(obj) in uploads:
            continue  # memory is reported with its tensors; uploads with their executor
        if kind != "device" and not held:
            continue  # e.g. an executor phase 2 consumed: nothing native is left in it
        found.append(Finding(obj.site, f"{_describe(obj, kind)} is never closed: call close(), or use `with`"))
    handles = _live_handles(backend)
    sets = [h for h in handles if h.kind == "device_set"]
    for device, site in device_sets:  # a Device holds its references: the one made on its line first
        mine = [h for h in sets if h.handle == device]
        match = next((h for h in mine if h.site == site), mine[-1] if mine else None)
        if match is not None:
            sets.remove(match)
    for h in handles:
        if since is not None and h.key in since.handles:
            continue
        if h.kind == "device_set":
            if h not in sets:
                continue
        elif (("mem" if h.kind.endswith("_alloc") else "h"), h.handle) in claimed:
            continue
        found.append(Finding(h.site, _runtime_text(h)))
    return sorted(found, key=lambda f: (f.site is None, f.site or ("", 0)))


@contextlib.contextmanager
def hazard_warnings() -> Iterator[list[str]]:
    """Collect the text of every pyaclnn.HazardWarning raised inside (each one, not once per
    line, unless a filter of the user's says otherwise: ``-W error::pyaclnn.HazardWarning``
    still raises); other warnings are shown as usual."""
    caught: list[str] = []
    with warnings.catch_warnings():
        warnings.filterwarnings("always", category=HazardWarning, append=True)
        show = warnings.showwarning

        def record(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
                   line: str | None = None) -> None:
            if issubclass(category, HazardWarning):
                caught.append(str(message))
            else:
                show(message, category, filename, lineno, file, line)
        warnings.showwarning = record
        yield caught


@contextlib.contextmanager
def thread_hazards() -> Iterator[list[tuple[str, BaseException]]]:
    """Collect the HazardErrors that end threads started inside ((thread name, error)): Python
    only prints them (threading.excepthook) and the script goes on to exit 0; and those raised
    where no caller gets them ((what pyaclnn was doing, error): pyaclnn._objects.unreported)."""
    found: list[tuple[str, BaseException]] = []
    previous = threading.excepthook

    def hook(args: Any) -> None:
        if isinstance(args.exc_value, HazardError):
            found.append((args.thread.name if args.thread is not None else "?", args.exc_value))
        previous(args)
    def unreported(where: str, exc: BaseException) -> None:  # e.g. a dead thread's default stream
        if isinstance(exc, HazardError):
            found.append((where, exc))
    threading.excepthook = hook
    _unreported.watchers.append(unreported)
    try:
        yield found
    finally:
        threading.excepthook = previous
        _unreported.watchers.remove(unreported)


def _runner_frame(filename: str) -> bool:
    return filename.startswith("<frozen ") or os.path.abspath(filename) in (os.path.abspath(runpy.__file__),
                                                                            os.path.abspath(__file__))


def user_frames(tb: Any) -> list[traceback.FrameSummary]:
    """The frames of a traceback that are the user's: neither pyaclnn's nor the runner's."""
    return [f for f in traceback.extract_tb(tb)
            if not _runner_frame(f.filename) and not os.path.abspath(f.filename).startswith(_sites.PACKAGE)]


def _frames_text(frames: Sequence[traceback.FrameSummary]) -> list[str]:
    out = []
    for f in frames:
        code = f"  {f.line.strip()}" if f.line else ""
        out.append(f"    {os.path.basename(f.filename)}:{f.lineno} in {f.name}:{code}")
    return out


def _failure_text(exc: BaseException) -> list[str]:
    """How the script failed. An error raised inside pyaclnn (a HazardError, an AclError...) is
    shown with its message and the user's frames only; anything else as Python prints it,
    without the runner's frames."""
    tb = traceback.extract_tb(exc.__traceback__)
    mine = user_frames(exc.__traceback__)
    raised_inside = bool(tb) and os.path.abspath(tb[-1].filename).startswith(_sites.PACKAGE)
    if mine and (raised_inside or isinstance(exc, HazardError)):
        if isinstance(exc, HazardError):
            head = "hazard"
        else:
            name = type(exc).__name__
            head = f"the script failed with {'pyaclnn.' if isinstance(exc, PyaclnnError) else ''}{name}"
        lines = [f"{head}: " + str(exc).strip().replace("\n", "\n    ")]
        return lines + ["  where (most recent call last):"] + _frames_text(mine)
    frames = [f for f in tb if not _runner_frame(f.filename)]
    text = "".join(traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc))
    return [f"the script failed with {type(exc).__name__}:", "  Traceback (most recent call last):"] + \
        ["  " + line for line in text.rstrip().splitlines()]


def _say(line: str) -> None:
    """A report line on stderr: a headline carries the command's name, details (indented) not."""
    print(line if line.startswith(" ") else f"{PROG}: {line}", file=sys.stderr, flush=True)


def run(script: str, args: Sequence[str]) -> int:
    """The command: run ``script`` with ``args``, report, return the exit status."""
    path = Path(script)
    if not path.is_file():
        _say(f"error: no script {script!r}")
        return USAGE
    try:
        os.environ["PYACLNN_HAZARDS"] = _env.hazards()  # default raise; warn and off are kept
        os.environ["PYACLNN_BACKEND"] = "numpy"
        _env.soc()
    except ValueError as exc:
        _say(f"error: {exc}")
        return USAGE
    from .._objects import backend as _backend
    if _backend.active is not None and _backend.active.name != "numpy":
        _say(f"error: the {_backend.active.name} backend is already in use in this process: run "
             "`python -m pyaclnn check` in a process of its own")
        return USAGE
    backend = _backend.current()
    enable_tracking(backend)
    before = snapshot(backend)

    sys.argv = [script, *args]
    sys.path[0] = str(path.resolve().parent)  # as `python SCRIPT` does
    failure: BaseException | None = None
    code: Any = 0
    kept: Any = None  # the script's globals (or its traceback): alive until the report, as at exit
    with hazard_warnings() as warned, thread_hazards() as in_threads:
        try:
            kept = runpy.run_path(str(path), run_name="__main__")
        except SystemExit as exc:
            code, kept = exc.code, exc
        except KeyboardInterrupt:
            raise  # the command line exits 130, as Python would
        except BaseException as exc:  # noqa: BLE001 - the script's failure is a finding
            failure, kept = exc, exc
    sys.stdout.flush()

    lines: list[str] = []
    counts: list[str] = []
    for message in warned:
        lines.append("hazard: " + message.strip().replace("\n", "\n    "))
    if warned:
        counts.append(f"{len(warned)} hazard warning(s)")
    for name, error in in_threads:
        lines.append(f"in thread {name!r}:")
        lines += _failure_text(error)
    if in_threads:
        counts.append(f"{len(in_threads)} hazard(s) in threads")
    if failure is not None:
        lines += _failure_text(failure)
        counts.append("a hazard" if isinstance(failure, HazardError) else "the script failed")
    elif code not in (0, None):
        if isinstance(code, str):  # sys.exit("message"): Python prints it and exits 1
            print(code, file=sys.stderr)
        lines.append(f"the script exited with status {code if isinstance(code, int) else 1}")
        counts.append("the script failed")
    if failure is None and code in (0, None):
        found = leaks(backend, before)
        if found:
            lines.append(f"{len(found)} handle(s) left alive when the script ended, each after the line "
                         "that made it:")
            lines += [f"  {f}" for f in found]
            counts.append(f"{len(found)} handle(s) left alive")
    elif lines:
        lines.append("(handles left alive are not listed: the script did not finish)")
    del kept
    for line in lines:
        _say(line)
    if counts:
        _say(f"FAILED: {', '.join(counts)} ({script})")
        return FOUND
    mode = os.environ["PYACLNN_HAZARDS"]
    _say(f"clean: {script} ran on the NumPy reference backend ({backend.soc}, hazards: {mode}): "
         "no hazard, no handle left alive")
    return CLEAN
