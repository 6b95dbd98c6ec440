"""Gradients and activation forms of list nn2 (issue 24): aten's *_backward overloads where one
has the aclnn operator's arguments, else a composition of compose/nn2.py (its docstring cites the
aclnn doc's formula). Dtypes from hicann ops-nn <family>/docs/aclnn<Op>.md."""
from __future__ import annotations

from ._entry import E, FLOATS, IntReduction
from ....dtypes import DType

_R = IntReduction()
_C = "compose:nn2."
# Selu's constants (aten's selu: alpha and scale of Klambauer et al.)
_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

ENTRIES = [
    E("L1LossBackward", _C + "l1_loss_backward", "gradOutput self target reduction gradInput",
      ("gradOutput", "self", "target", "reduction"), out="gradInput"),
    E("KlDivBackward", _C + "kl_div_backward", "gradOutput self target reduction logTarget out",
      ("gradOutput", "self", "target", "reduction", "logTarget")),
    E("KlDivTargetBackward", _C + "kl_div_target_backward", "gradOutput self target reduction logTarget gradTarget",
      ("gradOutput", "self", "target", "reduction", "logTarget"), out="gradTarget"),
    E("NLLLoss2dBackward", _C + "nll_loss2d_backward",
      "gradOutput self target weight reduction ignoreIndex totalWeight out",
      ("gradOutput", "self", "target", "weight", "reduction", "ignoreIndex", "totalWeight"), out="out totalWeight",
      nullable="weight", dtypes={"*": FLOATS, "target": (DType.INT32, DType.INT64, DType.UINT8)},
      notes="totalWeight is an input the header declares non-const: written back unchanged"),
    E("LogSigmoidForward", "aten::log_sigmoid_forward.default", "self out buffer", ("self",), out="out buffer",
      notes="buffer receives aten's buffer (the device leaves it unused: 'no use yet', the doc)"),
    E("LogSigmoidBackward", "aten::log_sigmoid_backward.default", "gradOutput self buffer gradInput",
      ("gradOutput", "self", "buffer"), out="gradInput",
      notes="buffer as aten's log_sigmoid_forward buffer (the device does not read it)"),
    E("SoftsignBackward", _C + "softsign_backward", "gradients features out", ("gradients", "features"),
      notes="out is const in the header (aclnn_softsign_backward.h), written all the same"),
    E("SwishBackward", _C + "swish_backward", "gradOutput self betaOptional gradInput",
      ("gradOutput", "self", "betaOptional"), out="gradInput"),
    E("MaxPool3dWithArgmaxBackward", _C + "max_pool3d_with_argmax_backward",
      "gradOutput self indices kernelSize stride padding dilation ceilMode gradInput",
      ("gradOutput", "self", "kernelSize", "stride", "padding", "dilation", "ceilMode", "indices"), out="gradInput",
      dtypes={"*": FLOATS, "indices": (DType.INT32, DType.INT64)}, notes="int32 indices widened to aten's int64"),
    E("MaxUnpool2dBackward", _C + "max_unpool_backward", "gradOutput self indices outputSize out",
      ("gradOutput", "self", "indices", "outputSize"),
      dtypes={"*": FLOATS[:2] + (DType.INT32, DType.INT64, DType.INT16, DType.INT8, DType.UINT8, DType.BOOL),
              "indices": (DType.INT32, DType.INT64)}),
    E("MaxUnpool3dBackward", _C + "max_unpool_backward", "gradOutput self indices outputSize stride padding out",
      ("gradOutput", "self", "indices", "outputSize", "stride", "padding"),
      dtypes={"*": FLOATS[:2] + (DType.INT32, DType.INT64, DType.INT16, DType.INT8, DType.UINT8, DType.BOOL),
              "indices": (DType.INT32, DType.INT64)}),
    E("SoftmaxCrossEntropyWithLogits", _C + "softmax_cross_entropy_with_logits", "features labels loss backprop",
      ("features", "labels"), out="loss backprop labels",
      notes="labels is an input the header declares non-const: written back unchanged"),
    E("ReluGradV4", _C + "relu_grad_v4", "gradOutput self threshold out", ("gradOutput", "self", "threshold"),
      dtypes={"gradOutput": FLOATS + (DType.INT8, DType.UINT8, DType.INT32), "self": (DType.UINT8,)}),
]
