"""What every function of ``pyaclnn.acl`` uses: the active runtime, and the arguments taken as C would take them.

Part of ``pyaclnn.acl`` (which re-exports every ``acl*`` function here): see its docstring."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
import numpy as _np
from .. import errors as _errors
from .._objects import backend as _backend

if TYPE_CHECKING:
    from .._runtime import Runtime


Handle = Any


Buffer = Any  # a host buffer (NumPy array, bytearray, torch CPU tensor...) or an int address


def active_runtime() -> "Runtime":
    # The backend's fast path; after a fork the backend is forgotten, so current() raises.
    return (_backend.active or _backend.current()).runtime


def data_type_arg(api: str, value: Any) -> int:
    """An ``aclDataType`` argument that is not a plain int. The C parameter is an int enum, so
    anything that is no integer (a NumPy dtype or type, a torch dtype, text) is a TypeError
    naming the parameter and the constant to pass, on both backends (cffi would say only "an
    integer is required", the reference would look it up as an unknown value)."""
    if isinstance(value, (int, _np.integer)) and not isinstance(value, bool):  # pyaclnn.DType.FLOAT, np.int32(0)
        return int(value)
    fix = "a constant such as pyaclnn.acl.ACL_FLOAT"
    if value is not None and not isinstance(value, bool):
        try:
            from ..dtypes import from_numpy
            fix = f"pyaclnn.acl.{from_numpy(value).c_name} (pyaclnn.dtypes.from_numpy(dtype) converts a NumPy dtype)"
        except (TypeError, ValueError, _errors.NotSupportedError):
            pass
    if isinstance(value, type):
        module = "" if value.__module__ == "builtins" else value.__module__ + "."
        what = f"the type {module}{value.__qualname__}"
    else:
        what = repr(value) if isinstance(value, _np.dtype) else f"{type(value).__name__} {value!r}"
    raise TypeError(f"{api}: dataType must be an aclDataType (an int), got {what}; pass {fix}")


def device_address_arg(api: str, name: str, value: Any) -> int:
    """A ``void *`` device address that is not a plain int: None is nullptr (0), a NumPy integer
    its value; anything else (a host array given for the device memory it should have been
    copied to) is a TypeError naming the parameter, on both backends."""
    if value is None:
        return 0
    if isinstance(value, _np.integer):
        return int(value)
    raise TypeError(f"{api}: {name} (void *) takes a device address (an int from aclrtMalloc) or None, got "
                    f"{type(value).__name__}; copy host data to device memory with aclrtMemcpy first")
