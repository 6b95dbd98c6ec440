"""ops-nn operators no single aten overload computes, as small compositions of torch calls in
pyaclnn/ops/_aten/compose/nn.py (each the operator's documented formula, cited there): FastGelu,
GeGlu, Gemm, AddRmsNorm, GroupNormSilu, the SyncBatchNorm pieces, ConvDepthwise2d,
the BCE-with-logits gradients.

Dtypes from docs/aclnn<Op>.md; bf16 only on SOCS_BF16.
"""
from __future__ import annotations

from ._entry import F16, FLOATS, E, D

_C = "compose:nn."
_HF32 = "cubeMathType dropped: fp32 in full precision"

ENTRIES = [
    E("FastGelu", _C + "fast_gelu", "self out", ("self",)),
    E("FastGeluBackward", _C + "fast_gelu_backward", "gradOutput self gradInput", ("gradOutput", "self"),
      out="gradInput"),
    E("FastGeluV2", _C + "fast_gelu_v2", "x out", ("x",),
      notes="the doc's piecewise polynomial (the device has it on Ascend950 only)"),
    E("FusedBiasLeakyRelu", _C + "fused_bias_leaky_relu", "x bias negativeSlope scale out",
      ("x", "bias", "negativeSlope", "scale"), dtypes=F16),
    E("GeGlu", _C + "ge_glu", "self dim approximate out outGelu", ("self", "dim", "approximate"),
      out="out outGelu", notes="approximate 0 none (erf), 1 tanh; out = A * gelu(B), A and B self's halves"),
    E("GeGluV3", _C + "ge_glu_v3", "self dim approximate activateLeft out outGelu",
      ("self", "dim", "approximate", "activateLeft"), out="out outGelu",
      notes="activateLeft: gelu(A) * B"),
    E("GeGluBackward", _C + "ge_glu_backward", "gradOutput self gelu dim approximate gradInput",
      ("gradOutput", "self", "gelu", "dim", "approximate"), out="gradInput"),
    E("GeGluV3Backward", _C + "ge_glu_v3_backward", "gradOutput self gelu dim approximate activateLeft gradInput",
      ("gradOutput", "self", "gelu", "dim", "approximate", "activateLeft"), out="gradInput"),
    E("Gemm", _C + "gemm", "A B C alpha beta transA transB out cubeMathType",
      ("A", "B", "C", "alpha", "beta", "transA", "transB"), notes=_HF32),
    E("ConvDepthwise2d", _C + "conv_depthwise2d",
      "self weight kernelSize bias stride padding dilation out cubeMathType",
      ("self", "weight", "kernelSize", "bias", "stride", "padding", "dilation"), nullable="bias",
      notes=f"one group per input channel; {_HF32}"),
    E("AddRmsNorm", _C + "add_rms_norm", "x1 x2 gamma epsilon yOut rstdOut xOut", ("x1", "x2", "gamma", "epsilon"),
      out="yOut rstdOut xOut", nullable="rstdOut xOut",
      notes="normalised over gamma's dims (the last ones); rstdOut float32 with them kept as 1"),
    E("GroupNormSilu", _C + "group_norm_silu", "self gamma beta group eps out meanOut rstdOut",
      ("self", "gamma", "beta", "group", "eps"), out="out meanOut rstdOut", nullable="gamma beta"),
    E("GroupNormSiluV2", _C + "group_norm_silu_v2", "self gamma beta group eps activateSilu out meanOut rstdOut",
      ("self", "gamma", "beta", "group", "eps", "activateSilu"), out="out meanOut rstdOut", nullable="gamma beta"),
    E("BatchNormElemt", _C + "batch_norm_elemt", "input weight bias mean invstd eps output",
      ("input", "weight", "bias", "mean", "invstd", "eps"), out="output mean invstd", nullable="weight bias",
      notes="mean and invstd (declared outputs) get their own values back; eps unused (invstd is given)"),
    E("BatchNormElemtBackward", _C + "batch_norm_elemt_backward",
      "gradOut input mean invstd weight sumDy sumDyXmu counter gradInput",
      ("gradOut", "input", "mean", "invstd", "weight", "sumDy", "sumDyXmu", "counter"), out="gradInput counter",
      dtypes={"*": FLOATS, "counter": (D.INT32, D.FLOAT16, D.FLOAT)},
      traced="norm/sync_batch_norm_backward_elemt/op_api/aclnn_batch_norm_elemt_backward.cpp",
      notes="n is the sum of counter (MeanByCounter); counter (a declared output) gets its own values back"),
    E("BatchNormReduce", _C + "batch_norm_reduce", "x sum squareSum", ("x",), out="sum squareSum",
      out_dtypes=(D.FLOAT,), notes="sums over N, H, W of an NCHW x, in FLOAT"),
    E("BatchNormReduceBackward", _C + "batch_norm_reduce_backward",
      "gradOut input mean invstd weight inputG weightG biasG sumDy sumDyXmu gradWeight gradBias",
      ("gradOut", "input", "mean", "invstd", "weight", "inputG", "weightG", "biasG"),
      out="sumDy sumDyXmu gradWeight gradBias", nullable="sumDy sumDyXmu gradWeight gradBias",
      notes="an output whose flag (inputG, weightG, biasG) is false may be nullptr and is not written"),
    E("BinaryCrossEntropyWithLogitsBackward", _C + "bce_with_logits_backward",
      "gradOutput self target weightOptional posWeightOptional reduction out",
      ("gradOutput", "self", "target", "weightOptional", "posWeightOptional", "reduction")),
    E("BinaryCrossEntropyWithLogitsTargetBackward", _C + "bce_with_logits_target_backward",
      "gradOutput self target weightOptional posWeightOptional reduction gradTarget",
      ("gradOutput", "self", "target", "weightOptional", "posWeightOptional", "reduction"), out="gradTarget"),
]

LEFT_OUT = {
    "GRU": "writes the gates (r, z, n) and hidden states per step: aten's gru returns only output and hy",
    "GRUBackward": "takes GRU's per-step gates: no aten overload",
}

_OPT = "the doc's formula, in float32; the hyper-parameters one-element tensors"
ENTRIES += [
    E("ForeachAddList", _C + "foreach_add_list", "x1 x2 alpha out", ("x1", "x2", "alpha"),
      dtypes={"*": FLOATS + (D.INT32, D.INT16, D.INT8, D.UINT8), "alpha": (D.FLOAT, D.FLOAT16, D.INT32)},
      notes="alpha: a one-element tensor"),
    E("ForeachAddcdivScalar", _C + "foreach_addcdiv_scalar", "x1 x2 x3 scalar out", ("x1", "x2", "x3", "scalar"),
      dtypes={"*": FLOATS, "scalar": (D.FLOAT, D.FLOAT16)}, notes="scalar: a one-element tensor"),
    E("ApplyGradientDescent", _C + "apply_gradient_descent", "var alpha delta", ("var", "alpha", "delta"),
      out="var", notes="var - alpha * delta in float32 (the doc)"),
    E("ApplyAdamW", _C + "apply_adam_w",
      "varRef mRef vRef beta1Power beta2Power lr weightDecay beta1 beta2 eps grad maxGradNormOptional amsgrad "
      "maximize",
      ("varRef", "mRef", "vRef", "beta1Power", "beta2Power", "lr", "weightDecay", "beta1", "beta2", "eps", "grad",
       "maxGradNormOptional", "amsgrad", "maximize"), out="varRef mRef vRef",
      notes=f"{_OPT}; beta1Power, beta2Power: beta^(t-1); amsgrad keeps max(maxGradNorm, v) in vRef (the doc)"),
    E("ApplyAdamWV2", _C + "apply_adam_w_v2",
      "varRef mRef vRef maxGradNormOptionalRef grad step lr beta1 beta2 weightDecay eps amsgrad maximize",
      ("varRef", "mRef", "vRef", "maxGradNormOptionalRef", "grad", "step", "lr", "beta1", "beta2", "weightDecay",
       "eps", "amsgrad", "maximize"), out="varRef mRef vRef maxGradNormOptionalRef",
      dtypes={"*": FLOATS, "step": (D.INT64, D.FLOAT)},
      notes="aten's fused AdamW on one tensor (the doc's formula; step is t)"),
    E("AscendAntiQuant", _C + "ascend_anti_quant", "x scale offset dstType sqrtMode y",
      ("x", "scale", "offset", "dstType", "sqrtMode"), out="y", nullable="offset",
      dtypes={"x": (D.INT8,), "scale": (D.FLOAT, D.BF16), "offset": (D.FLOAT, D.BF16)}, out_dtypes=(D.FLOAT16, D.BF16),
      notes="x INT8 only (INT4, the INT32-packed int4 and the 8-bit floats left out); dstType (1 FLOAT16, 27 "
            "BFLOAT16) is y's dtype, which is what is written"),
]
ENTRIES += [
    E("ApplyAdamD", _C + "apply_adam_d",
      "var m v beta1Power beta2Power lr beta1 beta2 epsilon grad useLocking useNesterov varOut mOut vOut",
      ("var", "m", "v", "beta1Power", "beta2Power", "lr", "beta1", "beta2", "epsilon", "grad", "useNesterov"),
      out="varOut mOut vOut", notes=f"{_OPT}; beta powers beta^t; useLocking (TensorFlow's) has no effect"),
    E("AdaLayerNorm", _C + "ada_layer_norm", "x scale shift weightOptional biasOptional epsilon out",
      ("x", "scale", "shift", "weightOptional", "biasOptional", "epsilon")),
    E("AdaLayerNormV2", _C + "ada_layer_norm_v2",
      "x scale shift weightOptional biasOptional epsilon out meanOutOptional rstdOutOptional",
      ("x", "scale", "shift", "weightOptional", "biasOptional", "epsilon"), out="out meanOutOptional rstdOutOptional"),
]
