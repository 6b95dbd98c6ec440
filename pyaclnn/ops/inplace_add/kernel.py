"""aclnnInplaceAdd's phase 2: aclnnAdd's kernel with out = selfRef (..add.kernel computes the
whole result before it writes)."""
from __future__ import annotations

from typing import Callable

from ..add.kernel import add

__all__ = ["prepare"]


def prepare(soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
    """Phase 2 for C arguments (selfRef, other, alpha)."""
    return lambda v: add(v[0], v[1], v[2], v[0], soc)
