"""Fused optimizers of ops-nn (optim/): aten's functional ``_fused_adamw`` and ``_fused_sgd``,
whose results are written back to the ...Ref lists the device updates in place.

Traced: optim/fused_adamw/op_kernel/fused_adamw_kernel.h computes what aten's fused AdamW does
(grads divided by gradScale, negated under maximize; param *= 1 - lr * weightDecay; the moments;
amsgrad's max of the raw second moments; denominator sqrt(v) / sqrt(1 - beta2^t) + eps; step
lr / (1 - beta1^t); nothing updated when foundInf is 1). Dtypes from the docs: FLOAT, FLOAT16,
BFLOAT16 (bf16 only on SOCS_BF16); stateSteps FLOAT32 or INT64.
"""
from __future__ import annotations

from ._entry import FLOATS, E, D

ENTRIES = [
    E("FusedAdamw", "aten::_fused_adamw.default",
      "paramsRef grads expAvgsRef expAvgSqsRef maxExpAvgSqsRef stateSteps gradScaleOptional foundInfOptional "
      "lr beta1 beta2 weightDecay eps amsgrad maximize",
      ("paramsRef", "grads", "expAvgsRef", "expAvgSqsRef", "maxExpAvgSqsRef", "stateSteps"),
      {"lr": "lr", "beta1": "beta1", "beta2": "beta2", "weight_decay": "weightDecay", "eps": "eps",
       "amsgrad": "amsgrad", "maximize": "maximize", "grad_scale": "gradScaleOptional",
       "found_inf": "foundInfOptional"},
      out=("paramsRef", None, "expAvgsRef", "expAvgSqsRef", "maxExpAvgSqsRef"),
      dtypes={"*": FLOATS, "stateSteps": (D.FLOAT, D.INT64), "gradScaleOptional": (D.FLOAT,),
                    "foundInfOptional": (D.FLOAT,)},
      traced="optim/fused_adamw/op_kernel/fused_adamw_kernel.h",
      notes="maxExpAvgSqsRef must be a list (empty when amsgrad is false; the device also takes nullptr)"),
    E("FusedSgd", "aten::_fused_sgd.default",
      "paramsRef gradsRef momentumBufferListOptionalRef gradScaleOptional weightDecay momentum lr dampening "
      "nesterov maximize isFirstStep",
      ("paramsRef", "gradsRef", "momentumBufferListOptionalRef"),
      {"weight_decay": "weightDecay", "momentum": "momentum", "lr": "lr", "dampening": "dampening",
       "nesterov": "nesterov", "maximize": "maximize", "is_first_step": "isFirstStep",
       "grad_scale": "gradScaleOptional"},
      out="paramsRef gradsRef momentumBufferListOptionalRef",
      notes="the doc's formula is aten's (gradsRef gets the unscaled gradients); "
            "momentumBufferListOptionalRef must be a list (empty when momentum is 0)"),
]

LEFT_OUT = {
    "ApplyAdadelta": "no aten overload",
    "ApplyAdamax": "no aten overload",
    "ApplyFtrl": "no aten overload",
    "ApplyTopKTopP": "sampling filter (top-k then top-p on sorted logits): no aten overload",
}
