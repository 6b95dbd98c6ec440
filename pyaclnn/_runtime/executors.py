"""Executors and launch: an operator's two phases, by name, and its executor's addresses.

One family of the runtime contract (``pyaclnn._runtime.Runtime``: its docstring says the rules);
both backends implement it in a module of the same name (pyaclnn/_acl/runtime/, pyaclnn/_numpy/runtime/)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .session import Handle

if TYPE_CHECKING:
    from .._registry.operators import OpInfo, Registry


class Executors(Protocol):
    # operators, by name ("Add" for aclnnAdd): phase 1 returns (workspace_size, executor);
    # phase 2 consumes a single-use executor, given the extra launch arguments its header
    # declares (Signature.launch: aclnnGaussianBlur's src ... dst), in order. op_info raises
    # NotSupportedError for an operator this runtime cannot run (UnknownOperatorError: not
    # declared anywhere; on numpy: no reference); known raises UnknownOperatorError only, from
    # the header index (nothing parsed). Which operators exist: ``registry`` (pyaclnn._registry.operators,
    # read from headers); nothing else lists operators.
    registry: Registry
    def op_info(self, op: str) -> OpInfo: ...
    def known(self, op: str) -> None: ...
    def workspace_size(self, op: str, args: tuple) -> tuple[int, Handle]: ...
    def launch(self, op: str, workspace: int, workspace_size: int, executor: Handle, stream: Handle,
               *extra: Any) -> None: ...
    def set_executor_repeatable(self, executor: Handle) -> None: ...
    def destroy_executor(self, executor: Handle) -> None: ...
    def set_input_tensor_addr(self, executor: Handle, index: int, tensor: Handle, addr: int) -> None: ...
    def set_output_tensor_addr(self, executor: Handle, index: int, tensor: Handle, addr: int) -> None: ...
    def set_tensor_addr(self, executor: Handle, index: int, tensor: Handle, addr: int) -> None: ...
    def set_dynamic_tensor_addr(self, which: str, executor: Handle, ir_index: int, relative_index: int,
                                tensors: Handle, addr: int) -> None: ...
