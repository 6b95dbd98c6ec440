"""Activations, norms and linear algebra of list nn2 (issue 24), and the operators of that list
left out of the aten tier (LEFT_OUT, with the reason). Dtypes from hicann ops-nn docs."""
from __future__ import annotations

from ._entry import E, FLOATS
from ....dtypes import DType

_C = "torch:pyaclnn.ops._aten.nn2_compose."

ENTRIES = [
    E("Softsign", "torch:torch.nn.functional.softsign", "self out", ("self",)),
    E("Swish", _C + "swish", "self betaOptional out", ("self", "betaOptional"),
      notes="betaOptional nullptr is 1.0 (the doc)"),
    E("Shrink", _C + "shrink", "self lambd bias out", ("self", "lambd", "bias"), dtypes=(DType.FLOAT, DType.FLOAT16)),
    E("Prelu", "aten::prelu.default", "self weight out", ("self", "weight")),
    E("Inverse", _C + "inverse", "self out", ("self",), dtypes=(DType.FLOAT, DType.FLOAT16, DType.DOUBLE),
      notes="float16 inverted in float32"),
    E("LayerNormWithImplMode", "aten::native_layer_norm.default",
      "input normalizedShape weightOptional biasOptional eps out meanOutOptional rstdOutOptional implMode",
      ("input", "normalizedShape", "weightOptional", "biasOptional", "eps"),
      out="out meanOutOptional rstdOutOptional",
      notes="implMode dropped (a device precision/performance choice): computed as aten's layer norm"),
]

LEFT_OUT: dict[str, str] = {}
