"""The ownership pattern every native handle in pyaclnn follows.

One owner per handle; ``close()`` is explicit and idempotent; ``with obj:`` closes on exit.
Every live handle has one entry in a single registry, keyed by a weak reference to its owner:
``(backend, device, kind, release, args)``. The entry holds the parents (never the owner), so
children keep parents alive; "closed" simply means "no longer in the registry".

- ``close()`` takes the entry out and calls ``release(*args)``: exactly once, even when two
  threads race (``dict.pop`` is atomic).
- Garbage collection is only a safety net: the weak reference's callback releases the
  handle of an owner dropped without ``close()``.
- Closing a device, and the backend's exit hook, close what is left of theirs in dependency
  order (executors, tensors, storage, events, streams, devices); after the backend is
  finalized, or in a forked child, a release does nothing.
- While ``track_sites`` is on (``pyaclnn check``, the pytest plugin), each object remembers
  the user's line that made it (``_site``), for the leak report.

``obj.is_open`` says the same as ``not obj.closed`` as a plain attribute, for the hot paths
(a launch checks every tensor it uses: a property call there cost ~0.1 us each); this module
keeps it in step with the registry (which only pyaclnn._cli.check's leak snapshots read besides).
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Callable, Protocol

from . import current as _current
from .._core import sites as _sites
from ..errors import ClosedError

if TYPE_CHECKING:
    from .._runtime import Runtime


class BackendLike(Protocol):
    """What this module uses of ``pyaclnn._objects.backend.Backend`` (which imports this module)."""
    releases: bool  # False once finalized, and in a forked child: a release does nothing
    runtime: Runtime
    lost: str | None  # the user's call that took pyaclnn's session (Backend.recover repairs it)

    def recover(self) -> None: ...

# Dependency order for closing many handles at once: users before what they use.
KIND_ORDER = {"graph": 0, "executor": 0, "tensor": 1, "storage": 2, "event": 3, "stream": 4, "device": 5}

Entry = tuple  # (backend, device or None, kind, release, args)
_live: dict[weakref.ref, Entry] = {}
_weak = weakref.ref  # (one global read per _own)
track_sites = False  # pyaclnn._cli.check turns it on


class Resource:
    """Base of objects owning a native handle."""

    _ref: weakref.ref | None = None
    is_open = False  # registered and not closed (module docstring)
    _what = "object"
    # pyaclnn.acl (pyaclnn._objects.handles): the C type whose parameters take this object ("" for none),
    # its native handle there, and what the TypeError adds where it is refused
    ctype = ""
    raw: Any = None
    acl_hint = ""
    site: _sites.Site | None = None  # the user's line that made it (only while track_sites is on)

    def _own(self, backend: BackendLike, device: Any, kind: str, release: Callable[..., None], *args: Any) -> None:
        """Register ``release(*args)`` as the one way this handle is freed. ``device`` is the
        Device it belongs to (None for a device itself)."""
        ref = _weak(self, _collected)
        self._ref = ref  # before the entry: ``_registered`` must never miss a registered handle
        _live[ref] = (backend, device, kind, release, args)
        self.is_open = True
        if track_sites:
            self.site = _sites.user_site()

    def _registered(self) -> bool:
        """Whether ``_own`` registered the handle (then close() or GC frees it). An owner whose
        making was interrupted (a KeyboardInterrupt between the C call that made the handle and
        ``_own``) frees the handle itself when this is False."""
        ref = self._ref
        return ref is not None and ref in _live

    @property
    def closed(self) -> bool:
        """True once ``close()`` released the handle (or its device, or exit, did)."""
        return not self.is_open

    def close(self) -> None:
        """Release the native handle now. Calling it again does nothing.

        ``with obj:`` calls it at the end of the block. Objects dropped without it are released
        by garbage collection, and what is left at interpreter exit, in dependency order.
        """
        ref = self._ref
        if ref is not None:
            entry = _live.pop(ref, None)
            if entry is not None:
                self._ref = None  # drop the weak reference: no callback when the owner dies
                self.is_open = False
                backend, device, _kind, release, args = entry
                if backend.lost is None and backend.releases and (device is None or not device.state.closed):
                    release(*args)  # (_release's usual case, inline: every close of an executor or tensor)
                else:
                    _release(entry)

    def check_open(self) -> None:
        if self.closed:
            raise ClosedError(f"{self._what} is closed")

    def __enter__(self) -> Any:
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:  # (named: no tuple made per exit)
        self.close()


def _release(entry: Entry) -> None:
    backend, device, _kind, release, args = entry
    if backend.lost is not None:
        # the user's aclFinalize or extra aclrtResetDevice took pyaclnn's session: repair it
        # first; a device that reset released took its handles and memory with it (the driver
        # freed them), so what was made on it is gone, not released twice (Backend._recover_device)
        backend.recover()
    if getattr(getattr(device, "state", None), "closed", False):
        return
    # After the exit hook finalized the runtime there is nothing left to free; in a forked
    # child the handles are the parent's, and the child must not release them.
    if backend.releases:
        release(*args)


def _collected(ref: weakref.ref) -> None:
    """The safety net: an owner was garbage-collected without close(). GC runs it in whatever
    thread it happens in: the device current there before is made current again after."""
    entry = _live.pop(ref, None)
    if entry is not None:
        previous = _current.state()
        runtime = entry[0].runtime
        # a thread where pyaclnn made no device current (a host framework's, or the raw layer's):
        # its context, given back after the release
        outer = _current.outer_context(runtime) if previous is None and entry[0].releases else None
        try:
            _release(entry)
        finally:
            _current.restore(previous, runtime, outer)


def live(backend: BackendLike) -> list[tuple[weakref.ref, Entry]]:
    """The registry's (weak reference, entry) pairs of ``backend``'s live handles, now (for
    pyaclnn._cli.check's leak snapshots)."""
    return [(ref, entry) for ref, entry in list(_live.items()) if entry[0] is backend]


def forget_all(belongs: Callable[[Entry], bool]) -> int:
    """Mark every live handle for which ``belongs(entry)`` closed WITHOUT releasing it: its
    native object is gone already (a device released behind pyaclnn's back: CANN tore its
    streams down and its memory went with the device). Returns how many were forgotten."""
    count = 0
    for ref, entry in list(_live.items()):
        if belongs(entry) and _live.pop(ref, None) is not None:
            owner = ref()
            if owner is not None:
                owner.is_open = False  # its close() then finds no entry: releases nothing
            count += 1
    return count


def close_all(belongs: Callable[[Entry], bool],
              failed: Callable[[Exception], None] | None = None) -> BaseException | None:
    """Close every live handle for which ``belongs(entry)``, in dependency order.

    One failure does not stop the others; the first error is returned for the caller to raise,
    and every one is passed to ``failed`` if given (the exit hook reports them all).
    """
    chosen = sorted(((ref, e) for ref, e in list(_live.items()) if belongs(e)),
                    key=lambda item: KIND_ORDER[item[1][2]])
    error: BaseException | None = None
    for ref, _ in chosen:
        entry = _live.pop(ref, None)  # gone already if closing a tensor freed its storage
        if entry is None:
            continue
        owner = ref()
        if owner is not None:
            owner.is_open = False
        try:
            _release(entry)
        except Exception as exc:  # noqa: BLE001 - the first one is returned
            error = error or exc
            if failed is not None:
                failed(exc)
    return error

