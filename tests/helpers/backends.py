"""The two backends side by side in one process, for the tests that compare them: the acl backend
on the emulator (the current one, from the ``emulator`` fixture) and a reference backend of its
SoC (Ascend910B, whose tables the emulator implements)."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from pyaclnn._objects import backend as _backend


@dataclass
class Backends:
    numpy: Any
    acl: Any


@contextmanager
def active(backend: Any) -> Iterator[None]:
    """``backend`` is the one pyaclnn's calls go to, inside the block."""
    saved = _backend.active
    _backend.active = backend
    try:
        yield
    finally:
        _backend.active = saved


@contextmanager
def side_by_side(label: str) -> Iterator[Backends]:
    """The current (acl) backend and a new reference backend named ``label``, shut down after."""
    acl_backend = _backend.current()
    assert acl_backend.name == "acl" and acl_backend.soc == "Ascend910B"
    numpy_backend = _backend._numpy_backend(label)
    assert numpy_backend.soc == "Ascend910B"
    try:
        yield Backends(numpy_backend, acl_backend)
    finally:
        numpy_backend.shutdown()
