"""The C-shaped layer, for porting CANN C/C++ samples line by line.

Names are the C names; enum constants are those of CANN's headers (``ACL_FLOAT``,
``ACL_FORMAT_ND``, ``ACL_MEM_MALLOC_HUGE_FIRST``, ``ACL_MEMCPY_HOST_TO_DEVICE``, status codes...).
Out-parameters become return values:

```python
ws_size, executor = acl.aclnnAddGetWorkspaceSize(x, y, alpha, out)
```

A failing status raises ``pyaclnn.AclError`` (the right subclass), so there are no return
codes to check. Host buffers are NumPy arrays, other buffer objects or DLPack host tensors (a
torch CPU tensor: its memory is read or written in place); device addresses are ints; ``None``
is nullptr. It runs on both backends: on the NumPy backend device memory, streams and
executors are emulated, so a ported sample runs in CI unchanged.

Where a handle goes, a function takes the handle, None, its int address, or the pyaclnn object
of that C type: ``Tensor`` for ``aclTensor *``, ``Stream`` for ``aclrtStream``, ``Event`` for
``aclrtEvent``, which stays the owner (the guide's *Devices, streams and lifetimes* says
exactly what that means):

```python
x = pyaclnn.Tensor.from_numpy(a)
ws_size, executor = acl.aclnnAddGetWorkspaceSize(x, x, alpha, out)
acl.aclnnAdd(None, ws_size, executor, stream)   # stream: a pyaclnn.Stream
acl.aclrtSynchronizeStream(stream)
```

Every function of ``headers/`` is here, and ``aclnn<Name>GetWorkspaceSize`` / ``aclnn<Name>``
for any operator the backend finds (custom packages, the installed CANN's aclnnop headers,
pyaclnn's headers/; ``python -m pyaclnn ops``): made on first access, with the C parameters its
header declares (a launch may declare more than the four: ops-cv's ``aclnnGaussianBlur(workspace,
workspaceSize, executor, src, ksize, sigmaX, sigmaY, borderType, dst, stream)``). For a name no header declares, the attribute does not exist: accessing it raises
``pyaclnn.UnknownOperatorError`` (an AttributeError, so ``hasattr`` is False) naming where the
backend looked. On the NumPy backend an operator without a reference raises NotSupportedError
when called.
"""
import keyword as _keyword
import re
import sys as _sys
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as _np

from . import errors as _errors
from ._objects import backend as _backend
from ._objects import current as _current
from ._objects import handles as _handles
# The handle types of the signatures below, exported (``X as X``) for users' own annotations.
from ._objects.handles import (AclBoolArray as AclBoolArray, AclFloatArray as AclFloatArray, AclIntArray as AclIntArray,
                       AclOpExecutor as AclOpExecutor, AclScalar as AclScalar, AclScalarArray as AclScalarArray,
                       AclScalarList as AclScalarList, AclTensor as AclTensor, AclTensorArray as AclTensorArray,
                       AclTensorList as AclTensorList, AclrtContext as AclrtContext, AclrtEvent as AclrtEvent,
                       AclrtStream as AclrtStream)
from ._registry.operators import Registry as _Registry
from ._registry.sources import pyaclnn_source as _pyaclnn_source
from ._objects.interop import host_array
from ._registry.signature import c_element as _c_element, c_values as _c_values
# Enum constants and status codes, exactly as headers/ declares them (generated: tools/gen_constants.py).
from ._core.constants import *  # noqa: F401,F403
# The functions of headers/, one module per object family (pyaclnn/_port/, as pyaclnn/_runtime/).
from ._port.capture import *  # noqa: F401,F403
from ._port.descriptors import *  # noqa: F401,F403
from ._port.memory import *  # noqa: F401,F403
from ._port.session import *  # noqa: F401,F403
from ._port.streams import *  # noqa: F401,F403
from ._port.common import Buffer, Handle, active_runtime

if TYPE_CHECKING:
    from ._runtime import Runtime


def aclSetAclOpExecutorRepeatable(executor: AclOpExecutor) -> None:
    rt = active_runtime()
    rt.set_executor_repeatable(executor)
    _handles.made_repeatable(rt, executor)


def aclDestroyAclOpExecutor(executor: AclOpExecutor) -> None:
    rt = active_runtime()
    try:
        rt.destroy_executor(executor)
    finally:  # what pyaclnn.acl kept for it (its Planned: pyaclnn._objects.handles) goes with it
        if _handles.plans:
            _handles.destroyed(rt, executor)


# ``tensor`` of the three below: a handle (a live one passes as it is: the repeat loop), or a
# pyaclnn.Tensor the executor's phase 1 got, which stands for the descriptor that phase 1 gave
# CANN (moved to ``addr`` here; the Tensor never is).
def aclSetInputTensorAddr(executor: AclOpExecutor, index: int, tensor: Any, addr: int) -> None:
    rt = active_runtime()
    if type(tensor) is not rt.handle_class or not tensor:
        tensor = _handles.executor_tensor(rt, executor, tensor, "aclSetInputTensorAddr")
    try:
        rt.set_input_tensor_addr(executor, index, tensor, addr)
    except Exception:
        _handles.refused("aclSetInputTensorAddr", (("tensor", "aclTensor *", "aclTensor *", tensor),))
        raise


def aclSetOutputTensorAddr(executor: AclOpExecutor, index: int, tensor: Any, addr: int) -> None:
    rt = active_runtime()
    if type(tensor) is not rt.handle_class or not tensor:
        tensor = _handles.executor_tensor(rt, executor, tensor, "aclSetOutputTensorAddr")
    try:
        rt.set_output_tensor_addr(executor, index, tensor, addr)
    except Exception:
        _handles.refused("aclSetOutputTensorAddr", (("tensor", "aclTensor *", "aclTensor *", tensor),))
        raise


def aclSetTensorAddr(executor: AclOpExecutor, index: int, tensor: Any, addr: int) -> None:
    """aclSetTensorAddr: ``index`` counts the inputs, then the outputs."""
    rt = active_runtime()
    if type(tensor) is not rt.handle_class or not tensor:
        tensor = _handles.executor_tensor(rt, executor, tensor, "aclSetTensorAddr")
    try:
        rt.set_tensor_addr(executor, index, tensor, addr)
    except Exception:
        _handles.refused("aclSetTensorAddr", (("tensor", "aclTensor *", "aclTensor *", tensor),))
        raise


def aclSetDynamicInputTensorAddr(executor: AclOpExecutor, irIndex: int, relativeIndex: int, tensors: AclTensorList,
                                 addr: int) -> None:
    active_runtime().set_dynamic_tensor_addr("Input", executor, irIndex, relativeIndex, tensors, addr)


def aclSetDynamicOutputTensorAddr(executor: AclOpExecutor, irIndex: int, relativeIndex: int, tensors: AclTensorList,
                                  addr: int) -> None:
    active_runtime().set_dynamic_tensor_addr("Output", executor, irIndex, relativeIndex, tensors, addr)


def aclSetDynamicTensorAddr(executor: AclOpExecutor, irIndex: int, relativeIndex: int, tensors: AclTensorList,
                            addr: int) -> None:
    active_runtime().set_dynamic_tensor_addr("", executor, irIndex, relativeIndex, tensors, addr)


def aclSetRawTensorAddr(tensor: AclTensor, addr: int) -> None:
    """aclSetRawTensorAddr: the device address the tensor describes from now on."""
    active_runtime().set_raw_tensor_addr(tensor, addr)


def aclGetRawTensorAddr(tensor: AclTensor) -> int:
    """aclGetRawTensorAddr(tensor, &addr) -> addr (an int)."""
    return active_runtime().get_raw_tensor_addr(tensor)


# -- any operator: aclnn<Name>GetWorkspaceSize / aclnn<Name>, made on first access -----------------
_PHASE1 = re.compile(r"aclnn(\w+?)GetWorkspaceSize")
_PHASE2 = re.compile(r"aclnn([A-Z]\w*)")
_NOT_OPS = frozenset({"aclnnInit", "aclnnFinalize"})


def _phase1(op: str) -> Callable[..., tuple[int, Handle]]:
    # the runtime last called, the signature it found, its handle parameters (pyaclnn._objects.handles)
    seen: list[Any] = [None, None, None]

    def phase1(*args: Any) -> tuple[int, Handle]:
        rt = (_backend.active or _backend.current()).runtime  # (active_runtime, inline: on every call)
        if seen[0] is not rt:
            sig = rt.op_info(op).signature
            seen[1], seen[2], seen[0] = sig, _handles.HandleSlots(sig), rt
        sig = seen[1]
        if len(args) != len(sig.params) and not sig.problem:  # (a problem: the runtime says it)
            raise TypeError(f"aclnn{op}GetWorkspaceSize takes {len(sig.params)} arguments "
                            f"({', '.join(p.name for p in sig.params)}), got {len(args)}; the two "
                            "out-parameters are returned")
        if sig.values:  # plain values of a wrong Python type: a TypeError naming the C parameter
            args = _c_values(sig, args)
        native = rt.handle_class
        for i in seen[2].positions:  # the ported call: live handles of the backend, as they are
            if type(args[i]) is not native or not args[i]:  # objects, ints, None...: converted
                return _handles.phase1(rt, op, seen[2], args)
        try:
            return rt.workspace_size(op, args)
        except Exception:  # a handle of another type is named (pyaclnn._objects.handles.refused)
            seen[2].refused(args)
            raise
    phase1.__name__ = phase1.__qualname__ = f"aclnn{op}GetWorkspaceSize"
    phase1.__doc__ = (f"aclnn{op}GetWorkspaceSize(<its C parameters>) -> (workspaceSize, executor).\n\n"
                      "The parameters are those of the operator's header, in order, without the two "
                      "out-parameters: aclTensor*/aclScalar*/array/list handles (a pyaclnn.Tensor for "
                      "aclTensor*; None is nullptr), ints, floats, bools, str for char*. `python -m pyaclnn "
                      "ops` lists signatures.")
    return phase1


def _phase2(op: str, sig: Any) -> Callable[..., None]:
    """aclnn<op> with the C parameters its header declares: (workspace, workspaceSize, executor,
    stream), or with the extra ones of a launch such as aclnnGaussianBlur's (workspace,
    workspaceSize, executor, src, ksize, sigmaX, sigmaY, borderType, dst, stream)."""
    if sig is None or not sig.launch:
        def phase2(workspace: int | None, workspaceSize: int, executor: AclOpExecutor, stream: AclrtStream) -> None:
            rt = (_backend.active or _backend.current()).runtime  # (active_runtime, inline: on every call)
            native = rt.handle_class
            if (type(executor) is native and executor and type(stream) is native and stream  # the ported call
                    and not _handles.plans):
                _handles.launch_refusing(rt, op, None, workspace, workspaceSize, executor, stream)
            else:  # objects, ints, None, or an executor planned on pyaclnn Tensors
                _handles.phase2(rt, op, workspace, workspaceSize, executor, stream)
        phase2.__name__ = phase2.__qualname__ = f"aclnn{op}"
        phase2.__doc__ = (f"aclnn{op}(workspace, workspaceSize, executor, stream): phase 2 (queues the work; "
                          "stream: a handle or a pyaclnn.Stream).")
        return phase2
    # the header's own parameter names (a Python keyword gets a trailing _), generated so that a
    # call binds them as C does, by position or name
    names = [p.name + "_" if _keyword.iskeyword(p.name) or p.name in ("workspace", "workspaceSize", "executor",
                                                                         "stream") else p.name for p in sig.launch]
    code = (f"def aclnn{op}(workspace, workspaceSize, executor, {', '.join(names)}, stream):\n"
            f"    _launch_with(_op, workspace, workspaceSize, executor, ({', '.join(names)},), stream)\n")
    namespace: dict[str, Any] = {"_launch_with": _launch_with, "_op": op}
    exec(compile(code, f"{_handles.__file__}<aclnn{op}>", "exec"), namespace)  # noqa: S102 - the header's names only
    fn = namespace[f"aclnn{op}"]
    fn.__doc__ = (f"aclnn{op}(workspace, workspaceSize, executor, {', '.join(p.name for p in sig.launch)}, stream): "
                  "phase 2 as its header declares it (queues the work; stream: a handle or a pyaclnn.Stream; the "
                  "other handles as phase 1 takes them).")
    return fn


def _launch_with(op: str, workspace: int | None, workspaceSize: int, executor: Any, extra: tuple, stream: Any) -> None:
    """A launch with extra parameters: each converted as the same parameter of phase 1 is
    (``_signature.c_values``; handles by ``pyaclnn._objects.handles``), then the one launch routine."""
    rt = active_runtime()
    sig = rt.op_info(op).signature
    _handles.phase2(rt, op, workspace, workspaceSize, executor, stream, _c_values(sig, extra, launch=True))


# The operators of pyaclnn's headers/: every backend searches headers/, so they are known
# whichever runs, and their functions stay module attributes.
_SHIPPED = _Registry([_pyaclnn_source()])
_MADE: set[str] = set()  # the other operator functions made: valid for the backend that knew them


def _forget_ops() -> None:
    """A backend was chosen: the operators the previous one knew are not necessarily known."""
    for name in list(_MADE):
        globals().pop(name, None)
    _MADE.clear()


_backend.on_choose.append(_forget_ops)


def __getattr__(name: str) -> Any:
    """``aclnn<Name>GetWorkspaceSize`` and ``aclnn<Name>`` for an operator the backend knows
    (a header declares it; from the header index, nothing parsed): made once, then a plain
    module attribute. UnknownOperatorError (an AttributeError) for any other operator name."""
    m = _PHASE1.fullmatch(name)
    if m:
        op = m.group(1)
    elif _PHASE2.fullmatch(name) and name not in _NOT_OPS:
        op = name[len("aclnn"):]
    else:
        raise AttributeError(f"module 'pyaclnn.acl' has no attribute {name!r}")
    shipped = _SHIPPED.declares(op)
    if not shipped:
        try:
            active_runtime().known(op)
        except _errors.UnknownOperatorError as exc:
            text = str(exc)
            if exc.close_name:  # spelled as this module's attribute: aclnnAdd, not Add
                spelled = f"aclnn{exc.close_name}" + ("GetWorkspaceSize" if m else "")
                text = text.replace(f"(did you mean {exc.close_name!r}?)", f"(did you mean {spelled!r}?)")
            error = _errors.UnknownOperatorError(f"module 'pyaclnn.acl' has no attribute {name!r}: {text}")
            error.close_name = exc.close_name
            error.name, error.obj = name, _sys.modules[__name__]
            raise error from None
    if m:
        fn: Any = _phase1(op)
    else:  # the launch's prototype: parsed now (its parameters are the function's)
        info = _SHIPPED.get(op) if shipped else active_runtime().registry.get(op)
        fn = _phase2(op, None if info is None else info.signature)
    globals()[name] = fn
    if not shipped:
        _MADE.add(name)
    return fn


def __dir__() -> list[str]:
    """The module's names with the two functions of every operator of headers/ and, once a
    backend is chosen (never chosen here), of every operator it knows (header index only)."""
    ops = set(_SHIPPED.names())
    backend = _backend.active
    if backend is not None:
        ops |= backend.runtime.registry.names()
    return sorted(set(globals()) | {f"aclnn{op}{phase}" for op in ops for phase in ("GetWorkspaceSize", "")})


# Every function above and of pyaclnn/_port/ with a handle parameter (annotated AclTensor,
# AclrtStream...) takes pyaclnn objects and int addresses there too: converted in one place,
# pyaclnn._objects.handles. They are this module's functions (``__module__``: for help() and the docs).
for _name, _fn in list(globals().items()):
    if _name.startswith("acl") and callable(_fn) and getattr(_fn, "__module__", "").startswith(
            (__name__, "pyaclnn._port.")):
        _fn.__module__ = __name__
        globals()[_name] = _handles.accepting_objects(_fn)
del _name, _fn
