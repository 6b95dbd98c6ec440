"""Element-wise binary and ternary arithmetic (ops-math): the Scalar forms of Add/Sub/Mul/Div,
rounding division, remainders, powers, xlogy, lerp, addcmul/addcdiv, bitwise and logical
operators, shifts, clamps, and their in-place forms.

Dtypes: the op_api source's Ascend910B list (hicann/ops-math, the file in ``traced``), less what
torch's CPU kernel lacks (notes). Scalars arrive as Python numbers: the result dtype follows
aten's promotion (a float scalar makes an integer tensor's result float, as CANN's
PromoteType of the tensor and the scalar's dtype does for these operators). An in-place form
refuses a result its tensor's dtype cannot hold (CanCast), as the sources' CheckInplace does.
"""
from __future__ import annotations

from ._entry import E, Entry, Enum
from ._ew_dtypes import d


_ADD = d("f32 i32 i64 f16 i16 i8 u8 f64 b bf16 c64 c128")  # math/add/op_api/aclnn_add.cpp
_SUB = d("f32 i32 i64 f16 i16 i8 u8 f64 bf16 c64 c128")  # math/sub/op_api/aclnn_sub.cpp (bool: aten refuses)
_RSUB = d("f32 f16 i64 i32 i8 u8 i16 f64 c64 c128 bf16")  # math/sub/op_api/aclnn_rsub.cpp
_MUL = d("f32 f16 i32 f64 i8 u8 i16 i64 b c128 c64 bf16")  # math/mul/op_api/aclnn_mul.cpp
_DIV = d("f16 f32 i64 i32 i16 i8 u8 f64 b bf16 c64 c128")  # math/div/op_api/aclnn_div.cpp
_FMOD = d("f32 i32 i8 f16 u8 f64 i64 bf16")  # math/mod/op_api/aclnn_fmod_tensor.cpp, aclnn_fmod_scalar.cpp
_REM = d("i32 i64 f16 f32 f64 bf16")  # math/floor_mod/op_api/aclnn_remainder.cpp
_POW = d("f32 i32 i64 f16 i8 u8 f64 i16 bf16 c64 c128")  # math/pow/op_api/aclnn_pow*.cpp (bool: below)
_POW_B = _POW + d("b")  # a bool tensor to a scalar power: aten's pow.Tensor_Scalar takes it
_DIVMOD = d("f16 f32 i64 i32 i16 i8 u8 f64 bf16")  # aclnn_div.cpp's list less bool, complex (no trunc/floor kernel)
_XLOGY = d("f32 i32 i64 f16 i8 u8 b i16 bf16")  # math/xlogy/op_api/aclnn_x_log_y_*.cpp
_LERP = d("f16 f32 bf16")  # experimental/math/lerp/op_api/aclnn_lerp_*.cpp
_BITS = d("i16 i32 i64 i8 u8 b")  # the bitwise_and/or/xor sources' lists ...
_BITS16 = _BITS + d("u16")  # ... and uint16 (and, or Scalar), uint16/32/64 (or Tensor)
_LOGIC = d("f32 f16 i32 f64 bf16 i8 u8 i16 i64 b c64 c128")  # logical_and/or, logical_xor sources
_CLAMP = d("f16 f32 i32 i64 i16 i8 u8 f64 bf16")  # conversion/clip_by_value_v2/op_api/aclnn_clamp.cpp

_ADD_SRC, _SUB_SRC, _MUL_SRC, _DIV_SRC = ("math/add/op_api/aclnn_add.cpp", "math/sub/op_api/aclnn_sub.cpp",
                                          "math/mul/op_api/aclnn_mul.cpp", "math/div/op_api/aclnn_div.cpp")
_MOD_SRC, _REM_SRC = ("math/mod/op_api/aclnn_fmod_tensor.cpp",
                      "math/floor_mod/op_api/aclnn_remainder.cpp")
_CLAMP_SRC = "conversion/clip_by_value_v2/op_api/aclnn_clamp.cpp"
# aclnnDivMod's mode (docs/aclnnDivMod.md): 0 true division, 1 truncation, 2 floor; torch.div, whose
# rounding_mode defaults to None (true division) where aten's div.Tensor_mode has no default
_MODE = Enum("mode", (None, "trunc", "floor"))
_MODE_NOTE = ("mode 0: true division (integers give a float), 1: 'trunc', 2: 'floor' (aten's rounding_mode); "
              "bool and complex inputs left out (aten has no trunc/floor division of them); an integer "
              "division by zero is refused at launch (aten raises; the device's result is undefined)")
_SUB_NOTE = "bool tensors left out (aten refuses bool subtraction)"
_CLAMP_NOTE = ("either bound may be nullptr (the doc); both nullptr: the device says 161001, aten refuses "
               "with 161002")
_POW_NOTE = "bool exponents left out (torch's pow has no bool kernel)"
_BIT = "uint32/64 of Ascend950's list left out"


def _binary(op: str, aten: str, params: str, dtypes: tuple, src: str, notes: str = "",
            inplace_of: str | None = None) -> Entry:
    """An entry whose aten arguments are its C inputs in order (an alpha parameter by keyword)."""
    names = params.split()
    outs = {"out"} if "out" in names else {names[0]} if inplace_of else set()
    args = tuple(n for n in names if n not in outs or inplace_of)
    kwargs = {"alpha": "alpha"} if "alpha" in args else {}
    args = tuple(a for a in args if a != "alpha")
    return E(op, aten, params, args, kwargs, out=None if not inplace_of else names[0], dtypes=dtypes,
             traced=src, notes=notes)


def _inplace(op: str, aten: str, params: str, dtypes: tuple, src: str, notes: str = "") -> Entry:
    return _binary(op, aten, params, dtypes, src, notes, inplace_of=params.split()[0])


ENTRIES: list[Entry] = [
    # Scalar forms of the four arithmetic operators
    _binary("Adds", "aten::add.Scalar", "self other alpha out", _ADD, _ADD_SRC),
    _binary("Subs", "aten::sub.Scalar", "self other alpha out", _SUB, _SUB_SRC, _SUB_NOTE),
    _binary("Muls", "aten::mul.Scalar", "self other out", _MUL, _MUL_SRC),
    _binary("Divs", "aten::div.Scalar", "self other out", _DIV, _DIV_SRC, "true division"),
    _binary("Rsub", "aten::rsub.Tensor", "self other alpha out", _RSUB, "math/sub/op_api/aclnn_rsub.cpp",
            "other - alpha * self (docs/aclnnRsub.md)"),
    _binary("Rsubs", "aten::rsub.Scalar", "self other alpha out", _RSUB, "math/sub/op_api/aclnn_rsub.cpp",
            "other - alpha * self"),
    E("DivMod", "torch:torch.div", "self other mode out", ("self", "other"), {"rounding_mode": _MODE},
      dtypes=_DIVMOD, traced=_DIV_SRC, notes=_MODE_NOTE),
    E("DivMods", "torch:torch.div", "self other mode out", ("self", "other"), {"rounding_mode": _MODE},
      dtypes=_DIVMOD, traced=_DIV_SRC, notes=_MODE_NOTE),
    E("Addcmul", "aten::addcmul.default", "self tensor1 tensor2 value out", ("self", "tensor1", "tensor2"),
      {"value": "value"}, dtypes=d("f32 i32 i64 f16 i8 u8 f64 bf16"),
      traced="math/addcmul/op_api/aclnn_addcmul.cpp", notes="self + value * tensor1 * tensor2"),
    E("Addcdiv", "aten::addcdiv.default", "self tensor1 tensor2 value out", ("self", "tensor1", "tensor2"),
      {"value": "value"}, dtypes=d("f32 f16 f64 bf16"), traced="math/addcdiv/op_api/aclnn_addcdiv.cpp",
      notes="self + value * tensor1 / tensor2; int64 left out (aten refuses integer addcdiv)"),
    # remainders
    _binary("FmodScalar", "aten::fmod.Scalar", "self other out", _FMOD, "math/mod/op_api/aclnn_fmod_scalar.cpp"),
    _binary("FmodTensor", "aten::fmod.Tensor", "self other out", _FMOD, _MOD_SRC),
    _binary("RemainderTensorScalar", "aten::remainder.Scalar", "self other out", _REM, _REM_SRC),
    _binary("RemainderTensorTensor", "aten::remainder.Tensor", "self other out", _REM, _REM_SRC),
    _binary("RemainderScalarTensor", "aten::remainder.Scalar_Tensor", "self other out", _REM, _REM_SRC),
    # powers, logarithms
    _binary("PowTensorScalar", "aten::pow.Tensor_Scalar", "self exponent out", _POW_B, "math/pow/op_api/aclnn_pow.cpp",
            _POW_NOTE),
    _binary("PowScalarTensor", "aten::pow.Scalar", "self exponent out", _POW, "math/pow/op_api/aclnn_pow.cpp",
            _POW_NOTE),
    _binary("PowTensorTensor", "aten::pow.Tensor_Tensor", "self exponent out", _POW,
            "math/pow/op_api/aclnn_pow_tensor_tensor.cpp", _POW_NOTE),
    _binary("XLogYTensor", "aten::xlogy.Tensor", "self other out", _XLOGY,
            "math/xlogy/op_api/aclnn_x_log_y_tensor.cpp"),
    _binary("XLogYScalarOther", "aten::xlogy.Scalar_Other", "self other out", _XLOGY,
            "math/xlogy/op_api/aclnn_x_log_y_scalar_other.cpp"),
    _binary("XLogYScalarSelf", "aten::xlogy.Scalar_Self", "self other out", _XLOGY,
            "math/xlogy/op_api/aclnn_x_log_y_scalar_self.cpp"),
    _binary("LogAddExp", "aten::logaddexp.default", "self other out", d("f32 f16 f64 bf16"),
            "math/log_add_exp/op_api/aclnn_logaddexp.cpp", "integer and bool inputs left out (no CPU kernel)"),
    _binary("LogAddExp2", "aten::logaddexp2.default", "self other out", d("f32 f16 f64 bf16"),
            "math/log_add_exp/op_api/aclnn_logaddexp2.cpp", "integer and bool inputs left out (no CPU kernel)"),
    E("Lerp", "aten::lerp.Tensor", "self end weight out", ("self", "end", "weight"), dtypes=_LERP,
      same_dtype="self end weight out", traced="math/lerp/op_api/aclnn_lerp_tensor.cpp"),
    E("Lerps", "aten::lerp.Scalar", "self end weight out", ("self", "end", "weight"), dtypes=_LERP,
      same_dtype="self end", traced="math/lerp/op_api/aclnn_lerp_scalar.cpp"),
    _binary("Gcd", "aten::gcd.default", "self other out", d("i32 i16 i64"),
            "math/gcd/op_api/aclnn_gcd.cpp", "Ascend950 also takes int8, uint8 (not modelled)"),
    # bits and logic
    _binary("BitwiseAndScalar", "aten::bitwise_and.Scalar", "self other out", _BITS16,
            "math/bitwise_and/op_api/aclnn_bitwise_and_scalar.cpp", _BIT),
    _binary("BitwiseAndTensor", "aten::bitwise_and.Tensor", "self other out", _BITS16,
            "math/bitwise_and/op_api/aclnn_bitwise_and_tensor.cpp", _BIT),
    _binary("BitwiseAndTensorOut", "aten::bitwise_and.Tensor", "self other out", _BITS16,
            "math/bitwise_and/op_api/aclnn_bitwiseand.cpp", _BIT),
    _binary("BitwiseOrScalar", "aten::bitwise_or.Scalar", "self other out", _BITS16,
            "math/bitwise_or/op_api/aclnn_bitwise_or_scalar.cpp", _BIT),
    _binary("BitwiseOrTensor", "aten::bitwise_or.Tensor", "self other out", _BITS16 + d("u32 u64"),
            "math/bitwise_or/op_api/aclnn_bitwise_or_tensor.cpp", _BIT),
    _binary("BitwiseXorScalar", "aten::bitwise_xor.Scalar", "self other out", _BITS,
            "math/bitwise_xor/op_api/aclnn_bitwise_xor_scalar.cpp", _BIT),
    _binary("BitwiseXorTensor", "aten::bitwise_xor.Tensor", "self other out", _BITS,
            "math/bitwise_xor/op_api/aclnn_bitwise_xor_tensor.cpp", _BIT),
    E("LeftShift", "aten::bitwise_left_shift.Tensor", "self shiftBits out", ("self", "shiftBits"),
      dtypes=d("i8 i16 i32 i64 u8"), traced="math/left_shift/op_api/aclnn_left_shift.cpp",
      notes="uint16/32/64 left out; a shift by the type's width or more: aten's result (0), the doc says nothing"),
    E("LeftShifts", "aten::bitwise_left_shift.Tensor_Scalar", "self shiftBits out", ("self", "shiftBits"),
      dtypes=d("i8 i16 i32 i64 u8"), traced="math/left_shift/op_api/aclnn_left_shift.cpp",
      notes="uint16/32/64 left out; a shift by the type's width or more: aten's result (0), the doc says nothing"),
    _binary("LogicalOr", "aten::logical_or.default", "self other out", _LOGIC,
            "math/logical_or/op_api/aclnn_logical_or.cpp"),
    _binary("LogicalXor", "aten::logical_xor.default", "self other out", _LOGIC,
            "math/not_equal/op_api/aclnn_logical_xor.cpp"),
    # clamps
    E("Clamp", "aten::clamp.default", "self clipValueMin clipValueMax out", ("self",),
      {"min": "clipValueMin", "max": "clipValueMax"}, nullable="clipValueMin clipValueMax", dtypes=_CLAMP,
      traced=_CLAMP_SRC, notes=_CLAMP_NOTE),
    _binary("ClampMin", "aten::clamp_min.default", "self clipValueMin out", _CLAMP, _CLAMP_SRC),
    _binary("ClampMax", "aten::clamp_max.default", "self clipValueMax out", _CLAMP, _CLAMP_SRC),
    E("ClampTensor", "aten::clamp.Tensor", "self clipValueMin clipValueMax out", ("self",),
      {"min": "clipValueMin", "max": "clipValueMax"}, nullable="clipValueMin clipValueMax", dtypes=_CLAMP,
      traced=_CLAMP_SRC, notes=_CLAMP_NOTE),
    _binary("ClampMinTensor", "aten::clamp_min.Tensor", "self clipValueMin out", _CLAMP, _CLAMP_SRC),
    _binary("ClampMaxTensor", "aten::clamp_max.Tensor", "self max out", _CLAMP, _CLAMP_SRC),
    E("Hardtanh", "aten::hardtanh.default", "self clipValueMin clipValueMax out",
      ("self", "clipValueMin", "clipValueMax"), dtypes=_CLAMP, same_dtype="self out",
      traced="conversion/clip_by_value_v2/op_api/aclnn_hardtanh.cpp"),

    # in-place forms (the first parameter is updated)
    _inplace("InplaceAdds", "aten::add.Scalar", "selfRef other alpha", _ADD, _ADD_SRC),
    _inplace("InplaceSub", "aten::sub.Tensor", "selfRef other alpha", _SUB, _SUB_SRC, _SUB_NOTE),
    _inplace("InplaceSubs", "aten::sub.Scalar", "selfRef other alpha", _SUB, _SUB_SRC, _SUB_NOTE),
    _inplace("InplaceMul", "aten::mul.Tensor", "selfRef other", _MUL, _MUL_SRC),
    _inplace("InplaceMuls", "aten::mul.Scalar", "selfRef other", _MUL, _MUL_SRC),
    _inplace("InplaceDiv", "aten::div.Tensor", "selfRef other", _DIV, _DIV_SRC, "true division"),
    _inplace("InplaceDivs", "aten::div.Scalar", "selfRef other", _DIV, _DIV_SRC, "true division"),
    E("InplaceDivMod", "torch:torch.div", "selfRef other mode", ("selfRef", "other"),
      {"rounding_mode": _MODE}, dtypes=_DIVMOD, traced=_DIV_SRC, notes=_MODE_NOTE),
    E("InplaceDivMods", "torch:torch.div", "selfRef other mode", ("selfRef", "other"),
      {"rounding_mode": _MODE}, dtypes=_DIVMOD, traced=_DIV_SRC, notes=_MODE_NOTE),
    E("InplaceAddcmul", "aten::addcmul.default", "selfRef tensor1 tensor2 value", ("selfRef", "tensor1", "tensor2"),
      {"value": "value"}, dtypes=d("f32 i32 i64 f16 i8 u8 f64 bf16"),
      traced="math/addcmul/op_api/aclnn_addcmul.cpp"),
    E("InplaceAddcdiv", "aten::addcdiv.default", "selfRef tensor1 tensor2 value", ("selfRef", "tensor1", "tensor2"),
      {"value": "value"}, dtypes=d("f32 f16 f64 bf16"), traced="math/addcdiv/op_api/aclnn_addcdiv.cpp",
      notes="int64 left out (aten refuses integer addcdiv)"),
    _inplace("InplaceFmodScalar", "aten::fmod.Scalar", "selfRef other", _FMOD, "math/mod/op_api/aclnn_fmod_scalar.cpp"),
    _inplace("InplaceFmodTensor", "aten::fmod.Tensor", "selfRef other", _FMOD, _MOD_SRC),
    _inplace("InplaceRemainderTensorScalar", "aten::remainder.Scalar", "selfRef other", _REM, _REM_SRC),
    _inplace("InplaceRemainderTensorTensor", "aten::remainder.Tensor", "selfRef other", _REM, _REM_SRC),
    _inplace("InplacePowTensorScalar", "aten::pow.Tensor_Scalar", "self exponent", _POW_B,
             "math/pow/op_api/aclnn_pow.cpp", _POW_NOTE),
    _inplace("InplacePowTensorTensor", "aten::pow.Tensor_Tensor", "self exponent", _POW,
             "math/pow/op_api/aclnn_pow_tensor_tensor.cpp", _POW_NOTE),
    _inplace("InplaceXLogYTensor", "aten::xlogy.Tensor", "selfRef other", _XLOGY,
             "math/xlogy/op_api/aclnn_x_log_y_tensor.cpp"),
    _inplace("InplaceXLogYScalarOther", "aten::xlogy.Scalar_Other", "selfRef other", _XLOGY,
             "math/xlogy/op_api/aclnn_x_log_y_scalar_other.cpp"),
    E("InplaceLerp", "aten::lerp.Tensor", "selfRef end weight", ("selfRef", "end", "weight"), dtypes=_LERP,
      same_dtype="selfRef end weight", traced="math/lerp/op_api/aclnn_lerp_tensor.cpp"),
    E("InplaceLerps", "aten::lerp.Scalar", "selfRef end weight", ("selfRef", "end", "weight"), dtypes=_LERP,
      same_dtype="selfRef end", traced="math/lerp/op_api/aclnn_lerp_scalar.cpp"),
    _inplace("InplaceBitwiseAndScalar", "aten::bitwise_and.Scalar", "selfRef other", _BITS16,
             "math/bitwise_and/op_api/aclnn_bitwise_and_scalar.cpp", _BIT),
    _inplace("InplaceBitwiseAndTensor", "aten::bitwise_and.Tensor", "selfRef other", _BITS16,
             "math/bitwise_and/op_api/aclnn_bitwise_and_tensor.cpp", _BIT),
    _inplace("InplaceBitwiseAndTensorOut", "aten::bitwise_and.Tensor", "self other", _BITS16,
             "math/bitwise_and/op_api/aclnn_bitwiseand.cpp", _BIT),
    _inplace("InplaceBitwiseOrScalar", "aten::bitwise_or.Scalar", "selfRef other", _BITS16,
             "math/bitwise_or/op_api/aclnn_bitwise_or_scalar.cpp", _BIT),
    _inplace("InplaceBitwiseOrTensor", "aten::bitwise_or.Tensor", "selfRef other", _BITS16 + d("u32 u64"),
             "math/bitwise_or/op_api/aclnn_bitwise_or_tensor.cpp", _BIT),
    _inplace("InplaceBitwiseXorScalar", "aten::bitwise_xor.Scalar", "selfRef other", _BITS,
             "math/bitwise_xor/op_api/aclnn_bitwise_xor_scalar.cpp", _BIT),
    _inplace("InplaceBitwiseXorTensor", "aten::bitwise_xor.Tensor", "selfRef other", _BITS,
             "math/bitwise_xor/op_api/aclnn_bitwise_xor_tensor.cpp", _BIT),
    _inplace("InplaceLogicalAnd", "aten::logical_and.default", "selfRef other", _LOGIC,
             "math/logical_and/op_api/aclnn_logical_and.cpp"),
    _inplace("InplaceLogicalOr", "aten::logical_or.default", "selfRef other", _LOGIC,
             "math/logical_or/op_api/aclnn_logical_or.cpp"),
    _inplace("InplaceClampMax", "aten::clamp_max.default", "selfRef clipValueMax", _CLAMP, _CLAMP_SRC),
    _inplace("InplaceClampMaxTensor", "aten::clamp_max.Tensor", "selfRef max", _CLAMP, _CLAMP_SRC),
    _inplace("InplaceClampMinTensor", "aten::clamp_min.Tensor", "selfRef clipValueMin", _CLAMP, _CLAMP_SRC),
    _inplace("InplaceHardtanh", "aten::hardtanh.default", "selfRef clipValueMin clipValueMax", _CLAMP,
             "conversion/clip_by_value_v2/op_api/aclnn_hardtanh.cpp"),
]
