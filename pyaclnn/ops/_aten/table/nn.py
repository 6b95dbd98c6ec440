"""Neural-network layers: normalisations, matrix products, softmax."""
from __future__ import annotations

from ._entry import FLOATS, FLOATS64, NUMS, E

_HF32 = "cubeMathType dropped: fp32 in full precision (the device may use HF32 when cubeMathType allows it)"

ENTRIES = [
    E("Softmax", "aten::softmax.int", "self dim out", ("self", "dim")),
    E("LogSoftmax", "aten::log_softmax.int", "self dim out", ("self", "dim")),
    E("Mm", "aten::mm.default", "self mat2 out cubeMathType", ("self", "mat2"), notes=_HF32),
    E("BatchMatMul", "aten::bmm.default", "self mat2 out cubeMathType", ("self", "mat2"), notes=_HF32),
    E("LayerNorm", "aten::native_layer_norm.default",
      "input normalizedShape weightOptional biasOptional eps out meanOutOptional rstdOutOptional",
      ("input", "normalizedShape", "weightOptional", "biasOptional", "eps"),
      out="out meanOutOptional rstdOutOptional"),
    E("Tril", "aten::tril.default", "self diagonal out", ("self", "diagonal"), dtypes=NUMS),
    E("Triu", "aten::triu.default", "self diagonal out", ("self", "diagonal"), dtypes=NUMS),
]

