"""Compositions of torch calls for ops-nn's indexing operators that no single aten overload
computes (the table names them ``"compose:index.<function>"``). They
run on the meta device too (phase 1 takes the output shapes and dtypes from them)."""
from __future__ import annotations

from typing import Any

import torch


def gather_v2(x: Any, dim: int, index: Any) -> Any:
    """aclnnGatherV2: TensorFlow's gather, x's slices at ``index`` (any rank) along ``dim``: the
    result's shape is x.shape[:dim] + index.shape + x.shape[dim + 1:], a 0-d index counting as
    shape (1,), and a 0-d x giving a 0-d result (hicann/ops-nn
    e5c3fa9327ea95ba26d06227e746923580d10921 index/gather_v2/op_api/aclnn_gather_v2.cpp:
    CheckOutShape, and UnsqueezeNd of a 0-d index before l0op::GatherV2)."""
    if x.dim() == 0:
        return torch.index_select(x.reshape(1), 0, index.reshape(-1).long()).reshape(())
    dim = dim + x.dim() if dim < 0 else dim
    shape = tuple(index.shape) or (1,)
    picked = torch.index_select(x, dim, index.reshape(-1).long())
    return picked.reshape(tuple(x.shape[:dim]) + shape + tuple(x.shape[dim + 1:]))
