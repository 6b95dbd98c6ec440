"""aclnnPreluBackward: checks in the library's order (ops.md §4.2).

Source traced: ops-nn activation/p_relu_grad_update/op_api/aclnn_prelu_backward.cpp.
There is no OP_CHECK_COMM_INPUT here: a null workspaceSize/executor is not validated at all.
"""
from __future__ import annotations

from typing import Sequence

from ..._spec import (FP32_FP16, FP32_FP16_BF16, Kernel, TensorMeta, Workspace, broadcast_shapes,
                      composite_workspace, fail_invalid, fmt_shape, is_regbase, numel, require_dtype_in,
                      require_max_dim, require_not_null, require_same_dtype, require_shape, shape_of)
from ...dtypes import itemsize

OP = "PreluBackward"
API = f"aclnn{OP}GetWorkspaceSize"
REPO = "ops-nn"  # its sources: hicann/ops-nn (9.x: libopapi_nn.so, the op library pyaclnn loads)

__all__ = ["OP", "API", "REPO", "check", "supported_dtypes", "channels", "output_shapes",
           "workspace_size"]

# SocVersion in [ASCEND910B .. ASCEND910E] of the SocVersion enum: A2, A3 and 950 (not 910, 310P).
_BF16_SOCS = ("Ascend910B", "Ascend910_93", "Ascend950")


def supported_dtypes(soc: str) -> tuple:
    return FP32_FP16_BF16 if soc in _BF16_SOCS else FP32_FP16


def channels(self: TensorMeta | Sequence[int], weight: TensorMeta | Sequence[int]) -> int:
    """C of grad_weight: 1 for a 1-element weight, else dim 1 of self (1 when self is 1-D/0-D)."""
    self_shape, weight_shape = shape_of(self), shape_of(weight)
    if numel(weight_shape) == 1:
        return 1
    return self_shape[1] if len(self_shape) > 1 else 1


def check(soc: str, grad_output: TensorMeta | None, self: TensorMeta | None,
          weight: TensorMeta | None, grad_input: TensorMeta | None,
          grad_weight: TensorMeta | None) -> bool:
    """Raise the library's error for the first failing rule; True means empty (no kernel)."""
    grad_output, self, weight, grad_input, grad_weight = require_not_null(
        API, gradOutput=grad_output, self=self, weight=weight, gradInput=grad_input, gradWeight=grad_weight)
    tensors = (("gradOutput", grad_output), ("self", self), ("weight", weight),
               ("gradInput", grad_input), ("gradWeight", grad_weight))

    # Dtypes: self in the SoC's list, then every other tensor must have self's dtype.
    require_dtype_in(API, soc, "self", self, supported_dtypes(soc))
    for name, t in tensors:
        if t is not self:
            require_same_dtype(API, name, t, "self", self)

    # Shapes.
    for name, t in tensors:
        require_max_dim(API, name, t)
    require_shape(API, "gradInput", grad_input, self.shape, "self shape")
    if weight.numel != 1:
        if self.ndim < 1:
            fail_invalid(API, f"self is 0-D but weight has {weight.numel} elements "
                              f"(a 0-D self needs a 1-element weight)")
        c = channels(self, weight)
        if weight.numel != c:
            fail_invalid(API, f"weight numel {weight.numel} (shape {fmt_shape(weight.shape)}) != "
                              f"channels {c} (dim 1 of self {fmt_shape(self.shape)})")
        require_shape(API, "gradWeight", grad_weight, (c,), "expected shape (C,)")
    else:
        require_shape(API, "gradWeight", grad_weight, weight.shape, "weight shape")
    # gradOutput may only broadcast *to* self.
    if broadcast_shapes(self.shape, grad_output.shape) != tuple(self.shape):
        fail_invalid(API, f"gradOutput shape {fmt_shape(grad_output.shape)} does not broadcast "
                          f"to self shape {fmt_shape(self.shape)}")

    # Empty: success, workspace 0, nothing written (gradWeight is not zeroed).
    return grad_output.is_empty or self.is_empty or weight.is_empty


def output_shapes(self_shape: Sequence[int],
                  weight_shape: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(grad_input, grad_weight) shapes to allocate: self's, and (C,) or weight's when numel 1."""
    if numel(weight_shape) == 1:
        return tuple(self_shape), tuple(weight_shape)
    return tuple(self_shape), (channels(self_shape, weight_shape),)


def workspace_size(soc: str, grad_output: TensorMeta, self: TensorMeta, weight: TensorMeta,
                   grad_input: TensorMeta, grad_weight: TensorMeta) -> Workspace:
    """What phase 1 reports for arguments ``check`` accepted (see pyaclnn._spec, "workspace sizes").

    aclnn_prelu_backward.cpp: empty -> 0; else PReluGradUpdate (prelu_grad_update.cpp) writes
    gradInput and ``update`` (self's shape and dtype), which PReluGradReduce (prelu_grad_reduce.cpp)
    reads to write gradWeight. Both outputs go to the user's tensors by ViewCopy; ``update`` stays
    in the workspace. The two kernels are TBE kernels except on 950 (arch35 Ascend C, tilings
    that set no workspace visible in the sources: 0 bytes)."""
    if grad_output.is_empty or self.is_empty or weight.is_empty:
        return Workspace(0, False)
    ws = (0,) if is_regbase(soc) else ()
    update = numel(self.shape) * itemsize(self.dtype)
    return composite_workspace([Kernel(ws, ((update, 1),)), Kernel(ws)])
