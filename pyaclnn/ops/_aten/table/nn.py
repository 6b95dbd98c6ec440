"""Neural-network layers: normalisations, matrix products, softmax, pooling, convolution,
padding and resampling."""
from __future__ import annotations

from ._entry import F16, FLOATS, FLOATS64, Call, E, zero_is_none
from ....dtypes import DType

_HF32 = "cubeMathType dropped: fp32 in full precision (the device may use HF32 when cubeMathType allows it)"
_DIV = "divisorOverride 0 is none (the header)"
_CV = "hicann/ops-cv 6ae87653464d2afb064c829e529abba2e278b0c4"  # the commit the grid samplers were traced at
# aclnnAddmv's list (hicann/ops-nn e5c3fa9327ea95ba26d06227e746923580d10921
# matmul/addmv/op_host/op_api/aclnn_addmv.cpp addmvDtypeSupportList) less bool: aten's addmv has no bool kernel
_ADDMV = FLOATS64 + (DType.INT32, DType.INT64, DType.INT16, DType.INT8, DType.UINT8)

# (CANN name, aten name): out = aten(self, padding)
_PADS = [(f"{kind}Pad{n}d", f"{kind.lower()}_pad{n}d") for kind in ("Reflection", "Replication") for n in (1, 2, 3)]

ENTRIES = [
    E("Softmax", "aten::softmax.int", "self dim out", ("self", "dim")),
    E("LogSoftmax", "aten::log_softmax.int", "self dim out", ("self", "dim")),
    # matrix products
    E("Mm", "aten::mm.default", "self mat2 out cubeMathType", ("self", "mat2"), notes=_HF32),
    E("BatchMatMul", "aten::bmm.default", "self mat2 out cubeMathType", ("self", "mat2"), notes=_HF32),
    E("Matmul", "aten::matmul.default", "self mat2 out cubeMathType", ("self", "mat2"), notes=_HF32),
    E("Mv", "aten::mv.default", "self vec out cubeMathType", ("self", "vec"), notes=_HF32),
    E("Dot", "aten::dot.default", "self tensor out", ("self", "tensor"),
      dtypes=FLOATS + (DType.INT8, DType.INT32, DType.UINT8), same_dtype="self tensor out",
      traced="math/dot/op_api/aclnn_dot.cpp", notes="integers accumulate in their own type (aten's)"),
    E("Ger", "aten::ger.default", "self vec2 out", ("self", "vec2")),
    E("Addmm", "aten::addmm.default", "self mat1 mat2 beta alpha out cubeMathType", ("self", "mat1", "mat2"),
      {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("Addbmm", "aten::addbmm.default", "self batch1 batch2 beta alpha out cubeMathType", ("self", "batch1", "batch2"),
      {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("Baddbmm", "aten::baddbmm.default", "self batch1 batch2 beta alpha out cubeMathType",
      ("self", "batch1", "batch2"), {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("Addmv", "aten::addmv.default", "self mat vec alpha beta out cubeMathType", ("self", "mat", "vec"),
      {"beta": "beta", "alpha": "alpha"}, dtypes=_ADDMV, traced="matmul/addmv/op_host/op_api/aclnn_addmv.cpp",
      notes=_HF32 + "; alpha comes before beta in C; bool left out (aten's addmv has no bool kernel; the device "
            "computes logical and/or)"),
    E("Addr", "aten::addr.default", "self vec1 vec2 betaOptional alphaOptional out", ("self", "vec1", "vec2"),
      {"beta": "betaOptional", "alpha": "alphaOptional"}, dtypes=FLOATS64 + (DType.INT32, DType.INT64, DType.BOOL)),
    E("AddrV2", "aten::addr.default", "self vec1 vec2 betaOptional alphaOptional out", ("self", "vec1", "vec2"),
      {"beta": "betaOptional", "alpha": "alphaOptional"}, dtypes=FLOATS64 + (DType.INT32, DType.INT64, DType.BOOL)),
    E("InplaceAddmm", "aten::addmm.default", "selfRef mat1 mat2 beta alpha cubeMathType", ("selfRef", "mat1", "mat2"),
      {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("InplaceAddbmm", "aten::addbmm.default", "selfRef batch1 batch2 beta alpha cubeMathType",
      ("selfRef", "batch1", "batch2"), {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("InplaceBaddbmm", "aten::baddbmm.default", "selfRef batch1 batch2 beta alpha cubeMathType",
      ("selfRef", "batch1", "batch2"), {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("InplaceAddr", "aten::addr.default", "selfRef vec1 vec2 betaOptional alphaOptional", ("selfRef", "vec1", "vec2"),
      {"beta": "betaOptional", "alpha": "alphaOptional"}),
    E("InplaceAddrV2", "aten::addr.default", "selfRef vec1 vec2 betaOptional alphaOptional",
      ("selfRef", "vec1", "vec2"), {"beta": "betaOptional", "alpha": "alphaOptional"}),
    # normalisation
    E("LayerNorm", "aten::native_layer_norm.default",
      "input normalizedShape weightOptional biasOptional eps out meanOutOptional rstdOutOptional",
      ("input", "normalizedShape", "weightOptional", "biasOptional", "eps"),
      out="out meanOutOptional rstdOutOptional"),
    E("GroupNorm", "aten::native_group_norm.default", "self gamma beta N C HxW group eps out meanOut rstdOut",
      ("self", "gamma", "beta", "N", "C", "HxW", "group", "eps"), out="out meanOut rstdOut", nullable="gamma beta",
      notes="meanOut and rstdOut of shape (N, group)"),
    # pooling
    E("AdaptiveAvgPool2d", "aten::adaptive_avg_pool2d.default", "self outputSize out", ("self", "outputSize")),
    E("AdaptiveAvgPool3d", "aten::adaptive_avg_pool3d.default", "self outputSize out", ("self", "outputSize")),
    E("AdaptiveMaxPool2d", "aten::adaptive_max_pool2d.default", "self outputSize outputOut indicesOut",
      ("self", "outputSize"), out="outputOut indicesOut", notes="indices computed in int64, cast to indicesOut's dtype"),
    E("AdaptiveMaxPool3d", "aten::adaptive_max_pool3d.default", "self outputSize outputOut indicesOut",
      ("self", "outputSize"), out="outputOut indicesOut", notes="indices computed in int64, cast to indicesOut's dtype"),
    E("AvgPool2d", "aten::avg_pool2d.default",
      "self kernelSize strides paddings ceilMode countIncludePad divisorOverride cubeMathType out",
      ("self", "kernelSize", "strides", "paddings", "ceilMode", "countIncludePad", Call("divisorOverride", zero_is_none)),
      notes=_HF32 + "; " + _DIV),
    E("AvgPool3d", "aten::avg_pool3d.default", "self kernelSize stride padding ceilMode countIncludePad divisorOverride out",
      ("self", "kernelSize", "stride", "padding", "ceilMode", "countIncludePad", Call("divisorOverride", zero_is_none)),
      upcast=True, same_dtype="self out", traced="pooling/avg_pool3_d/op_api/aclnn_avgpool3d.cpp",
      notes=_DIV + "; fp16 and bf16 computed in float32 (aten's CPU avg_pool3d has no fp16 kernel)"),
    E("MaxPool2dWithIndices", "aten::max_pool2d_with_indices.default",
      "self kernelSize stride padding dilation ceilMode out indices",
      ("self", "kernelSize", "stride", "padding", "dilation", "ceilMode"), out="out indices",
      notes="indices (into each H*W plane) computed in int64, cast to indices' dtype"),
    # convolution
    E("Convolution", "aten::convolution.default",
      "input weight bias stride padding dilation transposed outputPadding groups output cubeMathType",
      ("input", "weight", "bias", "stride", "padding", "dilation", "transposed", "outputPadding", "groups"),
      out="output", nullable="bias", notes=_HF32),
    E("Im2col", "aten::im2col.default", "self kernelSize dilation padding stride out",
      ("self", "kernelSize", "dilation", "padding", "stride")),
    # padding
    *(E(op, f"aten::{name}.default", "self padding out", ("self", "padding"), dtypes=FLOATS64) for op, name in _PADS),
    # resampling (a scale of 0 is none, as aten's)
    E("UpsampleNearest1d", "aten::upsample_nearest1d.default", "self outputSize out", ("self", "outputSize")),
    E("UpsampleNearest1dV2", "aten::upsample_nearest1d.default", "self outputSize scaleL out",
      ("self", "outputSize", "scaleL")),
    E("UpsampleNearest2d", "aten::upsample_nearest2d.default", "self outputSize out", ("self", "outputSize")),
    E("UpsampleNearest2dV2", "aten::upsample_nearest2d.default", "self outputSize scalesH scalesW out",
      ("self", "outputSize", "scalesH", "scalesW")),
    E("UpsampleNearest3d", "aten::upsample_nearest3d.default", "self outputSize scalesD scalesH scalesW out",
      ("self", "outputSize", "scalesD", "scalesH", "scalesW")),
    E("UpsampleNearestExact1d", "aten::_upsample_nearest_exact1d.default", "self outputSize scales out",
      ("self", "outputSize", "scales")),
    E("UpsampleNearestExact2d", "aten::_upsample_nearest_exact2d.default", "self outputSize scalesH scalesW out",
      ("self", "outputSize", "scalesH", "scalesW")),
    E("UpsampleNearestExact3d", "aten::_upsample_nearest_exact3d.default",
      "self outputSize scalesD scalesH scalesW out", ("self", "outputSize", "scalesD", "scalesH", "scalesW")),
    E("UpsampleLinear1d", "aten::upsample_linear1d.default", "self outputSize alignCorners scale out",
      ("self", "outputSize", "alignCorners", "scale")),
    E("UpsampleBilinear2d", "aten::upsample_bilinear2d.default", "self outputSize alignCorners scalesH scalesW out",
      ("self", "outputSize", "alignCorners", "scalesH", "scalesW")),
    E("UpsampleBicubic2d", "aten::upsample_bicubic2d.default", "self outputSize alignCorners scalesH scalesW out",
      ("self", "outputSize", "alignCorners", "scalesH", "scalesW")),
    E("UpsampleTrilinear3d", "aten::upsample_trilinear3d.default",
      "self outputSize alignCorners scalesD scalesH scalesW out",
      ("self", "outputSize", "alignCorners", "scalesD", "scalesH", "scalesW")),
    E("UpsampleBilinear2dAA", "aten::_upsample_bilinear2d_aa.default",
      "input outputSize alignCorners scalesH scalesW out", ("input", "outputSize", "alignCorners", "scalesH", "scalesW")),
    E("UpsampleBicubic2dAA", "aten::_upsample_bicubic2d_aa.default", "x outputSize alignCorners scalesH scalesW out",
      ("x", "outputSize", "alignCorners", "scalesH", "scalesW")),
    E("GridSampler2D", "aten::grid_sampler_2d.default", "input grid interpolationMode paddingMode alignCorners out",
      ("input", "grid", "interpolationMode", "paddingMode", "alignCorners"), dtypes=FLOATS64,
      same_dtype="input grid out", traced="image/grid_sample/op_api/aclnn_grid_sampler2d.cpp (" + _CV + ")",
      notes="modes as aten's ints: interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, "
            "2 reflection"),
    E("GridSampler3D", "aten::grid_sampler_3d.default", "input grid interpolationMode paddingMode alignCorners out",
      ("input", "grid", "interpolationMode", "paddingMode", "alignCorners"), dtypes=FLOATS64,
      same_dtype="input grid out", traced="image/grid_sample/op_api/aclnn_grid_sampler3d.cpp (" + _CV + ")"),
    # distances
    # the distances' fp16 (and Cdist's bf16) go to aten as float32: its CPU kernels have none, the device's do
    # (hicann/ops-math c41933244c31e44fd496e3bb3212164f8c48c214 math/pdist/op_api/aclnn_pdist.cpp,
    # aclnn_pdist_forward.cpp: float16 and float32 only; math/cdist/op_api/aclnn_cdist.cpp)
    E("Pdist", "aten::pdist.default", "self p out", ("self", "p"), dtypes=F16, upcast=True,
      traced="math/pdist/op_api/aclnn_pdist.cpp"),
    E("PdistForward", "aten::_pdist_forward.default", "self pScalar out", ("self", Call("pScalar", float)),
      dtypes=F16, upcast=True, traced="math/pdist/op_api/aclnn_pdist_forward.cpp",
      notes="pScalar (an aclScalar) taken as a float"),
    E("Cdist", "aten::cdist.default", "x1 x2 p compute_mode out", ("x1", "x2", "p", "compute_mode"), upcast=True),
    E("LinalgCross", "aten::linalg_cross.default", "self other dim out", ("self", "other"), {"dim": "dim"},
      dtypes=FLOATS64 + (DType.INT32, DType.INT64)),
]

