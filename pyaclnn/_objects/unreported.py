"""Errors no caller can receive: closing what a thread left when it ended (its default streams,
pyaclnn._objects.stream) and what the exit hook closes (pyaclnn._objects.backend).

Python would drop them (an atexit hook's error is only printed as "ignored"; a weak reference
callback's too), and a hazard of queued work found there is as real as one found at a
synchronize. So each is printed on stderr at once, and passed to the watchers: ``pyaclnn
check`` and the pytest plugin fail on a HazardError among them (pyaclnn._cli.check.thread_hazards).
"""
from __future__ import annotations

import sys
from typing import Callable

# called with (where, error) for every error reported; pyaclnn._cli.check adds and removes its own
watchers: list[Callable[[str, BaseException], None]] = []


def report(where: str, exc: BaseException) -> None:
    """``exc`` was raised by ``where`` (what pyaclnn was doing) with no caller to raise it to."""
    for watch in list(watchers):
        watch(where, exc)
    text = str(exc).strip().replace("\n", "\n    ")
    try:
        print(f"pyaclnn: {where}: {type(exc).__name__}: {text}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed (at exit): nothing left to print to
        pass
