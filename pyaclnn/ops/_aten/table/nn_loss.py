"""Losses of ops-nn (loss/) this half of the list leaves out (loss.py and backward.py have the
binary cross entropies; nn_fused.py the BCE-with-logits gradients)."""
from __future__ import annotations


ENTRIES: list = []

LEFT_OUT = {
    "CtcLoss": "logAlphaOut's last dim is 2*maxTargetLength+1 rounded up to 8 on Ascend910B/910_93 "
               "(loss/ctc_loss_v2/op_api/ctc_loss_v2.cpp, CtcLossNpuOutputShape); aten's is not rounded",
    "CtcLossBackward": "takes CtcLoss's padded logAlpha (see CtcLoss)",
    "FusedCrossEntropyLossWithMaxSum": "fused vocabulary-parallel cross entropy: no aten overload",
    "FusedLinearCrossEntropyLossGrad": "fused linear + cross entropy gradient: no aten overload",
    "FusedLinearOnlineMaxSum": "fused vocabulary-parallel statistics: no aten overload",
}
