"""Activations."""
from __future__ import annotations

from ._entry import FLOATS, FLOATS64, E, Enum

ENTRIES = [
    E("Relu", "aten::relu.default", "self out", ("self",), dtypes=FLOATS + (FLOATS64[-1],)),
    E("InplaceRelu", "aten::relu.default", "selfRef", ("selfRef",), dtypes=FLOATS),
    E("Gelu", "aten::gelu.default", "self out", ("self",)),
    E("GeluV2", "aten::gelu.default", "x approximate y", ("x",), {"approximate": Enum("approximate", ("none", "tanh"))},
      out="y", notes="approximate: 0 'none', 1 'tanh' (aclnn_gelu_v2.h)"),
    E("Silu", "aten::silu.default", "self out", ("self",)),
    E("Hardsigmoid", "aten::hardsigmoid.default", "self out", ("self",)),
    E("Hardswish", "aten::hardswish.default", "self out", ("self",)),
    E("Mish", "aten::mish.default", "self out", ("self",)),
    E("LeakyRelu", "aten::leaky_relu.default", "self negativeSlope out", ("self", "negativeSlope")),
    E("Elu", "aten::elu.default", "self alpha scale inputScale out", ("self", "alpha", "scale", "inputScale")),
    E("Softplus", "aten::softplus.default", "self beta threshold out", ("self", "beta", "threshold")),
]
