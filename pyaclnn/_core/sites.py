"""Where in the user's code a call came from: the first stack frame outside pyaclnn.

Hazard messages and the leak report name the user's line ("port.py:44"), never pyaclnn's own.
A site is captured as a (filename, line) pair on every tracked call, so it costs one frame walk
(about a microsecond) and formats only when a message is written.
"""
from __future__ import annotations

import os
import sys
from typing import NamedTuple

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # pyaclnn/
_inside: dict[str, bool] = {}  # co_filename -> whether it is pyaclnn's own (memo: a few dozen files)


class Site(NamedTuple):
    """A source line: ``str(site)`` is ``file.py:44`` (the file's base name)."""
    filename: str
    line: int

    def __str__(self) -> str:
        return f"{os.path.basename(self.filename)}:{self.line}"


UNKNOWN = Site("<unknown>", 0)


def user_site() -> Site:
    """The (file, line) of the innermost frame that is not pyaclnn's own code."""
    frame = sys._getframe(1)  # private: CPython's frame access, one C call (inspect.stack builds every frame)
    inside = _inside
    while frame is not None:
        name = frame.f_code.co_filename
        own = inside.get(name)
        if own is None:
            own = inside[name] = os.path.abspath(name).startswith(PACKAGE)
        if not own:
            return Site(name, frame.f_lineno)
        frame = frame.f_back  # type: ignore[assignment]
    return UNKNOWN


def capture_rule(status: int, detail: str | None) -> str | None:
    """``detail`` of an exception for ``status``, saying that a graph-capture rule was broken and
    at which of the user's lines when the status is one only such a rule returns
    (``pyaclnn.errors.CAPTURE_RULE_STATUSES``); else ``detail`` as it is."""
    from ..errors import CAPTURE_RULE_STATUSES
    if status not in CAPTURE_RULE_STATUSES:
        return detail
    return f"{detail + '; ' if detail else ''}a graph-capture rule broken at {user_site()}"
