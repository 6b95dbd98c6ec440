"""pytest plugin: fail a test that trips a device hazard or leaves handles alive (``pyaclnn check`` for tests).

Enable it
---------
The plugin is loaded by pytest through pyaclnn's ``pytest11`` entry point once pyaclnn is
installed (``pip install pyaclnn``); from a source tree that is not installed, load it with
``pytest -p pyaclnn.testing`` or ``pytest_plugins = ["pyaclnn.testing"]`` in the top
``conftest.py``. Loaded, it checks nothing until asked:

- one test: take the fixture, ``def test_port(pyaclnn_check): ...``, or mark it
  ``@pytest.mark.pyaclnn_check`` (a module: ``pytestmark = pytest.mark.pyaclnn_check``);
- every test of a run: ``pytest --pyaclnn-check`` (or ``addopts = "--pyaclnn-check"`` in the
  pytest configuration).

Run the tests on the reference backend, ``PYACLNN_BACKEND=numpy``: hazards are found there, and
there only are raw ``pyaclnn.acl`` handles listed (on a device, pyaclnn objects left open are).

What fails a checked test
-------------------------
- a ``pyaclnn.HazardError`` (``PYACLNN_HAZARDS=raise``, the default) fails it where it is
  raised, like any exception;
- with ``PYACLNN_HAZARDS=warn``: each ``pyaclnn.HazardWarning`` the test emitted;
- every handle the test body made and left alive when it returned, with the line that made
  it: pyaclnn objects never closed (Tensor, Stream, Event, executors, Device) and, on the
  NumPy backend, raw handles a C program must release (aclCreateTensor without
  aclDestroyTensor, aclrtMalloc without aclrtFree, aclrtCreateStream without
  aclrtDestroyStream, ...). What existed before the body ran (made by fixtures, or by earlier
  tests) is not counted, nor what pyaclnn keeps for itself (the default device and streams of
  the high-level API): ``pyaclnn._cli.check`` says exactly what is.

pyaclnn's own frames are left out of the traceback of a test that fails with a pyaclnn error
(a ``pyaclnn.PyaclnnError``: a HazardError, an AclError...), checked or not: the traceback ends
at the test's call into pyaclnn. Any other exception raised inside pyaclnn (a bug) keeps them,
and ``pytest --fulltrace`` shows every frame.

Once a checked test has run, pyaclnn records the user's line of every handle made for the rest
of the session (about a microsecond per handle; ``benchmarks/check_overhead.py``). The hook is
a new-style pytest wrapper: pytest 8 (pluggy 1.2) or later.
"""
from __future__ import annotations

import sys
from typing import Any, Iterator

import pytest

FIXTURE = "pyaclnn_check"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("pyaclnn").addoption(
        "--pyaclnn-check", action="store_true", default=False,
        help="fail every test that trips a pyaclnn hazard or leaves pyaclnn/acl handles alive")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{FIXTURE}: fail the test if it trips a pyaclnn hazard or leaves "
                                       "pyaclnn/acl handles alive (pyaclnn.testing)")


@pytest.fixture
def pyaclnn_check() -> Iterator[None]:
    """Fail this test if it trips a pyaclnn hazard or leaves handles alive (see pyaclnn.testing);
    the check runs around the test body."""
    yield


def _enabled(item: pytest.Item) -> bool:
    return bool(item.config.getoption("pyaclnn_check", False) or item.get_closest_marker(FIXTURE)
                or FIXTURE in getattr(item, "fixturenames", ()))


def _hide_own_frames(excinfo: Any) -> bool:
    """pytest's ``__tracebackhide__`` of pyaclnn's modules: hide their frames from the traceback of
    an error pyaclnn raised on purpose (it names the user's call), keep them for anything else."""
    from .errors import PyaclnnError
    return excinfo is not None and isinstance(excinfo.value, PyaclnnError)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    # The report's traceback is made inside this hook: mark every pyaclnn module loaded by now
    # (pytest reads ``__tracebackhide__`` from each frame's globals).
    if call.excinfo is not None:
        for name, module in list(sys.modules.items()):
            if (name == "pyaclnn" or name.startswith("pyaclnn.")) and module is not None:
                vars(module).setdefault("__tracebackhide__", _hide_own_frames)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if not _enabled(item):
        return (yield)
    from ._objects import backend as _backend
    from ._cli import check as _check
    backend = _backend.current()
    _check.enable_tracking(backend)
    before = _check.snapshot(backend)
    with _check.hazard_warnings() as warned:
        result: Any = yield  # the test body; an exception (a HazardError too) fails it as usual
    problems = [f"hazard: {message}" for message in warned]
    found = _check.leaks(backend, before)
    if found:
        problems.append(f"{len(found)} handle(s) left alive when the test returned, each after the line that "
                        "made it:")
        problems += [f"  {f}" for f in found]
    if problems:
        pytest.fail("pyaclnn check: " + "\n".join(problems), pytrace=False)
    return result
