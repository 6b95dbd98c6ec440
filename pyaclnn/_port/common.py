"""What every function of ``pyaclnn.acl`` uses: the active runtime, and the arguments taken as C would take them.

Part of ``pyaclnn.acl`` (which re-exports every ``acl*`` function here): see its docstring."""
from __future__ import annotations

import os
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
    if type(value) is int and -(1 << 31) <= value < 1 << 31:
        return value
    if isinstance(value, (int, _np.integer)) and not isinstance(value, bool):  # pyaclnn.DType.FLOAT, np.int32(0)
        return _integer(api, "dataType", value, "aclDataType (int)", -(1 << 31), 1 << 31)
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


# -- C scalar parameters: one check per C type, before either backend ------------------------------
# cffi raises OverflowError/TypeError for a value its C type cannot hold, the reference would take
# it as a Python int: both backends see only values C can receive. A value C can receive but CANN
# refuses (a policy, a count over destMax, a timeout < -1) goes through: its status is CANN's.
def _integer(api: str, name: str, value: Any, ctype: str, lo: int, hi: int) -> int:
    """``value`` as a C integer of range [lo, hi): TypeError for what is no integer (a bool, a
    float, None, text), ValueError for an integer out of range; each names the parameter and C type."""
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise TypeError(f"{api}: {name} ({ctype}) must be an int, got {type(value).__name__} {value!r}")
    if not lo <= value < hi:
        raise ValueError(f"{api}: {name} ({ctype}) = {value} is out of the {ctype} range "
                         f"[{_bound(lo)}, {_bound(hi)})")
    return int(value)


def _bound(n: int) -> str:
    if n == 0:
        return "0"
    sign, n = ("-", -n) if n < 0 else ("", n)
    return f"{sign}2**{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def size_t_arg(api: str, name: str, value: Any) -> int:
    """A ``size_t`` (a size or count): an int in [0, 2**64)."""
    if type(value) is int and 0 <= value < 1 << 64:
        return value
    return _integer(api, name, value, "size_t", 0, 1 << 64)


uint64_arg = size_t_arg  # uint64_t: the same range (the message says size_t: the same C width)


def int32_arg(api: str, name: str, value: Any) -> int:
    """An ``int32_t`` (a device id, a memset value): an int in [-2**31, 2**31)."""
    if type(value) is int and -(1 << 31) <= value < 1 << 31:
        return value
    return _integer(api, name, value, "int32_t", -(1 << 31), 1 << 31)


def uint32_arg(api: str, name: str, value: Any) -> int:
    """A ``uint32_t`` (a flag, a device id of the capability queries): an int in [0, 2**32)."""
    if type(value) is int and 0 <= value < 1 << 32:
        return value
    return _integer(api, name, value, "uint32_t", 0, 1 << 32)


def int64_arg(api: str, name: str, value: Any) -> int:
    """An ``int64_t`` (a view offset): an int in [-2**63, 2**63)."""
    if type(value) is int and -(1 << 63) <= value < 1 << 63:
        return value
    return _integer(api, name, value, "int64_t", -(1 << 63), 1 << 63)


def int64_list_arg(api: str, name: str, values: Any) -> list[int] | tuple[int, ...]:
    """A ``const int64_t *`` array (dims, strides): a sequence of int64 values, as a list or tuple."""
    if not isinstance(values, (list, tuple)):
        if isinstance(values, (str, bytes, bytearray)):  # iterable, but no ints C would mean
            raise TypeError(f"{api}: {name} (const int64_t *) must be a sequence of ints, got "
                            f"{type(values).__name__} {values!r}")
        try:
            values = list(values)
        except TypeError:
            raise TypeError(f"{api}: {name} (const int64_t *) must be a sequence of ints, got "
                            f"{type(values).__name__}") from None
    for i, v in enumerate(values):
        if type(v) is not int or not -(1 << 63) <= v < 1 << 63:
            values = list(values)
            values[i] = _integer(api, f"{name}[{i}]", v, "int64_t", -(1 << 63), 1 << 63)
    return values


# The enums with a negative member (an UNDEFINED = -1), which C (and cffi) make a signed int.
SIGNED_ENUMS = frozenset({"aclDataType", "aclFormat", "aclDeviceInfo"})


def enum_arg(api: str, name: str, value: Any, ctype: str) -> int:
    """A C enum: 32 bits. One with no negative member (``aclrtMemMallocPolicy``, ``aclrtMemcpyKind``...)
    is an unsigned int: an int in [-2**31, 2**32), a negative one passed as C passes it, as its
    32-bit pattern (-1 is 0xffffffff); one with a negative member (SIGNED_ENUMS) an int in
    [-2**31, 2**31). CANN refuses a value that is no member with its own status."""
    if ctype in SIGNED_ENUMS:
        return int32_arg(api, name, value) if type(value) is int else _integer(api, name, value, ctype, -(1 << 31),
                                                                                1 << 31)
    if type(value) is int and 0 <= value < 1 << 32:
        return value
    return _integer(api, name, value, ctype, -(1 << 31), 1 << 32) & 0xFFFFFFFF


def timeout_arg(api: str, name: str, value: Any) -> int:
    """An ``int32_t`` timeout in ms (-1: forever; CANN refuses < -1 with its own status)."""
    return int32_arg(api, name, value)


def address_arg(api: str, name: str, value: Any) -> int:
    """A ``void *`` address: an int in [0, 2**64) or None (nullptr, 0); anything else (a host
    array where device memory goes, text) a TypeError naming the parameter."""
    if type(value) is int and 0 <= value < 1 << 64:
        return value
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise TypeError(f"{api}: {name} (void *) takes a device address (an int from aclrtMalloc) or None, got "
                        f"{type(value).__name__}")
    return _integer(api, name, value, "void *", 0, 1 << 64)


def c_string_arg(api: str, name: str, value: Any, none: bool = True) -> Any:
    """A ``const char *`` (a path, a package name): None is nullptr where ``none``; a str or an
    os.PathLike (pathlib.Path, bytes paths decoded as the OS does) its text; anything else a
    TypeError naming the parameter (the acl side would fail encoding it, the reference ignore it)."""
    if type(value) is str or (value is None and none):
        return value
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(value)
    raise TypeError(f"{api}: {name} (const char *) must be a str{', a path or None' if none else ''}, got "
                    f"{type(value).__name__} {value!r}")
