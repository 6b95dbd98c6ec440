"""Gradients of element-wise operators (ops-math): TanhBackward through aten, the rest through
the compositions of compose/ew.py (each with the doc it follows)."""
from __future__ import annotations

from ._entry import E, Entry
from ._ew_dtypes import d


_FN = "compose:ew."
_HALF = d("f16 f32 bf16")
_GROUPED = {"gradY": _HALF, "groupIdxOptional": d("i32 i64")}  # group_bias_in_out_dtype_list, group_idx_dtype_list
_SAME = "the inputs' shapes and dtypes must be equal (the source's CheckShape)"

ENTRIES: list[Entry] = [
    E("TanhBackward", "aten::tanh_backward.default", "gradOutput output gradInput", ("gradOutput", "output"),
      out="gradInput", dtypes=d("f32 f16 f64 bf16"), same_dtype="gradOutput output gradInput",
      traced="math/tanh_grad/op_api/aclnn_tanh_backward.cpp",
      notes="gradOutput * (1 - output^2); broadcasts"),
    E("AcosGrad", _FN + "acos_grad", "y_grad x x_grad", ("y_grad", "x"), out="x_grad", dtypes=_HALF,
      same_dtype="y_grad x x_grad",
      traced="experimental/math/acos_grad/op_api/aclnn_acos_grad.cpp", notes=_SAME),
    E("AcosGradV2", _FN + "acos_grad_v2", "y dy z", ("y", "dy"), out="z", dtypes=_HALF, same_dtype="y dy z",
      traced="experimental/math/acos_grad_v2/op_api/aclnn_acos_grad_v2.cpp", notes=_SAME),
    E("AsinhGrad", _FN + "asinh_grad", "y dy z", ("y", "dy"), out="z", dtypes=_HALF, same_dtype="y dy z",
      traced="experimental/math/asinh_grad/op_api/aclnn_asinh_grad.cpp", notes=_SAME),
    E("AtanGrad", _FN + "atan_grad", "x dy dx", ("x", "dy"), out="dx", dtypes=_HALF, same_dtype="x dy dx",
      traced="experimental/math/atan_grad/op_api/aclnn_atan_grad.cpp", notes=_SAME),
    E("ExpSegsumBackward", _FN + "exp_segsum_backward", "gradOutput gradSelf gradInput", ("gradOutput", "gradSelf"),
      out="gradInput", dtypes=_HALF, same_dtype="gradOutput gradInput",
      traced="math/exp_segsum_grad/op_host/op_api/aclnn_exp_segsum_backward.cpp"),
    E("GroupedBiasAddGrad", _FN + "grouped_bias_add_grad", "gradY groupIdxOptional out", ("gradY", "groupIdxOptional"),
      dtypes=_GROUPED, same_dtype="gradY out",
      traced="math/grouped_bias_add_grad/op_api/aclnn_grouped_bias_add_grad.cpp",
      notes="groupIdx are the groups' ends"),
    E("GroupedBiasAddGradV2", _FN + "grouped_bias_add_grad", "gradY groupIdxOptional groupIdxType out",
      ("gradY", "groupIdxOptional", "groupIdxType"), dtypes=_GROUPED, same_dtype="gradY out",
      traced="math/grouped_bias_add_grad/op_api/aclnn_grouped_bias_add_grad.cpp",
      notes="groupIdxType 0: groupIdx are the groups' ends, 1: their sizes"),
]
