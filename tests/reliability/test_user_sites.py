"""pyaclnn._core.sites.user_site names the user's line and its callers exactly, with its memo of
line numbers per code object and instruction (``_lines``): each call site its own line, a code
object made again (same text, maybe the same id once the old one is gone) its own lines. Oracle:
the line numbers the test's own source has (inspect)."""
from __future__ import annotations

import gc
import inspect

import pytest

from pyaclnn._core import sites


def _here() -> sites.Site:
    return sites.user_site()  # (this module is not pyaclnn's: this line is the site, its caller's next)


def test_two_calls_in_one_function_are_two_lines() -> None:
    first = _here()
    second = _here()
    line = inspect.currentframe().f_lineno  # type: ignore[union-attr]
    assert [first.callers[0][1], second.callers[0][1]] == [line - 2, line - 1]
    assert first.line == second.line == inspect.getsourcelines(_here)[1] + 1


def test_a_code_object_made_again_has_its_own_lines() -> None:
    found = []
    for pad in (0, 3, 0, 5):  # the same function's text, made again, the call moved down by ``pad`` lines
        space: dict = {"sites": sites}
        exec(compile("\n" * pad + "def f():\n    return sites.user_site()\n", "<made>", "exec"), space)
        found.append(space["f"]().line)
        del space
        gc.collect()  # the old code object may go and its id be taken by the next one
    assert found == [2, 5, 2, 7]


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sites, "MAX_CODES", 1)
    a = _here()
    b = _here()
    assert a.callers[0][1] + 1 == b.callers[0][1] and len(sites._lines) <= 1


def test_a_line_reached_with_and_without_user_callers() -> None:
    """A line whose caller ends the user's stack (here a thread pool's worker: the standard
    library) names no caller; the same line reached from a user's frame still names that caller."""
    from concurrent.futures import ThreadPoolExecutor
    line = inspect.getsourcelines(_here)[1] + 1
    with ThreadPoolExecutor(1) as pool:
        alone = pool.submit(_here).result()
        called = _here()
        here = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
        again = pool.submit(_here).result()
    assert alone == again == sites.Site(__file__, line) and alone.callers == ()
    assert called.line == line and called.callers[0] == (__file__, here)


def test_a_site_read_later_names_the_lines_it_was_taken_at() -> None:
    """A Site keeps each frame's (code, instruction) and decodes its lines when read: read after
    its frames went on (and returned), it still names the lines they were at when it was taken."""
    def helper() -> sites.Site:
        site = sites.user_site()  # (this module is not pyaclnn's: this line is the site)
        [None for _ in range(3)]  # the frame moves on before the site is read
        return site
    site = helper()
    here = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
    for _ in range(2):  # the frame that took it is gone, this one went on
        pass
    assert (site.filename, site.line) == (__file__, inspect.getsourcelines(helper)[1] + 1)
    assert site.callers[0] == (__file__, here)
    assert str(site) == f"test_user_sites.py:{site.line} (called from test_user_sites.py:{here})"


def test_every_line_of_a_long_function_is_its_frames_f_lineno() -> None:
    """The line decoded from (code, offset) of a caller (probe is the site) is the frame's own f_lineno (oracle), deep in a long
    function too (offsets past 256 bytes: EXTENDED_ARG), for lines that span several instructions."""
    body = "".join(f"    x = probe(x + {k},\n              {k})\n" for k in range(300))
    space: dict = {}
    exec(compile(f"def f(probe):\n    x = 0\n{body}    return x\n", "<long>", "exec"), space)
    taken: list[tuple[sites.Site, int]] = []

    def probe(x: int, k: int) -> int:
        taken.append((sites.user_site(), inspect.currentframe().f_back.f_lineno))  # type: ignore[union-attr]
        return x
    space["f"](probe)
    assert len(taken) == 300
    assert [site.callers[0] for site, _ in taken] == [("<long>", line) for _, line in taken]
