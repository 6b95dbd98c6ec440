"""Where in the user's code a call came from: the first stack frame outside pyaclnn, and the
user's frames that called it.

Hazard messages and the leak report name the user's line ("port.py:44"), never pyaclnn's own.
When that line is in the user's own helper, the helper's callers are named too, up to CALLERS
of them ("helpers.py:12 (called from port.py:44, port.py:90)"): the stack stops at the first
frame of the standard library, of an installed package (pytest, runpy, threading...) or of
pyaclnn. A site is captured on every tracked call, so it costs one frame walk (about a
microsecond) and formats only when a message is written.
"""
from __future__ import annotations

import os
import sys
import sysconfig
from types import CodeType, FrameType
from typing import NamedTuple

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # pyaclnn/
CALLERS = 3  # the user's frames named after the user's line: enough to get out of a helper
# Frames that end the user's stack: the standard library and installed packages (a test
# framework, the interpreter's runners), and pyaclnn itself.
_FOREIGN = tuple(sorted({os.path.abspath(p) + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")
                         if (p := sysconfig.get_paths().get(k))}))
_inside: dict[str, bool] = {}  # co_filename -> whether it is pyaclnn's own (memo: a few dozen files)
_foreign: dict[str, bool] = {}  # co_filename -> whether it ends the user's stack (memo)


class Site(NamedTuple):
    """A source line and the user's lines that called it (innermost first): ``str(site)`` is
    ``file.py:44``, or ``file.py:44 (called from main.py:9)`` (the files' base names)."""
    filename: str
    line: int
    callers: tuple[tuple[str, int], ...] = ()

    def __str__(self) -> str:
        here = f"{os.path.basename(self.filename)}:{self.line}"
        if not self.callers:
            return here
        return f"{here} (called from {', '.join(f'{os.path.basename(f)}:{n}' for f, n in self.callers)})"


def _ends_stack(name: str) -> bool:
    end = _foreign.get(name)
    if end is None:
        path = os.path.abspath(name)
        end = _foreign[name] = (name.startswith("<frozen") or path.startswith(PACKAGE)
                                or path.startswith(_FOREIGN))
    return end


UNKNOWN = Site("<unknown>", 0)


def user_site(depth: int = 1) -> Site:
    """The (file, line) of the innermost frame that is not pyaclnn's own code, from the caller's
    caller's frame up (``depth`` 2: a caller that is pyaclnn's own skips its own frame, so that
    frame is not made into a Python object: CPython makes one per frame looked at)."""
    frame = sys._getframe(depth)  # private: CPython's frame access, one C call (inspect.stack builds every frame)
    inside = _inside
    while frame is not None:
        code = frame.f_code
        name = code.co_filename
        own = inside.get(name)
        if own is None:
            own = inside[name] = os.path.abspath(name).startswith(PACKAGE)
        if not own:
            known = _lines.get(id(code))  # (_line's memo, read inline: this runs for every task queued)
            if known is None:
                _line(frame)
                known = _lines[id(code)]
            at = frame.f_lasti
            line = known[1].get(at)
            if line is None:
                line = _line(frame)
            callers: list[tuple[str, int]] = []
            caller = frame.f_back
            foreign = _foreign
            while caller is not None and len(callers) < CALLERS:
                other = caller.f_code.co_filename
                end = foreign.get(other)  # (_ends_stack's memo, read inline: this runs for every task queued)
                if end is None:
                    end = _ends_stack(other)
                if end:
                    break
                callers.append((other, _line(caller)))
                caller = caller.f_back
            if callers:
                return _site(Site, (name, line, tuple(callers)))  # (Site's own __new__ is a Python function)
            # a line no user's frame called: its Site, made once (a Site is immutable, and a
            # function of the code object and the offset, as the line is)
            site = known[2].get(at)
            if site is None:
                site = known[2][at] = _site(Site, (name, line, ()))
            return site
        frame = frame.f_back  # type: ignore[assignment]
    return UNKNOWN


_site = tuple.__new__

# id(code object) -> (it, {instruction offset: line}, {instruction offset: its Site without
# callers}): a frame's f_lineno decodes its code's line table from the start (microseconds deep in
# a long function or module), so each (code, offset) is decoded once. The entry holds its code
# object, so no other code object gets that id while it is here; a line is a function of the code
# and the offset (PyCode_Addr2Line(code, f_lasti)).
_lines: dict[int, tuple[CodeType, dict[int, int], dict[int, Site]]] = {}
MAX_CODES = 4096


def _line(frame: FrameType) -> int:
    """``frame.f_lineno``, decoded once per (code, instruction) (``_lines``)."""
    code = frame.f_code
    known = _lines.get(id(code))
    if known is None:
        if len(_lines) >= MAX_CODES:
            _lines.clear()
        known = _lines[id(code)] = (code, {}, {})
    at = frame.f_lasti
    line = known[1].get(at)
    if line is None:
        line = known[1][at] = frame.f_lineno
    return line


# The statuses only a graph-capture rule returns (hicann/runtime errcode_manage.cc; issue 26):
# 107024 dependency, 107025 unjoined, 107027 stream captured, 107028 event captured, 107030 mode,
# 107031 implicit (default stream), 107032 conflict, 107036 unmatched, 107038 wrong thread,
# 107041 block async, 507903 invalidated.
CAPTURE_RULE_STATUSES = frozenset((107024, 107025, 107027, 107028, 107030, 107031, 107032, 107036, 107038,
                                   107041, 507903))


def capture_rule(status: int, detail: str | None) -> str | None:
    """``detail`` of an exception for ``status``, saying that a graph-capture rule was broken and
    at which of the user's lines when the status is one only such a rule returns
    (``CAPTURE_RULE_STATUSES``); else ``detail`` as it is."""
    if status not in CAPTURE_RULE_STATUSES:
        return detail
    return f"{detail + '; ' if detail else ''}a graph-capture rule broken at {user_site()}"
