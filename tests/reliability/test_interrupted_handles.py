"""A KeyboardInterrupt landing between the C call that makes a handle and its registration with
its owner frees the handle (issue 25, point 4): it was leaked for good (nothing held its
address). Python runs a signal handler after a C call returns, so the interrupt can come right
after aclrtMalloc / aclrtCreateStream / aclrtCreateEvent returned, or in ``Resource._own``.

The interrupt is injected by fakes raising KeyboardInterrupt once the handle was made: the C
function itself (acl: it returns, then the interrupt lands), or the owner's registration (both
backends). The oracle is
the runtime's own count of live handles (the emulator's counters on acl).
"""
from __future__ import annotations

import gc
from typing import Any, Callable

import numpy as np
import pytest

import pyaclnn
from conftest import live_handles
from pyaclnn._objects import backend as _backend
from pyaclnn._objects import resource
from pyaclnn._objects.device import default_device
from pyaclnn._objects.event import Event
from pyaclnn._objects.storage import Storage
from pyaclnn._objects.stream import Stream

OWNERS = {"storage": Storage, "stream": Stream, "event": Event}
KINDS = sorted(OWNERS)


def make(kind: str) -> Any:
    device = default_device()
    if kind == "storage":
        return pyaclnn.Tensor.empty((4,), np.float32, device)
    return device.create_stream() if kind == "stream" else device.create_event()


def interrupted(kind: str) -> dict[str, int]:
    """Live handles after ``make(kind)`` was interrupted, minus those before."""
    default_device()
    before = live_handles()
    with pytest.raises(KeyboardInterrupt):
        make(kind)
    gc.collect()
    after = live_handles()
    return {k: after[k] - before[k] for k in before if after[k] != before[k]}


def raise_after(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        fn(*args, **kwargs)
        raise KeyboardInterrupt
    return call


@pytest.mark.parametrize("kind", KINDS)
def test_an_interrupt_before_registration_frees_the_handle(backend, kind, monkeypatch) -> None:
    def own(self: Any, *args: Any) -> None:
        raise KeyboardInterrupt
    default_device()
    monkeypatch.setattr(OWNERS[kind], "_own", own)
    assert interrupted(kind) == {}


@pytest.mark.parametrize("kind", KINDS)
def test_an_interrupt_right_after_the_c_call_frees_the_handle(emulator, kind, monkeypatch) -> None:
    runtime = _backend.current().runtime
    real = runtime.rt
    c_name = {"storage": "aclrtMalloc", "stream": "aclrtCreateStream", "event": "aclrtCreateEvent"}[kind]

    class Lib:  # the C library, whose c_name returns and then the interrupt lands
        def __getattr__(self, name: str) -> Any:
            fn = getattr(real, name)
            return raise_after(fn) if name == c_name else fn
    default_device()
    monkeypatch.setattr(runtime, "rt", Lib())
    assert interrupted(kind) == {}


def test_an_interrupt_after_registration_leaves_the_free_to_the_owner(backend, monkeypatch) -> None:
    """Interrupted once registered: the handle is freed once, by the owner's collection."""
    def site() -> Any:
        raise KeyboardInterrupt
    default_device()
    monkeypatch.setattr(resource, "track_sites", True)
    monkeypatch.setattr(resource._sites, "user_site", site)
    assert interrupted("storage") == {}
