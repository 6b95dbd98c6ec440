"""Activations of ops-nn (activation/): the forward forms activation.py does not have, their
in-place forms and their backward forms (aten's ``*_backward`` overloads, argument for argument).

Dtypes from each operator's docs/aclnn<Op>.md (hicann/ops-nn); bf16 only on SOCS_BF16 (the
docs: "Atlas 训练系列产品 / 推理系列产品: no BFLOAT16").
"""
from __future__ import annotations

from ._entry import FLOATS, FLOATS64, INTS, E, Enum, D, Call

_BOOL = (D.BOOL,)


def _not_negative(value: float) -> float:
    """HardshrinkBackward's lambd: "when λ < 0, computed as 0" (aclnnHardshrinkBackward.md)."""
    return max(float(value), 0.0)


ENTRIES = [
    E("AddRelu", "aten::_add_relu.Tensor", "self other alpha out", ("self", "other"), {"alpha": "alpha"},
      dtypes=FLOATS + INTS),
    E("InplaceAddRelu", "aten::_add_relu.Tensor", "selfRef other alpha", ("selfRef", "other"), {"alpha": "alpha"},
      dtypes=FLOATS + INTS),
    E("Celu", "aten::celu.default", "self alpha out", ("self", "alpha")),
    E("InplaceCelu", "aten::celu.default", "selfRef alpha", ("selfRef", "alpha")),
    E("EluV2", "aten::elu.default", "self alpha scale inputScale out", ("self", "alpha", "scale", "inputScale")),
    E("InplaceElu", "aten::elu.default", "selfRef alpha scale inputScale", ("selfRef", "alpha", "scale", "inputScale")),
    E("EluBackward", "aten::elu_backward.default", "gradOutput alpha scale inputScale isResult selfOrResult gradInput",
      ("gradOutput", "alpha", "scale", "inputScale", "isResult", "selfOrResult"), out="gradInput"),
    E("Erfinv", "aten::erfinv.default", "self out", ("self",), dtypes=FLOATS + INTS + _BOOL),
    E("InplaceErfinv", "aten::erfinv.default", "selfRef", ("selfRef",)),
    E("GeluBackward", "aten::gelu_backward.default", "gradOutput self gradInput", ("gradOutput", "self"),
      out="gradInput"),
    E("GeluBackwardV2", "aten::gelu_backward.default", "gradOutput self approximate gradInput", ("gradOutput", "self"),
      {"approximate": "approximate"}, out="gradInput", notes="approximate: \"none\" (erf) or \"tanh\", as aten's"),
    E("Glu", "aten::glu.default", "self dim out", ("self", "dim"), dtypes=FLOATS64),
    E("GluBackward", "aten::glu_backward.default", "gradOut self dim out", ("gradOut", "self", "dim"), dtypes=FLOATS64),
    E("Hardshrink", "aten::hardshrink.default", "self lambd out", ("self", "lambd")),
    E("HardshrinkBackward", "aten::hardshrink_backward.default", "gradOutput self lambd gradInput",
      ("gradOutput", "self", Call("lambd", _not_negative)), out="gradInput",
      notes="lambd < 0 is taken as 0 (the doc), where aten would pass every gradient"),
    E("HardsigmoidBackward", "aten::hardsigmoid_backward.default", "gradOutput self out", ("gradOutput", "self")),
    E("HardsigmoidV2", "aten::hardsigmoid.default", "self out", ("self",),
      notes="INT32 (the doc's integer path) left out: aten's hardsigmoid takes floats only"),
    E("InplaceHardsigmoid", "aten::hardsigmoid.default", "self", ("self",), out="self"),
    E("InplaceHardsigmoidV2", "aten::hardsigmoid.default", "self", ("self",), out="self",
      notes="INT32 left out, as HardsigmoidV2"),
    E("HardswishBackward", "aten::hardswish_backward.default", "gradOutput self out", ("gradOutput", "self"),
      notes="gradient x/3 + 0.5 on [-3, 3], 0 below, 1 above: aten's, the doc's V1 formula"),
    E("InplaceHardswish", "aten::hardswish.default", "self", ("self",), out="self"),
    E("HardtanhBackward", "aten::hardtanh_backward.default", "gradOutput self min max out",
      ("gradOutput", "self", "min", "max"),
      traced="activation/hardtanh_grad/op_kernel/arch35/hardtanh_grad_dag.h",
      notes="the gradient passes where min < x < max or x is NaN (the kernel; the doc's formula says <=)"),
    E("Heaviside", "aten::heaviside.default", "input values out", ("input", "values")),
    E("InplaceLeakyRelu", "aten::leaky_relu.default", "selfRef negativeSlope", ("selfRef", "negativeSlope")),
]

# Operators of this family left out, each with why (the coverage page lists them).
LEFT_OUT = {
    "HardswishBackwardV2": "gradient 0 at x <= -3 and 1 at x >= 3 (aclnnHardswishBackwardV2.md); aten's "
                           "hardswish_backward gives x/3 + 0.5 at x = +-3",
}
