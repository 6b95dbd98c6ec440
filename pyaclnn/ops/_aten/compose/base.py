"""Small compositions of aten calls for the base families' entries (reduce.py, nn.py, math.py,
index.py, loss.py, linalg.py) where the op source departs from the one aten overload the entry
named: each cites the hicann ops-math file it follows. Named by a ``compose:base.<name>`` path;
each takes torch tensors (real or on the ``meta`` device: phase 1 runs them there for the outputs' shapes and dtypes) and plain C
values, and returns aten's result, which the kernel casts to the output's dtype.

It imports torch lazily, inside the functions.
"""
from __future__ import annotations

from typing import Any, Sequence


def _torch() -> Any:
    import torch
    return torch


def _float(x: Any) -> Any:
    """float32 for float16, bf16, integers and bool (the sources' Cast before the kernel)."""
    torch = _torch()
    return x if x.dtype in (torch.float32, torch.float64) else x.to(torch.float32)


def log_sum_exp(x: Any, dim: Sequence[int] | None, keepdim: bool) -> Any:
    """aclnnLogSumExp (math/reduce_log_sum_exp/op_api/aclnn_logsumexp.cpp): float16, bf16,
    integers and bool computed in float32; an empty dim reduces every axis."""
    return _torch().logsumexp(_float(x), list(dim) if dim else list(range(x.dim())), keepdim)


def fill_tensor(self: Any, value: Any) -> Any:
    """aclnnInplaceFillTensor (conversion/fill/op_api/aclnn_fill_tensor.cpp CheckShape): value
    0-D, or 1-D with one element (aten's fill.Tensor takes 0-D only); cast to self's dtype."""
    if value.dim() == 1 and value.shape[0] == 1:
        value = value.reshape(())
    return _torch().ops.aten.fill.Tensor(self, value)


def s_where(condition: Any, x: Any, other: Any) -> Any:
    """aclnnSWhere (math/select/op_api/aclnn_s_where.cpp): a bool or uint8 condition, cast to
    bool (nonzero is true) before SelectV2."""
    torch = _torch()
    return torch.ops.aten.where.self(condition.to(torch.bool), x, other)


def round_decimals(x: Any, decimals: int) -> Any:
    """aclnnRoundDecimals (math/round/op_api/aclnn_round.cpp): int32 and int64 are in its lists;
    rounding an integer gives the integer (aten's CPU round has no integer kernel)."""
    torch = _torch()
    if not x.dtype.is_floating_point:
        return x.clone()
    return torch.ops.aten.round.decimals(x, decimals=decimals)


def kl_div(x: Any, target: Any, reduction: int, log_target: bool) -> Any:
    """aclnnKlDiv (math/kl_div_v2/op_api/aclnn_kl_div.cpp, docs/aclnnKlDiv.md): reduction 0 none,
    1 mean, 2 sum, 3 batchmean, the sum over self.size(0) (a 0-D self counts as one row)."""
    aten = _torch().ops.aten
    if reduction == 3:
        return aten.kl_div.default(x, target, 2, log_target=log_target) / (x.shape[0] if x.dim() else 1)
    return aten.kl_div.default(x, target, reduction, log_target=log_target)


def cholesky(x: Any, upper: bool) -> Any:
    """aclnnLinalgCholesky (math/cholesky/op_api/aclnn_linalg_cholesky.cpp): float16 and bf16
    factored in float32 (its Cast before Cholesky), the result cast to out's dtype."""
    return _torch().ops.aten.linalg_cholesky.default(_float(x), upper=upper)
