"""Activations and their in-place forms."""
from __future__ import annotations

from ._entry import FLOATS64, E, Enum

ENTRIES = [
    E("Relu", "aten::relu.default", "self out", ("self",), dtypes=FLOATS64),
    E("InplaceRelu", "aten::relu.default", "selfRef", ("selfRef",), dtypes=FLOATS64),
    E("Gelu", "aten::gelu.default", "self out", ("self",)),
    E("GeluV2", "aten::gelu.default", "x approximate y", ("x",), {"approximate": Enum("approximate", ("none", "tanh"))},
      out="y", notes="approximate: 0 'none', 1 'tanh' (aclnn_gelu_v2.h)"),
    E("Silu", "aten::silu.default", "self out", ("self",)),
    E("Hardsigmoid", "aten::hardsigmoid.default", "self out", ("self",)),
    E("HardsigmoidV2", "aten::hardsigmoid.default", "self out", ("self",)),
    E("Hardswish", "aten::hardswish.default", "self out", ("self",)),
    E("Mish", "aten::mish.default", "self out", ("self",)),
    E("Selu", "aten::selu.default", "self out", ("self",), dtypes=FLOATS64),
    E("LogSigmoid", "aten::log_sigmoid.default", "self out", ("self",)),
    E("LeakyRelu", "aten::leaky_relu.default", "self negativeSlope out", ("self", "negativeSlope")),
    E("Elu", "aten::elu.default", "self alpha scale inputScale out", ("self", "alpha", "scale", "inputScale")),
    E("EluV2", "aten::elu.default", "self alpha scale inputScale out", ("self", "alpha", "scale", "inputScale")),
    E("Celu", "aten::celu.default", "self alpha out", ("self", "alpha")),
    E("Softplus", "aten::softplus.default", "self beta threshold out", ("self", "beta", "threshold")),
    E("Hardshrink", "aten::hardshrink.default", "self lambd out", ("self", "lambd")),
    E("Softshrink", "aten::softshrink.default", "self lambd out", ("self", "lambd")),
    E("Threshold", "aten::threshold.default", "self threshold value out", ("self", "threshold", "value"),
      dtypes=FLOATS64),
    E("ThresholdV2", "aten::threshold.default", "self threshold value out", ("self", "threshold", "value"),
      dtypes=FLOATS64),
    E("Glu", "aten::glu.default", "self dim out", ("self", "dim"), dtypes=FLOATS64),
    # in-place forms
    E("InplaceCelu", "aten::celu.default", "selfRef alpha", ("selfRef", "alpha")),
    E("InplaceElu", "aten::elu.default", "selfRef alpha scale inputScale", ("selfRef", "alpha", "scale", "inputScale")),
    E("InplaceLeakyRelu", "aten::leaky_relu.default", "selfRef negativeSlope", ("selfRef", "negativeSlope")),
    E("InplaceMish", "aten::mish.default", "selfRef", ("selfRef",)),
    E("InplaceSelu", "aten::selu.default", "selfRef", ("selfRef",), dtypes=FLOATS64),
    E("InplaceThreshold", "aten::threshold.default", "selfRef threshold value", ("selfRef", "threshold", "value"),
      dtypes=FLOATS64),
    E("InplaceHardsigmoid", "aten::hardsigmoid.default", "self", ("self",), out="self"),
    E("InplaceHardsigmoidV2", "aten::hardsigmoid.default", "self", ("self",), out="self"),
    E("InplaceHardswish", "aten::hardswish.default", "self", ("self",), out="self"),
]

