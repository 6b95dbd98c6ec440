"""ForeachCopy of ops-nn (foreach/), the one foreach operator of this half of the list that
foreach.py does not have (nn_fused.py has the two with one-element tensor scalars).

Dtypes from docs/aclnnForeachCopy.md; bf16 only on SOCS_BF16. The device takes an out whose
shape size is at least x's; here out's shapes must equal x's.
"""
from __future__ import annotations

from ._entry import E, D, FLOATS


ENTRIES = [
    E("ForeachCopy", "aten::_foreach_copy.default", "x out", ("out", "x"),
      dtypes=FLOATS + (D.INT8, D.UINT8, D.INT16, D.INT32, D.INT64, D.DOUBLE, D.BOOL),
      notes="aten's functional copy of x into out's tensors (their dtype); the unsigned 16/32-bit dtypes left out"),
]

LEFT_OUT = {
    "ForeachRoundOffNumberV2": "roundMode (the device's rounding modes): no aten overload",
}
