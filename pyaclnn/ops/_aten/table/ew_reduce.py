"""Reductions of the ops-math list: max/min over one dim with indices (aten), ONNX-style max and
log-sum over axes with the empty-axes rule (compose/ew.py)."""
from __future__ import annotations

from ._entry import E, Entry
from ._ew_dtypes import d


_FN = "compose:ew."
_INDICES = ("indices computed in int64, cast to indices' dtype (int64, or int32 where the doc allows it); "
            "the first index of equal extremes, as aten's CPU kernel")

ENTRIES: list[Entry] = [
    E("MaxDim", "aten::max.dim", "self dim keepdim out indices", ("self", "dim", "keepdim"), out="out indices",
      dtypes=d("f32 f16 i64 b bf16"), same_dtype="self out", traced="math/arg_max_with_value/op_api/aclnn_max_dim.cpp",
      notes=_INDICES),
    E("MinDim", "aten::min.dim", "self dim keepdim out indices", ("self", "dim", "keepdim"), out="out indices",
      dtypes=d("f32 f16 i64 b bf16"), same_dtype="self out", traced="math/arg_min_with_value/op_api/aclnn_min_dim.cpp",
      notes=_INDICES),
    E("MaxV2", _FN + "max_v2", "self dims keepDims noopWithEmptyDims out", ("self", "dims", "keepDims",
      "noopWithEmptyDims"), dtypes=d("f32 f16 u8 i8 i16 i32 i64 f64 b bf16"), same_dtype="self out",
      traced="math/reduce_max/op_api/aclnn_max_v2.cpp"),
    E("ReduceLogSum", _FN + "reduce_log_sum", "data axes keepDims noopWithEmptyAxes reduce",
      ("data", "axes", "keepDims", "noopWithEmptyAxes"), out="reduce", dtypes=d("f16 f32"),
      traced="math/reduce_log_sum/op_api/aclnn_reduce_log_sum.cpp",
      notes="bfloat16 (Ascend950 only, the doc) not modelled"),
]
