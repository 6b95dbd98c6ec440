"""Matrix products of ops-nn (matmul/) with a bias term, and einsum: aten's overloads argument
for argument, cubeMathType dropped.

Dtypes from docs/aclnn<Op>.md: FLOAT, FLOAT16, BFLOAT16 (bf16 only on SOCS_BF16; Addmv and
Einsum take integers too).
"""
from __future__ import annotations

from ._entry import FLOATS, FLOATS64, INTS, E, D

_HF32 = "cubeMathType dropped: fp32 in full precision (the device may use HF32 or fp16 when cubeMathType allows it)"

ENTRIES = [
    E("Addmm", "aten::addmm.default", "self mat1 mat2 beta alpha out cubeMathType", ("self", "mat1", "mat2"),
      {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("InplaceAddmm", "aten::addmm.default", "selfRef mat1 mat2 beta alpha cubeMathType", ("selfRef", "mat1", "mat2"),
      {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("Addbmm", "aten::addbmm.default", "self batch1 batch2 beta alpha out cubeMathType", ("self", "batch1", "batch2"),
      {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("InplaceAddbmm", "aten::addbmm.default", "selfRef batch1 batch2 beta alpha cubeMathType",
      ("selfRef", "batch1", "batch2"), {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("Baddbmm", "aten::baddbmm.default", "self batch1 batch2 beta alpha out cubeMathType",
      ("self", "batch1", "batch2"), {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("InplaceBaddbmm", "aten::baddbmm.default", "selfRef batch1 batch2 beta alpha cubeMathType",
      ("selfRef", "batch1", "batch2"), {"beta": "beta", "alpha": "alpha"}, notes=_HF32),
    E("Addmv", "aten::addmv.default", "self mat vec alpha beta out cubeMathType", ("self", "mat", "vec"),
      {"beta": "beta", "alpha": "alpha"}, dtypes=FLOATS64 + INTS + (D.BOOL,), notes=_HF32),
    E("Einsum", "aten::einsum.default", "tensors equation output", ("equation", "tensors"), out="output",
      dtypes=(D.FLOAT, D.FLOAT16, D.INT16, D.INT32, D.INT64),
      notes="any equation (the device matches only \"abcd,abced->abce\" and \"a,b->ab\"); "
            "the unsigned 16-64-bit dtypes it takes are left out"),
]

LEFT_OUT = {
    "AddmmWeightNz": "FRACTAL_NZ weight",
    "BatchMatMulWeightNz": "FRACTAL_NZ weight",
    "BatchMatmulQuant": "quantised matmul with device quant parameters",
    "DualLevelQuantMatmulWeightNz": "quantised, FRACTAL_NZ weight",
    "FusedMatmul": "fused matmul + element-wise op chosen by a string: no aten overload",
    "FusedMatmulGelu": "fused matmul + bias + GELU: no aten overload",
    "FusedQuantMatmul": "quantised fused matmul",
    "FusedQuantMatmulWeightNz": "quantised, FRACTAL_NZ weight",
    "ConvertWeightToINT4Pack": "packs int4 weights in the device's layout",
}
