"""Phase 1's arguments: Python values bound to an operator's C parameters, and made the handles CANN takes (tensors, scalars, arrays, lists), with the uploads they need."""
from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from .device import Device
from .._registry.signature import KINDS, c_element, c_scalar
from .tensor import Tensor, own_descriptor
from ..dtypes import DType, from_numpy
from ..errors import AclError, ClosedError, NotSupportedError

if TYPE_CHECKING:
    from .._runtime import Runtime

_MISSING = object()
_DOUBLE = int(DType.DOUBLE)
_INT64 = (-2 ** 63, 2 ** 63 - 1)

# Parameter kinds that the generic object turns into an aclnn meta object it owns.
_MADE = ("scalar", "int_array", "float_array", "bool_array", "tensor_list", "scalar_list")


class Slots:
    """Where an op's parameters sit in its C argument tuple, by kind (cached per OpInfo: ``slots_of``)."""

    def __init__(self, info: Any) -> None:
        kinds = info.kinds
        self.tensors = tuple(i for i, k in enumerate(kinds) if k == "tensor")
        self.made = tuple((i, k) for i, k in enumerate(kinds) if k in _MADE)
        self.lists = any(k == "tensor_list" for _, k in self.made)  # (made Tensors: Executor._make)
        self.streams = tuple(i for i, k in enumerate(kinds) if k == "stream")
        self.roles_known = info.inputs is not None and info.outputs is not None
        self.inputs = tuple(i for i in (info.inputs or ()) if kinds[i] == "tensor")
        self.outputs = tuple(i for i in (info.outputs or ()) if kinds[i] == "tensor")
        self.keep_null = info.index_rule == "position"
        self.names = info.names
        self.info = info
        self.values = bool(info.signature.values)  # plain C values to check (c_values)
        # the phase-1 slot of each extra launch parameter (Signature.launch; None: one has no
        # phase-1 namesake, so the object cannot launch it)
        self.launch = info.signature.launch_sources
        # what the hot path asks (Op.__init__, _plan, Op[name]) worked out once per op
        self.count = len(info.names)
        self.problem = info.signature.problem  # bind refuses an op whose declaration cannot be called
        self.at: dict[str, int] = {}  # parameter name -> its slot (the first, as names.index)
        for i, name in enumerate(info.names):
            self.at.setdefault(name, i)


def present_at(slots: Slots, args: tuple, group: tuple[int, ...]) -> list[tuple[int, int]]:
    """(argument slot, C index) of each non-NULL tensor of ``group``: the position in the group
    for a generated op (NULL optional slots counted), else the position among the non-NULL ones."""
    out: list[tuple[int, int]] = []
    for k, i in enumerate(group):
        if args[i] is not None:
            out.append((i, k if slots.keep_null else len(out)))
    return out


# op name -> (the runtime that answered, its Slots): one dict get per phase 1 instead of asking
# runtime.op_info. The answer equals op_info's: a runtime keeps each OpInfo it found for good (the
# numpy one's _op_infos, the acl one's Registry._ops) and Slots only reads it; another runtime (a
# backend switched or reset) is asked anew. (It keeps that runtime alive until then.)
_SLOTS: dict[str, tuple[Any, Slots]] = {}


def slots_of(runtime: Runtime, op: str) -> Slots:
    """The Slots of ``op`` (its OpInfo from ``runtime.op_info``, which raises for an unknown op)."""
    cached = _SLOTS.get(op)
    if cached is not None and cached[0] is runtime:
        return cached[1]
    info = runtime.op_info(op)
    slots = info.cache.get("slots")
    if slots is None:
        slots = info.cache["slots"] = Slots(info)
    _SLOTS[op] = (runtime, slots)
    return slots


def type_name(value: Any) -> str:
    """The type of ``value`` as a user tells it apart: torch.Tensor, not a bare Tensor."""
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__.split('.')[0]}.{cls.__qualname__}"


def upload_hint(value: Any) -> str:
    return ("; pyaclnn.Tensor.from_numpy uploads a DLPack tensor (a torch CPU tensor...)"
            if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray) else "")


def bind(info: Any, args: tuple, kwargs: dict[str, Any]) -> tuple:
    """The C argument tuple of ``info``'s phase 1 from positional and C-named arguments.
    Every parameter must be given (None is the nullptr). An operator pyaclnn cannot call (its
    declaration unparsed, or a parameter of a C type it cannot pass) is a NotSupportedError first."""
    if info.signature.problem:
        raise NotSupportedError(f"aclnn{info.name} cannot be called from pyaclnn: {info.signature.problem}")
    names = info.names
    if not kwargs and len(args) == len(names):  # every parameter by position: nothing to bind
        return args
    api = f"aclnn{info.name}GetWorkspaceSize"
    if len(args) > len(names):
        raise TypeError(f"{api} takes {len(names)} arguments ({', '.join(names)}), got {len(args)}")
    values: list[Any] = list(args) + [_MISSING] * (len(names) - len(args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{api} has no parameter {key!r} (parameters: {', '.join(names)})")
        i = names.index(key)
        if values[i] is not _MISSING:
            raise TypeError(f"{api}: {key!r} given twice (by position and by name)")
        values[i] = value
    missing = [n for n, v in zip(names, values) if v is _MISSING]
    if missing:
        raise TypeError(f"{api} needs {', '.join(missing)} (pass None for a nullptr)")
    return tuple(values)


def scalar_dtype(value: Any) -> int:
    """The aclDataType an aclScalar gets for ``value`` (see Op)."""
    if isinstance(value, np.generic):
        return int(from_numpy(value.dtype))
    if isinstance(value, bool):
        return int(DType.BOOL)
    if isinstance(value, int):
        return int(DType.INT64)
    if isinstance(value, float):
        return int(DType.DOUBLE)
    if isinstance(value, complex):
        return int(DType.COMPLEX128)
    raise TypeError(f"an aclScalar takes a Python or NumPy number, got {type(value).__name__}")


def make(runtime: Runtime, made: tuple[tuple[int, str], ...], args: tuple, c_args: list[Any],
         owned: list[tuple[str, Any]], op: str, names: tuple[str, ...], device: Device | None = None,
         uploads: list[Tensor] | None = None, lists: dict[int, list[Tensor]] | None = None) -> None:
    """The aclnn meta object (aclCreateScalar, aclCreateIntArray, ...) that the argument of each
    (slot, kind) of ``made`` becomes, in ``c_args`` and owned (None stays the nullptr). A tensor
    list's Tensors go to ``lists[slot]``, its ndarrays uploaded on ``device`` into ``uploads``:
    Executor._make passes those three for an op with a tensor list. One call for all of them, in
    slot order (each value's error in turn): phase 1 of Sub or Amax makes one, per call."""
    for i, kind in made:
        value = args[i]
        if value is None:
            continue
        try:
            if kind == "scalar":
                if type(value) is float:  # (c_scalar gives it back, scalar_dtype says ACL_DOUBLE)
                    handle = runtime.create_scalar(value, _DOUBLE)
                else:
                    handle = runtime.create_scalar(c_scalar(value), scalar_dtype(value))
            else:
                if type(value) is not list and type(value) is not tuple:  # (those are sequences)
                    _check_sequence(kind, value)
                    value = list(value)  # (iterated once: int_array's check below reads it twice)
                if kind == "int_array":
                    elements = value  # ints in the int64_t range as they are (c_element gives each back;
                    for v in value:   # create_int_array copies them), else each converted or refused
                        if type(v) is not int or not _INT64[0] <= v <= _INT64[1]:
                            elements = [c_element(v, "int") for v in value]
                            break
                    handle = runtime.create_int_array(elements)
                elif kind == "bool_array":
                    handle = runtime.create_bool_array(tuple(c_element(v, "bool") for v in value))
                elif kind == "float_array":
                    handle = runtime.create_float_array([c_element(v, "float") for v in value])
                elif kind == "tensor_list":
                    assert device is not None and uploads is not None and lists is not None  # (Executor._make's)
                    handle, lists[i] = _tensor_list(runtime, value, device, uploads, op, names[i])
                else:  # scalar_list: the list owns its scalars
                    handle = _scalar_list(runtime, value)
        except (TypeError, ValueError) as exc:
            api = f"aclnn{op}GetWorkspaceSize"
            if api in str(exc) or isinstance(exc, AclError):
                raise
            raise type(exc)(f"{api}: {names[i]} takes {KINDS[kind]}: {exc}") from None
        owned.append((kind, handle))
        c_args[i] = handle


def _tensor_list(runtime: Runtime, value: Any, device: Device, uploads: list[Tensor], op: str,
                 name: str) -> tuple[Any, list[Tensor]]:
    """aclCreateTensorList of the Tensors (ndarrays uploaded) of ``value``, and those Tensors."""
    api = f"aclnn{op}GetWorkspaceSize"
    tensors: list[Tensor] = []
    for t in value:
        if isinstance(t, np.ndarray):
            try:
                t = Tensor.from_numpy(t, device)
            except NotSupportedError as exc:  # a dtype with no aclDataType: name the parameter
                raise NotSupportedError(f"{api}: {name}: {exc}") from None
            uploads.append(t)
        elif not isinstance(t, Tensor):
            raise TypeError(f"{api}: {name} takes a sequence of Tensors or ndarrays, got "
                            f"{type(t).__name__} in it")
        elif not t.is_open:
            raise ClosedError(f"aclnn{op}: a tensor of {name} is closed")
        elif t.device is not device and t.device.id != device.id:
            raise other_device(op, t, device)
        tensors.append(t)
    descriptors: list[Any] = []
    try:
        for t in tensors:
            descriptors.append(own_descriptor(runtime, t))  # the list owns (destroys) them
        return runtime.create_tensor_list(descriptors), tensors
    except BaseException:
        for d in descriptors:
            runtime.destroy_tensor(d)
        raise


def _scalar_list(runtime: Runtime, value: Any) -> Any:
    """aclCreateScalarList of an aclScalar per number of ``value`` (the list owns them)."""
    scalars: list[Any] = []
    try:
        for v in value:
            scalars.append(runtime.create_scalar(c_scalar(v), scalar_dtype(v)))
        return runtime.create_scalar_list(scalars)
    except BaseException:
        for sc in scalars:
            runtime.destroy_scalar(sc)
        raise


def _check_sequence(kind: str, value: Any) -> None:
    """Refuse, before iterating it, a value that is no sequence for a list/array parameter: a
    number is not iterable, and one Tensor or ndarray given for a tensor list would be split
    along its first dimension into a list of its rows."""
    if kind == "tensor_list" and isinstance(value, (Tensor, np.ndarray)):
        raise TypeError(f"got one {type(value).__name__}; pass a list of them, e.g. [x]")
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"got {type(value).__name__} {value!r}; pass a sequence, e.g. [{value!r}]")


def other_device(op: str, tensor: Tensor, device: Device) -> ValueError:
    """A tensor of another Device: its memory is no address a kernel on ``device`` can use."""
    return ValueError(f"aclnn{op}: a tensor is on device {tensor.device.id}, the operator's other "
                      f"tensors on device {device.id}: every tensor of one operator "
                      "must be on the same Device (copy it through the host: Tensor.from_numpy(t.numpy(), device))")


def upload_arrays(api: str, args: tuple, slots: Any, name: Any, device: Device, uploads: list[Tensor]) -> tuple:
    """``args`` with each NumPy array in a tensor slot uploaded as a new Tensor (kept in ``uploads``);
    a dtype with no aclDataType is a NotSupportedError naming the parameter (``name(i)``)."""
    out = list(args)
    for i in slots:
        if isinstance(args[i], np.ndarray):
            try:
                out[i] = Tensor.from_numpy(args[i], device)
            except NotSupportedError as exc:
                raise NotSupportedError(f"{api}: {name(i)}: {exc}") from None
            uploads.append(out[i])
    return tuple(out)
