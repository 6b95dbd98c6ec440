"""Resampling gradients and forms the nn table lacks (issue 24, list nn2): aten's upsample
backward overloads take (grad, output_size, input_size, [align_corners,] scales...) in the C order.
Dtypes from hicann ops-nn image/*/docs/aclnn<Op>.md (FLOAT32, FLOAT16, BFLOAT16)."""
from __future__ import annotations

from ._entry import E, FLOATS
from ....dtypes import DType

_C = "torch:pyaclnn.ops._aten.compose.nn2."
_SCALES = "scales as aten's (the forward's output/input factor; 0 or negative: from the sizes)"

ENTRIES = [
    E("UpsampleNearest1dV2", "aten::upsample_nearest1d.default", "self outputSize scaleL out",
      ("self", "outputSize", "scaleL"), dtypes=FLOATS + (DType.DOUBLE, DType.UINT8), notes=_SCALES),
    E("UpsampleNearestExact1dBackward", "aten::_upsample_nearest_exact1d_backward.default",
      "gradOutput outputSize inputSize scales out", ("gradOutput", "outputSize", "inputSize", "scales"),
      notes=_SCALES),
    E("UpsampleNearestExact2dBackward", "aten::_upsample_nearest_exact2d_backward.default",
      "gradOutput outputSize inputSize scalesH scalesW out",
      ("gradOutput", "outputSize", "inputSize", "scalesH", "scalesW"), notes=_SCALES),
    E("UpsampleNearestExact3dBackward", "aten::_upsample_nearest_exact3d_backward.default",
      "gradOut outputSize inputSize scalesD scalesH scalesW gradInput",
      ("gradOut", "outputSize", "inputSize", "scalesD", "scalesH", "scalesW"), out="gradInput", notes=_SCALES),
    E("UpsampleBilinear2dBackwardV2", "aten::upsample_bilinear2d_backward.default",
      "gradOut outputSize inputSize alignCorners scalesH scalesW out",
      ("gradOut", "outputSize", "inputSize", "alignCorners", "scalesH", "scalesW"), notes=_SCALES),
    E("UpsampleBilinear2dAABackward", _C + "upsample_bilinear2d_aa_backward",
      "gradOutput outputSize inputSize alignCorners scalesH scalesW out",
      ("gradOutput", "outputSize", "inputSize", "alignCorners", "scalesH", "scalesW"),
      notes=_SCALES + "; float16 and bfloat16 in float32"),
    E("UpsampleBicubic2dAAGrad", _C + "upsample_bicubic2d_aa_backward",
      "gradOutput outputSize inputSize alignCorners scalesH scalesW out",
      ("gradOutput", "outputSize", "inputSize", "alignCorners", "scalesH", "scalesW"),
      notes=_SCALES + "; float16 and bfloat16 in float32"),
]
