"""Element-wise math: unary and binary operators whose aten peer has the same arguments.

Each entry was checked against its header in /work/shared/headers (the parameter names and
order) and the aten schema (torch 2.13); see _entry.py for the format.
"""
from __future__ import annotations

from ._entry import ALL, FLOATS, FLOATS64, INTS, NUMS, Dtype, E

_UNARY_FLOAT = ("Exp", "exp"), ("Log", "log"), ("Sqrt", "sqrt"), ("Rsqrt", "rsqrt"), ("Sin", "sin"), \
    ("Tanh", "tanh"), ("Sigmoid", "sigmoid"), ("Erf", "erf"), ("Exp2", "exp2"), ("Log1p", "log1p"), \
    ("Expm1", "expm1"), ("Reciprocal", "reciprocal")

ENTRIES = [
    *(E(op, f"aten::{name}.default", "self out", ("self",), dtypes=FLOATS64) for op, name in _UNARY_FLOAT),
    E("Cos", "aten::cos.default", "input out", ("input",), dtypes=FLOATS64),
    E("Abs", "aten::abs.default", "self out", ("self",), dtypes=NUMS),
    E("Neg", "aten::neg.default", "self out", ("self",), dtypes=NUMS),
    E("Floor", "aten::floor.default", "self out", ("self",), dtypes=FLOATS64),
    E("Ceil", "aten::ceil.default", "self out", ("self",), dtypes=FLOATS64),
    E("Round", "aten::round.default", "self out", ("self",), dtypes=FLOATS64,
      notes="halves to even, as aten and the device's Round"),
    E("Sign", "aten::sign.default", "self result", ("self",), out="result", dtypes=NUMS),
    E("LogicalNot", "aten::logical_not.default", "self out", ("self",), dtypes=ALL),
    E("Mul", "aten::mul.Tensor", "self other out", ("self", "other"), dtypes=ALL),
    E("Div", "aten::div.Tensor", "self other out", ("self", "other"), dtypes=NUMS,
      notes="true division (integers give a float result)"),
    E("Sub", "aten::sub.Tensor", "self other alpha out", ("self", "other"), {"alpha": "alpha"}, dtypes=NUMS),
    E("Maximum", "aten::maximum.default", "self other out", ("self", "other"), dtypes=ALL),
    E("Minimum", "aten::minimum.default", "self other out", ("self", "other"), dtypes=ALL),
    E("Atan2", "aten::atan2.default", "self other out", ("self", "other"), dtypes=FLOATS64 + INTS),
    E("LogicalAnd", "aten::logical_and.default", "self other out", ("self", "other"), dtypes=ALL),
    E("Cast", "aten::_to_copy.default", "self dtype out", ("self",), {"dtype": Dtype("dtype")}, dtypes=ALL,
      notes="the value converted to dtype, then to out's dtype (torch's conversions: floats to "
            "integers truncate)"),
]
