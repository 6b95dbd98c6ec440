"""aclnnMseLossBackward: checks in the library's order (ops.md §1.2).

Source traced: ops-nn loss/mse_loss_grad_v2/op_host/op_api/aclnn_mse_loss_backward.cpp.
``workspaceSize``/``executor`` nullptr (step 0) cannot happen from Python and is not modelled.
"""
from __future__ import annotations

from typing import Sequence

from ..._spec import (FP32_FP16, FP32_FP16_BF16, Kernel, TensorMeta, Workspace, broadcast_shapes,
                      composite_workspace, dtype_list_v2, fail_invalid, fmt_shape, is_regbase, numel,
                      require_dtype_in, require_max_dim, require_not_null, require_same_dtype,
                      require_shape)
from ...dtypes import itemsize

OP = "MseLossBackward"
API = f"aclnn{OP}GetWorkspaceSize"
REPO = "ops-nn"  # its sources: hicann/ops-nn (9.x: libopapi_nn.so, the op library pyaclnn loads)

__all__ = ["OP", "API", "REPO", "check", "supported_dtypes", "out_shape", "workspace_size"]


def supported_dtypes(soc: str) -> tuple:
    """GetDtypeSupportListV2: bf16 only on A2/A3 and 950."""
    return dtype_list_v2(soc, FP32_FP16_BF16, FP32_FP16)


def check(soc: str, grad_output: TensorMeta | None, self: TensorMeta | None,
          target: TensorMeta | None, reduction: int, out: TensorMeta | None) -> bool:
    """Raise the library's error for the first failing rule; True means empty (no kernel)."""
    grad_output, self, target, out = require_not_null(API, gradOutput=grad_output, self=self,
                                                      target=target, out=out)

    # Dtypes: the three inputs must match exactly (no promotion); out may differ, if listed.
    require_same_dtype(API, "gradOutput", grad_output, "self", self)
    require_same_dtype(API, "target", target, "self", self)
    allowed = supported_dtypes(soc)
    require_dtype_in(API, soc, "self", self, allowed)
    require_dtype_in(API, soc, "out", out, allowed)

    if not 0 <= reduction <= 2:
        fail_invalid(API, f"reduction {reduction} not in [0, 2] (0 none, 1 mean, 2 sum)")

    # Shapes: rank of the inputs only (out is checked by equality), broadcast in two steps.
    for name, t in (("gradOutput", grad_output), ("self", self), ("target", target)):
        require_max_dim(API, name, t)
    pair = broadcast_shapes(grad_output.shape, self.shape)
    if pair is None:
        fail_invalid(API, f"gradOutput shape {fmt_shape(grad_output.shape)} and self shape "
                          f"{fmt_shape(self.shape)} do not broadcast")
    full = broadcast_shapes(pair, target.shape)
    if full is None:
        fail_invalid(API, f"target shape {fmt_shape(target.shape)} does not broadcast with "
                          f"broadcast(gradOutput, self) shape {fmt_shape(pair)}")
    require_shape(API, "out", out, full, "broadcast shape")

    # Empty: success, workspace 0, no kernel, out untouched.
    return self.is_empty or grad_output.is_empty or target.is_empty


def out_shape(grad_output_shape: Sequence[int], self_shape: Sequence[int],
              target_shape: Sequence[int]) -> tuple[int, ...]:
    """Shape to allocate ``out`` with: the broadcast of the three, else self's (check rejects)."""
    pair = broadcast_shapes(grad_output_shape, self_shape)
    full = None if pair is None else broadcast_shapes(pair, target_shape)
    return tuple(self_shape) if full is None else full


def workspace_size(soc: str, grad_output: TensorMeta, self: TensorMeta, target: TensorMeta,
                   reduction: int, out: TensorMeta) -> Workspace:
    """What phase 1 reports for arguments ``check`` accepted (see pyaclnn._spec, "workspace sizes").

    aclnn_mse_loss_backward.cpp: empty -> 0; else l0op::MseLossGrad allocates the gradient (the
    broadcast shape, self's dtype) and launches MseLossGradV2 when the three shapes are equal on
    910B/910_93/310P (mse_loss_grad.cpp), an Ascend C kernel whose tiling asks a workspace of 0
    bytes (mse_loss_grad_v2_tiling.cpp), else MseLossGrad (TBE on those SoCs; the arch35 Ascend C
    broadcast template on 950, tiling not in the sources: 0 bytes). Cast to out's dtype launches
    a kernel only when the dtypes differ (ops-math cast.cpp; TBE there, arch35 Ascend C on 950);
    the ViewCopy into a contiguous out then takes the last intermediate off the workspace."""
    if self.is_empty or grad_output.is_empty or target.is_empty:
        return Workspace(0, False)
    v2 = grad_output.shape == self.shape == target.shape and soc in ("Ascend910B", "Ascend910_93", "Ascend310P")
    ascend_c = v2 or is_regbase(soc)
    cast = out.dtype != self.dtype
    grad = numel(out.shape) * itemsize(self.dtype)   # out has the broadcast shape (check)
    kernels = [Kernel((0,) if ascend_c else (), ((grad, 1),) if cast else ())]
    if cast:
        kernels.append(Kernel((0,) if is_regbase(soc) else ()))
    return composite_workspace(kernels)
