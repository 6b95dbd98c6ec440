"""The acl backend: each method is one CANN call through cffi, its status through check().

Implements the contract of ``pyaclnn._runtime.Runtime``. Handles are cffi pointers; device
addresses are ints. These modules never interpret a status themselves.

One mixin per object family of the contract, one module each, stacked in the order they build
on each other: session <- streams <- memory <- descriptors <- executors <- capture; ``AclRuntime`` is the
last of them. pyaclnn/_numpy/runtime/ has the same modules.
"""
from __future__ import annotations

from ..._runtime import Runtime
from .capture import AclCapture


class AclRuntime(AclCapture):
    """The CANN runtime through cffi: every family of the contract."""


def _conforms(runtime: AclRuntime) -> Runtime:
    """Never called: mypy checks here that AclRuntime implements the contract."""
    return runtime
