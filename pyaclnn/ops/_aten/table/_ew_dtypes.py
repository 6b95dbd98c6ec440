"""Short dtype lists for the element-wise families (ew_*.py): ``d("f32 f16 bf16")``, in the
abbreviations of the op sources' DTYPE_SUPPORT_LISTs."""
from __future__ import annotations

from ....dtypes import DType

_ABBR = {"f32": DType.FLOAT, "f16": DType.FLOAT16, "bf16": DType.BF16, "f64": DType.DOUBLE, "i8": DType.INT8,
         "i16": DType.INT16, "i32": DType.INT32, "i64": DType.INT64, "u8": DType.UINT8, "b": DType.BOOL,
         "c64": DType.COMPLEX64, "c128": DType.COMPLEX128, "u16": DType.UINT16, "u32": DType.UINT32,
         "u64": DType.UINT64}


def d(names: str) -> tuple[DType, ...]:
    """The DTypes of space-separated abbreviations (KeyError on an unknown one)."""
    return tuple(_ABBR[n] for n in names.split())
