"""Element-wise unary operators (ops-math): trigonometric, hyperbolic, special functions, the
floating-point predicates, and their in-place forms.

Each entry's parameters are its header's (the shipped signature table); its dtypes the op_api
source's DTYPE_SUPPORT_LIST for Ascend910B (hicann/ops-math <dir>/op_api/aclnn_<name>.cpp; bf16
only on SOCS_BF16), less the dtypes torch's CPU kernel lacks (said in notes). An in-place form
writes aten's result back into its tensor: a result that cannot be cast to that tensor's dtype
(a float result into an integer tensor) is refused, as the sources' SELFREF lists refuse it.
"""
from __future__ import annotations

from ._entry import E, Entry
from ._ew_dtypes import d


_TRIG = d("f32 f16 f64 i8 i16 i32 i64 b u8 bf16")  # aclnn_acos.cpp, aclnn_asin.cpp, aclnn_atan.cpp
_TRIG_C = _TRIG + d("c64 c128")  # aclnn_a(co|si|ta)nh.cpp, aclnn_cosh.cpp, aclnn_sinh.cpp, aclnn_tan.cpp
_FLOATS = d("f32 f16 bf16")
_F64 = d("f32 f16 f64 bf16")
_PRED = d("f16 f32 bf16 b i32 i64 i16 i8 u8")  # aclnn_is_neg_inf.cpp, aclnn_is_pos_inf.cpp

# (operator, its tensor parameter, aten name, dtypes, source, notes)
_UNARY: list[tuple[str, str, str, tuple, str, str]] = [
    ("Acos", "input", "acos", _TRIG, "math/acos/op_api/aclnn_acos.cpp", ""),
    ("Acosh", "self", "acosh", _TRIG_C, "math/acosh/op_api/aclnn_acosh.cpp", ""),
    ("Asin", "self", "asin", _TRIG, "math/asin/op_api/aclnn_asin.cpp", ""),
    ("Asinh", "input", "asinh", _TRIG_C, "math/asinh/op_api/aclnn_asinh.cpp", ""),
    ("AsinhV2", "x", "asinh", d("f16 f32 i8 i16 i32 i64 u8 b f64"),
     "experimental/math/asinh_v2/op_api/aclnn_asinh_v2.cpp",
     "out float16 or float32 (the source wants float16 for a float16 x, float32 for the others: the tier "
     "also takes the other of the two)"),
    ("Atan", "input", "atan", _TRIG, "math/atan/op_api/aclnn_atan.cpp", ""),
    ("Atanh", "input", "atanh", _TRIG_C, "math/atanh/op_api/aclnn_atanh.cpp", ""),
    ("Cosh", "self", "cosh", _TRIG_C, "math/cosh/op_api/aclnn_cosh.cpp", ""),
    ("Sinh", "self", "sinh", _TRIG_C, "math/sinh/op_api/aclnn_sinh.cpp", ""),
    ("Tan", "self", "tan", _TRIG_C, "math/tan/op_api/aclnn_tan.cpp", ""),
    ("Digamma", "self", "digamma", d("f64 f32 f16"), "math/digamma/op_host/op_api/aclnn_digamma.cpp", ""),
    ("Lgamma", "self", "lgamma", d("f64 f32 f16"), "math/lgamma/op_host/op_api/aclnn_lgamma.cpp", ""),
    ("Erfc", "self", "erfc", d("f64 f32 f16 b i64 bf16"), "math/erfc/op_api/aclnn_erfc.cpp", ""),
    ("Frac", "input", "frac", _FLOATS + d("i8 i16 i32 i64 u8"), "math/sub/op_api/aclnn_frac.cpp",
     "integers: 0 (torch's frac has no integer kernel: compose/ew.py frac)"),
    ("Log10", "self", "log10", d("b u8 i8 i16 i32 i64 bf16 f16 f32 f64 c64 c128"),
     "math/log/op_api/aclnn_log10.cpp", ""),
    ("Log2", "self", "log2", d("f32 i32 i64 f16 i16 i8 u8 f64 bf16 b c64 c128"),
     "math/log/op_api/aclnn_log2.cpp", ""),
    ("Sinc", "self", "sinc", _TRIG, "math/sinc/op_api/aclnn_sinc.cpp", ""),
    ("Square", "self", "square", d("i64 f32 f16 i32 bf16"), "math/square/op_api/aclnn_square.cpp", ""),
    ("Trunc", "self", "trunc", _FLOATS, "math/trunc/op_api/aclnn_trunc.cpp",
     "Ascend950 also takes int8, uint8, int32 (ARCH3510 list): not modelled"),
    ("Signbit", "self", "signbit", d("f32 i32 i64 f16 i16 i8 u8 f64 b bf16 u16 u32 u64"),
     "math/signbit/op_api/aclnn_signbit.cpp", ""),
    ("IsFinite", "self", "isfinite", _F64 + d("i32 i64 i16 i8 u8 b"), "math/is_finite/op_api/aclnn_is_finite.cpp",
     "integers and bool too (the source's lists; the doc names the floats only)"),
    ("IsNegInf", "self", "isneginf", _PRED, "experimental/math/is_neg_inf/op_api/aclnn_is_neg_inf.cpp", ""),
    ("IsPosInf", "self", "isposinf", _PRED, "experimental/math/is_pos_inf/op_api/aclnn_is_pos_inf.cpp", ""),
    ("BitwiseNot", "self", "bitwise_not", d("i16 i32 i64 i8 u8 b"),
     "math/bitwise_not/op_api/aclnn_bitwise_not.cpp", ""),
]

# in-place forms: (operator, its tensor parameter, aten name, dtypes of the tensor, source)
_INPLACE: list[tuple[str, str, str, tuple, str]] = [
    ("InplaceAcos", "inputRef", "acos", _F64, "math/acos/op_api/aclnn_acos.cpp"),
    ("InplaceAcosh", "selfRef", "acosh", _F64 + d("c64 c128"), "math/acosh/op_api/aclnn_acosh.cpp"),
    ("InplaceAsin", "selfRef", "asin", _F64, "math/asin/op_api/aclnn_asin.cpp"),
    ("InplaceAsinh", "inputRef", "asinh", _F64 + d("c64 c128"), "math/asinh/op_api/aclnn_asinh.cpp"),
    ("InplaceAtan", "inputRef", "atan", _F64, "math/atan/op_api/aclnn_atan.cpp"),
    ("InplaceAtanh", "inputRef", "atanh", _F64 + d("c64 c128"), "math/atanh/op_api/aclnn_atanh.cpp"),
    ("InplaceCeil", "selfRef", "ceil", _F64, "math/ceil/op_api/aclnn_ceil.cpp"),
    ("InplaceCos", "inputRef", "cos", _F64 + d("c64 c128"), "math/cos/op_api/aclnn_cos.cpp"),
    ("InplaceCosh", "selfRef", "cosh", _F64 + d("c64 c128"), "math/cosh/op_api/aclnn_cosh.cpp"),
    ("InplaceErf", "selfRef", "erf", _F64, "math/erf/op_api/aclnn_erf.cpp"),
    ("InplaceErfc", "selfRef", "erfc", _F64, "math/erfc/op_api/aclnn_erfc.cpp"),
    ("InplaceExp", "selfRef", "exp", _F64 + d("c64 c128"), "math/exp/op_api/aclnn_exp.cpp"),
    ("InplaceExp2", "selfRef", "exp2", _F64, "math/pow/op_api/aclnn_exp2.cpp"),
    ("InplaceExpm1", "selfRef", "expm1", _FLOATS, "math/expm1/op_api/aclnn_expm1.cpp"),
    ("InplaceFloor", "selfRef", "floor", _F64 + d("i64 i32 i16 i8 u8"),
     "math/floor/op_api/aclnn_floor.cpp"),
    ("InplaceFrac", "inputRef", "frac", _FLOATS + d("i8 i16 i32 i64 u8"), "math/sub/op_api/aclnn_frac.cpp"),
    ("InplaceLog", "selfRef", "log", _F64 + d("c64 c128"), "math/log/op_api/aclnn_log.cpp"),
    ("InplaceLog10", "selfRef", "log10", _F64 + d("c64 c128"), "math/log/op_api/aclnn_log10.cpp"),
    ("InplaceLog1p", "selfRef", "log1p", _F64, "math/log1p/op_api/aclnn_log1p.cpp"),
    ("InplaceLog2", "selfRef", "log2", _F64 + d("c64 c128"), "math/log/op_api/aclnn_log2.cpp"),
    ("InplaceLogicalNot", "selfRef", "logical_not", d("u8 i8 i16 i32 i64 f16 f32 f64 b bf16"),
     "math/logical_not/op_api/aclnn_logical_not.cpp"),
    ("InplaceNeg", "selfRef", "neg", d("i8 i32 i64 f16 f32 f64 c64 c128 bf16"),
     "math/neg/op_api/aclnn_neg.cpp"),
    ("InplaceReciprocal", "selfRef", "reciprocal", _F64 + d("c64 c128"),
     "math/reciprocal/op_api/aclnn_reciprocal.cpp"),
    ("InplaceRound", "selfRef", "round", _F64 + d("i32 i64"), "math/round/op_api/aclnn_round.cpp"),
    ("InplaceRsqrt", "selfRef", "rsqrt", _F64 + d("c64 c128"), "math/rsqrt/op_api/aclnn_rsqrt.cpp"),
    ("InplaceSin", "selfRef", "sin", _F64 + d("c64 c128"), "math/sin/op_api/aclnn_sin.cpp"),
    ("InplaceSinc", "selfRef", "sinc", _F64, "math/sinc/op_api/aclnn_sinc.cpp"),
    ("InplaceSinh", "selfRef", "sinh", _F64 + d("c64 c128"), "math/sinh/op_api/aclnn_sinh.cpp"),
    ("InplaceSqrt", "self", "sqrt", _F64 + d("c64 c128"), "math/sqrt/op_api/aclnn_sqrt.cpp"),
    ("InplaceTan", "selfRef", "tan", _F64 + d("c64 c128"), "math/tan/op_api/aclnn_tan.cpp"),
    ("InplaceTanh", "selfRef", "tanh", _FLOATS, "math/tanh/op_api/aclnn_tanh.cpp"),
    ("InplaceTrunc", "selfRef", "trunc", _FLOATS, "math/trunc/op_api/aclnn_trunc.cpp"),
]

_NAN_SOCS = "Ascend910B Ascend910_93 Ascend950"  # aclnn_nan_to_num.cpp: 910B, 910_93, RegBase
_NAN = "nan, posinf, neginf as floats (aten's defaults apply only to a None; CANN's are explicit)"

# out's dtype must be the input's (the sources' OP_CHECK_DTYPE_NOT_MATCH(self, out))
_SAME_OUT = {"BitwiseNot", "Digamma", "Lgamma", "Trunc", "Square", "Frac"}
# the SoCs an operator exists on (the sources' SoC checks)
_SOCS = {"Square": "Ascend950",  # aclnn_square.cpp: IsRegBase() only
         "IsNegInf": "Ascend910B Ascend910_93", "IsPosInf": "Ascend910B Ascend910_93"}  # "910B/910C class"
_OUT_DTYPES = {"IsFinite": d("b"), "IsNegInf": d("b"), "IsPosInf": d("b"), "AsinhV2": d("f16 f32")}
_FRAC = "compose:ew.frac"  # integers too (their fraction is 0)

ENTRIES: list[Entry] = [
    *(E(op, _FRAC if aten == "frac" else f"aten::{aten}.default", f"{x} out", (x,), dtypes=dts, traced=src,
        notes=notes, same_dtype=f"{x} out" if op in _SAME_OUT else "", socs=_SOCS.get(op, ""),
        out_dtypes=_OUT_DTYPES.get(op))
      for op, x, aten, dts, src, notes in _UNARY),
    *(E(op, _FRAC if aten == "frac" else f"aten::{aten}.default", x, (x,), out=x, dtypes=dts, traced=src)
      for op, x, aten, dts, src in _INPLACE),
    E("NanToNum", "aten::nan_to_num.default", "self nan posinf neginf out", ("self", "nan", "posinf", "neginf"),
      dtypes=d("f16 f32 bf16 i8 i16 i32 i64 u8 b"), same_dtype="self out", socs=_NAN_SOCS,
      traced="math/nan_to_num/op_api/aclnn_nan_to_num.cpp", notes=_NAN),
    E("InplaceNanToNum", "aten::nan_to_num.default", "selfRef nan posinf neginf",
      ("selfRef", "nan", "posinf", "neginf"), dtypes=d("f16 f32 bf16 i8 i16 i32 i64 u8 b"), socs=_NAN_SOCS,
      traced="math/nan_to_num/op_api/aclnn_nan_to_num.cpp", notes=_NAN),
    E("InplaceRoundDecimals", "compose:base.round_decimals", "selfRef decimals",
      ("selfRef", "decimals"), dtypes=_F64 + d("i32 i64"), traced="math/round/op_api/aclnn_round.cpp",
      notes="halves to even after scaling by 10**decimals, as aten; an integer rounds to itself"),
    E("InplaceOne", "aten::ones_like.default", "selfRef", ("selfRef",),
      dtypes=d("f32 f16 i8 i16 i32 i64 u8 b f64 bf16"),
      traced="math/ones_like/op_api/aclnn_ones.cpp", notes="fills selfRef with ones"),
]
