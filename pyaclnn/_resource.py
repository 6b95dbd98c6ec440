"""The ownership pattern every native handle in pyaclnn follows.

One owner per handle; ``close()`` is explicit and idempotent; ``with obj:`` closes on exit.
The release function is a ``weakref.finalize`` holding the handle and the *parents* (never
``self``), so children keep parents alive and garbage collection is only a safety net. At
interpreter exit the backend closes live objects in dependency order before finalizing, and
a finalizer that would run after that does nothing.
"""
from __future__ import annotations

import os
import weakref
from typing import Any, Callable

from .errors import ClosedError


class Resource:
    """Base of objects owning a native handle."""

    _finalizer: weakref.finalize | None = None
    _what = "object"

    def _own(self, backend: Any, kind: str, release: Callable[..., None], *args: Any) -> None:
        """Register ``release(*args)`` as the one way this handle is freed."""
        self._finalizer = weakref.finalize(self, _release_unless_finalized, backend, release, *args)
        self._finalizer.atexit = False  # the backend's own exit hook closes in order
        backend.track(kind, self)

    @property
    def closed(self) -> bool:
        return self._finalizer is None or not self._finalizer.alive

    def close(self) -> None:
        """Release the native handle now. Calling it again does nothing."""
        if self._finalizer is not None:
            # detach() + call, not finalizer(): once weakref.finalize's own atexit hook has run
            # (it may be registered after the backend's), __call__ silently does nothing, and
            # the backend's exit hook closes everything through here.
            info = self._finalizer.detach()
            if info is not None:
                _, release, args, _ = info
                release(*args)

    def _check_open(self) -> None:
        if self.closed:
            raise ClosedError(f"{self._what} is closed")

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _release_unless_finalized(backend: Any, release: Callable[..., None], *args: Any) -> None:
    # In a forked child the handles are the parent's: the child must not release them.
    if not backend.finalized and os.getpid() == backend.pid:
        release(*args)
