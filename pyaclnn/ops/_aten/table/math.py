"""Element-wise math the ew_* families (the ops-math list, traced operator by operator) do not
have: unary and binary operators, comparisons, and their in-place forms (``Inplace<Op>``: the
functional aten op, its result written into the ``...Ref`` tensor, so the usual out checks apply
to it: shape, and a result dtype castable to it).

Each entry was checked against its header (parameter names and order, in
/work/shared/headers and the shipped signature table) and the aten schema (torch 2.13).
"""
from __future__ import annotations

from ._entry import ALL, COMPLEX_, FLOATS64, INTS, NUMS, Dtype, E, Entry
from ....dtypes import DType

_BOOL_INTS = INTS + (DType.BOOL,)

# (CANN name, aten name, input dtypes): out = aten(self)
_UNARY = [
    ("Log", "log", FLOATS64), ("Sqrt", "sqrt", FLOATS64), ("Rsqrt", "rsqrt", FLOATS64),
    ("Sin", "sin", FLOATS64), ("Tanh", "tanh", FLOATS64), ("Sigmoid", "sigmoid", FLOATS64), ("Erf", "erf", FLOATS64),
    ("Exp2", "exp2", FLOATS64), ("Log1p", "log1p", FLOATS64), ("Expm1", "expm1", FLOATS64),
    ("Reciprocal", "reciprocal", FLOATS64), ("Ceil", "ceil", FLOATS64),
    ("Round", "round", FLOATS64), ("LogicalNot", "logical_not", ALL),
]

# (CANN name, aten overload, input dtypes): out = aten(self, other)
_BINARY = [
    ("Mul", "mul.Tensor", ALL), ("Maximum", "maximum.default", ALL), ("Minimum", "minimum.default", ALL),
    ("Atan2", "atan2.default", FLOATS64 + INTS), ("LogicalAnd", "logical_and.default", ALL),
    ("FloorDivide", "floor_divide.default", NUMS),
]
# (CANN name, aten overload, input dtypes): out = aten(self, other) with an aclScalar other
_TENSOR_SCALAR = [("FloorDivides", "floor_divide.Scalar", NUMS)]

D = DType
_OPS_MATH = "hicann/ops-math math/{0}/op_api/aclnn_{0}.cpp"
# Traced from the op sources (CheckDtypeValid): the 910B list (DAV_2201 and regbase), the 910 one
_ABS = (D.DOUBLE, D.FLOAT, D.FLOAT16, D.INT64, D.INT32, D.INT16, D.INT8, D.UINT8)
_EXP = (D.FLOAT, D.FLOAT16, D.DOUBLE, D.COMPLEX64, D.COMPLEX128, D.BOOL, D.INT64)
_NEG = (D.INT8, D.INT32, D.INT64, D.FLOAT16, D.FLOAT, D.DOUBLE, D.COMPLEX64, D.COMPLEX128)
_FLOOR = (D.INT64, D.INT32, D.INT16, D.INT8, D.UINT64, D.UINT32, D.UINT16, D.UINT8, D.DOUBLE, D.FLOAT, D.FLOAT16)

# hicann/ops-nn e5c3fa9327ea95ba26d06227e746923580d10921 activation/erfinv/op_api/aclnn_erfinv.cpp: no double;
# integers and bool computed as float32 (the out a float32 result can be cast to), floats as themselves
_ERFINV = (D.FLOAT, D.FLOAT16, D.BF16, D.BOOL, D.INT8, D.INT16, D.INT32, D.INT64, D.UINT8)
_ERFINV_SRC = "activation/erfinv/op_api/aclnn_erfinv.cpp: dtype lists per SoC; integers and bool give float32"

# hicann/ops-nn e5c3fa9327ea95ba26d06227e746923580d10921 activation/relu/op_api/aclnn_add_relu.cpp: no double,
# no bool; aten's _add_relu has no fp16, bf16 nor uint8 kernel (its meta accepted them): compose.nn.add_relu
_ADD_RELU = (D.FLOAT, D.FLOAT16, D.BF16, D.INT8, D.UINT8, D.INT16, D.INT32, D.INT64)
_ADD_RELU_SRC = "activation/relu/op_api/aclnn_add_relu.cpp"

ENTRIES: list[Entry] = [
    E("Erfinv", "aten::erfinv.default", "self out", ("self",), dtypes=_ERFINV, traced=_ERFINV_SRC),
    E("InplaceErfinv", "aten::erfinv.default", "selfRef", ("selfRef",), out="selfRef", dtypes=_ERFINV,
      traced=_ERFINV_SRC + " (aclnnErfinv with out = selfRef: an integer selfRef cannot hold the result)"),
    E("Abs", "aten::abs.default", "self out", ("self",), dtypes=_ABS + (D.BF16,), dtypes_v1=_ABS,
      same_dtype="self out", traced=_OPS_MATH.format("abs") + ": dtype lists per arch, out of self's dtype",
      notes="left out: complex inputs (the device writes their float modulus) and bool (the device copies "
            "it through; aten's abs has no bool kernel)"),
    E("Exp", "aten::exp.default", "self out", ("self",), dtypes=_EXP + (D.BF16,), dtypes_v1=_EXP,
      traced=_OPS_MATH.format("exp") + ": dtype lists per arch; bool and int64 computed as float, castable to out"),
    E("Neg", "aten::neg.default", "self out", ("self",), dtypes=_NEG + (D.BF16,), dtypes_v1=_NEG,
      traced=_OPS_MATH.format("neg") + ": dtype lists per SoC (bf16 on 910B, 910_93 and regbase), castable to out"),
    E("Floor", "aten::floor.default", "self out", ("self",), dtypes=_FLOOR + (D.BF16,), dtypes_v1=_FLOOR,
      same_dtype="self out", traced=_OPS_MATH.format("floor") + ": dtype lists per arch, out of self's dtype"),
    *(E(op, f"aten::{name}.default", "self out", ("self",), dtypes=dt) for op, name, dt in _UNARY),
    E("Cos", "aten::cos.default", "input out", ("input",), dtypes=FLOATS64),
    E("Sign", "aten::sign.default", "self result", ("self",), out="result", dtypes=NUMS),
    *(E(op, f"aten::{name}", "self other out", ("self", "other"), dtypes=dt) for op, name, dt in _BINARY),
    *(E(op, f"aten::{name}", "self other out", ("self", "other"), dtypes=dt) for op, name, dt in _TENSOR_SCALAR),
    E("Div", "aten::div.Tensor", "self other out", ("self", "other"), dtypes=NUMS,
      notes="true division (integers give a float result)"),
    E("Sub", "aten::sub.Tensor", "self other alpha out", ("self", "other"), {"alpha": "alpha"}, dtypes=NUMS),
    E("Heaviside", "aten::heaviside.default", "input values out", ("input", "values"), dtypes=NUMS),
    E("IsClose", "aten::isclose.default", "self other rtol atol equalNan out",
      ("self", "other", "rtol", "atol", "equalNan"), dtypes=ALL),
    E("Complex", "aten::complex.default", "real imag out", ("real", "imag"), dtypes=(DType.FLOAT, DType.DOUBLE)),
    E("Polar", "aten::polar.default", "input angle out", ("input", "angle"), dtypes=(DType.FLOAT, DType.DOUBLE)),
    E("Real", "aten::real.default", "self out", ("self",), dtypes=FLOATS64 + COMPLEX_),
    E("Cast", "aten::_to_copy.default", "self dtype out", ("self",), {"dtype": Dtype("dtype")}, dtypes=ALL,
      notes="the value converted to dtype, then to out's dtype (torch's conversions: floats to "
            "integers truncate)"),
]

# -- in-place forms: the functional op on the ...Ref tensor, so the usual out checks apply to it ------
# (CANN name, aten overload, C parameters, input dtypes): selfRef = aten(selfRef, <the others>)
_INPLACE_BINARY = [
    ("InplaceFloorDivide", "floor_divide.default", "selfRef other", NUMS),
    ("InplaceFloorDivides", "floor_divide.Scalar", "selfRef other", NUMS),
    ("InplaceEqTensor", "eq.Tensor", "selfRef other", ALL), ("InplaceEqScalar", "eq.Scalar", "selfRef other", ALL),
    ("InplaceNeTensor", "ne.Tensor", "selfRef other", ALL), ("InplaceNeScalar", "ne.Scalar", "selfRef other", ALL),
    ("InplaceGeTensor", "ge.Tensor", "selfRef other", NUMS), ("InplaceGeScalar", "ge.Scalar", "selfRef other", NUMS),
    ("InplaceGtTensor", "gt.Tensor", "selfRef other", NUMS), ("InplaceGtScalar", "gt.Scalar", "selfRef other", NUMS),
    ("InplaceLeTensor", "le.Tensor", "selfRef other", NUMS), ("InplaceLeScalar", "le.Scalar", "selfRef other", NUMS),
    ("InplaceLtTensor", "lt.Tensor", "selfRef other", NUMS), ("InplaceLtScalar", "lt.Scalar", "selfRef other", NUMS),
]

ENTRIES.append(E("InplaceSigmoid", "aten::sigmoid.default", "selfRef", ("selfRef",), out="selfRef", dtypes=FLOATS64))
ENTRIES += [E(op, f"aten::{name}", params, tuple(params.split()), out=params.split()[0], dtypes=dt)
            for op, name, params, dt in _INPLACE_BINARY]
# more element-wise operators whose aten peer takes the same arguments
ENTRIES += [
    E("AddRelu", "compose:nn.add_relu", "self other alpha out", ("self", "other", "alpha"),
      dtypes=_ADD_RELU, traced=_ADD_RELU_SRC, notes="relu(self + alpha * other)"),
    E("InplaceAddRelu", "compose:nn.add_relu", "selfRef other alpha",
      ("selfRef", "other", "alpha"), out="selfRef", dtypes=_ADD_RELU, traced=_ADD_RELU_SRC),
    E("RightShift", "aten::bitwise_right_shift.Tensor", "input shiftBits out", ("input", "shiftBits"), dtypes=INTS),
    E("RoundDecimals", "compose:base.round_decimals", "self decimals out",
      ("self", "decimals"), dtypes=FLOATS64 + (DType.INT32, DType.INT64), same_dtype="self out",
      traced="math/round/op_api/aclnn_round.cpp", notes="an integer rounds to itself"),
    E("Xlog1py", "aten::special_xlog1py.default", "x y z", ("x", "y"), out="z", dtypes=FLOATS64),
    E("Ndtri", "aten::special_ndtri.default", "self out", ("self",), dtypes=(DType.FLOAT, DType.DOUBLE)),
    E("SWhere", "compose:base.s_where", "condition self other out",
      ("condition", "self", "other"), dtypes={"*": ALL, "condition": (DType.BOOL, DType.UINT8)},
      notes="a uint8 condition is cast to bool (math/select/op_api/aclnn_s_where.cpp)"),
    E("IsInScalarTensor", "aten::isin.Scalar_Tensor", "element testElements assumeUnique invert out",
      ("element", "testElements"), {"assume_unique": "assumeUnique", "invert": "invert"}, dtypes=NUMS),
    E("IsInTensorScalar", "aten::isin.Tensor_Scalar", "element testElement assumeUnique invert out",
      ("element", "testElement"), {"assume_unique": "assumeUnique", "invert": "invert"}, dtypes=NUMS),
]

