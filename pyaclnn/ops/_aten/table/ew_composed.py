"""Element-wise operators of ops-math that no single aten overload computes: small compositions
of torch operations (compose/ew.py, each citing the doc it follows), and one aten overload with a
converted argument (AddV3).

LEFT_OUT: the operators of the ops-math list (/work/notes/ops-math.txt) no table entry computes,
each with its reason; besides them, aclnnAdd and aclnnInplaceAdd, which the exact references
compute (pyaclnn.ops: a table entry must not shadow them).
"""
from __future__ import annotations

from ._entry import Call, E, Entry
from ._ew_dtypes import d


_FN = "compose:ew."
_HALF = d("f16 f32 bf16")

ENTRIES: list[Entry] = [
    E("AddV3", "aten::rsub.Scalar", "self other alpha out", ("other", "self"), {"alpha": Call("alpha", lambda a: -a)},
      dtypes=d("f32 i32 f16 bf16 i8"), traced="math/add/op_api/aclnn_add_v3.cpp",
      notes="self (a scalar) + alpha * other, as aten's rsub(other, self, alpha=-alpha)"),
    E("AddN", _FN + "add_n", "tensors out", ("tensors",), dtypes=d("i32 i64 f16 bf16 f32"),
      socs="Ascend910B Ascend910_93 Ascend950",
      traced="math/add_n/op_api/aclnn_add_n.cpp",
      notes="same shapes and dtypes; half precision summed in float32; out's dtype is not checked against "
            "the tensors' (the source requires it equal)"),
    E("MulNoNan", _FN + "mul_no_nan", "x y z", ("x", "y"), out="z", dtypes=_HALF, same_dtype="x y z",
      traced="experimental/math/mul_no_nan/op_api/aclnn_mul_no_nan.cpp"),
    E("ApproximateEqual", _FN + "approximate_equal", "x1 x2 tolerance y", ("x1", "x2", "tolerance"), out="y",
      dtypes=_HALF, traced="experimental/math/approximate_equal/op_api/aclnn_approximate_equal.cpp"),
    E("AddMatMatElements", _FN + "add_mat_mat_elements", "a b c alpha beta cOut", ("a", "b", "c", "alpha", "beta"),
      out="cOut", dtypes=_HALF, same_dtype="a b c cOut",
      traced="experimental/math/add_mat_mat_elements/op_api/aclnn_add_mat_mat_elements.cpp"),
    E("AddMatMatElementsPlus", _FN + "add_mat_mat_elements_plus", "c a b beta alpha cOut",
      ("c", "a", "b", "beta", "alpha"), out="cOut", dtypes=_HALF, same_dtype="c a b beta alpha",
      traced="experimental/math/add_mat_mat_elements_plus/op_api/aclnn_add_mat_mat_elements_plus.cpp"),
    E("FusedMulAddN", _FN + "fused_mul_add_n", "x1 x2 x3 y", ("x1", "x2", "x3"), out="y",
      dtypes=d("f32 f16 bf16 i32 i16"), same_dtype="x1 x2 x3 y",
      traced="experimental/math/fused_mul_add_n/op_host/op_api/aclnn_fused_mul_add_n.cpp"),
    E("DivV3", _FN + "div_v3", "self other mode out", ("self", "other", "mode"), dtypes=d("f32 f16 bf16 i32 i16"),
      traced="experimental/math/div_v3/op_api/aclnn_div_v3.cpp",
      notes="integers divided in float32 and cast back (mode 0 too); an integer division by zero casts inf"),
    E("Equal", _FN + "equal", "self other out", ("self", "other"), out_dtypes=d("b"),
      dtypes=d("f32 i32 i64 f16 i16 i8 u8 b f64 bf16"), traced="math/tensor_equal/op_api/aclnn_equal.cpp",
      notes="out has shape [1]; uint16/32/64 of the source's list left out"),
    E("InplaceAtan2", _FN + "atan2_in_place", "selfRef other", ("selfRef", "other"), out="selfRef other",
      dtypes=d("f32 f16 f64 bf16"), traced="math/atan2/op_api/aclnn_atan2.cpp",
      notes="other is written back unchanged (the header declares it non-const)"),
    E("ExpSegsum", _FN + "exp_segsum", "self out", ("self",), dtypes=_HALF, same_dtype="self out",
      traced="math/segsum/op_host/op_api/aclnn_segsum.cpp"),
]

LEFT_OUT: dict[str, str] = {
    "InplaceAddV3": "selfRef is an aclScalar: there is no tensor to write the result to",
    "DropoutGenMask": "RNG (seeded bit mask)",
    "DropoutGenMaskV2": "RNG (seeded bit mask)",
    "DropoutGenMaskV2Tensor": "RNG (seeded bit mask)",
    "InplaceRandomWithoutFromTo": "RNG (seeded)",
    "InplaceRandomWithoutFromToTensor": "RNG (seeded)",
    "NormalFloatTensor": "RNG (seeded)",
    "NormalTensorFloat": "RNG (seeded)",
    "DropoutBackward": "its mask is DropoutGenMask's bit-packed uint8 mask, whose bit order and padding are the "
                       "kernel's (not in the doc); no aten overload takes it",
    "DropoutV3Grad": "a bit-packed uint8 mask as DropoutBackward's",
}
