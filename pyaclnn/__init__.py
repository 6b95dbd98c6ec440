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
from . import errors as _errors

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
for _name in __all__:  # the error classes are shown (and pickled, as classes) under the name users write
    _value = globals()[_name]
    if isinstance(_value, type) and _value.__module__ == _errors.__name__:
        _value.__module__ = "pyaclnn"
del _name, _value
