"""The Foreach family: one operation on every tensor of a list (aten's ``_foreach_*``), written
into the ``out`` list, member by member (same count, each of its result's shape)."""
from __future__ import annotations

from ._entry import FLOATS, E
from ....dtypes import DType

_F = FLOATS + (DType.INT32,)
# Traced (hicann/ops-nn e5c3fa9327ea95ba26d06227e746923580d10921 foreach/<op>/op_host/op_api/aclnn_<op>.cpp):
# these exist on DAV_2201 and regbase only (elsewhere the dtype list is empty: 161002); ForeachAddScalarV2's
# 950 list lacks the 8/16-bit integers of its 910B one (accepted here on 950 too)
_SOCS = "Ascend910B Ascend910_93 Ascend950"
_F_SMALL_INTS = _F + (DType.INT16, DType.INT8, DType.UINT8)

ENTRIES = [
    E("ForeachAddListV2", "aten::_foreach_add.List", "x1 x2 alpha out", ("x1", "x2"), {"alpha": "alpha"}, dtypes=_F),
    E("ForeachSubListV2", "aten::_foreach_sub.List", "x1 x2 alpha out", ("x1", "x2"), {"alpha": "alpha"}, dtypes=_F),
    E("ForeachMulList", "aten::_foreach_mul.List", "x1 x2 out", ("x1", "x2"), dtypes=_F_SMALL_INTS, socs=_SOCS,
      traced="foreach/foreach_mul_list/op_host/op_api/aclnn_foreach_mul_list.cpp"),
    E("ForeachDivList", "aten::_foreach_div.List", "x1 x2 out", ("x1", "x2"), dtypes=FLOATS),
    E("ForeachAddScalarV2", "aten::_foreach_add.Scalar", "x scalar out", ("x", "scalar"), dtypes=_F_SMALL_INTS,
      socs=_SOCS, traced="foreach/foreach_add_scalar/op_host/op_api/aclnn_foreach_add_scalar_v2.cpp"),
    E("ForeachSubScalarV2", "aten::_foreach_sub.Scalar", "x scalar out", ("x", "scalar"), dtypes=_F),
    E("ForeachMulScalarV2", "aten::_foreach_mul.Scalar", "x scalar out", ("x", "scalar"), dtypes=_F),
    E("ForeachDivScalarV2", "aten::_foreach_div.Scalar", "x scalar out", ("x", "scalar"), dtypes=FLOATS),
    E("ForeachDivScalar", "aten::_foreach_div.Tensor", "x scalar out", ("x", "scalar"), dtypes=FLOATS,
      notes="scalar: a one-element tensor"),
    E("ForeachMaximumScalarV2", "aten::_foreach_maximum.Scalar", "x scalar out", ("x", "scalar"), dtypes=_F),
    E("ForeachMinimumScalarV2", "aten::_foreach_minimum.Scalar", "x scalar out", ("x", "scalar"), dtypes=_F),
    E("ForeachPowScalarV2", "aten::_foreach_pow.Scalar", "x scalar out", ("x", "scalar"), dtypes=_F),
    E("ForeachSqrt", "aten::_foreach_sqrt.default", "x out", ("x",), dtypes=FLOATS),
    E("ForeachLerpList", "aten::_foreach_lerp.List", "x1 x2 weight out", ("x1", "x2", "weight"), dtypes=FLOATS),
    E("ForeachLerpScalar", "aten::_foreach_lerp.Scalar", "x1 x2 weight out", ("x1", "x2", "weight"), dtypes=FLOATS),
    E("ForeachAddcdivScalarV2", "aten::_foreach_addcdiv.Scalar", "x1 x2 x3 scalar out", ("x1", "x2", "x3", "scalar"),
      dtypes=FLOATS),
    E("ForeachAddcmulScalarV2", "aten::_foreach_addcmul.Scalar", "x1 x2 x3 scalar out", ("x1", "x2", "x3", "scalar"),
      dtypes=_F, socs=_SOCS, traced="foreach/foreach_addcmul_scalar/op_host/op_api/aclnn_foreach_addcmul_scalar_v2.cpp"),
    E("ForeachAddcdivScalarList", "aten::_foreach_addcdiv.Tensor", "x1 x2 x3 scalars out", ("x1", "x2", "x3", "scalars"),
      dtypes=FLOATS, notes="scalars: a 1-D tensor, one value per member"),
]
