"""The reference backend's emulation of the CANN runtime (implements ``_runtime.Runtime``).

It keeps CANN's rules so that code written against pyaclnn behaves the same on both
backends: aclInit first, a device set in every thread that uses the runtime, handles that
must be live, single-use executors consumed by phase 2 even when it fails, and the op checks
of the real library in phase 1 (each operator's spec, ``pyaclnn.ops``). Work goes only to streams of the thread's
current device, as on CANN (one current device per thread).

It runs as a device does (``pyaclnn._numpy.queues``): phase 2, async copies and memsets and
event records are queued on their stream and run when the device would have finished them
(at a synchronize, an event wait, stream destroy, device reset), and a call whose result
would depend on that timing (a race) is a ``pyaclnn.HazardError`` naming both sites.

One mixin per object family of the contract (pyaclnn._runtime), one module each, stacked in
the order they build on each other: session (state, devices) <- streams <- memory <-
descriptors <- executors <- capture; ``NumpyRuntime`` is the last of them. pyaclnn/_acl/runtime/ has the
same modules.
"""
from __future__ import annotations

from ..._runtime import HostRuntime
from .capture import NumpyCapture


class NumpyRuntime(NumpyCapture):
    """The CANN runtime, emulated on host memory: every family of the contract, and ``HostRuntime``."""


def _conforms(runtime: NumpyRuntime) -> HostRuntime:
    """Never called: mypy checks here that NumpyRuntime implements the contract."""
    return runtime
