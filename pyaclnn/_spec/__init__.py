"""Backend-neutral operator specs: the real library's checks, in its order, with its codes.

Each op module (mse_loss_backward, group_norm_backward, cross_entropy_loss_grad,
prelu_backward) exposes::

    API: str                      # the phase-1 C function, used in error messages
    def check(soc, ...) -> bool   # raises the library's error; True means "empty: no work"

Tensors are described by ``TensorMeta`` (or ``None`` for a C nullptr). The NumPy backend runs
``check`` before computing; the acl backend lets the real library judge. Semantics and order
follow shared/reference/ops.md, which was traced from the real op sources.
"""
from __future__ import annotations

from typing import NamedTuple, NoReturn, Sequence

from ..dtypes import DType
from ..errors import AclnnParamInvalidError, AclnnParamNullptrError, from_status

__all__ = ["TensorMeta", "ARCH", "arch", "is_regbase", "numel", "broadcast_shapes",
           "fail_null", "fail_invalid", "fail", "require_not_null", "fmt_shape", "MAX_DIM"]

MAX_DIM = 8


class TensorMeta(NamedTuple):
    """What a check needs to know about an aclTensor: view shape, dtype, strides (elements)."""
    shape: tuple[int, ...]
    dtype: DType
    strides: tuple[int, ...] | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return numel(self.shape)

    @property
    def is_empty(self) -> bool:
        return 0 in self.shape


# SoC -> NpuArch, as the op sources switch on it (ops.md "SoC / arch mapping").
ARCH = {
    "Ascend910": "DAV_1001",
    "Ascend910B": "DAV_2201",
    "Ascend910_93": "DAV_2201",
    "Ascend310P": "DAV_2002",
    "Ascend950": "DAV_3510",
}


def arch(soc: str) -> str:
    return ARCH[soc]


def is_regbase(soc: str) -> bool:
    """Ascend950 (DAV_3510) is the only 'regbase' arch (aclnn_util.h IsRegbase)."""
    return ARCH[soc] == "DAV_3510"


def numel(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy-style broadcast of two shapes, or None when they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(reversed(out))


def fmt_shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def fail_null(api: str, detail: str) -> NoReturn:
    raise AclnnParamNullptrError(api, detail)


def fail_invalid(api: str, detail: str) -> NoReturn:
    raise AclnnParamInvalidError(api, detail)


def fail(status: int, api: str, detail: str) -> NoReturn:
    raise from_status(status, api, detail)


def require_not_null(api: str, **tensors: object) -> None:
    """161001 for the first None, in the order given (the library's null-check order)."""
    for name, value in tensors.items():
        if value is None:
            fail_null(api, f"{name} is nullptr")
