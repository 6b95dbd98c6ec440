"""Creation operators of the ops-math tensor list (issue 24 expansion): sequences and identity
matrices, in the output's dtype (aten's ``dtype=`` taken from out).

Output dtypes from each operator's op_api source (hicann/ops-math math/<dir>/op_api/aclnn_<name>.cpp,
its ASCEND910B output list); semantics from its docs/aclnn<Name>.md.
"""
from __future__ import annotations

from ._entry import D, E, OutDtype

_SEQ = (D.FLOAT16, D.FLOAT, D.DOUBLE, D.INT64, D.INT32, D.BF16)  # aclnn_arange.cpp, aclnn_range.cpp

ENTRIES = [
    E("Arange", "aten::arange.start_step", "start end step out", ("start", "end", "step"),
      {"dtype": OutDtype("out")}, out_dtypes=_SEQ, notes="[start, end) by step, in out's dtype"),
    E("Range", "aten::range.default", "start end step out", ("start", "end", "step"), {"dtype": OutDtype("out")},
      out_dtypes=_SEQ, notes="[start, end] by step (end included), in out's dtype"),
    E("Linspace", "aten::linspace.default", "start end steps out", ("start", "end", "steps"),
      {"dtype": OutDtype("out")},
      out_dtypes=(D.FLOAT, D.FLOAT16, D.BF16, D.INT32, D.INT16, D.INT8, D.UINT8, D.INT64, D.DOUBLE)),
    E("LogSpace", "aten::logspace.default", "start end steps base result", ("start", "end", "steps", "base"),
      {"dtype": OutDtype("result")}, out="result",
      out_dtypes=(D.FLOAT, D.FLOAT16, D.BF16, D.INT8, D.INT16, D.INT32, D.UINT8)),
    E("Eye", "aten::eye.m", "n m out", ("n", "m"), {"dtype": OutDtype("out")},
      out_dtypes=(D.FLOAT, D.INT32, D.FLOAT16, D.INT8, D.INT16, D.UINT8, D.INT64, D.BOOL, D.BF16)),
]
