"""Reductions, scans and sorts."""
from __future__ import annotations

from ._entry import FLOATS, FLOATS64, INTS, NUMS, Dtype, E




ENTRIES = [
    E("Mean", "aten::mean.dim", "self dim keepDim dtype out", ("self", "dim", "keepDim"), {"dtype": Dtype("dtype")},
      dtypes=FLOATS64),
    E("Amax", "aten::amax.default", "self dim keepDim out", ("self", "dim", "keepDim"), dtypes=NUMS),
    E("Max", "aten::max.default", "self out", ("self",), dtypes=NUMS),
    E("Min", "aten::min.default", "self out", ("self",), dtypes=NUMS),
    E("Prod", "aten::prod.default", "self dtype out", ("self",), {"dtype": Dtype("dtype")}, dtypes=NUMS),
    E("Cumsum", "aten::cumsum.default", "self dim dtype out", ("self", "dim"), {"dtype": Dtype("dtype")},
      dtypes=FLOATS64 + INTS),
    E("Std", "aten::std.correction", "self dim correction keepdim out", ("self", "dim"),
      {"correction": "correction", "keepdim": "keepdim"}, dtypes=FLOATS),
    E("Var", "aten::var.dim", "self dim unbiased keepdim out", ("self", "dim", "unbiased", "keepdim"), dtypes=FLOATS),
    E("Norm", "aten::norm.ScalarOpt_dim", "self pScalar dim keepdim out", ("self", "pScalar", "dim", "keepdim"),
      dtypes=FLOATS),
    E("Sort", "aten::sort.stable", "self stable dim descending valuesOut indicesOut", ("self",),
      {"stable": "stable", "dim": "dim", "descending": "descending"}, out="valuesOut indicesOut", dtypes=NUMS,
      notes="indices computed in int64, cast to indicesOut's dtype"),
    E("Topk", "aten::topk.default", "self k dim largest sorted valuesOut indicesOut",
      ("self", "k", "dim", "largest", "sorted"), out="valuesOut indicesOut", dtypes=NUMS,
      notes="indices computed in int64, cast to indicesOut's dtype; ties may order differently"),
]

