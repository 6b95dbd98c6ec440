"""Indexing and embedding operators of ops-nn (index/): gather, index_*, embedding, flip,
bucketize, aten's overloads argument for argument.

Dtypes from docs/aclnn<Op>.md; the index tensors' own (INT32, INT64) in ``param_dtypes``.
aten's CPU kernels that take only int64 indices get them as int64 (``Int64``).
"""
from __future__ import annotations

from ._entry import ALL, COMPLEX_, FLOATS, FLOATS64, INTS, E, D, Int64, IntTensor

_IDX = (D.INT32, D.INT64)
_ANY = ALL + COMPLEX_
_FILL = (D.FLOAT16, D.FLOAT, D.DOUBLE, D.INT8, D.UINT8, D.INT16, D.INT32, D.INT64, D.BOOL, D.BF16)
_OOB = "an index out of range is refused at run time (the device skips it, the doc says)"

ENTRIES = [
    E("Gather", "aten::gather.default", "self dim index out", ("self", "dim", "index"), dtypes=ALL,
      param_dtypes={"index": _IDX}, notes="negative index values, which the device takes, are refused"),
    E("IndexSelect", "aten::index_select.default", "self dim index out", ("self", "dim", "index"), dtypes=_ANY,
      param_dtypes={"index": _IDX}),
    E("Index", "aten::index.Tensor", "self indices out", ("self", "indices"), dtypes=ALL + (D.COMPLEX64,),
      param_dtypes={"indices": _IDX},
      notes="integer indices only: BOOL masks (the device takes them) give a data-dependent shape"),
    E("IndexAdd", "aten::index_add.default", "self dim index source alpha out", ("self", "dim", "index", "source"),
      {"alpha": "alpha"}, dtypes=ALL, param_dtypes={"index": _IDX}),
    E("IndexAddV2", "aten::index_add.default", "self dim index source alpha mode out",
      ("self", "dim", "index", "source"), {"alpha": "alpha"}, dtypes=ALL, param_dtypes={"index": _IDX},
      notes="mode (0: the device's fast path) does not change the result here"),
    E("IndexCopy", "aten::index_copy.default", "selfRef dim index source outRef",
      ("selfRef", "dim", Int64("index"), "source"), out="outRef", inplace="selfRef", dtypes=_ANY,
      param_dtypes={"index": _IDX},
      notes="selfRef (declared an output) is read, never written: the result goes to outRef "
            "(index/scatter_update/op_api/aclnn_index_copy.cpp copies self first)"),
    E("InplaceIndexCopy", "aten::index_copy.default", "selfRef dim index source",
      ("selfRef", "dim", Int64("index"), "source"), dtypes=_ANY, param_dtypes={"index": _IDX}),
    E("IndexFill", "aten::index_fill.int_Scalar", "self dim index value out",
      ("self", "dim", Int64("index"), "value"), dtypes=_FILL, param_dtypes={"index": _IDX}, notes=_OOB),
    E("InplaceIndexFill", "aten::index_fill.int_Scalar", "selfRef dim index value",
      ("selfRef", "dim", Int64("index"), "value"), dtypes=_FILL, param_dtypes={"index": _IDX}, notes=_OOB),
    E("IndexFillTensor", "aten::index_fill.int_Scalar", "self dim index value out",
      ("self", "dim", IntTensor("index"), "value"), dtypes=_FILL, notes="index: an aclIntArray"),
    E("InplaceIndexFillTensor", "aten::index_fill.int_Scalar", "selfRef dim index value",
      ("selfRef", "dim", IntTensor("index"), "value"), dtypes=_FILL, notes="index: an aclIntArray"),
    E("IndexPutImpl", "aten::_index_put_impl.default", "selfRef indices values accumulate unsafe",
      ("selfRef", "indices", "values", "accumulate", "unsafe"), dtypes=ALL,
      param_dtypes={"indices": _IDX + (D.BOOL,)}),
    E("Embedding", "aten::embedding.default", "weight indices out", ("weight", "indices"), dtypes=_ANY,
      param_dtypes={"indices": _IDX}),
    E("EmbeddingDenseBackward", "aten::embedding_dense_backward.default",
      "grad indices numWeights paddingIdx scaleGradByFreq out",
      ("grad", Int64("indices"), "numWeights", "paddingIdx", "scaleGradByFreq"),
      param_dtypes={"indices": (D.FLOAT, D.FLOAT16, D.DOUBLE, D.INT8, D.INT16, D.INT32, D.INT64, D.UINT8, D.BOOL)},
      notes="paddingIdx < 0: no padding row, as aten's -1; indices of any listed dtype are truncated to int64"),
    E("EmbeddingRenorm", "aten::embedding_renorm.default", "selfRef indices maxNorm normType",
      ("selfRef", "indices", "maxNorm", "normType"), param_dtypes={"indices": _IDX}),
    E("Flip", "aten::flip.default", "self dims out", ("self", "dims"), dtypes=_ANY),
    E("Bucketize", "aten::bucketize.Tensor", "self boundaries outInt32 right out", ("self", "boundaries"),
      {"out_int32": "outInt32", "right": "right"}, dtypes=FLOATS + INTS,
      notes="right true: boundaries[i-1] <= x < boundaries[i] (the doc's left-closed), as aten's"),
]

LEFT_OUT = {
    "GatherV3": "GatherV2 with batchDims: no aten overload",
    "GatherNd": "TensorFlow gather_nd: no aten overload",
    "EmbeddingBag": "maxIndices (1-D on the device) and offset2bag/bagSize shapes differ from aten's "
                    "_embedding_bag by mode",
}
