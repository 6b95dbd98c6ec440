"""pyaclnn: drive Huawei CANN aclnn operators from Python.

On an Ascend NPU it calls the real CANN libraries (cffi, ABI mode); anywhere else a NumPy
reference backend accepts, rejects and computes as the device does. ``import pyaclnn`` loads
nothing native: the backend is chosen on first use (PYACLNN_BACKEND=auto|acl|numpy).

NumPy in, NumPy out:

    grad = pyaclnn.mse_loss_backward(g, x, y, reduction="mean")

Two phases, on device tensors:

    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        x = pyaclnn.Tensor.from_numpy(...)
        ex = pyaclnn.MseLossBackward(g, x, y, "mean", out)   # aclnnMseLossBackwardGetWorkspaceSize
        ex.run(stream)                                       # aclnnMseLossBackward
        stream.synchronize()

Any operator the installed CANN (or a custom operator package) declares, by its header:

    ex = pyaclnn.Op("Add", self=x, other=y, alpha=1.0, out=z)  # aclnnAddGetWorkspaceSize
    ex.run(stream)                                             # aclnnAdd

The C-shaped layer for porting CANN samples line by line is ``pyaclnn.acl``; ``python -m pyaclnn
ops`` lists the operators found.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from ._objects.backend import backend_info
    from ._objects.device import Device
    from ._objects.event import Event
    from ._objects.stream import Stream
    from ._objects.graph import Graph
    from ._objects.executor import Executor, Op
    # The operators pyaclnn ships with a reference (pyaclnn/ops): their classes and NumPy-in/out functions.
    from .ops.cross_entropy_loss_grad.api import CrossEntropyLossGrad, cross_entropy_loss_grad
    from .ops.group_norm_backward.api import GroupNormBackward, group_norm_backward
    from .ops.mse_loss_backward.api import MseLossBackward, mse_loss_backward
    from .ops.prelu_backward.api import PreluBackward, prelu_backward
    from ._objects.tensor import Tensor
    from .dtypes import DType
    # The hierarchy, and the status classes users meet; every status has its class in pyaclnn.errors.
    from .errors import (
        PyaclnnError, BackendUnavailableError, ClosedError, ExecutorConsumedError, NotSupportedError,
        UnknownOperatorError, HazardError, HazardWarning,
        AclError, AclParamError, AclResourceError, AclRuntimeError, AclInternalError,
        # aclnn: argument checks, and what fails inside the library
        AclnnParamNullptrError, AclnnParamInvalidError, AclnnRuntimeError, AclnnInnerError,
        AclnnInnerInfershapeError, AclnnInnerTilingError, AclnnInnerFindKernelError, AclnnInnerNullptrError,
        AclnnInnerOppPathNotFoundError,
        # acl and runtime: initialisation, devices, contexts, memory, a faulting kernel
        AclInvalidParamError, AclUninitializeError, AclRepeatInitializeError, RtParamInvalidError,
        RtInvalidDeviceidError, RtContextNullError, AclBadAllocError, RtMemoryAllocationError, RtNoDeviceError,
        RtDeviceOomError, RtAicoreExceptionError,
    )

__version__ = "0.1.0"

# A literal list, so type checkers see every name as exported (mypy --strict reads __all__ and
# nothing computed); tests/project/test_types.py checks user code against it.
__all__ = [
    "mse_loss_backward", "group_norm_backward", "cross_entropy_loss_grad", "prelu_backward",
    "Device", "Stream", "Event", "Graph", "Tensor", "Executor", "Op",
    "MseLossBackward", "GroupNormBackward", "CrossEntropyLossGrad", "PreluBackward",
    "backend_info", "DType",
    "PyaclnnError", "BackendUnavailableError", "ClosedError", "ExecutorConsumedError", "NotSupportedError",
    "UnknownOperatorError", "HazardError", "HazardWarning",
    "AclError", "AclParamError", "AclResourceError", "AclRuntimeError", "AclInternalError",
    "AclnnParamNullptrError", "AclnnParamInvalidError", "AclnnRuntimeError", "AclnnInnerError",
    "AclnnInnerInfershapeError", "AclnnInnerTilingError", "AclnnInnerFindKernelError", "AclnnInnerNullptrError",
    "AclnnInnerOppPathNotFoundError",
    "AclInvalidParamError", "AclUninitializeError", "AclRepeatInitializeError", "RtParamInvalidError",
    "RtInvalidDeviceidError", "RtContextNullError", "AclBadAllocError", "RtMemoryAllocationError", "RtNoDeviceError",
    "RtDeviceOomError", "RtAicoreExceptionError",
]

# ``import pyaclnn`` imports none of its modules (issue 23: it cost 122 ms over NumPy) but the
# operators' finder and the catalog it is installed in (at the end): a name of __all__, or a
# public submodule, is imported when first used. The error classes pyaclnn
# re-exports are shown (and pickled) as pyaclnn's: pyaclnn.errors does that when it loads.
_MODULES = {  # each public name's module, imported on first use (PEP 562)
    "._objects.backend": ("backend_info",),
    "._objects.device": ("Device",),
    "._objects.event": ("Event",),
    "._objects.stream": ("Stream",),
    "._objects.graph": ("Graph",),
    "._objects.executor": ("Executor", "Op"),
    ".ops.cross_entropy_loss_grad.api": ("CrossEntropyLossGrad", "cross_entropy_loss_grad"),
    ".ops.group_norm_backward.api": ("GroupNormBackward", "group_norm_backward"),
    ".ops.mse_loss_backward.api": ("MseLossBackward", "mse_loss_backward"),
    ".ops.prelu_backward.api": ("PreluBackward", "prelu_backward"),
    "._objects.tensor": ("Tensor",),
    ".dtypes": ("DType",),
    ".errors": (
        "PyaclnnError", "BackendUnavailableError", "ClosedError", "ExecutorConsumedError",
        "NotSupportedError", "UnknownOperatorError", "HazardError", "HazardWarning", "AclError",
        "AclParamError", "AclResourceError", "AclRuntimeError", "AclInternalError",
        "AclnnParamNullptrError", "AclnnParamInvalidError", "AclnnRuntimeError", "AclnnInnerError",
        "AclnnInnerInfershapeError", "AclnnInnerTilingError", "AclnnInnerFindKernelError",
        "AclnnInnerNullptrError", "AclnnInnerOppPathNotFoundError", "AclInvalidParamError",
        "AclUninitializeError", "AclRepeatInitializeError", "RtParamInvalidError",
        "RtInvalidDeviceidError", "RtContextNullError", "AclBadAllocError",
        "RtMemoryAllocationError", "RtNoDeviceError", "RtDeviceOomError", "RtAicoreExceptionError",
    ),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}

_SUBMODULES = ("acl", "dtypes", "errors", "ops", "testing")


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'pyaclnn' has no attribute {name!r}")
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    # the API and the public submodules; not this module's own imports (importlib, Any...)
    return sorted(set(__all__) | set(_SUBMODULES) | {n for n in globals() if n.startswith("__")})


# The one wiring done at import: the operators' folders (pyaclnn/ops) hold their public faces,
# above the object layer, so the layers below (the registry, the reference device, the acl
# loader) ask the registry's catalog by name, and the operators' finder is plugged into it here,
# before any module of the package can ask. Neither module imports anything more.
from . import ops as _ops  # noqa: E402
from ._registry import references as _references  # noqa: E402

_references.install(_ops)
