"""Pooling and unpooling of list nn2 (issue 24). Dtypes from hicann ops-nn pooling/*/docs and
index/scatter_elements/docs (aclnnMaxUnpool2d.md, aclnnMaxUnpool3d.md)."""
from __future__ import annotations

from ._entry import E, FLOATS
from ....dtypes import DType

_C = "compose:nn2."
_UNPOOL = {"*": (DType.FLOAT, DType.FLOAT16, DType.INT32, DType.INT64, DType.INT16, DType.INT8, DType.UINT8,
                 DType.DOUBLE), "indices": (DType.INT32, DType.INT64)}

ENTRIES = [
    E("MaxPool3dWithArgmax", "aten::max_pool3d_with_indices.default",
      "self kernelSize stride padding dilation ceilMode out indices",
      ("self", "kernelSize", "stride", "padding", "dilation", "ceilMode"), out="out indices",
      notes="indices (into each D*H*W volume) computed in int64, cast to indices' dtype; an empty stride is "
            "the kernel's, as aten's"),
    E("MaxUnpool3d", _C + "max_unpool3d", "self indices outputSize stride padding outRef",
      ("self", "indices", "outputSize", "stride", "padding"), out="outRef", dtypes=_UNPOOL,
      notes="int32 indices widened to aten's int64; stride and padding checked by aten, not used (the doc)"),
    E("MaxPoolV3", _C + "max_pool_v3", "x ksize strides pads ceilMode out",
      ("x", "ksize", "strides", "pads", "ceilMode"),
      nullable="pads ceilMode", dtypes=FLOATS),
    E("MaxPool", _C + "max_pool", "self kernelShape strides autoPad pads dilations ceilMode out",
      ("self", "kernelShape", "strides", "autoPad", "pads", "dilations", "ceilMode"),
      dtypes=(DType.FLOAT, DType.FLOAT16), dtypes_v1=(DType.FLOAT16,),
      notes="the Ascend910B list (FLOAT, FLOAT16; Ascend910: FLOAT16): Ascend950's integer and bf16 dtypes are "
            "refused here"),
]
