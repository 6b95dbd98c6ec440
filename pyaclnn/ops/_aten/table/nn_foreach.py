"""The foreach operators of ops-nn (foreach/): aten's ``_foreach_*`` overloads on tensor lists,
argument for argument; each output list gets aten's list of results.

Dtypes from docs/aclnn<Op>.md (the list x / x1's); bf16 only on SOCS_BF16. The device takes an
out whose shape size is at least x's; here out's shapes must equal x's.
"""
from __future__ import annotations

from ._entry import E, D, FLOATS

_ADD = FLOATS + (D.INT32, D.INT16, D.INT8, D.UINT8)
_I32 = FLOATS + (D.INT32,)

ENTRIES = [
    E("ForeachAddListV2", "aten::_foreach_add.List", "x1 x2 alpha out", ("x1", "x2"), {"alpha": "alpha"}, dtypes=_ADD),
    E("ForeachAddScalarV2", "aten::_foreach_add.Scalar", "x scalar out", ("x", "scalar"), dtypes=_ADD),
    E("ForeachSubListV2", "aten::_foreach_sub.List", "x1 x2 alpha out", ("x1", "x2"), {"alpha": "alpha"}, dtypes=_ADD),
    E("ForeachSubScalarV2", "aten::_foreach_sub.Scalar", "x scalar out", ("x", "scalar"), dtypes=_I32),
    E("ForeachMulList", "aten::_foreach_mul.List", "x1 x2 out", ("x1", "x2"), dtypes=_ADD),
    E("ForeachMulScalarV2", "aten::_foreach_mul.Scalar", "x scalar out", ("x", "scalar"), dtypes=_I32),
    E("ForeachDivList", "aten::_foreach_div.List", "x1 x2 out", ("x1", "x2")),
    E("ForeachDivScalar", "aten::_foreach_div.Tensor", "x scalar out", ("x", "scalar"),
      notes="scalar: a 0-d tensor, as op-plugin passes it (aten refuses the one-element 1-D tensor the device "
            "also takes)"),
    E("ForeachDivScalarV2", "aten::_foreach_div.Scalar", "x scalar out", ("x", "scalar")),
    E("ForeachAddcdivScalarV2", "aten::_foreach_addcdiv.Scalar", "x1 x2 x3 scalar out", ("x1", "x2", "x3", "scalar")),
    E("ForeachAddcdivScalarList", "aten::_foreach_addcdiv.Tensor", "x1 x2 x3 scalars out",
      ("x1", "x2", "x3", "scalars"), notes="scalars: one element per tensor of x1"),
    E("ForeachAddcmulScalarV2", "aten::_foreach_addcmul.Scalar", "x1 x2 x3 scalar out", ("x1", "x2", "x3", "scalar"),
      dtypes=_I32),
    E("ForeachLerpList", "aten::_foreach_lerp.List", "x1 x2 weight out", ("x1", "x2", "weight")),
    E("ForeachLerpScalar", "aten::_foreach_lerp.Scalar", "x1 x2 weight out", ("x1", "x2", "weight")),
    E("ForeachMaximumScalarV2", "aten::_foreach_maximum.Scalar", "x scalar out", ("x", "scalar"), dtypes=_I32),
    E("ForeachMinimumScalarV2", "aten::_foreach_minimum.Scalar", "x scalar out", ("x", "scalar"), dtypes=_I32),
    E("ForeachPowScalarV2", "aten::_foreach_pow.Scalar", "x scalar out", ("x", "scalar")),
    E("ForeachSqrt", "aten::_foreach_sqrt.default", "x out", ("x",)),
    E("ForeachCopy", "aten::_foreach_copy.default", "x out", ("out", "x"),
      dtypes=FLOATS + (D.INT8, D.UINT8, D.INT16, D.INT32, D.INT64, D.DOUBLE, D.BOOL),
      notes="aten's functional copy of x into out's tensors (their dtype); the unsigned 16/32-bit dtypes left out"),
]

LEFT_OUT = {
    "ForeachRoundOffNumberV2": "roundMode (the device's rounding modes): no aten overload",
}
