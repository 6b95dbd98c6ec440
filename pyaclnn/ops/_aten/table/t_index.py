"""Masking, one-hot encoding and sorting with a carried index, of the ops-math tensor list
(issue 24 expansion).

Dtypes from each operator's op_api source (hicann/ops-math <dir>/op_api/aclnn_<name>.cpp, its
ASCEND910B list; bf16 through SOCS_BF16); semantics from its docs/aclnn<Name>.md.
Compositions (``compose:tensor.*``) are in compose/tensor.py.
"""
from __future__ import annotations

from ._entry import FLOATS, D, E

F = "compose:tensor."

ENTRIES = [
    E("MaskedScale", F + "masked_scale", "self mask scale out", ("self", "mask", "scale"),
      dtypes={"self": FLOATS, "mask": (D.FLOAT, D.FLOAT16, D.UINT8, D.INT8)}, dtypes_v1=(),
      notes="aclnn_masked_scale.cpp has lists for the RegBase SoCs (Ascend950) only: Ascend910B/910_93 "
            "refuse every dtype on the device, here they accept Ascend950's; Ascend910/310P refuse here too"),
    E("OneHot", F + "one_hot", "self numClasses onValue offValue axis out",
      ("self", "numClasses", "onValue", "offValue", "axis"),
      dtypes={"self": (D.INT32, D.INT64), "*": (D.FLOAT16, D.FLOAT, D.INT32, D.INT64)}),
    E("SortWithIndex", F + "sort_with_index", "x index axis descending stable valuesOut indicesOut",
      ("x", "index", "axis", "descending", "stable"), out="valuesOut indicesOut",
      dtypes={"x": (D.FLOAT16, D.FLOAT, D.BF16, D.INT32), "index": (D.INT32,)},
      notes="ties may order differently unless stable"),
]
