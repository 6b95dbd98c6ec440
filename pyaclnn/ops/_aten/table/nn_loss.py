"""Losses of ops-nn (loss/): binary cross entropy and its backward form, aten's overloads
argument for argument (aten's int reduction is CANN's: 0 none, 1 mean, 2 sum).

Dtypes from docs/aclnn<Op>.md: FLOAT, FLOAT16, BFLOAT16 (bf16 only on SOCS_BF16).
"""
from __future__ import annotations

from ._entry import E

_SCALAR = ("a reduced loss goes to a 0-d out (the device also takes a [1] out, with a warning: "
           "loss/binary_cross_entropy/op_api/aclnn_binary_cross_entropy.cpp)")

ENTRIES = [
    E("BinaryCrossEntropy", "aten::binary_cross_entropy.default", "self target weight reduction out",
      ("self", "target", "weight", "reduction"), nullable="weight", notes=_SCALAR),
    E("BinaryCrossEntropyBackward", "aten::binary_cross_entropy_backward.default",
      "gradOutput self target weightOptional reduction out",
      ("gradOutput", "self", "target", "weightOptional", "reduction")),
    E("BinaryCrossEntropyWithLogits", "aten::binary_cross_entropy_with_logits.default",
      "self target weightOptional posWeightOptional reduction out",
      ("self", "target", "weightOptional", "posWeightOptional", "reduction"), notes=_SCALAR),
]

LEFT_OUT = {
    "CtcLoss": "logAlphaOut's last dim is 2*maxTargetLength+1 rounded up to 8 on Ascend910B/910_93 "
               "(loss/ctc_loss_v2/op_api/ctc_loss_v2.cpp, CtcLossNpuOutputShape); aten's is not rounded",
    "CtcLossBackward": "takes CtcLoss's padded logAlpha (see CtcLoss)",
    "FusedCrossEntropyLossWithMaxSum": "fused vocabulary-parallel cross entropy: no aten overload",
    "FusedLinearCrossEntropyLossGrad": "fused linear + cross entropy gradient: no aten overload",
    "FusedLinearOnlineMaxSum": "fused vocabulary-parallel statistics: no aten overload",
}
