"""Tensor: device memory plus an aclTensor descriptor (aclCreateTensor), on both backends.

A tensor is a view (shape, strides and offset in elements) of a Storage, which owns the
aclrtMalloc allocation. Slicing and transposing make new views of the same storage without
copying; the storage is freed when its last tensor is closed (or collected).
"""
from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Any, Sequence, cast

import numpy as np

from . import lifetimes
from .device import Device, device_arg, free_now
from .interop import KDL_CPU, host_array, host_span, to_dlpack
from .resource import Resource
from .storage import Storage
from .._core.strides import contiguous_strides, extent, index_view
from .._core.constants import ACL_FORMAT_ND, ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from ..dtypes import DType, from_numpy, to_numpy

if TYPE_CHECKING:
    from .._runtime import HostRuntime, Runtime

KDL_EXT_DEV = 12  # DLDeviceType kDLExtDev: DLPack has no Ascend device type
_U8 = np.dtype(np.uint8)  # (a dtype object, not the type: np.empty converts a type every call)


class Tensor(Resource):
    """A device tensor: ``shape``, ``dtype``, ``strides`` (elements), ``offset`` (elements).

    Make one with ``Tensor.from_numpy`` (any host array: NumPy, or a torch CPU tensor or other
    DLPack / ``__array__`` object), ``Tensor.from_dlpack``, ``Tensor.empty`` or ``Tensor.zeros``;
    get a NumPy copy with ``numpy()`` or ``np.asarray(t)``. DLPack export (``__dlpack__``) is for
    host exchange and only works where the tensor's memory is host memory: see ``__dlpack__``.
    ``t[1:, ::2]`` and ``t.T`` are views (no copy).
    ``handle`` is the aclTensor pointer (aclCreateTensor), ``data_ptr`` the device address of
    the storage it views. ``pyaclnn.acl`` takes the Tensor itself wherever an ``aclTensor *`` goes
    (the guide's *Devices, streams and lifetimes*); the Tensor stays the owner.

    The constructor is internal (a view of a ``Storage``): use the factories.

    Examples:
        >>> t = pyaclnn.Tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
        >>> t.shape, t.strides, t.T.strides
        ((2, 3), (3, 1), (1, 3))
        >>> t[:, ::2].numpy()
        array([[0., 2.],
               [3., 5.]], dtype=float32)
    """
    _what = "Tensor"
    ctype = "aclTensor *"
    _read: tuple[int, int, int, tuple[int, ...] | None] | None = None  # numpy()'s copy (_read_span), once

    def __init__(self, storage: Storage, shape: Sequence[int], dtype: Any,
                 strides: Sequence[int] | None = None, offset: int = 0) -> None:
        if not storage.is_open:
            storage.check_open()  # raises
        device = storage.device
        device.use()
        self.storage, self.device = storage, device
        self.shape = shape = tuple(map(int, shape))
        self.dtype, self.acl_dtype = dtype, acl_dtype = _dtype_pair(dtype)
        contiguous = contiguous_strides(shape)
        self.strides = strides = contiguous if strides is None else tuple(map(int, strides))
        self.offset = offset = int(offset)
        self.runtime = runtime = device.runtime
        item = dtype.itemsize
        whole = offset == 0 and strides == contiguous and math.prod(shape) * item == storage.nbytes
        self.raw = runtime.create_tensor(shape, acl_dtype, strides, offset, ACL_FORMAT_ND,
                                          shape if whole else (storage.nbytes // item,), storage.addr)
        storage.users += 1
        self._own(device.backend, device, "tensor", _destroy_tensor, runtime, self.raw, storage)

    # -- factories ---------------------------------------------------------------------------
    @classmethod
    def empty(cls, shape: Sequence[int] | int, dtype: Any = np.float32, device: Device | None = None) -> "Tensor":
        """An uninitialised contiguous tensor (aclrtMalloc + aclCreateTensor).

        Args:
            shape: the dimensions (an int for 1-D), each >= 0.
            dtype: a NumPy dtype (``ml_dtypes.bfloat16`` included) or a ``DType``.
            device: the Device; None for the current one (``PYACLNN_DEVICE`` if none is open).

        Returns:
            A new Tensor that owns its device memory.

        Raises:
            ValueError: a negative dimension.
            NotSupportedError: a dtype with no ``aclDataType``.
        """
        return cls._allocate(shape, dtype, device, "Tensor.empty")

    @classmethod
    def _allocate(cls, shape: Sequence[int] | int, dtype: Any, device: Device | None, api: str) -> "Tensor":
        """Tensor.empty for the factory ``api`` (named in its errors)."""
        shape = _checked_shape(shape)
        device = device_arg(device, api)
        npdt = _np_dtype(dtype, api)
        nbytes = int(np.prod(shape, dtype=np.int64)) * npdt.itemsize
        return _first_view(cls, Storage(device, nbytes), shape, npdt)

    @classmethod
    def zeros(cls, shape: Sequence[int] | int, dtype: Any = np.float32, device: Device | None = None) -> "Tensor":
        """A contiguous tensor of zeros (aclrtMalloc + aclrtMemset + aclCreateTensor).

        Args:
            shape: the dimensions (an int for 1-D), each >= 0.
            dtype: a NumPy dtype (``ml_dtypes.bfloat16`` included) or a ``DType``.
            device: the Device; None for the current one.

        Returns:
            A new Tensor that owns its device memory.
        """
        t = cls._allocate(shape, dtype, device, "Tensor.zeros")
        if t.storage.nbytes:
            try:
                t.runtime.memset(t.storage.addr, t.storage.nbytes, 0, t.storage.nbytes)
            except BaseException:
                t.close()  # a factory that fails half-way releases what it made now, not at GC
                raise
        return t

    @classmethod
    def from_numpy(cls, array: Any, device: Device | None = None) -> "Tensor":
        """Copy a host array to the device (aclrtMemcpy). A strided array keeps its strides: the
        memory it spans is copied as it is, not made contiguous on the host first. Besides
        ndarrays it takes DLPack tensors (torch CPU tensors, bfloat16 included; a tensor that
        requires grad is read as detached) and anything ``np.asarray`` takes.

        Args:
            array: the host data.
            device: the Device; None for the current one.

        Returns:
            A new Tensor of the array's shape, dtype and strides, owning its device memory.

        Raises:
            TypeError: text, objects or dates instead of numbers.
            NotSupportedError: a dtype with no ``aclDataType``.

        Examples:
            >>> pyaclnn.Tensor.from_numpy(np.ones((2, 2), np.float16)).dtype
            dtype('float16')
        """
        if isinstance(array, (str, bytes)):
            raise TypeError(f"Tensor.from_numpy takes an array of numbers, got {type(array).__name__} {array!r}")
        array = host_array(array)
        if array.dtype.kind in "USOMm":  # text, objects, dates: not numbers (kind V includes bfloat16)
            raise TypeError(f"Tensor.from_numpy takes an array of numbers, got an array of dtype {array.dtype}")
        from_numpy(array.dtype)  # NotSupportedError for a dtype with no aclDataType, before any work
        device = device_arg(device, "Tensor.from_numpy")
        if array.size == 0 or array.flags.c_contiguous:
            t = cls.empty(array.shape, array.dtype, device)
            if array.nbytes:
                try:
                    t.runtime.memcpy(t.storage.addr, t.storage.nbytes, np.ascontiguousarray(array),
                                      array.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
                except BaseException:
                    t.close()
                    raise
            return t
        span, first = host_span(array)
        storage = Storage(device, span.nbytes)
        try:
            device.runtime.memcpy(storage.addr, storage.nbytes, span, span.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
        except BaseException:
            storage.close()
            raise
        return _first_view(cls, storage, array.shape, array.dtype,
                           [s // array.itemsize for s in array.strides], first)

    @classmethod
    def from_address(cls, addr: int, shape: Sequence[int] | int, dtype: Any, strides: Sequence[int] | None = None,
                     offset: int = 0, device: Device | None = None) -> "Tensor":
        """A tensor over device memory another framework owns (e.g. ``torch_tensor.data_ptr()``
        of a torch_npu tensor): ``addr`` is the device address its ``offset`` and ``strides``
        (elements; default contiguous) count from. pyaclnn never frees that memory: ``close()``
        only destroys the aclTensor descriptor. The owner must keep it alive while the tensor
        or an op using it is in use. On the NumPy backend ``addr`` must be memory its emulated
        runtime allocated (e.g. ``pyaclnn.acl.aclrtMalloc``).

        Args:
            addr: the device address (an int).
            shape: the dimensions.
            dtype: a NumPy dtype or a ``DType``.
            strides: in elements; None for contiguous.
            offset: in elements, from ``addr`` to the first element.
            device: the Device the memory is on; None for the current one.

        Returns:
            A Tensor that never frees ``addr``.

        Raises:
            TypeError: ``addr`` is not a non-negative int.
            ValueError: strides that do not match the shape, an offset that reaches before
                ``addr``, or ``addr`` 0 for a non-empty tensor.
        """
        dims = _checked_shape(shape)
        size = int(np.prod(dims, dtype=np.int64))
        npdt = _np_dtype(dtype, "Tensor.from_address")
        from_numpy(npdt)  # NotSupportedError for a dtype with no aclDataType
        if isinstance(addr, bool) or not isinstance(addr, int) or addr < 0:
            raise TypeError(f"Tensor.from_address takes a device address as a non-negative int, got {addr!r}")
        estrides = contiguous_strides(dims) if strides is None else tuple(int(s) for s in strides)
        if len(estrides) != len(dims):
            raise ValueError(f"strides {estrides} do not match shape {dims}")
        offset = int(offset)
        lo, hi = extent(dims, estrides) if size else (0, -1)
        if offset + lo < 0:
            raise ValueError(f"offset {offset} with strides {estrides} reaches before addr")
        if addr == 0 and size:
            raise ValueError("Tensor.from_address: addr is 0 (nullptr) for a non-empty tensor")
        device = device_arg(device, "Tensor.from_address")
        storage = Storage.borrowed(device, addr, (offset + hi + 1) * npdt.itemsize)
        return _first_view(cls, storage, dims, npdt, estrides, offset)

    @classmethod
    def from_dlpack(cls, obj: Any, device: Device | None = None) -> "Tensor":
        """Copy a host DLPack tensor (``obj.__dlpack__``: a torch CPU tensor...) to the device.

        The data is read without a host copy and uploaded with aclrtMemcpy; the new tensor
        owns its device memory (``obj`` may change or go afterwards). Objects on a non-CPU
        DLPack device are refused with BufferError.

        Args:
            obj: an object with ``__dlpack__``.
            device: the Device; None for the current one.

        Returns:
            A new Tensor owning its device memory.

        Raises:
            TypeError: ``obj`` has no ``__dlpack__`` (``from_numpy`` takes other arrays).
            BufferError: ``obj`` is not on the CPU.
        """
        if not hasattr(obj, "__dlpack__"):
            raise TypeError(f"Tensor.from_dlpack needs an object with __dlpack__, got {type(obj).__name__} "
                            "(Tensor.from_numpy takes other arrays)")
        return cls.from_numpy(obj, device)

    # -- DLPack export (host exchange) ------------------------------------------------------------
    def __dlpack_device__(self) -> tuple[int, int]:
        """(kDLCPU, 0) on the NumPy backend, whose device memory is host memory; on an Ascend
        device (kDLExtDev, device id): DLPack has no Ascend device type."""
        self.check_open()
        if self.device.backend.name == "numpy":
            return (KDL_CPU, 0)
        return (KDL_EXT_DEV, self.device.id)

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """Export the tensor through DLPack (``torch.from_dlpack(t)``, ``np.from_dlpack(t)``).

        NumPy backend: the emulated device memory is host memory, so this is a zero-copy view of
        the tensor (its shape, strides and offset): writes through it are writes to the tensor.
        The view keeps the memory readable after ``close()``, but what it then shows is no
        longer the tensor's; a tensor whose memory is not inside a live allocation (a freed
        ``from_address``) has nothing to export: BufferError. On an Ascend device the memory is
        not host memory and no DLPack consumer can read it: BufferError (use ``numpy()`` for a
        host copy).
        """
        self.check_open()
        if self.device.backend.name != "numpy":
            raise BufferError("a pyaclnn Tensor on an Ascend device is device memory, which DLPack consumers "
                              "cannot read: use t.numpy() (or np.asarray(t)) for a host copy")
        lifetimes.wait_for(self.storage.uses)  # queued launches using it finish first: shared memory
        runtime = cast("HostRuntime", self.device.runtime)  # the numpy backend's: device memory is host memory
        view = runtime.host_view(self.storage.addr, self.shape, self.dtype, self.strides, self.offset)
        if view is None:  # no C call failed: nothing to export (DLPack's error, as on a device)
            raise BufferError(f"Tensor.__dlpack__: the tensor's memory at {self.storage.addr:#x} (offset "
                              f"{self.offset}, shape {self.shape}, strides {self.strides}) is not inside a live "
                              "allocation (freed, or past its end?): nothing to export; keep the memory a "
                              "Tensor.from_address views alive while the tensor is used")
        kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version), ("dl_device", dl_device),
                                    ("copy", copy)) if v is not None}
        return to_dlpack(view, **kwargs)

    # -- properties ----------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def handle(self) -> int:
        """The aclTensor pointer, as an int."""
        self.check_open()
        return self.runtime.as_int(self.raw)

    @property
    def data_ptr(self) -> int:
        """Device address of the storage (aclCreateTensor's tensorData); add ``offset * itemsize`` for
        the first element."""
        return self.storage.addr

    def is_contiguous(self) -> bool:
        """True when the strides are those of a C-contiguous array of this shape."""
        return self.strides == contiguous_strides(self.shape)

    # -- data movement -------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A new contiguous NumPy array with the tensor's values (aclrtMemcpy device to host).

        It first waits for the queued launches that use the tensor's memory, so a result is
        read after the kernel that writes it: no explicit synchronize is needed.

        Returns:
            A new array of the tensor's shape and dtype.

        Raises:
            ClosedError: the tensor is closed.
        """
        if not self.is_open:  # (check_open, without its property call)
            self.check_open()
        read = self._read
        if read is None:  # (storage, offset, shape, strides and dtype never change: worked out once)
            read = self._read = _read_span(self)
        nbytes, src, start, strides = read
        if not nbytes:
            return np.empty(self.shape, self.dtype)
        lifetimes.wait_for(self.storage.uses)  # queued launches writing it finish first
        self.device.use()
        raw = np.empty(nbytes, _U8)
        self.runtime.memcpy(raw, nbytes, src, nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
        if strides is None:  # the usual case: the copy lands in the result's own bytes (one copy, no staging)
            return np.ndarray(self.shape, self.dtype, raw)
        return np.ndarray(self.shape, self.dtype, raw, start, strides).copy()  # its elements, in C order

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        data = self.numpy()
        return data if dtype is None else data.astype(dtype, copy=False)

    def copy_from(self, array: Any) -> None:
        """Write ``array`` (broadcast to this tensor's shape) into the tensor's elements.

        It first waits for the queued launches that use the tensor's memory. A view writes only
        the elements it views.

        Args:
            array: host data (an ndarray, a torch CPU tensor, a number...), cast to the tensor's
                dtype.

        Raises:
            ValueError: ``array`` does not broadcast to the tensor's shape.
            ClosedError: the tensor is closed.
        """
        self.check_open()
        src = np.broadcast_to(np.asarray(host_array(array), dtype=self.dtype), self.shape)
        if self.size == 0:
            return
        lifetimes.wait_for(self.storage.uses)  # queued launches using it finish first
        self.device.use()
        item = self.dtype.itemsize
        lo, hi = extent(self.shape, self.strides)
        nbytes = (hi - lo + 1) * item
        start = self.storage.addr + (self.offset + lo) * item
        if self.is_contiguous():
            data = np.ascontiguousarray(src)
            self.runtime.memcpy(start, nbytes, data, nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
            return
        raw = np.empty(nbytes, np.uint8)  # read-modify-write the span the view touches
        self.runtime.memcpy(raw, nbytes, start, nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
        np.ndarray(self.shape, self.dtype, buffer=raw, offset=-lo * item,
                   strides=[s * item for s in self.strides])[...] = src
        self.runtime.memcpy(start, nbytes, raw, nbytes, ACL_MEMCPY_HOST_TO_DEVICE)

    # -- views ---------------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> "Tensor":
        """Basic indexing (ints, negative ints, slices with steps, ``...``, ``None``) as a view of
        the same storage, computed from shape and strides alone (all ints give a 0-d view)."""
        self.check_open()
        shape, strides, delta = index_view(self.shape, self.strides, key)
        return Tensor(self.storage, shape, self.dtype, strides, self.offset + delta)

    def transpose(self, *axes: int) -> "Tensor":
        """A view with permuted axes (all reversed by default), like ndarray.transpose.

        Args:
            *axes: a permutation of the dimensions, as ints or one tuple.

        Returns:
            A Tensor viewing the same memory.

        Raises:
            ValueError: ``axes`` is not a permutation of the dimensions.
        """
        self.check_open()
        order = list(axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes) \
            or list(range(self.ndim))[::-1]
        if sorted(order) != list(range(self.ndim)):
            raise ValueError(f"axes {tuple(order)} are not a permutation of {self.ndim} dimensions")
        return Tensor(self.storage, [self.shape[i] for i in order], self.dtype,
                      [self.strides[i] for i in order], self.offset)

    @property
    def T(self) -> "Tensor":
        """The view with all axes reversed (``transpose()``)."""
        return self.transpose()

    def __repr__(self) -> str:
        if self.closed:
            return "<pyaclnn.Tensor (closed)>"
        return (f"<pyaclnn.Tensor shape={self.shape} dtype={self.dtype} strides={self.strides} "
                f"offset={self.offset} device={self.device.id}>")


def _read_span(t: Tensor) -> tuple[int, int, int, tuple[int, ...] | None]:
    """What ``t.numpy()`` copies: (its byte count, their device address, where the first element
    is in them, the strides in bytes; None for a C-contiguous tensor, whose bytes are the result's)."""
    item = t.dtype.itemsize
    if 0 in t.shape:
        return 0, 0, 0, None
    if t.strides == contiguous_strides(t.shape):
        return math.prod(t.shape) * item, t.storage.addr + t.offset * item, 0, None
    lo, hi = extent(t.shape, t.strides)  # the span the view reaches, then its elements
    return (hi - lo + 1) * item, t.storage.addr + (t.offset + lo) * item, -lo * item, tuple(s * item for s in t.strides)


def _checked_shape(shape: Any) -> tuple[int, ...]:
    """A factory's shape as a tuple of ints >= 0: ValueError (TypeError for a non-int) naming the
    shape, before anything is allocated."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(f"Tensor shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"Tensor shape {shape!r} has a negative dimension; every dimension must be >= 0")
    return dims


def _first_view(cls: type, storage: Storage, *args: Any) -> Any:
    """The first tensor on a new storage; if it cannot be made, the storage is freed at once."""
    try:
        return cls(storage, *args)
    except BaseException:
        storage.close()
        raise


def own_descriptor(runtime: Runtime, t: Tensor) -> Any:
    """A new aclTensor (aclCreateTensor) describing the view ``t`` is, for a caller that owns it
    (a repeatable executor, a tensor list, pyaclnn.acl's phase 1): what CANN does to it, such as
    aclSetInputTensorAddr moving it, never changes ``t``."""
    item = t.dtype.itemsize
    return runtime.create_tensor(t.shape, int(t.acl_dtype), t.strides, t.offset, ACL_FORMAT_ND,
                                 (t.storage.nbytes // item,), t.storage.addr)


def _destroy_tensor(runtime: Runtime, raw: Any, storage: Storage) -> None:
    try:
        runtime.destroy_tensor(raw)
    finally:
        storage.release_user()


_DTYPES: dict[Any, tuple[np.dtype, DType]] = {}


def _np_dtype(dtype: Any, api: str) -> np.dtype:
    """The NumPy dtype of a dtype argument: a NumPy dtype-like or a DType (an aclDataType, which
    np.dtype() would not read); anything else is a TypeError saying what to pass."""
    if isinstance(dtype, DType):
        return to_numpy(dtype)
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{api}: dtype must be a NumPy dtype (np.float32, 'float16', ml_dtypes.bfloat16...) "
                        f"or a pyaclnn.DType, got {type(dtype).__name__} {dtype!r}") from None


def _dtype_pair(dtype: Any) -> tuple[np.dtype, DType]:
    """(np.dtype, aclDataType) of a dtype-like, cached by the object given: np.dtype() and the
    table lookup cost more than the rest of a Tensor's Python-side set-up."""
    try:
        return _DTYPES[dtype]
    except (KeyError, TypeError):  # TypeError: an unhashable dtype-like
        npdt = _np_dtype(dtype, "Tensor")
        pair = (npdt, from_numpy(npdt))
        if len(_DTYPES) < 256:
            try:
                _DTYPES[dtype] = pair
            except TypeError:
                pass
        return pair
