"""Failing the process from an atexit hook (pyaclnn._objects.backend's, when closing what was left
open at exit raised a HazardError).

By the time atexit hooks run, Python has chosen the exit status, and an error raised by a hook
is only printed ("Exception ignored in atexit callback"): the one way left to fail is
``os._exit``. Before it, what Python would still do is done: the atexit hooks registered before
pyaclnn's run (atexit is last in, first out), buffered files are flushed.
"""
from __future__ import annotations

import atexit
import gc
import io
import os
import sys
from typing import Any, Callable


def exit_failed(hook: Callable[..., Any]) -> None:
    """Called by the atexit hook ``hook``: make the process exit 1 unless it exits nonzero
    already (an uncaught exception sets ``sys.last_value``; a ``sys.exit(n)`` cannot be seen
    from here: its status becomes 1)."""
    if getattr(sys, "last_value", None) is not None:
        return  # Python exits 1 for it already
    atexit.unregister(hook)
    atexit._run_exitfuncs()  # the hooks Python would run after this one
    for obj in gc.get_objects():  # what finalization would flush: files the program left open
        if isinstance(obj, io.IOBase):
            try:
                if not obj.closed:
                    obj.flush()
            except Exception:  # noqa: BLE001 - a file that cannot be flushed now would not be later either
                pass
    os._exit(1)
