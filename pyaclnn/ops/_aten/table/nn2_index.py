"""Scatter, repeat_interleave and renorm of list nn2 (issue 24). reduce of aclnnScatter and
ScatterValue: 0 none, 1 add, 2 mul (aclnn_scatter.h); of aclnnScatterReduce: 0 none .. 5 mean
(aclnn_scatter_reduce.h, compose/nn2.py)."""
from __future__ import annotations

from ._entry import ALL, COMPLEX_, E, FLOATS
from ....dtypes import DType

_C = "compose:nn2."
_IDX = (DType.INT32, DType.INT64)
_SCATTER = {"*": ALL + COMPLEX_, "index": _IDX}
_REPEAT = (DType.UINT8, DType.INT8, DType.INT16, DType.INT32, DType.INT64, DType.BOOL) + FLOATS
_OUTSIZE = ("outputSize must equal the repeated size (the doc): a wrong one is refused when the kernel runs "
            "(aten's check needs the repeats' values)")

ENTRIES = [
    E("Scatter", _C + "scatter", "self dim index src reduce out", ("self", "dim", "index", "src", "reduce"),
      dtypes=_SCATTER),
    E("ScatterValue", _C + "scatter", "self dim index value reduce out", ("self", "dim", "index", "value", "reduce"),
      dtypes=_SCATTER),
    E("InplaceScatter", _C + "scatter", "selfRef dim index src reduce", ("selfRef", "dim", "index", "src", "reduce"),
      dtypes=_SCATTER),
    E("InplaceScatterValue", _C + "scatter", "selfRef dim index value reduce",
      ("selfRef", "dim", "index", "value", "reduce"), dtypes=_SCATTER),
    E("ScatterReduce", _C + "scatter_reduce", "self dim index src reduce includeSelf out",
      ("self", "dim", "index", "src", "reduce", "includeSelf"), dtypes=_SCATTER),
    E("InplaceScatterReduce", _C + "scatter_reduce", "selfRef dim index src reduce includeSelf",
      ("selfRef", "dim", "index", "src", "reduce", "includeSelf"), dtypes=_SCATTER),
    E("RepeatInterleave", "aten::repeat_interleave.self_Tensor", "self repeats outputSize out",
      ("self", "repeats"), {"output_size": "outputSize"}, dtypes={"*": _REPEAT, "repeats": _IDX}, notes=_OUTSIZE),
    E("RepeatInterleaveWithDim", "aten::repeat_interleave.self_Tensor", "self repeats dim outputSize out",
      ("self", "repeats", "dim"), {"output_size": "outputSize"}, dtypes={"*": _REPEAT, "repeats": _IDX},
      notes=_OUTSIZE),
    E("RepeatInterleaveInt", "aten::repeat_interleave.self_int", "self repeats outputSize out",
      ("self", "repeats"), {"output_size": "outputSize"}, dtypes=_REPEAT),
    E("RepeatInterleaveTensor", "aten::repeat_interleave.Tensor", "repeats outputSize out", ("repeats",),
      {"output_size": "outputSize"}, dtypes=_IDX, notes=_OUTSIZE),
    E("ScatterNd", _C + "scatter_nd", "data indices updates out", ("data", "indices", "updates"),
      dtypes={"*": FLOATS + (DType.BOOL,), "indices": _IDX}),
    E("ScatterNdUpdate", _C + "scatter_nd", "varRef indices updates", ("varRef", "indices", "updates"), out="varRef",
      dtypes={"*": (DType.FLOAT16, DType.BF16, DType.FLOAT, DType.INT64, DType.BOOL, DType.INT8), "indices": _IDX},
      notes="the float8 dtypes of the doc are not taken (HIFLOAT8 has no torch dtype)"),
    E("TfScatterAdd", _C + "tf_scatter_add", "varRef indices updates", ("varRef", "indices", "updates"),
      out="varRef", dtypes={"*": FLOATS + (DType.INT32, DType.INT8, DType.UINT8), "indices": _IDX},
      same_dtype="varRef updates"),
]
