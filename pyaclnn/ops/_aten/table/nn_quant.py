"""Fake quantisation of ops-nn (quant/fake_quant_affine_cachemask): aten's
fake_quantize_*_affine_cachemask overloads (qval = nearbyint(x / scale) + zero_point; out =
(clamp(qval, quantMin, quantMax) - zero_point) * scale; mask = quantMin <= qval <= quantMax).

Dtypes from the docs: self and scale FLOAT16 or FLOAT (computed in float32: aten takes a float
scale), zeroPoint INT32. The other quantisation operators of this list are left out (LEFT_OUT).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._entry import F16, Conv, E, D


@dataclass(frozen=True)
class _OneElement(Conv):
    """A double C parameter as a one-element float32 tensor (aten's fake_quant_enabled)."""

    def convert(self, value: Any, torch: Any) -> Any:
        return torch.tensor([float(value)], dtype=torch.float32)


_DT = {"*": F16, "zeroPoint": (D.INT32,)}

ENTRIES = [
    E("FakeQuantPerChannelAffineCachemask", "aten::fake_quantize_per_channel_affine_cachemask.default",
      "self scale zeroPoint axis quantMin quantMax out mask",
      ("self", "scale", "zeroPoint", "axis", "quantMin", "quantMax"), out="out mask", dtypes=_DT, upcast=True),
    E("FakeQuantPerTensorAffineCachemask",
      "aten::_fake_quantize_per_tensor_affine_cachemask_tensor_qparams.default",
      "self scale zeroPoint fakeQuantEnabled quantMin quantMax out mask",
      ("self", "scale", "zeroPoint", _OneElement("fakeQuantEnabled"), "quantMin", "quantMax"), out="out mask",
      dtypes=_DT, upcast=True,
      notes="fakeQuantEnabled < 1: out is self, mask all true (aten's)"),
]

LEFT_OUT = {op: "quantisation with the device's quant modes, rounding modes or formats: no aten overload"
            for op in ("AntiMxQuant", "AscendQuant", "AscendQuantV3", "DynamicQuant",
                       "DynamicQuantV2", "DynamicQuantV3", "DynamicQuantV4", "FlatQuant", "FlatQuantV2",
                       "FlatQuantV3", "GeluQuant", "GroupQuant", "GroupedDynamicMxQuant", "GroupedDynamicMxQuantV2",
                       "GroupedQuantMax")}
