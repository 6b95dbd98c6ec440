"""What each tier covers, for ``python -m pyaclnn ops``, ``doctor`` and docs/coverage.md
(tools/gen_coverage.py): an operator's tier and how it is described, and why an operator of
the signature table is in neither tier.

Data only (the table's entries and the ``LEFT_OUT`` dicts of its family modules): no torch.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from ..ops import snake as _snake, tier as _tier
from ..ops._aten import entries, table as _table

__all__ = ["GENERIC", "describe", "left_out", "why_left_out", "GROUPS"]

# What spec.py checks for every entry (its module docstring): "generic" in the coverage.
GENERIC = "generic (nullptr 161001; rank > 8, dtype, out shape and dtype 161002)"

# Why a public operator is in neither tier, by its name (checked in this order; the first that
# matches): the list of what does not map to an aten operator.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("communication (collectives across devices, HCCL)",
     ("AllReduce", "AllGather", "ReduceScatter", "AlltoAll", "Distribute", "Elastic", "MoeUpdateExpert")),
    ("RNG and seeds (the device's Philox streams, which torch's CPU generator does not reproduce)",
     ("Random", "Randperm", "Bernoulli", "Multinomial", "Dropout", "Normal", "Uniform", "RRelu")),
    ("NZ and other device-private formats", ("WeightNz", "WeightNZ", "FormatCast", "TransMatmulWeight",
                                             "TransConvolutionWeight", "INT4Pack", "MatmulCompress")),
    ("quantised operators (device-specific scales and packed layouts)", ("Quant", "MxQuant")),
    ("fused transformer and MoE operators (ops-transformer)",
     ("Attention", "Attn", "Moe", "Rope", "RotaryPos", "RotaryPosition", "MlaProlog", "Nsa", "FFN", "GroupedMatmul",
      "GroupedMatMul", "TopKTopP")),
    ("data-dependent output shapes (the device reports the size after the run)",
     ("Nonzero", "Unique", "MaskedSelect", "NonMaxSuppression", "SelectPosition")),
)
NOT_MAPPED = "not mapped yet"


def left_out() -> dict[str, str]:
    """The ``LEFT_OUT`` dicts of the table's family modules merged: operator -> the reason no
    tier computes it."""
    found: dict[str, str] = {}
    for m in sorted(pkgutil.iter_modules(_table.__path__), key=lambda m: m.name):
        if not m.name.startswith("_"):
            found.update(getattr(importlib.import_module(f"{_table.__name__}.{m.name}"), "LEFT_OUT", {}))
    return found


def why_left_out(op: str, reasons: dict[str, str] | None = None) -> tuple[str, str]:
    """(group, reason) of an operator in neither tier: a ``LEFT_OUT`` reason ("left out", its
    reason), else the first of ``GROUPS`` its name matches (the group, ""), else
    (``NOT_MAPPED``, "")."""
    reason = (left_out() if reasons is None else reasons).get(op)
    if reason is not None:
        return "left out", reason
    for group, words in GROUPS:
        if any(w in op for w in words):
            return group, ""
    return NOT_MAPPED, ""


def describe(op: str) -> dict[str, Any]:
    """How ``op``'s reference is described: {tier, where, aten, family, checks, notes}; an
    operator in neither tier: {tier: None, left_out: (group, reason)}."""
    tier = _tier(op)
    if tier == "exact":
        return {"tier": "exact", "where": f"pyaclnn/ops/{_snake(op)}/", "aten": None, "family": None,
                "checks": "traced by hand (its spec.py)", "notes": ""}
    if tier == "aten":
        e = entries()[op]
        return {"tier": "aten", "where": f"pyaclnn/ops/_aten/table/{e.family}.py", "aten": e.aten,
                "family": e.family, "checks": f"traced: {e.traced}" if e.traced else GENERIC, "notes": e.notes}
    group, reason = why_left_out(op)
    return {"tier": None, "left_out": {"group": group, "reason": reason}}
