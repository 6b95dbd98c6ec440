"""The acl runtime's aclnn descriptors (acl_meta.h): tensors, scalars, arrays, lists."""
from __future__ import annotations

from typing import Any, Sequence
import numpy as np
from ... import errors
# aclCreate* report failure only by returning NULL; pyaclnn raises ACLNN_ERR_INNER_NULLPTR for it.
from ..._core.constants import ACLNN_ERR_INNER_NULLPTR
from ...dtypes import DType, to_numpy
from .._ffi import libc, libc_ffi
from .._lib import check, ffi, recent_error
from .session import NULL, VOID_P
from .memory import AclMemory


_DATA_PTRS = 4096  # addresses kept cast (then the cache starts again: a bound, not a working set)


def _made(handle: Any, api: str) -> Any:
    """The handle an aclCreate* returned; they report failure only by returning NULL."""
    if handle == NULL:
        raise errors.from_status(ACLNN_ERR_INNER_NULLPTR, api, f"{api} returned NULL", recent_error())
    return handle


class AclDescriptors(AclMemory):
    """aclCreateTensor & co.: the descriptors phase 1 takes."""

    # -- aclnn meta objects --------------------------------------------------------------------
    def create_tensor(self, shape: Sequence[int], dtype: int, strides: Sequence[int] | None, offset: int,
                      fmt: int, storage_shape: Sequence[int], addr: int) -> Any:
        # cffi passes a list or tuple given for an ``int64_t *`` parameter as a temporary
        # int64_t array alive for the call (aclCreateTensor copies the dims): no ffi.new needed.
        # The data address as a void *: the same few addresses come again call after call (a
        # dict lookup is a fifth of ffi.cast), so each is cast once; a pointer is a plain value.
        data = self._data_ptrs.get(addr)
        if data is None:
            if len(self._data_ptrs) >= _DATA_PTRS:
                self._data_ptrs.clear()
            data = self._data_ptrs[addr] = ffi.cast(VOID_P, addr)
        tensor = self.nn.aclCreateTensor(
            shape if shape else NULL, len(shape), dtype, strides if strides else NULL, offset, fmt,
            storage_shape if storage_shape else NULL, len(storage_shape), data)
        if not tensor:  # the constructors report failure by returning NULL
            raise errors.from_status(ACLNN_ERR_INNER_NULLPTR, "aclCreateTensor", "aclCreateTensor returned NULL",
                                     recent_error())
        return tensor

    def destroy_tensor(self, tensor: Any) -> None:
        status = self.nn.aclDestroyTensor(tensor)
        if status:
            check(status, "aclDestroyTensor")

    def create_bool_array(self, values: Sequence[bool]) -> Any:
        array = self.nn.aclCreateBoolArray(ffi.new("bool[]", list(values)), len(values))
        if array == NULL:
            raise errors.from_status(ACLNN_ERR_INNER_NULLPTR, "aclCreateBoolArray", "aclCreateBoolArray returned NULL",
                                     recent_error())
        return array

    def destroy_bool_array(self, array: Any) -> None:
        check(self.nn.aclDestroyBoolArray(array), "aclDestroyBoolArray")

    def create_int_array(self, values: Sequence[int]) -> Any:
        array = self.nn.aclCreateIntArray(ffi.new("int64_t[]", list(values)), len(values))
        if array == NULL:
            raise errors.from_status(ACLNN_ERR_INNER_NULLPTR, "aclCreateIntArray", "aclCreateIntArray returned NULL",
                                     recent_error())
        return array

    def destroy_int_array(self, array: Any) -> None:
        check(self.nn.aclDestroyIntArray(array), "aclDestroyIntArray")

    def create_float_array(self, values: Sequence[float]) -> Any:
        array = self.nn.aclCreateFloatArray(ffi.new("float[]", list(values)), len(values))
        return _made(array, "aclCreateFloatArray")

    def destroy_float_array(self, array: Any) -> None:
        check(self.nn.aclDestroyFloatArray(array), "aclDestroyFloatArray")

    def create_scalar(self, value: Any, dtype: int) -> Any:
        """aclCreateScalar(&value, dtype): ``value`` is a number (converted to ``dtype`` on the
        host, as C code would store it) or a buffer holding the value's bytes."""
        if isinstance(value, (bytes, bytearray, memoryview, np.ndarray)):
            data = ffi.from_buffer(value)
        else:
            try:
                if dtype == DType.DT_UNDEFINED:  # no type at all: refused by the library, as an unknown one
                    raise ValueError(dtype)
                host = np.array(value).astype(to_numpy(DType(dtype)))
            except ValueError:  # not an aclDataType: the library refuses it (NULL)
                host = np.array(value)
            except errors.NotSupportedError as exc:  # no NumPy twin to convert with
                raise errors.NotSupportedError(f"aclCreateScalar: {exc}; pass the value's bytes (a bytes "
                                               "object or a uint8 ndarray) instead of a number") from None
            data = ffi.from_buffer(host.reshape(-1).view(np.uint8))
        return _made(self.nn.aclCreateScalar(ffi.cast(VOID_P, data), dtype), "aclCreateScalar")

    def destroy_scalar(self, scalar: Any) -> None:
        check(self.nn.aclDestroyScalar(scalar), "aclDestroyScalar")

    def create_tensor_list(self, tensors: Sequence[Any]) -> Any:
        """aclCreateTensorList: the list owns the tensors (aclDestroyTensorList destroys them)."""
        array = ffi.new("aclTensor *[]", list(tensors))
        return _made(self.nn.aclCreateTensorList(array, len(tensors)), "aclCreateTensorList")

    def destroy_tensor_list(self, array: Any) -> None:
        check(self.nn.aclDestroyTensorList(array), "aclDestroyTensorList")

    def create_scalar_list(self, scalars: Sequence[Any]) -> Any:
        array = ffi.new("aclScalar *[]", list(scalars))
        return _made(self.nn.aclCreateScalarList(array, len(scalars)), "aclCreateScalarList")

    def destroy_scalar_list(self, array: Any) -> None:
        check(self.nn.aclDestroyScalarList(array), "aclDestroyScalarList")

    def _dims(self, fn: Any, tensor: Any, api: str) -> list[int]:
        data, num = ffi.new("int64_t **"), ffi.new("uint64_t *")
        check(fn(tensor, data, num), api)
        try:
            return [int(data[0][i]) for i in range(int(num[0]))]
        finally:
            if data[0] != NULL:
                libc.free(libc_ffi.cast("void *", int(ffi.cast("uintptr_t", data[0]))))

    def tensor_meta(self, what: str, tensor: Any) -> Any:
        """aclGetViewShape / aclGetStorageShape / aclGetViewStrides (lists), aclGetViewOffset,
        aclGetFormat, aclGetDataType (ints)."""
        if what in ("ViewShape", "StorageShape", "ViewStrides"):
            return self._dims(getattr(self.nn, f"aclGet{what}"), tensor, f"aclGet{what}")
        ctype = {"ViewOffset": "int64_t *", "Format": "aclFormat *", "DataType": "aclDataType *"}[what]
        out = ffi.new(ctype)
        check(getattr(self.nn, f"aclGet{what}")(tensor, out), f"aclGet{what}")
        return int(out[0])

    def meta_size(self, what: str, handle: Any) -> int:
        """aclGet{IntArray,FloatArray,BoolArray,TensorList,ScalarList}Size."""
        out = ffi.new("uint64_t *")
        check(getattr(self.nn, f"aclGet{what}Size")(handle, out), f"aclGet{what}Size")
        return int(out[0])

    def init_tensor(self, tensor: Any, shape: Sequence[int], dtype: int, strides: Sequence[int] | None,
                    offset: int, fmt: int, storage_shape: Sequence[int], addr: int) -> None:
        check(self.nn.aclInitTensor(tensor, list(shape) or NULL, len(shape), dtype,
                                    list(strides) if strides else NULL, offset, fmt,
                                    list(storage_shape) or NULL, len(storage_shape), ffi.cast(VOID_P, addr)),
              "aclInitTensor")

    def set_raw_tensor_addr(self, tensor: Any, addr: int) -> None:
        check(self.nn.aclSetRawTensorAddr(tensor, ffi.cast(VOID_P, addr)), "aclSetRawTensorAddr")

    def get_raw_tensor_addr(self, tensor: Any) -> int:
        out = ffi.new("void **")
        check(self.nn.aclGetRawTensorAddr(tensor, out), "aclGetRawTensorAddr")
        return int(ffi.cast("uintptr_t", out[0]))
