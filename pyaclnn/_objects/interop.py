"""Other libraries' arrays as NumPy arrays: the DLPack protocol, else ``__array__``.

Every place pyaclnn takes a host array (the NumPy-in/NumPy-out functions, ``Tensor.from_numpy``,
``Tensor.copy_from``, ``Tensor.from_dlpack``, the host side of ``acl.aclrtMemcpy``) passes
anything that is not an ndarray through ``host_array``. How a type is read is worked out on
the first object of that type and kept (the converter, never the data):

- a torch tensor (``torch.Tensor`` or a subclass) is viewed without a copy through
  ``Tensor.numpy()``. What ``numpy()`` refuses is read as torch sees it: a tensor with
  ``requires_grad=True`` as ``detach()``-ed (pyaclnn takes its values, autograd does not see
  the call); a lazy conjugate or negative view (``z.conj()``, ``z.conj().imag``) resolved into
  a copy first; autograd's lazy zeros (``torch._efficientzerotensor``, no memory behind them)
  as a new zeroed array; bfloat16 as its bits viewed as ``ml_dtypes.bfloat16``. A tensor on
  another device (CUDA, NPU, meta) is a BufferError telling to pass ``t.cpu()``. Nothing read
  is kept: each call reads the tensor as it is then (``set_()``, resized or re-typed in place).
  Why ``numpy()`` (issue 16; 8x16 float32, torch 2.13): ~0.67 us a tensor, and its refusals
  are torch's own list of what a plain view would get wrong. ``np.from_dlpack(t)`` is ~2.4 us
  (torch's ``__dlpack__`` and ``__dlpack_device__`` are Python code); torch's C export
  ``torch.utils.dlpack.to_dlpack`` handed to NumPy's importer is ~0.6 us but drops the conj,
  neg and ZeroTensor bits (a ZeroTensor reads as garbage), so it needs three checks of its
  own; a cache of views per tensor must re-read its pointer, shape, strides, dtype and those
  bits to stay right: ~0.7 us;
- any other object with ``__dlpack__`` (JAX, CuPy-on-host...) on the CPU is viewed without a
  copy through ``np.from_dlpack``; what NumPy's importer refuses (bfloat16) is imported as
  below. An object on a non-CPU DLPack device falls back to its ``__array__`` (a pyaclnn
  Tensor on the acl backend downloads a copy), or raises BufferError naming the device;
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
import sys
from typing import Any, Protocol

import numpy as np

from .._core.strides import extent

__all__ = ["host_array", "host_span", "converter", "always_numbers", "Converter", "to_dlpack", "KDL_CPU"]

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
    non-CPU DLPack device, a resolved lazy torch view) would lose the writes: BufferError instead."""
    if isinstance(obj, np.ndarray):
        return obj
    convert = _CONVERTERS.get(type(obj))
    if convert is None:
        convert = converter(type(obj))
    return convert(obj, in_place)


class Converter(Protocol):
    """How ``host_array`` reads the objects of one type."""

    def __call__(self, obj: Any, in_place: bool = False, /) -> np.ndarray: ...


_CONVERTERS: dict[type, Converter] = {}
CONVERTERS_MAX = 256  # types kept; a memo starts afresh when full (classes made on the fly)


def converter(cls: type) -> Converter:
    """How ``host_array`` reads objects of type ``cls`` (worked out once per type): callers
    that convert many objects may keep it, as pyaclnn._functions.functional._arg does."""
    convert = _CONVERTERS.get(cls)
    if convert is not None:
        return convert
    if len(_CONVERTERS) >= CONVERTERS_MAX:
        _CONVERTERS.clear()
    torch = sys.modules.get("torch")  # a torch tensor exists only once torch is imported
    if issubclass(cls, np.ndarray):
        convert = _as_it_is
    elif torch is not None and issubclass(cls, torch.Tensor):
        global _torch_reader
        if _torch_reader is None:
            _torch_reader = _make_torch_reader(torch)
        convert = _torch_reader
    else:
        convert = _from_other
    _CONVERTERS[cls] = convert
    return convert


def _as_it_is(array: np.ndarray, in_place: bool = False) -> np.ndarray:
    return array  # an ndarray subclass (memmap...) stays what it is


_torch_reader: Converter | None = None  # made with the first torch tensor (torch is not imported here)


def _make_torch_reader(torch: Any) -> Converter:
    from ..dtypes import bfloat16  # NumPy has no bfloat16: a tensor's bits are viewed as ml_dtypes.bfloat16
    bf16, int16, np_bf16 = torch.bfloat16, torch.int16, bfloat16()

    def from_torch(t: Any, in_place: bool = False) -> np.ndarray:
        """A torch tensor: ``numpy()``, a view. Tested first: what numpy() would refuse though
        pyaclnn reads it (requires grad, bfloat16), as its refusals are C++ exceptions costing
        ~10 us; the rare ones (a lazy conj/neg view, another device) take that path."""
        if t.requires_grad:
            t = t.detach()  # the values; autograd does not record pyaclnn's work
        try:
            if t.dtype is not bf16:
                return t.numpy()
            return t.view(int16).numpy().view(np_bf16)
        except (RuntimeError, TypeError):  # a lazy conj/neg view, another device, a dtype NumPy lacks
            return _from_torch(torch, t, in_place)

    return from_torch


def always_numbers(cls: type) -> bool:
    """Whether every array ``converter(cls)`` gives holds numbers (bfloat16 included), whatever
    the object, so that a caller may skip its per-object dtype check (pyaclnn._functions.functional._arg,
    issue 16): ``torch.Tensor`` and ``torch.nn.Parameter``, whose ``numpy()`` gives a number
    dtype or refuses with a TypeError. Not other subclasses: their ``__torch_function__`` or
    ``numpy`` may answer anything."""
    torch = sys.modules.get("torch")
    return torch is not None and (cls is torch.Tensor or cls is torch.nn.Parameter)


def _from_torch(torch: Any, t: Any, in_place: bool) -> np.ndarray:
    """A (detached) torch tensor ``numpy()`` refused: read as torch shows it, or a clear error."""
    device = t.device
    if device.type != "cpu":
        raise BufferError(f"pyaclnn needs host memory here; this torch tensor is on {device}, not the CPU: "
                          "pass t.cpu()")
    if t._is_zerotensor():  # private: torch has no public test; autograd's lazy zeros (torch._efficientzerotensor): no memory to view
        if in_place:
            raise BufferError("pyaclnn writes into this host array, but this torch tensor is a ZeroTensor "
                              "(lazy zeros, no memory): pass torch.zeros(t.shape, dtype=t.dtype)")
        if t.dtype is torch.bfloat16:
            from ..dtypes import bfloat16
            return np.zeros(tuple(t.shape), bfloat16())
        return t.numpy(force=True)  # a new zeroed array (torch's own answer for a ZeroTensor)
    if t.is_conj() or t.is_neg():  # torch's DLPack export drops these bits: read the values they mean
        if in_place:
            raise BufferError("pyaclnn writes into this host array, but this torch tensor is a lazy "
                              f"{'conjugate' if t.is_conj() else 'negative'} view: a resolved copy would "
                              "lose the writes; pass t.resolve_conj().resolve_neg()")
        t = t.resolve_conj().resolve_neg()
        if t.dtype is torch.bfloat16:
            from ..dtypes import bfloat16
            return t.view(torch.int16).numpy().view(bfloat16())
    return t.numpy()  # torch's TypeError for what NumPy cannot hold (float8, sparse layouts)


def _from_other(obj: Any, in_place: bool = False) -> np.ndarray:
    """Not an ndarray, not a torch tensor: DLPack if it has it, else ``np.asarray``."""
    if not hasattr(obj, "__dlpack__"):
        return np.asarray(obj)
    # To be read only, from the CPU (the device is asked first, as the protocol has consumers do):
    # NumPy's importer, a view (read-only when the producer says so, or is legacy)
    if not in_place and obj.__dlpack_device__()[0] == KDL_CPU:
        try:
            return np.from_dlpack(obj)
        except Exception:  # noqa: BLE001 - bfloat16, a refusal (requires grad...): the path below answers
            pass
    return _from_dlpack(obj, in_place)


def _from_dlpack(obj: Any, in_place: bool) -> np.ndarray:
    """A DLPack object through its capsule, bfloat16 included (the module docstring)."""
    if getattr(obj, "requires_grad", False) and callable(getattr(obj, "detach", None)):
        obj = obj.detach()  # torch-like: the values; autograd does not record pyaclnn's work
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
        from ..dtypes import bfloat16
        array = array.view(bfloat16())
    return array


def to_dlpack(array: np.ndarray, **kwargs: Any) -> Any:
    """``array.__dlpack__(**kwargs)``, for ml_dtypes.bfloat16 too (exported as kDLBfloat)."""
    if array.dtype.kind not in "biufc":
        from ..dtypes import bfloat16
        if array.dtype == bfloat16():
            capsule = array.view(np.uint16).__dlpack__(**kwargs)
            _retag(capsule, _KDL_UINT, _KDL_BFLOAT)
            return capsule
    return array.__dlpack__(**kwargs)


def host_span(array: np.ndarray) -> tuple[np.ndarray, int]:
    """The bytes an array's elements occupy, as one contiguous uint8 view (no copy), and the
    element offset of ``array[0, ...]`` inside that span."""
    item = array.itemsize
    estrides = [s // item for s in array.strides]
    lo, hi = extent(array.shape, estrides)
    corner = array[tuple(slice(d - 1, d) if s < 0 else slice(0, 1) for d, s in zip(array.shape, estrides))]
    if not array.ndim:  # array[()] is a scalar, a copy
        corner = array.reshape(1)
    flat = corner.reshape(-1).view(np.uint8)  # one element: always a view
    span = np.lib.stride_tricks.as_strided(flat, shape=((hi - lo + 1) * item,), strides=(1,))
    return span, -lo
