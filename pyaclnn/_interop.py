"""Other libraries' arrays as NumPy arrays: the DLPack protocol, else ``__array__``.

Every place pyaclnn takes a host array (the NumPy-in/NumPy-out functions, ``Tensor.from_numpy``,
``Tensor.copy_from``, ``Tensor.from_dlpack``, the host side of ``acl.aclrtMemcpy``) passes
anything that is not an ndarray through ``host_array``:

- an object with ``__dlpack__`` (a torch CPU tensor, JAX, CuPy-on-host...) is viewed without a
  copy through ``np.from_dlpack``. A torch tensor with ``requires_grad=True`` is read as
  ``detach()``-ed: pyaclnn takes its values, autograd does not see the call. bfloat16, which
  NumPy cannot import through DLPack, arrives as ``ml_dtypes.bfloat16`` (below);
- an object on a non-CPU DLPack device falls back to its ``__array__`` (a pyaclnn Tensor on the
  acl backend downloads a copy), or raises BufferError naming the device;
- anything else goes to ``np.asarray`` (lists, scalars, objects with ``__array__``).

bfloat16: NumPy's importer refuses the DLPack type code kDLBfloat. The capsule a producer hands
over belongs to the consumer until it calls the capsule's deleter, so before NumPy imports it
its dtype field is re-tagged as uint16 (the same 16 bits), and the result is viewed as
``ml_dtypes.bfloat16``. NumPy then owns the capsule and calls the producer's deleter as usual.
``to_dlpack`` does the reverse for export: NumPy exports the uint16 view, and the capsule's
dtype is re-tagged kDLBfloat before it is handed to the consumer.
"""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

__all__ = ["host_array", "to_dlpack", "KDL_CPU"]

KDL_CPU = 1                        # DLDeviceType kDLCPU
_KDL_UINT, _KDL_BFLOAT = 1, 4      # DLDataTypeCode kDLUInt, kDLBfloat


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    """dlpack.h DLTensor, the first member of the (unversioned) DLManagedTensor."""
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]


_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype, _capsule_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


class _Handover:
    """A DLPack producer that hands NumPy a capsule already taken from the real producer."""

    def __init__(self, capsule: Any, device: tuple[int, int]) -> None:
        self._capsule, self._device = capsule, device

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:  # stream/max_version/copy: host, legacy
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device


# Where the DLTensor sits in an unconsumed capsule: first in DLManagedTensor; after version
# (2 x uint32), manager_ctx, deleter and flags (8 bytes each) in DLManagedTensorVersioned.
_LAYOUTS = ((b"dltensor", 0), (b"dltensor_versioned", 32))


def _retag(capsule: Any, old_code: int, new_code: int) -> bool:
    """Set an unconsumed capsule's 16-bit scalar dtype code ``old_code`` to ``new_code``;
    True if it had ``old_code`` (else the capsule is left alone)."""
    for name, offset in _LAYOUTS:
        if _capsule_valid(capsule, name):
            dt = _DLTensor.from_address(_capsule_pointer(capsule, name) + offset).dtype
            if (dt.code, dt.bits, dt.lanes) != (old_code, 16, 1):
                return False
            dt.code = new_code
            return True
    return False


def host_array(obj: Any, in_place: bool = False) -> np.ndarray:
    """``obj`` as an ndarray, viewing its memory where it can (see the module docstring).
    ``in_place``: the caller writes into the result, so a copy (the ``__array__`` fallback for a
    non-CPU DLPack device) would lose the writes: BufferError instead."""
    if isinstance(obj, np.ndarray):
        return obj
    if not hasattr(obj, "__dlpack__"):
        return np.asarray(obj)
    if getattr(obj, "requires_grad", False) and callable(getattr(obj, "detach", None)):
        obj = obj.detach()  # torch: the values; autograd does not record pyaclnn's work
    device = tuple(int(v) for v in obj.__dlpack_device__())
    if device[0] != KDL_CPU:
        if hasattr(obj, "__array__") and not in_place:
            return np.asarray(obj)
        raise BufferError(f"pyaclnn needs host memory here; this {type(obj).__name__} is on DLPack device "
                          f"{device}, not the CPU (kDLCPU = 1): use a host array")
    try:  # versioned (DLPack 1.x): it says whether the memory is read-only; NumPy trusts it
        capsule = obj.__dlpack__(max_version=(1, 0))
    except TypeError:  # a producer older than the 2023 protocol: legacy (NumPy then reads it as read-only)
        capsule = obj.__dlpack__()
    bf16 = _retag(capsule, _KDL_BFLOAT, _KDL_UINT)
    array = np.from_dlpack(_Handover(capsule, (KDL_CPU, device[1])))
    if bf16:
        from .dtypes import bfloat16
        array = array.view(bfloat16())
    return array


def to_dlpack(array: np.ndarray, **kwargs: Any) -> Any:
    """``array.__dlpack__(**kwargs)``, for ml_dtypes.bfloat16 too (exported as kDLBfloat)."""
    if array.dtype.kind not in "biufc":
        from .dtypes import bfloat16
        if array.dtype == bfloat16():
            capsule = array.view(np.uint16).__dlpack__(**kwargs)
            _retag(capsule, _KDL_UINT, _KDL_BFLOAT)
            return capsule
    return array.__dlpack__(**kwargs)
