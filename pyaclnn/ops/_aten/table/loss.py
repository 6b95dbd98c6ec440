"""Losses. CANN's int reductions are aten's (0 none, 1 mean, 2 sum): any other value is
refused at phase 1 (``IntReduction``)."""
from __future__ import annotations

from ._entry import FLOATS, E, Enum, Int64, IntReduction
from ....dtypes import DType

_R = IntReduction()
_TARGET_IDX = {"*": FLOATS, "target": (DType.INT32, DType.INT64, DType.UINT8)}

ENTRIES = [
    E("MseLoss", "aten::mse_loss.default", "self target reduction out", ("self", "target", _R)),
    E("MseLossOut", "aten::mse_loss.default", "self target reduction out", ("self", "target", _R)),
    E("L1Loss", "aten::l1_loss.default", "self target reduction out", ("self", "target", _R)),
    E("SmoothL1Loss", "aten::smooth_l1_loss.default", "self target reduction beta result",
      ("self", "target", _R, "beta"), out="result"),
    E("SoftMarginLoss", "aten::soft_margin_loss.default", "self target reduction out", ("self", "target", _R)),
    E("KlDiv", "compose:base.kl_div", "self target reduction logTarget out",
      ("self", "target", Enum("reduction", (0, 1, 2, 3)), "logTarget"), single="out",
      traced="math/kl_div_v2/op_api/aclnn_kl_div.cpp",
      notes="reduction 3 is batchmean, the sum over self.size(0); a reduced out has one element ((1,) or 0-D)"),
    E("BinaryCrossEntropy", "aten::binary_cross_entropy.default", "self target weight reduction out",
      ("self", "target", "weight", _R), nullable="weight"),
    E("BinaryCrossEntropyWithLogits", "aten::binary_cross_entropy_with_logits.default",
      "self target weightOptional posWeightOptional reduction out",
      ("self", "target", "weightOptional", "posWeightOptional", _R)),
    E("NLLLoss", "aten::nll_loss_forward.default", "self target weight reduction ignoreIndex out totalWeightOut",
      ("self", Int64("target"), "weight", _R, "ignoreIndex"), out="out totalWeightOut", dtypes=_TARGET_IDX,
      same_dtype="self weight", single="out totalWeightOut",
      traced="hicann/ops-nn experimental/loss/nll_loss/op_api/aclnn_nll_loss.cpp: weight required and of self's "
             "dtype; a reduced out and totalWeightOut: one element, rank <= 1"),
    E("NLLLoss2d", "aten::nll_loss2d_forward.default", "self target weight reduction ignoreIndex out totalWeightOut",
      ("self", Int64("target"), "weight", _R, "ignoreIndex"), out="out totalWeightOut", nullable="weight",
      dtypes=_TARGET_IDX),
    E("MultilabelMarginLoss", "aten::multilabel_margin_loss_forward.default", "self target reduction out isTarget",
      ("self", Int64("target"), _R), out="out isTarget", dtypes={"*": FLOATS, "target": (DType.INT32, DType.INT64)},
      notes="int32 targets (loss/multilabel_margin_loss/op_api/aclnn_multilabel_margin_loss.cpp takes them) go "
            "to aten as int64: its CPU kernel takes only those"),
]
