"""Pooling of ops-nn (pooling/): adaptive and average pooling and their backward forms,
aten's overloads argument for argument.

Dtypes from docs/aclnn<Op>.md: FLOAT, FLOAT16, BFLOAT16 (bf16 only on SOCS_BF16).
"""
from __future__ import annotations

from ._entry import FLOATS, FLOATS64, Call, E, D, Int64

_IDX = (D.INT32, D.INT64)
_UP = "fp16/bf16 computed in float32 (aten's CPU kernel has none for them)"
_HF32 = "cubeMathType dropped: fp32 in full precision (the device may compute in HF32 or fp16)"


def _divisor(value: int) -> int | None:
    """divisorOverride 0: "not set" (the docs); aten's None."""
    return int(value) or None


ENTRIES = [
    E("AdaptiveAvgPool2d", "aten::adaptive_avg_pool2d.default", "self outputSize out", ("self", "outputSize")),
    E("AdaptiveAvgPool2dBackward", "aten::_adaptive_avg_pool2d_backward.default", "gradOutput self out",
      ("gradOutput", "self")),
    E("AdaptiveAvgPool3d", "aten::adaptive_avg_pool3d.default", "self outputSize out", ("self", "outputSize")),
    E("AdaptiveAvgPool3dBackward", "aten::_adaptive_avg_pool3d_backward.default", "gradOutput self out",
      ("gradOutput", "self")),
    E("AdaptiveMaxPool2d", "aten::adaptive_max_pool2d.default", "self outputSize outputOut indicesOut",
      ("self", "outputSize"), out="outputOut indicesOut", dtypes=FLOATS64,
      notes="indices: the flat H*W position, computed in int64"),
    E("AdaptiveMaxPool2dBackward", "aten::adaptive_max_pool2d_backward.default", "gradOutput self indices gradInput",
      ("gradOutput", "self", Int64("indices")), out="gradInput", param_dtypes={"indices": _IDX},
      notes="int32 indices passed to aten as int64 (its CPU kernel takes only those)"),
    E("AdaptiveMaxPool3d", "aten::adaptive_max_pool3d.default", "self outputSize outputOut indicesOut",
      ("self", "outputSize"), out="outputOut indicesOut",
      notes="indices: the flat D*H*W position, computed in int64 and cast (int32 on Ascend910B/910_93)"),
    E("AdaptiveMaxPool3dBackward", "aten::adaptive_max_pool3d_backward.default", "gradOutput self indices gradInput",
      ("gradOutput", "self", Int64("indices")), out="gradInput", param_dtypes={"indices": _IDX},
      notes="int32 indices passed to aten as int64 (its CPU kernel takes only those)"),
    E("AvgPool2d", "aten::avg_pool2d.default",
      "self kernelSize strides paddings ceilMode countIncludePad divisorOverride cubeMathType out",
      ("self", "kernelSize", "strides", "paddings", "ceilMode", "countIncludePad", Call("divisorOverride", _divisor)),
      notes=f"divisorOverride 0: not set; {_HF32}"),
    E("AvgPool2dBackward", "aten::avg_pool2d_backward.default",
      "gradOutput self kernelSize stride padding ceilMode countIncludePad divisorOverride cubeMathType gradInput",
      ("gradOutput", "self", "kernelSize", "stride", "padding", "ceilMode", "countIncludePad",
       Call("divisorOverride", _divisor)), out="gradInput", notes=f"divisorOverride 0: not set; {_HF32}"),
    E("AvgPool3d", "aten::avg_pool3d.default",
      "self kernelSize stride padding ceilMode countIncludePad divisorOverride out",
      ("self", "kernelSize", "stride", "padding", "ceilMode", "countIncludePad", Call("divisorOverride", _divisor)),
      upcast=True, notes=f"divisorOverride 0: not set; {_UP}"),
    E("AvgPool3dBackward", "aten::avg_pool3d_backward.default",
      "gradOutput self kernelSize stride padding ceilMode countIncludePad divisorOverride output",
      ("gradOutput", "self", "kernelSize", "stride", "padding", "ceilMode", "countIncludePad",
       Call("divisorOverride", _divisor)), out="output", upcast=True, notes=f"divisorOverride 0: not set; {_UP}"),
]
