"""Einsum of ops-nn (matmul/): aten's einsum (nn.py has the products with a bias term); and the
matrix products this half of the list leaves out.

Dtypes from docs/aclnnEinsum.md.
"""
from __future__ import annotations

from ._entry import E, D

ENTRIES = [
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
