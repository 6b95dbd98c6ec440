"""Activations of ops-nn (activation/) the other families do not have: add then ReLU, and its
in-place form (aten's _add_relu).

Dtypes from docs/aclnnAddRelu&aclnnInplaceAddRelu.md: BFLOAT16 (only on SOCS_BF16), FLOAT16,
FLOAT, INT8, UINT8, INT16, INT32, INT64.
"""
from __future__ import annotations

from ._entry import FLOATS, INTS, E

ENTRIES = [
    E("AddRelu", "aten::_add_relu.Tensor", "self other alpha out", ("self", "other"), {"alpha": "alpha"},
      dtypes=FLOATS + INTS),
    E("InplaceAddRelu", "aten::_add_relu.Tensor", "selfRef other alpha", ("selfRef", "other"), {"alpha": "alpha"},
      dtypes=FLOATS + INTS),
]
