"""Convolutions of ops-nn (conv/) and ops-cv (image/) the other families do not have: aten's
conv_tbc and its backward form, col2im, argument for argument.

Dtypes from docs/aclnn<Op>.md: FLOAT, FLOAT16, BFLOAT16 (bf16 only on SOCS_BF16); the 8-bit
floats (HIFLOAT8, FLOAT8_E4M3FN) some convolutions take on Ascend950 are left out.
"""
from __future__ import annotations

from ._entry import E

_HF32 = ("cubeMathType dropped: fp32 in full precision (the device may use HF32 or fp16 when "
         "cubeMathType allows it)")
_MASK = "an output whose outputMask is false may be nullptr and is not written"

ENTRIES = [
    E("ConvTbc", "aten::conv_tbc.default", "self weight bias pad output cubeMathType", ("self", "weight", "bias", "pad"),
      out="output", notes=f"{_HF32}; self (time, batch, channels), weight (kernel, in, out), as aten's "
                          "(the op source permutes them: conv/convolution_forward/op_host/op_api/aclnn_convolution.cpp)"),
    E("ConvTbcBackward", "aten::conv_tbc_backward.default",
      "self input weight bias pad cubeMathType gradInput gradWeight gradBias",
      ("self", "input", "weight", "bias", "pad"), out="gradInput gradWeight gradBias", notes=_HF32),
    E("Im2colBackward", "aten::col2im.default", "gradOutput inputSize kernelSize dilation padding stride out",
      ("gradOutput", "inputSize", "kernelSize", "dilation", "padding", "stride"),
      notes="im2col's backward is col2im: inputSize is the spatial (H, W) size"),
]

LEFT_OUT = {
    "DeformableConv2d": "no aten overload (torchvision's deform_conv2d, another offset layout)",
    "DeformableConv2dBackward": "no aten overload",
    "GaussianBlur": "no aten overload (an OpenCV-style blur with border types)",
    "CIoU": "no aten overload (box IoU with an atan term)",
    "ChamferDistanceBackward": "no aten overload",
    "DataFormatDimMap": "TensorFlow's format index map: no aten overload",
}
