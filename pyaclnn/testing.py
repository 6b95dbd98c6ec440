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

Operators without a reference, and CANN's precision standard
--------------------------------------------------------------
- ``@pytest.mark.aclnn_reference("Softmax", ...)`` (or ``require_reference("Softmax")`` in the
  body) skips the test, naming the operator, when the backend in use cannot run it: on the
  NumPy backend an operator without a reference, on the acl backend one no header declares.
- ``assert_close(actual, golden, dtype=None)`` compares an output with a golden by CANN's own
  per-dtype precision standard (``pyaclnn._precision`` says which document and what it says).

Once a checked test has run, pyaclnn records the user's line of every handle made for the rest
of the session (about a microsecond per handle; ``benchmarks/check_overhead.py``). The hook is
a new-style pytest wrapper: pytest 8 (pluggy 1.2) or later.
"""
from __future__ import annotations

import sys
from typing import Any, Iterator

import pytest

from ._precision import assert_close

__all__ = ["assert_close", "require_reference", "reference_missing"]

FIXTURE = "pyaclnn_check"
MARKER = "aclnn_reference"


def reference_missing(op: str) -> str | None:
    """Why the backend in use cannot run ``op`` ("Softmax" or "aclnnSoftmax"), or None if it can.

    It asks the backend's runtime for the operator (``op_info``): the acl backend runs every
    operator a header declares; the NumPy backend only those with a reference (NotSupportedError
    otherwise, UnknownOperatorError when no header declares it).
    """
    from . import errors
    from ._objects import backend as _backend
    name = op[5:] if op.startswith("aclnn") else op
    runtime = _backend.current().runtime
    try:
        info = runtime.op_info(name)
    except errors.NotSupportedError as exc:
        return str(exc)
    problem = getattr(info.signature, "problem", None)  # a declared signature pyaclnn cannot call
    return f"aclnn{name} cannot be called from pyaclnn: {problem}" if problem else None


def require_reference(*ops: str) -> None:
    """Skip the calling test (pytest.skip) unless the backend in use can run every one of ``ops``;
    the reason names the operator and the backend."""
    reason = _skip_reason(ops, "require_reference")
    if reason is not None:
        pytest.skip(reason)


def _skip_reason(ops: tuple[Any, ...], caller: str) -> str | None:
    for op in ops:
        if not isinstance(op, str) or not op:
            raise TypeError(f"{caller}: operator names are strings such as 'Softmax', not {op!r}")
        why = reference_missing(op)
        if why is not None:
            from ._objects import backend as _backend
            name = op if op.startswith("aclnn") else f"aclnn{op}"
            return f"{name} has no reference on the {_backend.current().name} backend: {why}"
    return None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("pyaclnn").addoption(
        "--pyaclnn-check", action="store_true", default=False,
        help="fail every test that trips a pyaclnn hazard or leaves pyaclnn/acl handles alive")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{FIXTURE}: fail the test if it trips a pyaclnn hazard or leaves "
                                       "pyaclnn/acl handles alive (pyaclnn.testing)")
    config.addinivalue_line("markers", f"{MARKER}(*ops): skip the test unless the backend in use can run each "
                                       "of the aclnn operators ops, e.g. 'Softmax' (pyaclnn.testing)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers(MARKER):
        if not mark.args:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{MARKER} needs the operator names, "
                                    f"e.g. @pytest.mark.{MARKER}('Softmax')")
        reason = _skip_reason(mark.args, f"@pytest.mark.{MARKER}")
        if reason is not None:
            try:  # reported at the test, as pytest's own skip marks are (a keyword private to pytest >= 7)
                exc = pytest.skip.Exception(reason, _use_item_location=True)  # type: ignore[call-arg]
            except TypeError:
                exc = pytest.skip.Exception(reason)
            raise exc


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
    with _check.hazard_warnings() as warned, _check.thread_hazards() as in_threads:
        result: Any = yield  # the test body; an exception (a HazardError too) fails it as usual
    problems = [f"hazard: {message}" for message in warned]
    problems += [f"hazard in thread {name!r}: {exc}" for name, exc in in_threads]  # (a thread's only printed)
    found = _check.leaks(backend, before)
    if found:
        problems.append(f"{len(found)} handle(s) left alive when the test returned, each after the line that "
                        "made it:")
        problems += [f"  {f}" for f in found]
    if problems:
        pytest.fail("pyaclnn check: " + "\n".join(problems), pytrace=False)
    return result
