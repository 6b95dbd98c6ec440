"""Where in the user's code a call came from: the first stack frame outside pyaclnn, and the
user's frames that called it.

Hazard messages and the leak report name the user's line ("port.py:44"), never pyaclnn's own.
When that line is in the user's own helper, the helper's callers are named too, up to CALLERS
of them ("helpers.py:12 (called from port.py:44, port.py:90)"): the stack stops at the first
frame of the standard library, of an installed package (pytest, runpy, threading...) or of
pyaclnn. A site is captured on every tracked call, so it costs one frame walk (half a
microsecond) and decodes its lines and formats only when a message is written.
"""
from __future__ import annotations

import functools
import os
import sys
import sysconfig
from types import CodeType, FrameType

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # pyaclnn/
CALLERS = 3  # the user's frames named after the user's line: enough to get out of a helper
# Frames that end the user's stack: the standard library and installed packages (a test
# framework, the interpreter's runners), and pyaclnn itself.
_FOREIGN = tuple(sorted({os.path.abspath(p) + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")
                         if (p := sysconfig.get_paths().get(k))}))
_inside: dict[str, bool] = {}  # co_filename -> whether it is pyaclnn's own (memo: a few dozen files)
_foreign: dict[str, bool] = {}  # co_filename -> whether it ends the user's stack (memo)


@functools.total_ordering
class Site:
    """A source line and the user's lines that called it (innermost first): ``str(site)`` is
    ``file.py:44``, or ``file.py:44 (called from main.py:9)`` (the files' base names).

    ``user_site`` keeps each frame as its (code object, instruction offset), which is all its
    line depends on (PyCode_Addr2Line(code, f_lasti): what ``frame.f_lineno`` answers), and
    decodes the lines when first asked (``filename``, ``line``, ``callers``, ``str``): a site is
    captured on every tracked call and read only when a message names it."""
    __slots__ = ("_frames", "_known")

    _frames: list  # code object, instruction offset of the user's frame, then of each caller (user_site)
    _known: tuple[str, int, tuple[tuple[str, int], ...]]  # (filename, line, callers), once decoded

    def __init__(self, filename: str, line: int, callers: tuple[tuple[str, int], ...] = ()) -> None:
        self._frames = []
        self._known = (filename, line, tuple(callers))

    def _resolve(self) -> tuple[str, int, tuple[tuple[str, int], ...]]:
        try:
            return self._known
        except AttributeError:  # made by user_site: decoded on the first read
            frames = self._frames
            lines = [(frames[k].co_filename, _line_at(frames[k], frames[k + 1])) for k in range(0, len(frames), 2)]
            known = self._known = (lines[0][0], lines[0][1], tuple(lines[1:]))
            return known

    @property
    def filename(self) -> str:
        return self._resolve()[0]

    @property
    def line(self) -> int:
        return self._resolve()[1]

    @property
    def callers(self) -> tuple[tuple[str, int], ...]:
        return self._resolve()[2]

    # compared and ordered as its (filename, line, callers), as the named tuple it was (the
    # leak report sorts its findings by site)
    def __eq__(self, other: object) -> bool:
        return self._resolve() == (other._resolve() if isinstance(other, Site) else other)

    def __lt__(self, other: object) -> bool:
        return self._resolve() < (other._resolve() if isinstance(other, Site) else other)  # type: ignore[operator]

    def __hash__(self) -> int:
        return hash(self._resolve())

    def __repr__(self) -> str:
        filename, line, callers = self._resolve()
        return f"Site(filename={filename!r}, line={line!r}, callers={callers!r})"

    def __str__(self) -> str:
        filename, line, callers = self._resolve()
        here = f"{os.path.basename(filename)}:{line}"
        if not callers:
            return here
        return f"{here} (called from {', '.join(f'{os.path.basename(f)}:{n}' for f, n in callers)})"


def _ends_stack(name: str) -> bool:
    end = _foreign.get(name)
    if end is None:
        path = os.path.abspath(name)
        end = _foreign[name] = (name.startswith("<frozen") or path.startswith(PACKAGE)
                                or path.startswith(_FOREIGN))
    return end


UNKNOWN = Site("<unknown>", 0)
_new = object.__new__


def user_site(depth: int = 1) -> Site:
    """The (file, line) of the innermost frame that is not pyaclnn's own code, and of up to
    CALLERS of the user's frames that called it, from the caller's caller's frame up (``depth``
    2: a caller that is pyaclnn's own skips its own frame, so that frame is not made into a
    Python object: CPython makes one per frame looked at). Each frame is kept as its (code,
    offset); the lines are decoded when the Site is read (Site)."""
    frame: FrameType | None = sys._getframe(depth)  # private: CPython's frame access, one C call (inspect.stack builds every frame)
    inside = _inside
    while frame is not None:
        code = frame.f_code
        own = inside.get(code.co_filename)
        if own is None:
            own = inside[code.co_filename] = os.path.abspath(code.co_filename).startswith(PACKAGE)
        if not own:
            site = _new(Site)  # (no __init__ frame, its lines not decoded yet: Site._resolve)
            site._frames = frames = [code, frame.f_lasti]
            frame = frame.f_back
            n = CALLERS
            while frame is not None and n:
                code = frame.f_code
                end = _foreign.get(code.co_filename)  # (_ends_stack's memo, read inline: this runs for every task queued)
                if end is None:
                    end = _ends_stack(code.co_filename)
                if end:
                    break
                frames += (code, frame.f_lasti)
                frame = frame.f_back
                n -= 1
            return site
        frame = frame.f_back
    return UNKNOWN


# id(code object) -> (it, {instruction offset: line}): a line is decoded from its code's line
# table, scanned from the start (microseconds deep in a long function or module), so each (code,
# offset) is decoded once. The entry holds its code object, so no other code object gets that id
# while it is here.
_lines: dict[int, tuple[CodeType, dict[int, int]]] = {}
MAX_CODES = 4096


def _line_at(code: CodeType, at: int) -> int:
    """The line of instruction offset ``at`` (a frame's ``f_lasti``) in ``code``: what the
    frame's ``f_lineno`` says there (PyCode_Addr2Line, from the table ``co_lines`` yields),
    decoded once per (code, offset) (``_lines``)."""
    known = _lines.get(id(code))
    if known is None:
        if len(_lines) >= MAX_CODES:
            _lines.clear()
        known = _lines[id(code)] = (code, {})
    line = known[1].get(at)
    if line is None:
        line = -1  # (no line: what PyCode_Addr2Line answers)
        for start, stop, number in code.co_lines():
            if start <= at < stop:
                line = -1 if number is None else number
                break
        known[1][at] = line
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
