"""Reductions, scans, sorts and selections along a dimension."""
from __future__ import annotations

from ._entry import ALL, FLOATS, FLOATS64, INTS, NUMS, Call, D, Dtype, E, empty_is_all

_FN = "compose:base."
_ALL_AXES = Call("dim", empty_is_all)  # an empty dim: every axis (empty_is_all)
_NULL_DIM = "dim nullptr or empty: every axis"
# aclnn_logsumexp.cpp INPUT_DTYPE_SUPPORT_LIST_910B (the list without bf16 elsewhere)
_LSE = (D.FLOAT, D.INT32, D.INT64, D.FLOAT16, D.INT16, D.INT8, D.UINT8, D.BOOL, D.BF16)

_STABLE = "ties keep their order only where aten's sort is stable"

ENTRIES = [
    E("Mean", "aten::mean.dim", "self dim keepDim dtype out", ("self", "dim", "keepDim"), {"dtype": Dtype("dtype")},
      dtypes=FLOATS64),
    E("Amax", "aten::amax.default", "self dim keepDim out", ("self", "dim", "keepDim"), dtypes=NUMS),
    E("Amin", "aten::amin.default", "self dim keepDim out", ("self", "dim", "keepDim"), dtypes=NUMS),
    E("All", "aten::all.dims", "self dim keepdim out", ("self", _ALL_AXES, "keepdim"), dtypes=ALL,
      traced="math/reduce_all/op_api/aclnn_all.cpp", notes="an empty dim reduces every axis (make_dim_mask)"),
    E("Any", "aten::any.dims", "self dim keepdim out", ("self", _ALL_AXES, "keepdim"), dtypes=ALL,
      traced="math/reduce_any/op_api/aclnn_any.cpp", notes="an empty dim reduces every axis (make_dim_mask)"),
    E("Max", "aten::max.default", "self out", ("self",), dtypes=NUMS),
    E("Min", "aten::min.default", "self out", ("self",), dtypes=NUMS),
    E("AminmaxDim", "aten::aminmax.default", "self dim keepDim minOut maxOut", ("self",),
      {"dim": "dim", "keepdim": "keepDim"}, out="minOut maxOut", dtypes=NUMS),
    E("ArgMax", "aten::argmax.default", "self dim keepdim out", ("self", "dim", "keepdim"), dtypes=NUMS,
      notes="indices computed in int64, cast to out's dtype"),
    E("ArgMin", "aten::argmin.default", "self dim keepdim out", ("self", "dim", "keepdim"), dtypes=NUMS,
      notes="indices computed in int64, cast to out's dtype"),
    E("Prod", "aten::prod.default", "self dtype out", ("self",), {"dtype": Dtype("dtype")}, dtypes=ALL),
    E("ProdDim", "aten::prod.dim_int", "self dim keepDim dtype out", ("self", "dim", "keepDim"),
      {"dtype": Dtype("dtype")}, dtypes=ALL),
    E("Cumsum", "aten::cumsum.default", "self dim dtype out", ("self", "dim"), {"dtype": Dtype("dtype")},
      dtypes=FLOATS64 + INTS),
    E("Cumprod", "aten::cumprod.default", "input dim dtype out", ("input", Call("dim", int)),
      {"dtype": Dtype("dtype")}, dtypes=FLOATS64 + INTS, notes="dim is an aclScalar, taken as an int"),
    E("Cummax", "aten::cummax.default", "self dim valuesOut indicesOut", ("self", "dim"), out="valuesOut indicesOut",
      dtypes=NUMS),
    E("Cummin", "aten::cummin.default", "self dim valuesOut indicesOut", ("self", "dim"), out="valuesOut indicesOut",
      dtypes=NUMS),
    E("AminmaxAll", "aten::aminmax.default", "self minOut maxOut", ("self",), out="minOut maxOut", dtypes=NUMS),
    E("ReduceNansum", "aten::nansum.default", "self dim keepDim dtype out", ("self", _ALL_AXES, "keepDim"),
      {"dtype": Dtype("dtype")}, dtypes=FLOATS64 + INTS,
      notes="an empty dim reduces every axis (math/reduce_nansum/op_api/aclnn_reduce_nansum.cpp)"),
    # math/reduce_var/op_api/aclnn_var.cpp, aclnn_var_mean.cpp, reduce_std_v2/op_api/aclnn_std.cpp,
    # reduce_std_with_mean/op_api/aclnn_std_mean_correction.cpp: dim may be nullptr (CheckNotNull2Tensor /
    # CheckNotNull3Tensor), and `dim == nullptr || dim->Size() == 0` reduces every axis
    E("VarCorrection", "aten::var.correction", "self dim correction keepdim out", ("self", _ALL_AXES),
      {"correction": "correction", "keepdim": "keepdim"}, dtypes=FLOATS, nullable="dim", notes=_NULL_DIM),
    E("StdMeanCorrection", "aten::std_mean.correction", "self dim correction keepdim stdOut meanOut",
      ("self", _ALL_AXES), {"correction": "correction", "keepdim": "keepdim"}, out="stdOut meanOut", dtypes=FLOATS,
      nullable="dim", notes=_NULL_DIM),
    E("LogSumExp", _FN + "log_sum_exp", "self dim keepDim out", ("self", "dim", "keepDim"), dtypes=_LSE,
      out_dtypes=FLOATS, traced="math/reduce_log_sum_exp/op_api/aclnn_logsumexp.cpp",
      notes="float16, bf16, integers and bool computed in float32; an empty dim reduces every axis"),
    E("Std", "aten::std.correction", "self dim correction keepdim out", ("self", _ALL_AXES),
      {"correction": "correction", "keepdim": "keepdim"}, dtypes=FLOATS, nullable="dim", notes=_NULL_DIM),
    E("Var", "aten::var.dim", "self dim unbiased keepdim out", ("self", _ALL_AXES, "unbiased", "keepdim"),
      dtypes=FLOATS, nullable="dim", notes=_NULL_DIM),
    E("VarMean", "aten::var_mean.correction", "self dim correction keepdim varOut meanOut", ("self", _ALL_AXES),
      {"correction": "correction", "keepdim": "keepdim"}, out="varOut meanOut", dtypes=FLOATS, nullable="dim",
      notes=_NULL_DIM),
    E("Norm", "aten::norm.ScalarOpt_dim", "self pScalar dim keepdim out", ("self", "pScalar", "dim", "keepdim"),
      dtypes=FLOATS),
    E("LinalgVectorNorm", "aten::linalg_vector_norm.default", "self ord dims keepDims dtype out",
      ("self", "ord", "dims", "keepDims"), {"dtype": Dtype("dtype")}, dtypes=FLOATS64),
    E("Trace", "aten::trace.default", "self out", ("self",), dtypes=NUMS),
    E("Median", "aten::median.default", "self valuesOut", ("self",), out="valuesOut", dtypes=NUMS,
      notes="of an even count, the lower of the two middle values"),
    E("MedianDim", "aten::median.dim", "self dim keepDim valuesOut indicesOut", ("self", "dim", "keepDim"),
      out="valuesOut indicesOut", dtypes=NUMS),
    E("NanMedian", "aten::nanmedian.default", "self out", ("self",), dtypes=NUMS),
    E("NanMedianDim", "aten::nanmedian.dim", "self dim keepDim valuesOut indicesOut", ("self", "dim", "keepDim"),
      out="valuesOut indicesOut", dtypes=NUMS),
    E("Kthvalue", "aten::kthvalue.default", "self k dim keepdim valuesOut indicesOut", ("self", "k", "dim", "keepdim"),
      out="valuesOut indicesOut", dtypes=NUMS),
    E("Sort", "aten::sort.stable", "self stable dim descending valuesOut indicesOut", ("self",),
      {"stable": "stable", "dim": "dim", "descending": "descending"}, out="valuesOut indicesOut", dtypes=NUMS,
      notes="indices computed in int64, cast to indicesOut's dtype; " + _STABLE),
    E("Argsort", "aten::argsort.stable", "self dim descending out", ("self",),
      {"stable": True, "dim": "dim", "descending": "descending"}, dtypes=NUMS,
      notes="a stable sort (the device's order of ties is not documented)"),
    E("Topk", "aten::topk.default", "self k dim largest sorted valuesOut indicesOut",
      ("self", "k", "dim", "largest", "sorted"), out="valuesOut indicesOut", dtypes=NUMS,
      notes="indices computed in int64, cast to indicesOut's dtype; " + _STABLE),
]
