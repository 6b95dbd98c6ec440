"""aclnnAmpUpdateScale: the dynamic loss-scale update of mixed-precision training (a generated aclnn).

Sources traced: hicann/ops-math math/amp_update_scale/op_host/amp_update_scale_def.cpp (the op
definition: required tensors, the dtype rows (x, int32, x, x, int32) for x in float32/float16/
bf16, AI Core configs for ascend910b, ascend910_93 and ascend950 only), op_host/
amp_update_scale_tiling.cpp (AmpUpdateScaleTiling::Init: growthInterval in [1, INT32_MAX], each
input one element of rank 0 or 1), docs/aclnnAmpUpdateScale.md.

The generated aclnn checks its required tensors (161001); then, finding no kernel for the call,
nnopbase's CheckSocVersionAndParam (hicann/opbase src/nnopbase/individual_op/executor/
indv_executor.cpp, called from NnopbaseExecutorTilingAndUpdateBinInfo) refuses first a SoC the
definition has no AI Core config for (561003), then a dtype combination not among its rows
(161002); the tiling's refusals are 561002.
"""
from __future__ import annotations

from ..._spec import TILING_ERROR, TensorMeta, fail, fail_invalid, fail_null
from ...dtypes import DType

OP = "AmpUpdateScale"
API = f"aclnn{OP}GetWorkspaceSize"
REPO = "ops-math"  # its sources: hicann/ops-math (9.x: libopapi_math.so)
# Its header is generated (every tensor const): the definition names the outputs, and nnopbase's
# executors index tensors by their position there.
ROLES = (("updatedScale", "updatedGrowthTracker"), "position")

__all__ = ["OP", "API", "REPO", "ROLES", "SOCS", "check", "written"]

FIND_KERNEL_ERROR = 561003  # ACLNN_ERR_INNER_FIND_KERNEL_ERROR
SOCS = ("Ascend910B", "Ascend910_93", "Ascend950")  # AICore().AddConfig of the definition
_X = (DType.FLOAT, DType.FLOAT16, DType.BF16)
_NAMES = ("currentScale", "growthTracker", "foundInf", "updatedScale", "updatedGrowthTracker")
INT32_MAX = 2**31 - 1


def check(soc: str, current_scale: TensorMeta | None, growth_tracker: TensorMeta | None,
          found_inf: TensorMeta | None, growth_factor: float, backoff_factor: float, growth_interval: int,
          updated_scale: TensorMeta | None, updated_growth_tracker: TensorMeta | None) -> bool:
    """Raise the library's error for the first failing rule; never empty (the tensors are one element)."""
    tensors = (current_scale, growth_tracker, found_inf, updated_scale, updated_growth_tracker)
    for name, t in zip(_NAMES, tensors):
        if t is None:
            fail_null(API, f"{name} is nullptr")
    cs, gt, fi, us, ug = tensors
    assert cs is not None and gt is not None and fi is not None and us is not None and ug is not None
    if soc not in SOCS:
        fail(FIND_KERNEL_ERROR, API, f"AmpUpdateScale has no kernel on {soc} (its definition configures "
                                     f"{', '.join(SOCS)} only)")
    x = cs.dtype
    if not (x in _X and gt.dtype == DType.INT32 and fi.dtype == x and us.dtype == x and ug.dtype == DType.INT32):
        combination = ", ".join(str(DType(t.dtype)) for t in (cs, gt, fi, us, ug))
        fail_invalid(API, f"dtype combination ({combination}) is not in the op definition: expected "
                          "(x, int32, x, x, int32), x in float32/float16/bfloat16")
    if not 1 <= growth_interval <= INT32_MAX:
        fail(TILING_ERROR, API, f"growthInterval {growth_interval} must be in range [1, INT32_MAX]")
    for name, t in zip(_NAMES[:3], (cs, gt, fi)):
        if t.ndim > 1 or t.numel != 1:
            fail(TILING_ERROR, API, f"The shape of input {name} must be scalar [1], got {tuple(t.shape)}")
    for name, t in zip(_NAMES[3:], (us, ug)):
        if t.numel < 1:  # the kernel writes element 0: undefined on the device, refused here
            fail(TILING_ERROR, API, f"pyaclnn refuses: {name} is empty (the kernel writes its element 0)")
    return False


def written(soc: str, *args: object) -> dict:
    """What the kernel writes of the outputs (pyaclnn._numpy.ops.written): element 0 of each, a
    larger one's other elements never (op_kernel/amp_update_scale.h Init binds each output's
    GlobalTensor to 1 element, SetGlobalBuffer(..., 1), and CopyOut's DataCopyPad moves 1 element)."""
    return {"updatedScale": 1, "updatedGrowthTracker": 1}
