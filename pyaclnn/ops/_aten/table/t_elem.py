"""Element-wise operators that came with the ops-math tensor list (issue 24 expansion): shifts,
decimal rounding, special functions, the experimental ``...WithAgent`` / SqrtBackward kernels,
dropout's mask application and the 1-bit Adam sign packing.

Dtypes from each operator's op_api source (hicann/ops-math [experimental/]math/<dir>/op_api/
aclnn_<name>.cpp, its ASCEND910B list; bf16 through SOCS_BF16); semantics from its
docs/aclnn<Name>.md or README.md. Compositions (``compose:tensor.*``) are in compose/tensor.py.
"""
from __future__ import annotations

from ._entry import FLOATS, D, Dtype, E, OutDtype

F = "compose:tensor."
_AGENT = (D.FLOAT, D.FLOAT16, D.DOUBLE, D.INT8, D.INT16, D.INT32, D.INT64, D.UINT8, D.BOOL)

ENTRIES = [
    E("AsinWithAgent", "aten::asin.default", "x y", ("x",), out="y", dtypes=_AGENT,
      notes="integers and bool give float32 (experimental/math/asin_with_agent README)"),
    E("AsinhWithAgent", "aten::asinh.default", "x out", ("x",), dtypes=_AGENT,
      notes="integers and bool give float32"),
    E("SqrtBackward", F + "sqrt_backward", "y dy z", ("y", "dy"), out="z",
      notes="z = dy / (2 y) (experimental/math/sqrt_grad README)"),
    E("DropoutDoMask", F + "dropout_do_mask", "self mask prob out", ("self", "mask", "prob"),
      dtypes={"self": FLOATS, "mask": (D.UINT8,)},
      notes="mask: one bit per element, LSB first, align(numel, 128) / 8 bytes"),
    E("SignBitsPack", F + "sign_bits_pack", "self size out", ("self", "size"), dtypes=(D.FLOAT, D.FLOAT16),
      out_dtypes=(D.UINT8,)),
    E("SignBitsUnpack", F + "sign_bits_unpack", "self size dtype out", ("self", "size", Dtype("dtype")),
      dtypes=(D.UINT8,), out_dtypes=(D.FLOAT, D.FLOAT16)),
    E("Scale", F + "scale", "x scale bias axis numAxes scaleFromBlob y",
      ("x", "scale", "bias", "axis", "numAxes", "scaleFromBlob", OutDtype("y")), out="y", nullable="bias",
      notes="Caffe's Scale; a nullptr bias adds nothing; on Ascend910 the device refuses every dtype "
            "(aclnn_scale.cpp has no list for it), here the floats are accepted"),
]

_RNG = "random: seeded (seed, offset) on the device's Philox streams, which torch's CPU generator does not reproduce"
# Operators of the ops-math tensor list no tier computes, and why (for the coverage page).
LEFT_OUT = {
    **{op: _RNG for op in ("Bernoulli", "BernoulliTensor", "InplaceBernoulli", "InplaceBernoulliTensor", "Dropout",
                           "DropoutV3", "InplaceNormal", "InplaceNormalTensor", "InplaceRandom", "InplaceRandomTensor",
                           "InplaceUniform", "InplaceUniformTensor", "Multinomial", "MultinomialTensor",
                           "NormalFloatFloat", "NormalTensorTensor", "Randperm")},
    "FresnelCos": "no aten or torch function computes the Fresnel integrals (the device's Cephes-style kernel)",
    "FresnelSin": "no aten or torch function computes the Fresnel integrals (the device's Cephes-style kernel)",
    "PrecisionCompare": "its out is a device checker's status code (0, 1, 2, 503) computed by a kernel outside "
                        "ops-math: the codes for a mismatch are not documented well enough to reproduce",
    "SilentCheck": "stateful silent-data-corruption detection (NPU_ASD environment, device step counters)",
    "SilentCheckV2": "stateful silent-data-corruption detection (NPU_ASD environment, device step counters)",
    "MaskedSelect": "data-dependent output shape: out is sized to the broadcast numel and the device reports how "
                    "many elements it selected through the output's shape after the run (no channel for it here)",
    "NpuFormatCast": "converts to device-private formats (NZ, ...)",
    "TransMatmulWeight": "converts a weight to the device-private NZ format in place",
    "TransConvolutionWeight": "converts a weight to the device-private fractal format",
    "WeightQuantPreprocess": "quantised weights in device-specific packed layouts",
}
