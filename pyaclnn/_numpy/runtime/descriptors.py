"""The reference runtime's aclnn descriptors: tensors, scalars, int/float/bool arrays, tensor and
scalar lists (acl_meta.h), and their queries."""
from __future__ import annotations

import itertools
from typing import Any, Sequence
import numpy as np
from ... import errors
from ..._core.constants import ACLNN_ERR_PARAM_NULLPTR, ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_INNER_NULLPTR
from ...dtypes import DType, to_numpy
from ..._core.strides import contiguous_strides, dense
from .. import ops
from ..records import Scalar, TensorDesc
from ..stale import made_over
from .memory import NumpyMemory


_DTYPES = {int(d): d for d in DType}  # (DType(x) is an enum call: a dict is cheaper per scalar)
# the dtypes an aclScalar keeps a Python number of this type as it is (create_scalar)
_SAME: dict[DType, type] = {DType.DOUBLE: float, DType.INT64: int, DType.BOOL: bool}
_INT64 = (-2 ** 63, 2 ** 63 - 1)
_new = object.__new__


class NumpyDescriptors(NumpyMemory):
    """aclCreateTensor & co.: the descriptors phase 1 takes."""

    _moves, _moved = itertools.count(1), 0  # a new token when an aclTensor moves or drops its known-written mark

    # -- aclnn meta objects --------------------------------------------------------------------
    def create_tensor(self, shape: Sequence[int], dtype: int, strides: Sequence[int] | None, offset: int,
                      fmt: int, storage_shape: Sequence[int], addr: int) -> int:
        shape = tuple(map(int, shape))  # (map, min: no generator frames: this runs for every tensor)
        try:
            dt = dtype if type(dtype) is DType else DType(dtype)  # the object layer passes a DType: no enum call
        except ValueError:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclCreateTensor",
                             f"aclCreateTensor returned NULL: unknown aclDataType {dtype}") from None
        if (shape and min(shape) < 0) or (strides is not None and len(strides) != len(shape)):
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclCreateTensor",
                             f"aclCreateTensor returned NULL: bad shape {shape} / strides {strides}")
        desc = TensorDesc(shape, dt, tuple(strides) if strides is not None else contiguous_strides(shape),
                          int(offset), int(fmt), tuple(storage_shape), int(addr))
        desc.made = made_over(self.memory, desc.addr, "aclCreateTensor")
        return self._register(self._tensors, desc)

    def destroy_tensor(self, tensor: Any) -> None:
        self._destroy(self._tensors, tensor, "aclDestroyTensor", "aclTensor")

    def create_bool_array(self, values: Sequence[bool]) -> int:
        return self._register(self._bool_arrays, tuple(map(bool, values)))

    def destroy_bool_array(self, array: Any) -> None:
        self._destroy(self._bool_arrays, array, "aclDestroyBoolArray", "aclBoolArray")

    def create_int_array(self, values: Sequence[int]) -> int:
        return self._register(self._int_arrays, tuple(map(int, values)))

    def destroy_int_array(self, array: Any) -> None:
        self._destroy(self._int_arrays, array, "aclDestroyIntArray", "aclIntArray")

    def create_float_array(self, values: Sequence[float]) -> int:
        return self._register(self._float_arrays, tuple(float(np.float32(v)) for v in values))

    def destroy_float_array(self, array: Any) -> None:
        self._destroy(self._float_arrays, array, "aclDestroyFloatArray", "aclFloatArray")

    def create_scalar(self, value: Any, dtype: int) -> int:
        """aclCreateScalar: ``value`` is a number (stored as ``dtype``) or the bytes of one."""
        try:
            dt = _DTYPES.get(dtype)
        except TypeError:  # (unhashable: DType refuses it below)
            dt = None
        kind = type(value)
        if dt is not None and _SAME.get(dt) is kind and (kind is not int or _INT64[0] <= value <= _INT64[1]):
            # a Python float as ACL_DOUBLE, int as ACL_INT64 (in its range), bool as ACL_BOOL: the
            # NumPy conversion below gives back this value, bit for bit (float64 to float64, an
            # int64 to its int), so it is stored as it is
            scalar = _new(Scalar)  # (its fields set here: no __init__ frame, for every aclScalar)
            scalar.value, scalar.dtype = value, dt
            return self._register(self._scalars, scalar)
        try:
            dt = DType(dtype)
            npdt = to_numpy(dt)
        except (ValueError, errors.NotSupportedError):
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclCreateScalar",
                             f"aclCreateScalar returned NULL: unsupported aclDataType {dtype}") from None
        if isinstance(value, (bytes, bytearray, memoryview, np.ndarray)):
            raw = value.reshape(-1).view(np.uint8) if isinstance(value, np.ndarray) else memoryview(value).cast("B")
            number = np.frombuffer(bytes(raw[:npdt.itemsize]), npdt)[0]
        else:
            number = np.array(value).astype(npdt)[()]
        return self._register(self._scalars, Scalar(number.item(), dt))

    def destroy_scalar(self, scalar: Any) -> None:
        self._destroy(self._scalars, scalar, "aclDestroyScalar", "aclScalar")

    def _create_list(self, table: dict, members: dict, handles: Sequence[Any], api: str, what: str) -> int:
        handles = tuple(handles)
        if any(h not in members for h in handles):  # CANN reads each element: a stale one is garbage
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"{api} returned NULL: an element is not a live {what}")
        return self._register(table, handles)

    def _destroy_list(self, table: dict, members: dict, handle: Any, api: str, what: str) -> None:
        """Destroying a list destroys its elements too (acl_meta.h aclDestroyTensorList)."""
        if handle is None:
            return
        with self._lock:
            elements = table.pop(handle, None)
            if elements is None:
                raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"{handle!r} is not a live {what}List")
            for element in elements:
                members.pop(element, None)

    def create_tensor_list(self, tensors: Sequence[Any]) -> int:
        return self._create_list(self._tensor_lists, self._tensors, tensors, "aclCreateTensorList", "aclTensor")

    def destroy_tensor_list(self, array: Any) -> None:
        self._destroy_list(self._tensor_lists, self._tensors, array, "aclDestroyTensorList", "aclTensor")

    def create_scalar_list(self, scalars: Sequence[Any]) -> int:
        return self._create_list(self._scalar_lists, self._scalars, scalars, "aclCreateScalarList", "aclScalar")

    def destroy_scalar_list(self, array: Any) -> None:
        self._destroy_list(self._scalar_lists, self._scalars, array, "aclDestroyScalarList", "aclScalar")

    def meta(self, kind: str, handle: Any, api: str) -> Any:
        """What a live handle of ``kind`` holds (a TensorDesc, a tuple of values...)."""
        table, what = self._kinds[kind]
        value = table.get(handle)
        if value is None:
            raise self._fail(ACLNN_ERR_PARAM_NULLPTR if handle is None else ACLNN_ERR_PARAM_INVALID, api,
                             f"{handle!r} is not a live {what}")
        return value

    def tensor_meta(self, what: str, tensor: Any) -> Any:
        desc = self.meta("tensor", tensor, f"aclGet{what}")
        return {"ViewShape": list(desc.shape), "StorageShape": list(desc.storage_shape),
                "ViewStrides": list(desc.strides), "ViewOffset": desc.offset, "Format": desc.fmt,
                "DataType": int(desc.dtype)}[what]

    def meta_size(self, what: str, handle: Any) -> int:
        kind = {"IntArray": "int_array", "FloatArray": "float_array", "BoolArray": "bool_array",
                "TensorList": "tensor_list", "ScalarList": "scalar_list"}[what]
        return len(self.meta(kind, handle, f"aclGet{what}Size"))

    def init_tensor(self, tensor: Any, shape: Sequence[int], dtype: int, strides: Sequence[int] | None,
                    offset: int, fmt: int, storage_shape: Sequence[int], addr: int) -> None:
        self.meta("tensor", tensor, "aclInitTensor")
        fresh = self.create_tensor(shape, dtype, strides, offset, fmt, storage_shape, addr)
        with self._lock:
            self._tensors[tensor] = desc = self._tensors.pop(fresh)
        if desc.made is not None:
            desc.made = desc.made[:2] + ("aclInitTensor",)

    def _need_tensor_arg(self, tensor: Any, api: str, name: str = "tensor") -> None:
        """aclSet*TensorAddr check their tensor (list) first, before the executor: hicann/opbase
        src/nnopbase/common/api/acl_op_api.cpp, NNOPBASE_ASSERT_NULLPTR_WITH_RETURN(tensor,
        ACLNN_ERR_INNER_NULLPTR), whose message is OP_LOGE_FOR_INVALID_ARGUMENT_NULL_POINTER's
        (common/inc/nnopbase_error_msg.h). A destroyed one is refused there too, with the same
        status: the real call's first act, tensor->SetStorageAddr(addr), writes into freed memory
        (use after free), so the closest safe behaviour is the emulator's (emu_nnopbase.c
        set_addr, set_dynamic): ACLNN_ERR_INNER_NULLPTR, nothing changed."""
        if tensor is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"{api} failed because {name} cannot be a NULL pointer.")
        table, what = self._kinds["tensor" if name == "tensor" else "tensor_list"]
        if type(tensor) is not int or tensor not in table:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"{name} {tensor!r} is not a live {what} (destroyed?): "
                                                           "pass the live one the executor was made with")

    def set_raw_tensor_addr(self, tensor: Any, addr: int) -> None:
        desc = self.meta("tensor", tensor, "aclSetRawTensorAddr")
        desc.addr = int(addr)
        desc.made = made_over(self.memory, desc.addr, "aclSetRawTensorAddr")  # re-pointed: fresh
        self._moved = next(self._moves)

    def get_raw_tensor_addr(self, tensor: Any) -> int:
        return int(self.meta("tensor", tensor, "aclGetRawTensorAddr").addr)
