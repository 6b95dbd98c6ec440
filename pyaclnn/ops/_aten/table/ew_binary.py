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
_SHIFT_SRC = "math/left_shift/op_api/aclnn_left_shift.cpp"
_SHIFT_NOTE = "uint16/32/64 left out; a shift by the type's width or more: aten's result (0), the doc says nothing"


def _forms(op: str, aten: str, tail: str, dtypes: tuple, src: str, notes: str = "", inplace: str | None = "selfRef",
           args: tuple[str, ...] | None = None, kwargs: dict | None = None, same_dtype: str = "",
           nullable: str = "", functional: bool = True) -> list[Entry]:
    """aclnn<op> (C parameters ``self <tail> out``; not when ``functional`` is False: another
    family has it) and, unless ``inplace`` is None,
    aclnnInplace<op> (``<inplace> <tail>``, the result written into its first tensor): one aten
    overload for both. Its arguments: ``args`` and ``kwargs`` when given (``self`` standing for
    the in-place form's first tensor), else the C inputs in order with ``alpha`` by keyword;
    ``same_dtype`` is the functional form's (the in-place form's: its first tensor for self,
    without out)."""
    forms = ([("self", op, f"self {tail} out")] if functional else []) + \
        ([(inplace, f"Inplace{op}", f"{inplace} {tail}")] if inplace else [])
    entries = []
    for first, name, params in forms:
        def c(n: str) -> str:
            return first if n == "self" else n
        inputs = [n for n in params.split() if n != "out"]
        pos = tuple(c(a) for a in args) if args is not None else tuple(n for n in inputs if n != "alpha")
        kw = {k: c(v) if isinstance(v, str) else v for k, v in kwargs.items()} if kwargs is not None else \
            ({"alpha": "alpha"} if "alpha" in inputs else {})
        same = [c(n) for n in same_dtype.split() if c(n) in params.split()]
        entries.append(E(name, aten, params, pos, kw, out=None if name == op else first,
                         dtypes=dtypes, traced=src, notes=notes, same_dtype=" ".join(same) if len(same) > 1 else "",
                         nullable=nullable))
    return entries


def _bits(op: str, dtypes: tuple) -> list[Entry]:
    """BitwiseAnd/Or/Xor's Scalar and Tensor forms, each with its in-place one."""
    src = f"math/{_snake(op)}/op_api/aclnn_{_snake(op)}_{{}}.cpp"
    return [*_forms(f"{op}Scalar", f"aten::{_snake(op)}.Scalar", "other", dtypes[0], src.format("scalar"), _BIT),
            *_forms(f"{op}Tensor", f"aten::{_snake(op)}.Tensor", "other", dtypes[1], src.format("tensor"), _BIT)]


def _snake(op: str) -> str:
    return "".join(f"_{ch.lower()}" if ch.isupper() and i else ch.lower() for i, ch in enumerate(op))


_ADDCMUL_ARGS, _VALUE = ("self", "tensor1", "tensor2"), {"value": "value"}
_LERP_SRC = "math/lerp/op_api/aclnn_lerp_{}.cpp"
_POW_SRC, _POW_TT_SRC = "math/pow/op_api/aclnn_pow.cpp", "math/pow/op_api/aclnn_pow_tensor_tensor.cpp"
_XLOGY_SRC = "math/xlogy/op_api/aclnn_x_log_y_{}.cpp"
_SELF_OTHER, _ROUNDING = ("self", "other"), {"rounding_mode": _MODE}
_BOUNDS = {"min": "clipValueMin", "max": "clipValueMax"}

ENTRIES: list[Entry] = [
    # the four arithmetic operators (their Tensor forms' functional entries are math.py's)
    *_forms("Adds", "aten::add.Scalar", "other alpha", _ADD, _ADD_SRC),
    *_forms("Subs", "aten::sub.Scalar", "other alpha", _SUB, _SUB_SRC, _SUB_NOTE),
    *_forms("Sub", "aten::sub.Tensor", "other alpha", _SUB, _SUB_SRC, _SUB_NOTE, functional=False),
    *_forms("Muls", "aten::mul.Scalar", "other", _MUL, _MUL_SRC),
    *_forms("Mul", "aten::mul.Tensor", "other", _MUL, _MUL_SRC, functional=False),
    *_forms("Divs", "aten::div.Scalar", "other", _DIV, _DIV_SRC, "true division"),
    *_forms("Div", "aten::div.Tensor", "other", _DIV, _DIV_SRC, "true division", functional=False),
    *_forms("Rsub", "aten::rsub.Tensor", "other alpha", _RSUB, "math/sub/op_api/aclnn_rsub.cpp",
            "other - alpha * self (docs/aclnnRsub.md)", inplace=None),
    *_forms("Rsubs", "aten::rsub.Scalar", "other alpha", _RSUB, "math/sub/op_api/aclnn_rsub.cpp",
            "other - alpha * self", inplace=None),
    *_forms("DivMod", "torch:torch.div", "other mode", _DIVMOD, _DIV_SRC, _MODE_NOTE, args=_SELF_OTHER,
            kwargs=_ROUNDING),
    *_forms("DivMods", "torch:torch.div", "other mode", _DIVMOD, _DIV_SRC, _MODE_NOTE, args=_SELF_OTHER,
            kwargs=_ROUNDING),
    *_forms("Addcmul", "aten::addcmul.default", "tensor1 tensor2 value", d("f32 i32 i64 f16 i8 u8 f64 bf16"),
            "math/addcmul/op_api/aclnn_addcmul.cpp", "self + value * tensor1 * tensor2", args=_ADDCMUL_ARGS,
            kwargs=_VALUE),
    *_forms("Addcdiv", "aten::addcdiv.default", "tensor1 tensor2 value", d("f32 f16 f64 bf16"),
            "math/addcdiv/op_api/aclnn_addcdiv.cpp",
            "self + value * tensor1 / tensor2; int64 left out (aten refuses integer addcdiv)", args=_ADDCMUL_ARGS,
            kwargs=_VALUE),
    # remainders
    *_forms("FmodScalar", "aten::fmod.Scalar", "other", _FMOD, "math/mod/op_api/aclnn_fmod_scalar.cpp"),
    *_forms("FmodTensor", "aten::fmod.Tensor", "other", _FMOD, _MOD_SRC),
    *_forms("RemainderTensorScalar", "aten::remainder.Scalar", "other", _REM, _REM_SRC),
    *_forms("RemainderTensorTensor", "aten::remainder.Tensor", "other", _REM, _REM_SRC),
    *_forms("RemainderScalarTensor", "aten::remainder.Scalar_Tensor", "other", _REM, _REM_SRC, inplace=None),
    # powers, logarithms
    *_forms("PowTensorScalar", "aten::pow.Tensor_Scalar", "exponent", _POW_B, _POW_SRC, _POW_NOTE, inplace="self"),
    *_forms("PowScalarTensor", "aten::pow.Scalar", "exponent", _POW, _POW_SRC, _POW_NOTE, inplace=None),
    *_forms("PowTensorTensor", "aten::pow.Tensor_Tensor", "exponent", _POW, _POW_TT_SRC, _POW_NOTE, inplace="self"),
    *_forms("XLogYTensor", "aten::xlogy.Tensor", "other", _XLOGY, _XLOGY_SRC.format("tensor")),
    *_forms("XLogYScalarOther", "aten::xlogy.Scalar_Other", "other", _XLOGY, _XLOGY_SRC.format("scalar_other")),
    *_forms("XLogYScalarSelf", "aten::xlogy.Scalar_Self", "other", _XLOGY, _XLOGY_SRC.format("scalar_self"),
            inplace=None),
    *_forms("LogAddExp", "aten::logaddexp.default", "other", d("f32 f16 f64 bf16"),
            "math/log_add_exp/op_api/aclnn_logaddexp.cpp", "integer and bool inputs left out (no CPU kernel)",
            inplace=None),
    *_forms("LogAddExp2", "aten::logaddexp2.default", "other", d("f32 f16 f64 bf16"),
            "math/log_add_exp/op_api/aclnn_logaddexp2.cpp", "integer and bool inputs left out (no CPU kernel)",
            inplace=None),
    *_forms("Lerp", "aten::lerp.Tensor", "end weight", _LERP, _LERP_SRC.format("tensor"),
            same_dtype="self end weight out"),
    *_forms("Lerps", "aten::lerp.Scalar", "end weight", _LERP, _LERP_SRC.format("scalar"), same_dtype="self end"),
    *_forms("Gcd", "aten::gcd.default", "other", d("i32 i16 i64"), "math/gcd/op_api/aclnn_gcd.cpp",
            "Ascend950 also takes int8, uint8 (not modelled)", inplace=None),
    # bits and logic
    *_bits("BitwiseAnd", (_BITS16, _BITS16)),
    *_bits("BitwiseOr", (_BITS16, _BITS16 + d("u32 u64"))),
    *_bits("BitwiseXor", (_BITS, _BITS)),
    *_forms("BitwiseAndTensorOut", "aten::bitwise_and.Tensor", "other", _BITS16,
            "math/bitwise_and/op_api/aclnn_bitwiseand.cpp", _BIT, inplace="self"),
    *_forms("LeftShift", "aten::bitwise_left_shift.Tensor", "shiftBits", d("i8 i16 i32 i64 u8"), _SHIFT_SRC,
            _SHIFT_NOTE, inplace=None),
    *_forms("LeftShifts", "aten::bitwise_left_shift.Tensor_Scalar", "shiftBits", d("i8 i16 i32 i64 u8"),
            _SHIFT_SRC, _SHIFT_NOTE, inplace=None),
    *_forms("LogicalAnd", "aten::logical_and.default", "other", _LOGIC,
            "math/logical_and/op_api/aclnn_logical_and.cpp", functional=False),
    *_forms("LogicalOr", "aten::logical_or.default", "other", _LOGIC, "math/logical_or/op_api/aclnn_logical_or.cpp"),
    *_forms("LogicalXor", "aten::logical_xor.default", "other", _LOGIC,
            "math/not_equal/op_api/aclnn_logical_xor.cpp", inplace=None),
    # clamps
    *_forms("Clamp", "aten::clamp.default", "clipValueMin clipValueMax", _CLAMP, _CLAMP_SRC, _CLAMP_NOTE,
            inplace=None, nullable="clipValueMin clipValueMax", args=("self",), kwargs=_BOUNDS),
    *_forms("ClampTensor", "aten::clamp.Tensor", "clipValueMin clipValueMax", _CLAMP, _CLAMP_SRC, _CLAMP_NOTE,
            inplace=None, nullable="clipValueMin clipValueMax", args=("self",), kwargs=_BOUNDS),
    *_forms("ClampMin", "aten::clamp_min.default", "clipValueMin", _CLAMP, _CLAMP_SRC, inplace=None),
    *_forms("ClampMax", "aten::clamp_max.default", "clipValueMax", _CLAMP, _CLAMP_SRC),
    *_forms("ClampMinTensor", "aten::clamp_min.Tensor", "clipValueMin", _CLAMP, _CLAMP_SRC),
    *_forms("ClampMaxTensor", "aten::clamp_max.Tensor", "max", _CLAMP, _CLAMP_SRC),
    *_forms("Hardtanh", "aten::hardtanh.default", "clipValueMin clipValueMax", _CLAMP,
            "conversion/clip_by_value_v2/op_api/aclnn_hardtanh.cpp", same_dtype="self out"),
]
