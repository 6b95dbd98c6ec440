"""Element-wise comparisons (ops-math): Eq/Ne/Ge/Gt/Le/Lt with a tensor or a scalar ``other``.

aten's result is bool, written to ``out`` in out's dtype (the sources' OUT_DTYPE_SUPPORT_LISTs
take the numeric dtypes too: true is 1). Ge refuses bool inputs (its 910B list has none).
Input dtypes: the source's Ascend910B list less
uint16/32/64 (torch's CPU comparisons have no unsigned kernel but uint8's).
"""
from __future__ import annotations

from ._entry import E, Entry
from ._ew_dtypes import d


_SRC = {"eq": "math/equal/op_api/aclnn_eq_{}.cpp",
        "ne": "math/not_equal/op_api/aclnn_ne_{}.cpp",
        "ge": "math/greater_equal/op_api/aclnn_ge_{}.cpp",
        "gt": "math/greater/op_api/aclnn_gt_{}.cpp",
        "le": "math/less_equal/op_api/aclnn_le_{}.cpp",
        "lt": "math/less/op_api/aclnn_lt_{}.cpp"}
_ORDERED = d("f32 i32 i64 f16 i16 i8 u8 f64 b bf16")
_EQ = _ORDERED + d("c64 c128")  # eq, ne also take complex
_DTYPES = {"eq": _EQ, "ne": _EQ, "ge": tuple(x for x in _ORDERED if x.name != "BOOL"), "gt": _ORDERED,
           "le": _ORDERED, "lt": _ORDERED}

ENTRIES: list[Entry] = [
    E(f"{name.capitalize()}{form}", f"aten::{name}.{form}", "self other out", ("self", "other"),
      dtypes=_DTYPES[name], traced=_SRC[name].format(form.lower()))
    for name in _SRC for form in ("Scalar", "Tensor")
]
