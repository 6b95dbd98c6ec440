"""Masking, selecting, searching, membership and one-hot encoding of the ops-math tensor list
(issue 24 expansion).

Dtypes from each operator's op_api source (hicann/ops-math <dir>/op_api/aclnn_<name>.cpp, its
ASCEND910B list; bf16 through SOCS_BF16); semantics from its docs/aclnn<Name>.md.
Compositions (``torch:...t_fns.*``) are in _t_fns.py.
"""
from __future__ import annotations

from ._entry import ALL, COMPLEX_, FLOATS, NUMS, D, E

F = "torch:pyaclnn.ops._aten.table._t_fns."
_U = (D.UINT16, D.UINT32, D.UINT64)
_SEARCH = (D.FLOAT16, D.FLOAT, D.INT16, D.INT8, D.UINT8, D.INT32, D.INT64, D.DOUBLE)  # aclnn_searchsorted.cpp

ENTRIES = [
    E("MaskedScale", F + "masked_scale", "self mask scale out", ("self", "mask", "scale"),
      dtypes=FLOATS + (D.UINT8, D.INT8)),
    E("SWhere", F + "s_where", "condition self other out", ("condition", "self", "other"),
      dtypes=ALL + COMPLEX_ + _U, notes="a uint8 condition is read as bool (nonzero is true)"),
    E("SearchSorteds", "aten::searchsorted.Scalar", "sortedSequence self outInt32 right sorter out",
      ("sortedSequence", "self"), {"out_int32": "outInt32", "right": "right", "sorter": "sorter"},
      nullable="sorter", dtypes=_SEARCH, out_dtypes=(D.INT32, D.INT64)),
    E("IsInScalarTensor", "aten::isin.Scalar_Tensor", "element testElements assumeUnique invert out",
      ("element", "testElements"), {"assume_unique": "assumeUnique", "invert": "invert"},
      dtypes=(D.FLOAT, D.FLOAT16, D.INT8, D.INT32, D.INT64, D.UINT8, D.BF16, D.DOUBLE, D.INT16)),
    E("IsInTensorScalar", "aten::isin.Tensor_Scalar", "element testElement assumeUnique invert out",
      ("element", "testElement"), {"assume_unique": "assumeUnique", "invert": "invert"}, dtypes=NUMS),
    E("OneHot", F + "one_hot", "self numClasses onValue offValue axis out",
      ("self", "numClasses", "onValue", "offValue", "axis"),
      dtypes={"self": (D.INT32, D.INT64), "*": (D.FLOAT16, D.FLOAT, D.INT32, D.INT64)}),
    E("SortWithIndex", F + "sort_with_index", "x index axis descending stable valuesOut indicesOut",
      ("x", "index", "axis", "descending", "stable"), out="valuesOut indicesOut",
      dtypes={"x": (D.FLOAT16, D.FLOAT, D.BF16, D.INT32), "index": (D.INT32,)},
      notes="ties may order differently unless stable"),
]
