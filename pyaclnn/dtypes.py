"""aclDataType <-> NumPy dtype mapping.

``DType`` carries the C value of ``aclDataType`` (``DType.FLOAT16 == 1 == ACL_FLOAT16``).
The enum has gaps (5, 14, 15, 18-26 are unassigned), so every mapping is an explicit table.
bfloat16 is ``ml_dtypes.bfloat16``, imported on first use to keep ``import pyaclnn`` cheap.
"""
from enum import IntEnum
from typing import Any

import numpy as np

from .errors import NotSupportedError

__all__ = ["DType", "to_numpy", "from_numpy", "itemsize", "bfloat16"]


class DType(IntEnum):
    """aclDataType, with the C values of acl_base.h.

    An ``IntEnum``: a member is its C value, so it goes wherever an ``aclDataType`` goes.

    Examples:
        >>> from pyaclnn import DType, acl
        >>> DType.FLOAT16 == acl.ACL_FLOAT16 == 1, DType.BF16.c_name, str(DType.BF16)
        (True, 'ACL_BF16', 'bfloat16')
    """
    DT_UNDEFINED = -1
    FLOAT = 0
    FLOAT16 = 1
    INT8 = 2
    INT32 = 3
    UINT8 = 4
    INT16 = 6
    UINT16 = 7
    UINT32 = 8
    INT64 = 9
    UINT64 = 10
    DOUBLE = 11
    BOOL = 12
    STRING = 13
    COMPLEX64 = 16
    COMPLEX128 = 17
    BF16 = 27
    INT4 = 29
    UINT1 = 30
    COMPLEX32 = 33
    HIFLOAT8 = 34
    FLOAT8_E5M2 = 35
    FLOAT8_E4M3FN = 36
    FLOAT8_E8M0 = 37
    FLOAT6_E3M2 = 38
    FLOAT6_E2M3 = 39
    FLOAT4_E2M1 = 40
    FLOAT4_E1M2 = 41

    @property
    def c_name(self) -> str:
        """The C enum member, e.g. ``ACL_FLOAT16``."""
        return "ACL_" + self.name

    def __str__(self) -> str:
        return _SHORT.get(self, self.name.lower())


_SHORT = {DType.FLOAT: "float32", DType.FLOAT16: "float16", DType.BF16: "bfloat16",
          DType.DOUBLE: "float64"}

# Bytes per element as aclDataTypeSize reports it (sub-byte types round up to 1).
_ITEMSIZE = {
    DType.FLOAT: 4, DType.FLOAT16: 2, DType.INT8: 1, DType.INT32: 4, DType.UINT8: 1,
    DType.INT16: 2, DType.UINT16: 2, DType.UINT32: 4, DType.INT64: 8, DType.UINT64: 8,
    DType.DOUBLE: 8, DType.BOOL: 1, DType.COMPLEX64: 8, DType.COMPLEX128: 16, DType.BF16: 2,
    DType.COMPLEX32: 4, DType.HIFLOAT8: 1, DType.FLOAT8_E5M2: 1, DType.FLOAT8_E4M3FN: 1,
    DType.FLOAT8_E8M0: 1, DType.FLOAT6_E3M2: 1, DType.FLOAT6_E2M3: 1, DType.FLOAT4_E2M1: 1,
    DType.FLOAT4_E1M2: 1, DType.INT4: 1, DType.UINT1: 1,
}

_TO_NUMPY: dict[DType, np.dtype] = {
    DType.FLOAT: np.dtype(np.float32), DType.FLOAT16: np.dtype(np.float16),
    DType.DOUBLE: np.dtype(np.float64), DType.INT8: np.dtype(np.int8),
    DType.INT16: np.dtype(np.int16), DType.INT32: np.dtype(np.int32),
    DType.INT64: np.dtype(np.int64), DType.UINT8: np.dtype(np.uint8),
    DType.UINT16: np.dtype(np.uint16), DType.UINT32: np.dtype(np.uint32),
    DType.UINT64: np.dtype(np.uint64), DType.BOOL: np.dtype(np.bool_),
    DType.COMPLEX64: np.dtype(np.complex64), DType.COMPLEX128: np.dtype(np.complex128),
}
_FROM_NUMPY: dict[np.dtype, DType] = {v: k for k, v in _TO_NUMPY.items()}
_ML_DTYPES_LOADED = False


def _load_ml_dtypes() -> None:
    global _ML_DTYPES_LOADED
    if not _ML_DTYPES_LOADED:
        import ml_dtypes
        for dt, name in ((DType.BF16, "bfloat16"), (DType.FLOAT8_E5M2, "float8_e5m2"),
                         (DType.FLOAT8_E4M3FN, "float8_e4m3fn")):
            npdt = np.dtype(getattr(ml_dtypes, name))
            _TO_NUMPY[dt], _FROM_NUMPY[npdt] = npdt, dt
        _ML_DTYPES_LOADED = True


def bfloat16() -> np.dtype:
    """``np.dtype(ml_dtypes.bfloat16)``."""
    _load_ml_dtypes()
    return _TO_NUMPY[DType.BF16]


def to_numpy(dtype: DType | int) -> np.dtype:
    """The NumPy dtype of an aclDataType; raises NotSupportedError where NumPy has none.

    Args:
        dtype: a ``DType`` or its C value.

    Returns:
        The NumPy dtype (``ml_dtypes.bfloat16`` for ``DType.BF16``).

    Raises:
        NotSupportedError: NumPy and ml_dtypes have no such dtype (e.g. ``DType.INT4``).
        ValueError: not an aclDataType value.
    """
    if type(dtype) is not DType:  # (DType(DType) is an enum call too: ~0.5 us, many per launch)
        dtype = DType(dtype)
    found = _TO_NUMPY.get(dtype)
    if found is None:
        _load_ml_dtypes()
        found = _TO_NUMPY.get(dtype)
        if found is None:
            raise NotSupportedError(f"{dtype.c_name} has no NumPy equivalent")
    return found


def from_numpy(dtype: Any) -> DType:
    """The aclDataType of a NumPy dtype (or anything ``np.dtype()`` accepts).

    Args:
        dtype: a NumPy dtype, a type such as ``np.float32``, or a dtype name.

    Returns:
        The ``DType``.

    Raises:
        NotSupportedError: no aclDataType matches (e.g. ``np.float128``, text).

    Examples:
        >>> from pyaclnn.dtypes import from_numpy
        >>> from_numpy(np.float32), from_numpy("int64")
        (<DType.FLOAT: 0>, <DType.INT64: 9>)
    """
    npdt = np.dtype(dtype)
    found = _FROM_NUMPY.get(npdt)
    if found is None:
        _load_ml_dtypes()
        found = _FROM_NUMPY.get(npdt)
        if found is None:
            raise NotSupportedError(f"NumPy dtype {npdt} has no aclDataType equivalent")
    return found


def itemsize(dtype: DType | int) -> int:
    """Bytes per element, as ``aclDataTypeSize`` reports it.

    Args:
        dtype: a ``DType`` or its C value.

    Returns:
        The size in bytes; sub-byte types round up to 1, and types with no size give 0.
    """
    return _ITEMSIZE.get(DType(dtype), 0)
