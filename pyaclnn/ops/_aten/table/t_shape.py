"""Shape and movement of the ops-math tensor list (issue 24 expansion): ONNX flatten, ONNX and
TensorFlow slicing, fused reshape-transpose, strided view copies, and the gradients of circular
padding and unfold.

Dtypes from each operator's op_api source (hicann/ops-math conversion/<dir>/op_api/aclnn_<name>.cpp
or its *_common.h, the ASCEND910B list; bf16 through SOCS_BF16); semantics from its
docs/aclnn<Name>.md. Compositions (``compose:tensor.*``) are in compose/tensor.py.
"""
from __future__ import annotations

from ._entry import ALL, FLOATS, INTS, D, E

F = "compose:tensor."
_U = (D.UINT16, D.UINT32, D.UINT64)
_VIEW = FLOATS + (D.INT8, D.UINT8, D.INT16, D.UINT16, D.INT32, D.UINT32, D.BOOL, D.INT64)  # aclnnViewCopy.md

ENTRIES = [
    E("CircularPad2dBackward", F + "circular_pad_backward", "gradOutput self padding gradInput",
      ("gradOutput", "self", "padding"), out="gradInput"),
    E("CircularPad3dBackward", F + "circular_pad_backward", "gradOutput self padding gradInput",
      ("gradOutput", "self", "padding"), out="gradInput"),
    E("Flatten", F + "flatten_2d", "self axis out", ("self", "axis"), dtypes=ALL[:-1] + _U + (D.BOOL,)),
    E("SliceV2", F + "slice_v2", "self starts ends axes steps out", ("self", "starts", "ends", "axes", "steps"),
      dtypes=(D.FLOAT, D.FLOAT16, D.INT64, D.INT8, D.INT32, D.UINT8, D.BOOL, D.BF16)),
    E("UnfoldGrad", "aten::unfold_backward.default", "gradOut inputSizes dim size step gradIn",
      ("gradOut", "inputSizes", "dim", "size", "step"), out="gradIn"),
    E("ConfusionTranspose", F + "confusion_transpose", "x perm shape transpose_first out",
      ("x", "perm", "shape", "transpose_first"), dtypes=INTS + _U + (D.FLOAT16, D.FLOAT, D.BF16)),
    E("StridedSlice", F + "strided_slice",
      "self begin end strides beginMask endMask ellipsisMask newAxisMask shrinkAxisMask out",
      ("self", "begin", "end", "strides", "beginMask", "endMask", "ellipsisMask", "newAxisMask", "shrinkAxisMask"),
      dtypes=INTS + _U + (D.FLOAT, D.FLOAT16, D.BF16, D.BOOL, D.COMPLEX64),
      notes="TensorFlow's strided_slice semantics (Python slice clamping)"),
    E("ViewCopy", F + "view_copy",
      "dst dst_size dst_stride dst_storage_offset src src_size src_stride src_storage_offset dst_out",
      ("dst", "dst_size", "dst_stride", "dst_storage_offset", "src", "src_size", "src_stride", "src_storage_offset"),
      out="dst_out", dtypes={"dst": _VIEW, "src": _VIEW, "*": (D.INT32, D.INT64)},
      notes="dst's elements in order are the storage; a view past it is refused when the kernel runs "
            "(the metadata are data), not at phase 1"),
]
