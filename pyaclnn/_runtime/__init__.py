"""The C-shaped runtime contract that both backends implement: ``Runtime``.

Each method is one CANN call with C semantics: out-parameters are returned, device
addresses are ints, handles are opaque (cffi pointers on acl, ints on numpy), ``None`` is the
C nullptr, and a failing status raises the matching ``AclError``. Host buffers are objects
supporting the buffer protocol (NumPy arrays, bytearray, ...). The Pythonic objects
(Device, Stream, Tensor, executors) and the port layer ``pyaclnn.acl`` are written once
against this contract, and hold their runtime as a ``Runtime``.

Both ``pyaclnn._acl.runtime.AclRuntime`` and ``pyaclnn._numpy.runtime.NumpyRuntime`` implement
every member, with the same parameter names and defaults (tests/project/test_runtime_contract.py; mypy
checks the types where each module binds its class to ``Runtime``). What only one of them has is
outside the contract: ``HostRuntime`` for the NumPy backend's host views of device memory, and
the acl backend's ``loading_hint`` (used where the acl runtime is made).

The contract is one Protocol per C object family, one module each (session, streams, memory,
descriptors, executors, capture); ``Runtime`` is all of them, the type every layer above holds a runtime
as. Each backend has a module of the same name for each family (pyaclnn/_acl/runtime/,
pyaclnn/_numpy/runtime/).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from .capture import Capture
from .descriptors import Descriptors
from .executors import Executors
from .memory import Memory
from .session import Handle, HostOrDevice, Session
from .streams import Streams

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Capture", "Descriptors", "Executors", "Handle", "HostOrDevice", "HostRuntime", "Memory", "Runtime", "Session",
           "Streams"]


class Runtime(Session, Streams, Memory, Descriptors, Executors, Capture, Protocol):
    """Every family of the contract: what both backends' runtimes are."""


class HostRuntime(Runtime, Protocol):
    """A runtime whose device memory is host memory (the NumPy backend): views of it, host
    memory made device memory in place and the kernel an executor will run (the NumPy-in/out
    functions: ``getattr(runtime, "register_host", None)`` tells), and the leak report of
    ``pyaclnn check`` (``track_sites``, ``live_handles``)."""

    def host_view(self, addr: int, shape: Sequence[int], dtype: np.dtype, strides: Sequence[int],
                  offset: int) -> np.ndarray | None: ...
    def register_host(self, buf: np.ndarray) -> int | None: ...  # modelled on aclrtHostRegister
    def unregister_host(self, addr: int) -> None: ...  # aclrtHostUnregister
    def executor_kernel(self, executor: Handle) -> Callable[[tuple], None]: ...
    def live_counts(self) -> dict[str, int]: ...  # live emulated handles, for leak checks
    def track_sites(self, on: bool = True) -> None: ...  # record the user's line making each handle
    def live_handles(self) -> list[Any]: ...  # every live handle (LiveHandle), with that line
