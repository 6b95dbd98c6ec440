"""``pyaclnn.acl``: tensors, scalars, arrays and lists of acl_meta.h (the descriptors family of pyaclnn._runtime).

Part of ``pyaclnn.acl`` (which re-exports every ``acl*`` function here): see its docstring."""
from __future__ import annotations

import re

import numpy as _np
from typing import Any, Sequence
from .._objects import backend as _backend
from .._objects import handles as _handles
from .._objects.handles import (AclBoolArray, AclFloatArray, AclIntArray, AclScalar, AclScalarArray, AclScalarList,
                                AclTensor, AclTensorArray, AclTensorList)
from .._registry.signature import c_element as _c_element
from .common import (Handle, active_runtime, address_arg, data_type_arg, device_address_arg, enum_arg, int64_arg,
                     int64_list_arg, uint64_arg)

__all__ = ["aclCreateTensor", "aclDestroyTensor", "aclCreateBoolArray", "aclDestroyBoolArray", "aclCreateIntArray",
           "aclDestroyIntArray", "aclCreateFloatArray", "aclDestroyFloatArray", "aclCreateScalar",
           "aclDestroyScalar", "aclCreateTensorList", "aclDestroyTensorList", "aclCreateScalarList",
           "aclDestroyScalarList", "aclInitTensor", "aclGetViewShape", "aclGetStorageShape", "aclGetViewStrides",
           "aclGetViewOffset", "aclGetFormat", "aclGetDataType", "aclGetIntArraySize", "aclGetFloatArraySize",
           "aclGetBoolArraySize", "aclGetTensorListSize", "aclGetScalarListSize"]


def aclCreateTensor(viewDims: Sequence[int], viewDimsNum: int, dataType: int, stride: Sequence[int] | None,
                    offset: int, format: int, storageDims: Sequence[int], storageDimsNum: int,
                    tensorData: int) -> Handle:
    """aclCreateTensor -> aclTensor*. ``stride`` None means contiguous; counts must match.
    Lists and tuples go to C as they are; other sequences (a NumPy array...) become lists.

    Args:
        viewDims: the shape.
        viewDimsNum: ``len(viewDims)``.
        dataType: an ``aclDataType`` (``ACL_FLOAT``...).
        stride: the strides, in elements; None for contiguous.
        offset: the first element's offset from ``tensorData``, in elements.
        format: an ``aclFormat``, e.g. ``ACL_FORMAT_ND``.
        storageDims: the shape of the memory the view lies in.
        storageDimsNum: ``len(storageDims)``.
        tensorData: the device address (an int; None is nullptr).

    Returns:
        The aclTensor handle; free it with ``aclDestroyTensor``.

    Raises:
        AclnnParamInvalidError: a count that does not match its dims.
        TypeError: a ``tensorData`` that is no address (a host array: aclrtMemcpy it first).
    """
    # The usual call (it sits on every ported operator call) is checked inline, with no call per
    # argument: plain ints in their C ranges, lists or tuples of plain int64 ints whose counts match
    # (viewDimsNum strides among them; storage dims that are the view dims themselves, as CANN's
    # samples pass them, checked once).
    # Anything else goes through the common checks one argument at a time, with their messages.
    if (type(viewDimsNum) is int and type(storageDimsNum) is int and type(offset) is int and type(format) is int
            and type(dataType) is int and type(tensorData) is int
            and -0x8000000000000000 <= offset <= 0x7FFFFFFFFFFFFFFF  # int64_t
            and -0x80000000 <= format <= 0x7FFFFFFF and -0x80000000 <= dataType <= 0x7FFFFFFF  # signed enums
            and 0 <= tensorData <= 0xFFFFFFFFFFFFFFFF  # void *
            and (type(viewDims) is list or type(viewDims) is tuple) and viewDimsNum == len(viewDims)
            and (type(storageDims) is list or type(storageDims) is tuple) and storageDimsNum == len(storageDims)
            and (stride is None or (type(stride) is list or type(stride) is tuple) and len(stride) == viewDimsNum)):
        for v in viewDims:  # (three loops, not one over the three: 0.1 us less a call)
            if type(v) is not int or v > 0x7FFFFFFFFFFFFFFF or v < -0x8000000000000000:
                break
        else:
            for v in stride or ():
                if type(v) is not int or v > 0x7FFFFFFFFFFFFFFF or v < -0x8000000000000000:
                    break
            else:
                for v in () if storageDims is viewDims else storageDims:
                    if type(v) is not int or v > 0x7FFFFFFFFFFFFFFF or v < -0x8000000000000000:
                        break
                else:
                    return (_backend.active or _backend.current()).runtime.create_tensor(  # (active_runtime)
                        viewDims, dataType, stride, offset, format, storageDims, tensorData)
        # a value to convert or refuse: the checks below name it
    viewDims, stride, storageDims, offset, format = _checked_tensor_args(
        "aclCreateTensor", viewDims, viewDimsNum, stride, offset, format, storageDims, storageDimsNum)
    dataType = data_type_arg("aclCreateTensor", dataType)
    if type(tensorData) is not int:
        tensorData = device_address_arg("aclCreateTensor", "tensorData", tensorData)
    elif not 0 <= tensorData < 1 << 64:
        tensorData = address_arg("aclCreateTensor", "tensorData", tensorData)
    return active_runtime().create_tensor(viewDims, dataType, stride, offset, format, storageDims, tensorData)


def _checked_tensor_args(api: str, view_dims: Any, view_num: Any, stride: Any, offset: Any, fmt: Any,
                         storage_dims: Any, storage_num: Any
                         ) -> tuple[Sequence[int], Sequence[int] | None, Sequence[int], int, int]:
    """The C-typed arguments of aclCreateTensor / aclInitTensor, one at a time by the common checks
    (pyaclnn._port.common: what is converted, a NumPy array of dims or np.int64 values, or refused,
    with the message naming the argument), then the counts against their dims."""
    view_dims = int64_list_arg(api, "viewDims", view_dims)
    storage_dims = int64_list_arg(api, "storageDims", storage_dims)
    if stride is not None:
        stride = int64_list_arg(api, "stride", stride)
    view_num, storage_num = uint64_arg(api, "viewDimsNum", view_num), uint64_arg(api, "storageDimsNum", storage_num)
    if len(view_dims) != view_num or len(storage_dims) != storage_num:
        from ..errors import AclnnParamInvalidError
        raise AclnnParamInvalidError(api, f"viewDimsNum {view_num} / storageDimsNum {storage_num} do not match "
                                          f"{len(view_dims)} / {len(storage_dims)} dims")
    if stride is not None and len(stride) != view_num:
        # C reads viewDimsNum strides (hicann/opbase common_types.cpp aclTensor::aclTensor:
        # viewStrides_.assign(stride, stride + viewDimsNum)): a shorter array is read past its end
        from ..errors import AclnnParamInvalidError
        raise AclnnParamInvalidError(api, f"stride has {len(stride)} entries, viewDimsNum is {view_num}: pass one "
                                          "stride per dim (or None for contiguous)")
    return view_dims, stride, storage_dims, int64_arg(api, "offset", offset), enum_arg(api, "format", fmt, "aclFormat")


def aclDestroyTensor(tensor: AclTensor) -> None:
    (_backend.active or _backend.current()).runtime.destroy_tensor(tensor)  # (common.active_runtime, inline)


def aclCreateBoolArray(value: Sequence[bool], size: int) -> Handle:
    """aclCreateBoolArray(value, size) -> aclBoolArray* (the values are copied)."""
    return active_runtime().create_bool_array(_elements("aclCreateBoolArray", value, size, "bool"))


def _elements(api: str, values: Sequence[Any], size: int, kind: str) -> list[Any]:
    """The first ``size`` values, each checked as C would need it (``_signature.c_element``): on
    both backends a value of no C meaning is a TypeError, never cast."""
    size = uint64_arg(api, "size", size)
    try:
        values = list(values)
    except TypeError:
        raise TypeError(f"{api}: value must be a sequence, got {type(values).__name__}") from None
    out = []
    for i, v in enumerate(values[:size]):
        try:
            out.append(_c_element(v, kind))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{api}: value[{i}] must be {_ELEMENT[kind]}: {exc}") from None
    return out


_ELEMENT = {"int": "an int (int64_t)", "float": "a real number (float)", "bool": "a bool"}


def aclDestroyBoolArray(array: AclBoolArray) -> None:
    active_runtime().destroy_bool_array(array)


def aclCreateIntArray(value: Sequence[int], size: int) -> Handle:
    """aclCreateIntArray(value, size) -> aclIntArray* (the values are copied)."""
    return active_runtime().create_int_array(_elements("aclCreateIntArray", value, size, "int"))


def aclDestroyIntArray(array: AclIntArray) -> None:
    active_runtime().destroy_int_array(array)


def aclCreateFloatArray(value: Sequence[float], size: int) -> Handle:
    """aclCreateFloatArray(value, size) -> aclFloatArray* (the values are copied, as float32)."""
    return active_runtime().create_float_array(_elements("aclCreateFloatArray", value, size, "float"))


def aclDestroyFloatArray(array: AclFloatArray) -> None:
    active_runtime().destroy_float_array(array)


def aclCreateScalar(value: Any, dataType: int) -> Handle:
    """aclCreateScalar(&value, dataType) -> aclScalar*. ``value`` is a number (stored as
    ``dataType``, as the C sample's typed variable holds it) or a buffer with its bytes. Text is
    a TypeError; a number ``dataType`` cannot hold at all (2**70 for ACL_INT64) a ValueError."""
    if not isinstance(value, (int, float, complex, _np.generic, bytes, bytearray, memoryview, _np.ndarray)):
        raise TypeError(f"aclCreateScalar: value must be a number or a buffer of its bytes, got "
                        f"{type(value).__name__} {value!r}")
    dataType = data_type_arg("aclCreateScalar", dataType)
    if isinstance(value, (bytes, bytearray, memoryview, _np.ndarray)):
        _scalar_bytes(value, dataType)
    try:
        return active_runtime().create_scalar(value, dataType)
    except OverflowError as exc:  # raised by the host-side conversion, before any handle exists
        raise ValueError(f"aclCreateScalar: {value!r} does not fit aclDataType {dataType} ({exc})") from None


def _scalar_bytes(value: Any, data_type: int) -> None:
    """A buffer given for aclCreateScalar's value: C reads the dataType's size from it, so fewer
    bytes would be read past its end (ValueError, naming the sizes)."""
    from ..dtypes import itemsize
    try:
        need = itemsize(data_type)
    except Exception:  # noqa: BLE001 - an unknown dataType: the library refuses it (561103)
        return
    nbytes = value.nbytes if isinstance(value, _np.ndarray) else memoryview(value).nbytes
    if nbytes < need:
        raise ValueError(f"aclCreateScalar: value holds {nbytes} bytes; aclDataType {data_type} reads {need}")


def aclDestroyScalar(scalar: AclScalar) -> None:
    active_runtime().destroy_scalar(scalar)


def aclCreateTensorList(value: AclTensorArray, size: int) -> Handle:
    """aclCreateTensorList(value, size) -> aclTensorList*. The list owns the tensors from now
    on: aclDestroyTensorList destroys them (do not aclDestroyTensor them yourself). A
    pyaclnn.Tensor element gets a descriptor of its own, the list's; the Tensor keeps its own
    and is kept alive until aclDestroyTensorList (do not close() it before)."""
    return _handles.create_tensor_list(active_runtime(), value, size)


def aclDestroyTensorList(array: AclTensorList) -> None:
    """aclDestroyTensorList: the list and its elements (descriptors made for Tensors included)."""
    rt = active_runtime()
    rt.destroy_tensor_list(array)
    _handles.list_destroyed(rt, array)


def aclCreateScalarList(value: AclScalarArray, size: int) -> Handle:
    """aclCreateScalarList(value, size) -> aclScalarList* (owns the scalars, as a tensor list does)."""
    return active_runtime().create_scalar_list(list(value)[:size])


def aclDestroyScalarList(array: AclScalarList) -> None:
    active_runtime().destroy_scalar_list(array)


def aclInitTensor(tensor: AclTensor, viewDims: Sequence[int], viewDimsNum: int, dataType: int,
                  stride: Sequence[int] | None, offset: int, format: int, storageDims: Sequence[int],
                  storageDimsNum: int, tensorDataAddr: int) -> None:
    """aclInitTensor: re-describe an existing aclTensor (same arguments as aclCreateTensor)."""
    api = "aclInitTensor"
    viewDims, stride, storageDims, offset, format = _checked_tensor_args(api, viewDims, viewDimsNum, stride, offset,
                                                                        format, storageDims, storageDimsNum)
    dataType = data_type_arg(api, dataType)
    active_runtime().init_tensor(tensor, list(viewDims), dataType, None if stride is None else list(stride), offset,
                                 format, list(storageDims), address_arg(api, "tensorDataAddr", tensorDataAddr))


def aclGetViewShape(tensor: AclTensor) -> list[int]:
    """aclGetViewShape(tensor, &viewDims, &viewDimsNum) -> viewDims (the C array is freed)."""
    return active_runtime().tensor_meta("ViewShape", tensor)


def aclGetStorageShape(tensor: AclTensor) -> list[int]:
    """aclGetStorageShape(tensor, &storageDims, &storageDimsNum) -> storageDims."""
    return active_runtime().tensor_meta("StorageShape", tensor)


def aclGetViewStrides(tensor: AclTensor) -> list[int]:
    """aclGetViewStrides(tensor, &stridesValue, &stridesNum) -> strides (in elements)."""
    return active_runtime().tensor_meta("ViewStrides", tensor)


def aclGetViewOffset(tensor: AclTensor) -> int:
    """aclGetViewOffset(tensor, &offset) -> offset (in elements)."""
    return active_runtime().tensor_meta("ViewOffset", tensor)


def aclGetFormat(tensor: AclTensor) -> int:
    """aclGetFormat(tensor, &format) -> format."""
    return active_runtime().tensor_meta("Format", tensor)


def aclGetDataType(tensor: AclTensor) -> int:
    """aclGetDataType(tensor, &dataType) -> dataType."""
    return active_runtime().tensor_meta("DataType", tensor)


def aclGetIntArraySize(array: AclIntArray) -> int:
    return active_runtime().meta_size("IntArray", array)


def aclGetFloatArraySize(array: AclFloatArray) -> int:
    return active_runtime().meta_size("FloatArray", array)


def aclGetBoolArraySize(array: AclBoolArray) -> int:
    return active_runtime().meta_size("BoolArray", array)


def aclGetTensorListSize(tensorList: AclTensorList) -> int:
    return active_runtime().meta_size("TensorList", tensorList)


def aclGetScalarListSize(scalarList: AclScalarList) -> int:
    return active_runtime().meta_size("ScalarList", scalarList)
