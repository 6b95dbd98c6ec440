"""Pooling of ops-nn (pooling/): the 3-D backward forms nn.py and backward.py do not have,
aten's overloads argument for argument.

Dtypes from docs/aclnn<Op>.md: FLOAT, FLOAT16, BFLOAT16 (bf16 only on SOCS_BF16).
"""
from __future__ import annotations

from ._entry import FLOATS, Call, E, D, Int64

_IDX = (D.INT32, D.INT64)
_UP = "fp16/bf16 computed in float32 (aten's CPU kernel has none for them)"


def _divisor(value: int) -> int | None:
    """divisorOverride 0: "not set" (the docs); aten's None."""
    return int(value) or None


ENTRIES = [
    E("AdaptiveAvgPool3dBackward", "torch:pyaclnn.ops._aten.compose.nn.adaptive_avg_pool3d_backward",
      "gradOutput self out", ("gradOutput", "self"),
      notes="aten's _adaptive_avg_pool3d_backward, 4-D or 5-D only (its meta kernel takes any rank)"),
    E("AdaptiveMaxPool3dBackward", "aten::adaptive_max_pool3d_backward.default", "gradOutput self indices gradInput",
      ("gradOutput", "self", Int64("indices")), out="gradInput", dtypes={"*": FLOATS, "indices": _IDX},
      notes="int32 indices passed to aten as int64 (its CPU kernel takes only those)"),
    E("AvgPool3dBackward", "aten::avg_pool3d_backward.default",
      "gradOutput self kernelSize stride padding ceilMode countIncludePad divisorOverride output",
      ("gradOutput", "self", "kernelSize", "stride", "padding", "ceilMode", "countIncludePad",
       Call("divisorOverride", _divisor)), out="output", upcast=True, notes=f"divisorOverride 0: not set; {_UP}"),
]
