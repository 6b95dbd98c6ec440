"""aclnnInplaceAdd: selfRef = selfRef + alpha * other, broadcast to selfRef's shape.

Source traced: hicann/ops-math math/add/op_api/aclnn_add.cpp (aclnnInplaceAddGetWorkspaceSize,
CheckInplace): selfRef and other nullptr (161001), their broadcast, which must be selfRef's own
shape (161002), then the whole of aclnnAdd with out = selfRef (..add.spec).
"""
from __future__ import annotations

from typing import Any

from ..._spec import TensorMeta, broadcast_shapes, fail_invalid, fmt_shape, require_not_null
from ..add import spec as add

OP = "InplaceAdd"
API = f"aclnn{OP}GetWorkspaceSize"
REPO = "ops-math"  # its sources: hicann/ops-math (9.x: libopapi_math.so)

__all__ = ["OP", "API", "REPO", "check"]


def check(soc: str, self_ref: TensorMeta | None, other: TensorMeta | None, alpha: Any) -> bool:
    """Raise the library's error for the first failing rule; True means empty."""
    self_ref, other = require_not_null(API, selfRef=self_ref, other=other)
    shape = broadcast_shapes(self_ref.shape, other.shape)  # OP_CHECK_BROADCAST_AND_INFER_SHAPE
    if shape is None:
        fail_invalid(API, f"selfRef shape {fmt_shape(self_ref.shape)} and other shape {fmt_shape(other.shape)} "
                          "can not broadcast")
    if tuple(self_ref.shape) != shape:
        fail_invalid(API, f"Expected shape of selfRef should be {fmt_shape(shape)}, but got "
                          f"{fmt_shape(self_ref.shape)}")
    add.check_params(API, soc, self_ref, other, alpha, self_ref, names=("selfRef", "selfRef"))
    return self_ref.is_empty or other.is_empty
