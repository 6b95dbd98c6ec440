"""Indexing and embedding operators of ops-nn (index/): gather, index_*, embedding, flip,
bucketize, aten's overloads argument for argument.

Dtypes from docs/aclnn<Op>.md; the index tensors' own (INT32, INT64) by name in ``dtypes``.
aten's CPU kernels that take only int64 indices get them as int64 (``Int64``).
"""
from __future__ import annotations

from ._entry import ALL, COMPLEX_, FLOATS, E, D, Int64, IntTensor

_IDX = (D.INT32, D.INT64)
_ANY = ALL + COMPLEX_
_FILL = (D.FLOAT16, D.FLOAT, D.DOUBLE, D.INT8, D.UINT8, D.INT16, D.INT32, D.INT64, D.BOOL, D.BF16)
_OOB = "an index out of range is refused at run time (the device skips it, the doc says)"

ENTRIES = [
    E("IndexAddV2", "aten::index_add.default", "self dim index source alpha mode out",
      ("self", "dim", "index", "source"), {"alpha": "alpha"}, dtypes={"*": ALL, "index": _IDX},
      notes="mode (0: the device's fast path) does not change the result here"),
    E("IndexCopy", "compose:nn.index_copy", "selfRef dim index source outRef",
      ("selfRef", "dim", "index", "source"), out="outRef selfRef", dtypes={"*": _ANY, "index": _IDX},
      notes="selfRef (declared an output) gets its own values back: the result goes to outRef "
            "(index/scatter_update/op_api/aclnn_index_copy.cpp copies self first)"),
    E("IndexFillTensor", "aten::index_fill.int_Scalar", "self dim index value out",
      ("self", "dim", IntTensor("index"), "value"), dtypes=_FILL, notes="index: an aclIntArray"),
    E("InplaceIndexFillTensor", "aten::index_fill.int_Scalar", "selfRef dim index value",
      ("selfRef", "dim", IntTensor("index"), "value"), dtypes=_FILL, notes="index: an aclIntArray"),
]

LEFT_OUT = {
    "GatherV3": "GatherV2 with batchDims: no aten overload",
    "GatherNd": "TensorFlow gather_nd: no aten overload",
    "EmbeddingBag": "maxIndices (1-D on the device) and offset2bag/bagSize shapes differ from aten's "
                    "_embedding_bag by mode",
}
