"""The acl runtime's operators: phase 1 and phase 2 through each operator's library (``_ops``),
executor addresses and repeatability."""
from __future__ import annotations

from typing import Any, Sequence
from ... import errors
from ..._registry.operators import OpInfo
from .._lib import check, ffi
from .session import NULL, VOID_P
from .descriptors import AclDescriptors


_U64_P = ffi.typeof("uint64_t *")

_EXECUTOR_PP = ffi.typeof("aclOpExecutor **")


def _nullable(handle: Any) -> Any:
    """None as nullptr, for the pointer arguments CANN itself checks for NULL."""
    return NULL if handle is None else handle


def _pointers(params: Sequence[Any]) -> tuple[int, ...]:
    """Positions of the char* and void* parameters (``_signature.Param``), converted by ``_c_args``."""
    return tuple(i for i, p in enumerate(params) if p.kind in ("string", "address"))


def _c_args(args: Sequence[Any], strings: tuple[int, ...]) -> list[Any]:
    """An operator's arguments as cffi takes them: None is NULL; at ``strings``, a str becomes a
    char[] (alive for the call) and an int address a void*."""
    c_args = [NULL if a is None else a for a in args]
    for i in strings:
        a = c_args[i]
        if isinstance(a, str):
            c_args[i] = ffi.new("char[]", a.encode())
        elif isinstance(a, int):
            c_args[i] = ffi.cast(VOID_P, a)
    return c_args


class AclExecutors(AclDescriptors):
    """aclnn<Op>GetWorkspaceSize / aclnn<Op>, aclSet*TensorAddr, aclDestroyAclOpExecutor."""

    def set_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        check(self.nn.aclSetTensorAddr(_nullable(executor), index, _nullable(tensor), ffi.cast(VOID_P, addr)),
              "aclSetTensorAddr")

    def set_dynamic_tensor_addr(self, which: str, executor: Any, ir_index: int, relative_index: int,
                                tensors: Any, addr: int) -> None:
        """aclSetDynamic{Input,Output,}TensorAddr (``which`` is "Input", "Output" or "")."""
        api = f"aclSetDynamic{which}TensorAddr"
        check(getattr(self.nn, api)(_nullable(executor), ir_index, relative_index, _nullable(tensors),
                                    ffi.cast(VOID_P, addr)), api)

    # -- operators -------------------------------------------------------------------------------
    def op_info(self, op: str) -> OpInfo:
        """The registry entry of ``op``; UnknownOperatorError if no header declares it."""
        info = self.registry.get(op)
        if info is None:
            raise self.registry.unknown(op)
        return info

    def known(self, op: str) -> None:
        """UnknownOperatorError unless a header declares ``op`` (index only: nothing parsed)."""
        if not self.registry.declares(op):
            raise self.registry.unknown(op)

    def _resolve(self, op: str) -> tuple[Any, tuple[int, ...]]:
        """Find ``op``'s two functions (cdef of its prototype only, in the library exporting it)."""
        info = self.op_info(op)
        if info.signature.problem:
            raise errors.NotSupportedError(f"aclnn{op} cannot be called from pyaclnn: {info.signature.problem}")
        phase1, phase2 = self.libraries.functions(info)
        self._phase2[op] = (phase2, _pointers(info.signature.launch))
        self._phase1[op] = (phase1, _pointers(info.signature.params))
        return self._phase1[op]

    def workspace_size(self, op: str, args: tuple) -> tuple[int, Any]:
        phase1, strings = self._phase1.get(op) or self._resolve(op)
        outs = getattr(self._outs, "pair", None)
        if outs is None:
            outs = self._outs.pair = (ffi.new(_U64_P), ffi.new(_EXECUTOR_PP))
        size, executor = outs
        c_args = [NULL if a is None else a for a in args]  # _c_args inline: this is on every call
        for i in strings:
            a = c_args[i]
            if isinstance(a, str):
                c_args[i] = ffi.new("char[]", a.encode())
            elif isinstance(a, int):
                c_args[i] = ffi.cast(VOID_P, a)
        status = phase1(*c_args, size, executor)
        if status:
            check(status, f"aclnn{op}GetWorkspaceSize")
        return int(size[0]), executor[0]

    def launch(self, op: str, workspace: int, workspace_size: int, executor: Any, stream: Any,
               *extra: Any) -> None:
        """aclnn<op>(workspace, workspaceSize, executor, <extra>, stream): the launch as the header
        declares it (``extra``: aclnnGaussianBlur's src ... dst, converted as phase 1's)."""
        phase2 = self._phase2.get(op)
        if phase2 is None:
            self._resolve(op)
            phase2 = self._phase2[op]
        fn, strings = phase2
        if workspace:  # the stream's pooled workspace: the same address call after call, cast once
            last = self._workspace_ptr
            if last[0] != workspace:
                last = self._workspace_ptr = (workspace, ffi.cast(VOID_P, workspace))
            ws = last[1]
        else:
            ws = NULL
        if extra:
            status = fn(ws, workspace_size, NULL if executor is None else executor, *_c_args(extra, strings),
                        NULL if stream is None else stream)
        else:  # no unpacking for the usual four (~0.2 us a call)
            status = fn(ws, workspace_size, NULL if executor is None else executor, NULL if stream is None else stream)
        if status:
            check(status, f"aclnn{op}")

    def set_executor_repeatable(self, executor: Any) -> None:
        check(self.nn.aclSetAclOpExecutorRepeatable(executor), "aclSetAclOpExecutorRepeatable")

    def destroy_executor(self, executor: Any) -> None:
        check(self.nn.aclDestroyAclOpExecutor(executor), "aclDestroyAclOpExecutor")

    def set_input_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        status = self.nn.aclSetInputTensorAddr(_nullable(executor), index, _nullable(tensor), ffi.cast(VOID_P, addr))
        if status:
            check(status, "aclSetInputTensorAddr")

    def set_output_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        status = self.nn.aclSetOutputTensorAddr(_nullable(executor), index, _nullable(tensor), ffi.cast(VOID_P, addr))
        if status:
            check(status, "aclSetOutputTensorAddr")
