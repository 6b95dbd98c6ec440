"""Normalisations of ops-nn (norm/): batch norm and its backward forms, FastLayerNorm (aten's
``native_*`` overloads, argument for argument); nn.py has GroupNorm, nn_fused.py the fused norms.

Dtypes from docs/aclnn<Op>.md (hicann/ops-nn): FLOAT, FLOAT16, BFLOAT16 (bf16 only on SOCS_BF16).
Which pointers may be nullptr from op_api/aclnn_<op>.cpp's CheckNotNull: a backward's outputs are
required only where its outputMask is true (aten then leaves that result undefined: nothing
is checked or written there).
"""
from __future__ import annotations

from ._entry import E

_MASK = "an output whose outputMask is false may be nullptr and is not written"

ENTRIES = [
    E("BatchNorm", "compose:nn.batch_norm",
      "input weight bias runningMean runningVar training momentum eps output saveMean saveInvstd",
      ("input", "weight", "bias", "runningMean", "runningVar", "training", "momentum", "eps"),
      out="output saveMean saveInvstd runningMean runningVar",
      nullable="weight bias runningMean runningVar saveMean saveInvstd",
      traced="norm/batch_norm_v3/op_host/op_api/aclnn_batch_norm.cpp",
      notes="training: runningMean and runningVar get aten's updated statistics (momentum, unbiased variance); "
            "not training: saveMean and saveInvstd may be nullptr and are left unwritten"),
    E("BatchNormBackward", "aten::native_batch_norm_backward.default",
      "gradOut input weight runningMean runningVar saveMean saveInvstd training eps outputMask "
      "gradInput gradWeight gradBias",
      ("gradOut", "input", "weight", "runningMean", "runningVar", "saveMean", "saveInvstd", "training", "eps",
       "outputMask"),
      out="gradInput gradWeight gradBias",
      nullable="weight runningMean runningVar saveMean saveInvstd gradInput gradWeight gradBias",
      mask="outputMask",
      traced="norm/batch_norm_grad_v3/op_host/op_api/aclnn_batch_norm_backward.cpp", notes=_MASK),
    E("FastBatchNormBackward", "aten::native_batch_norm_backward.default",
      "gradOut input weight runningMean runningVar saveMean saveInvstd training eps outputMask version "
      "gradInput gradWeight gradBias",
      ("gradOut", "input", "weight", "runningMean", "runningVar", "saveMean", "saveInvstd", "training", "eps",
       "outputMask"),
      out="gradInput gradWeight gradBias",
      nullable="weight runningMean runningVar saveMean saveInvstd gradInput gradWeight gradBias",
      mask="outputMask",
      notes=f"version (the device's algorithm, 0 or 1) does not change the result; {_MASK}"),
    E("FastLayerNorm", "aten::native_layer_norm.default",
      "input normalizedShape weightOptional biasOptional eps out meanOutOptional rstdOutOptional",
      ("input", "normalizedShape", "weightOptional", "biasOptional", "eps"),
      out="out meanOutOptional rstdOutOptional",
      notes="LayerNorm's semantics (the doc: a faster kernel, another accumulation order)"),
]

LEFT_OUT = {
    "BatchNormGatherStatsWithCounts": "aten's has no CPU kernel (CUDA only); a composition needs the device kernel's "
                                      "running-variance rule (SyncBatchNormGatherStatsWithCounts), not traced",
    "AdaLayerNormBackward": "no aten overload (AdaLayerNorm's backward)",
    "AdaLayerNormQuant": "quantised output with device quant modes",
    "AddLayerNormQuant": "fused add + layer norm + quantisation (device quant modes)",
    "AddLayerNormQuantV2": "fused add + layer norm + quantisation (device quant modes)",
    "AddRmsNormDynamicMxQuant": "MX quantisation (device-only formats)",
    "AddRmsNormDynamicQuant": "fused add + RMS norm + dynamic quantisation",
    "AddRmsNormDynamicQuantV2": "fused add + RMS norm + dynamic quantisation",
    "AddRmsNormQuant": "fused add + RMS norm + quantisation",
    "AddRmsNormQuantV2": "fused add + RMS norm + quantisation",
    "GroupNormSiluQuant": "fused group norm + SiLU + quantisation",
}
