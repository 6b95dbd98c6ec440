"""pyaclnn.acl's argument conversion: what a ``pyaclnn.acl`` function takes where a C handle goes.

Wherever the C function takes a handle (``aclTensor *``, ``aclrtStream``, ``aclrtEvent``...),
the Python one takes, on both backends:

- a handle a ``pyaclnn.acl`` function returned (a cffi pointer on acl, an int on NumPy);
- ``None`` or ``0``: nullptr (as the backend passes it: cffi's NULL on acl);
- an int: the handle's address (``Tensor.handle``, ``Stream.handle``, torch_npu's
  ``npu_stream``), taken as C would take it: unchecked;
- the pyaclnn object of that C type: ``Tensor`` (aclTensor *), ``Stream`` (aclrtStream),
  ``Event`` (aclrtEvent). A closed one is a ClosedError naming it.

The object stays the owner, and keeps describing what its attributes say:

- a call that would free its handle, hand it to another owner or re-describe it refuses it with
  a TypeError naming the object's own way (``_OWNER_ONLY``);
- phase 1 (``aclnn<Op>GetWorkspaceSize``) gives CANN a descriptor of its own for each Tensor
  (kept by the executor's ``pyaclnn._objects.launch.Planned``, the objects' own lifetime model), so ``aclSetInputTensorAddr`` & co., which move the aclTensor they are given
  (hicann/opbase acl_op_api.cpp: ``tensor->SetStorageAddr(addr)``), move that descriptor, never
  the Tensor. The Planned keeps the Tensors alive (and checks them open) until phase 2 consumed
  the executor, or until aclDestroyAclOpExecutor for a repeatable one; phase 2 is the objects'
  own launch routine (``pyaclnn._objects.launch.launch``): on a pyaclnn Stream their memory outlives
  the launch and host reads wait for it (``pyaclnn._objects.lifetimes``);
- aclCreateTensorList gives a Tensor element a descriptor of its own, for the same reason: the
  list owns (and aclDestroyTensorList destroys) its elements (``create_tensor_list``).

Anything else where a handle goes is a TypeError naming the C parameter, and so is a handle of
another of acl_meta.h's types (an aclScalar where an aclTensor goes): on acl cffi refuses it, on
NumPy the runtime does with a status; either way ``refused`` then names the parameter, the same
on both. It runs only once the call failed, so a valid call pays nothing for it. Streams, events
and contexts are all ``void *`` to C: one given for another is the runtime's own 107000, as CANN's
handle check answers. The fixed functions of
``pyaclnn.acl`` declare their handle parameters by annotation (``AclTensor``, ``AclrtStream``...)
and ``accepting_objects`` wraps them; the operators' phase 1 reads its parameters' kinds from the
signature (``HandleSlots``).
"""
from __future__ import annotations

import functools
import inspect
import typing
from typing import TYPE_CHECKING, Annotated, Any, Callable, Sequence

from . import backend as _backend
from .stream import Stream
from .launch import Planned, launch as _launch
from .resource import Resource
from .tensor import Tensor, own_descriptor
from ..errors import ClosedError

if TYPE_CHECKING:
    from .._runtime import Runtime

# Handle parameters, as annotations of pyaclnn.acl's functions: the metadata is the C type.
AclTensor = Annotated[Any, "aclTensor *"]
AclScalar = Annotated[Any, "aclScalar *"]
AclIntArray = Annotated[Any, "aclIntArray *"]
AclFloatArray = Annotated[Any, "aclFloatArray *"]
AclBoolArray = Annotated[Any, "aclBoolArray *"]
AclTensorList = Annotated[Any, "aclTensorList *"]
AclScalarList = Annotated[Any, "aclScalarList *"]
AclOpExecutor = Annotated[Any, "aclOpExecutor *"]
AclrtStream = Annotated[Any, "aclrtStream"]
AclrtEvent = Annotated[Any, "aclrtEvent"]
AclrtContext = Annotated[Any, "aclrtContext"]
AclTensorArray = Annotated[Sequence[Any], "aclTensor *[]"]   # aclCreateTensorList's value
AclScalarArray = Annotated[Sequence[Any], "aclScalar *[]"]   # aclCreateScalarList's value

# C type -> what makes such a handle (for the TypeError) and the pyaclnn class standing for it.
_MADE_BY = {
    "aclTensor *": ("acl.aclCreateTensor", "pyaclnn.Tensor"), "aclScalar *": ("acl.aclCreateScalar", None),
    "aclIntArray *": ("acl.aclCreateIntArray", None), "aclFloatArray *": ("acl.aclCreateFloatArray", None),
    "aclBoolArray *": ("acl.aclCreateBoolArray", None), "aclTensorList *": ("acl.aclCreateTensorList", None),
    "aclScalarList *": ("acl.aclCreateScalarList", None),
    "aclOpExecutor *": ("acl.aclnn<Op>GetWorkspaceSize", None),
    "aclrtStream": ("acl.aclrtCreateStream", "pyaclnn.Stream"), "aclrtEvent": ("acl.aclrtCreateEvent", "pyaclnn.Event"),
    "aclrtContext": ("acl.aclrtCreateContext", None),
}
# An operator parameter's kind (pyaclnn._registry.signature) -> its handle's C type.
KIND_CTYPES = {"tensor": "aclTensor *", "scalar": "aclScalar *", "int_array": "aclIntArray *",
               "float_array": "aclFloatArray *", "bool_array": "aclBoolArray *",
               "tensor_list": "aclTensorList *", "scalar_list": "aclScalarList *", "stream": "aclrtStream"}

_VIEW = "make a view instead (t[...], t.transpose()), or a descriptor of your own: acl.aclCreateTensor(..., t.data_ptr)"
# Calls that free a handle, give it to another owner or re-describe it: an object there is
# refused (it stays the owner), with the object's own way of doing it.
_OWNER_ONLY = {
    "aclDestroyTensor": "close() it",
    "aclrtDestroyStream": "close() it",
    "aclrtDestroyEvent": "close() it",
    "aclInitTensor": _VIEW,
    "aclSetRawTensorAddr": _VIEW,
}


def _runtime() -> Runtime:
    return (_backend.active or _backend.current()).runtime


def _expected(ctype: str) -> str:
    made, cls = _MADE_BY[ctype]
    return f"an {_word(ctype)} handle ({made}){f', a {cls}' if cls else ''}, its int address or None"


def _word(ctype: str) -> str:
    return ctype.rstrip(" *")  # "aclTensor *" -> "aclTensor"


def to_handle(value: Any, ctype: str, api: str, name: str, shown: str | None = None) -> Any:
    """``value`` given for the ``ctype`` parameter ``name`` of ``api``, as the runtime's handle
    (module docstring); ``shown`` is the C type the message writes (e.g. "const aclTensor *")."""
    rt = _runtime()
    if value is None:
        return rt.null
    if isinstance(value, Resource):
        return _object_handle(value, ctype, api, name, shown or ctype)
    if type(value) is int:  # an address, unchecked as in C; bool is no handle (the TypeError below)
        if not 0 <= value < 1 << 64:  # no pointer: cffi would wrap it (2**64 is nullptr) or overflow
            raise ValueError(f"{api}: {name} ({shown or ctype}) = {value} is no address: out of the pointer "
                             f"range [0, 2**64)")
        return rt.handle_from_int(value) if value else rt.null
    if isinstance(value, rt.handle_class) and not isinstance(value, bool):
        return value
    hint = " (upload it with pyaclnn.Tensor.from_numpy)" if hasattr(value, "__array__") else ""
    raise TypeError(f"{api}: {name} ({shown or ctype}) takes {_expected(ctype)}; got {type(value).__name__}{hint}")


def _object_handle(obj: Resource, ctype: str, api: str, name: str, shown: str) -> Any:
    cls = type(obj).__name__
    if obj.ctype != ctype:
        raise TypeError(f"{api}: {name} ({shown}) takes {_expected(ctype)}; got pyaclnn.{cls}{obj.acl_hint}")
    if obj.closed:
        raise ClosedError(f"{api}: {name} ({shown}) is a closed pyaclnn.{cls}")
    why = _OWNER_ONLY.get(api)
    if why:
        raise TypeError(f"{api}: {name} ({shown}) is a pyaclnn.{cls}, which owns its {_word(ctype)} (pyaclnn.acl never "
                        f"frees, hands over or re-describes it): {why}")
    return obj.raw


def refused(api: str, given: Sequence[tuple[str, str, str, Any]]) -> None:
    """The runtime refused a call of ``api``: the TypeError naming the first (name, C type, C type
    as declared, value) of ``given`` whose value is a handle of another acl_meta.h type (a list of
    handles for ``T *[]``); nothing if none is, and the caller re-raises the runtime's error."""
    rt = _runtime()
    for name, ctype, shown, value in given:
        many = ctype.endswith("[]")
        values = (value if isinstance(value, (list, tuple)) else ()) if many else (value,)
        for k, v in enumerate(values):
            got = rt.handle_ctype(v)
            if got is not None and got != ctype.removesuffix("[]"):
                slot = f"{name}[{k}]" if many else name
                raise TypeError(f"{api}: {slot} ({shown.removesuffix('[]')}) takes "
                                f"{_expected(ctype.removesuffix('[]'))}; got an {_word(got)} handle") from None


class ListElements(list):
    """aclCreateTensorList's elements as handles, with ``made``: (index, descriptor, Tensor) of
    each descriptor made for a pyaclnn Tensor."""
    made: list[tuple[int, Any, Tensor]]


def to_handles(values: Sequence[Any], ctype: str, api: str, name: str) -> list[Any]:
    """Each element of an array of handles (aclCreateTensorList's ``value``), as ``to_handle``.

    A pyaclnn Tensor in a tensor list gets a descriptor of its own, as phase 1 does: the list
    owns its elements, aclDestroyTensorList destroys each (hicann/opbase acl_op_api.cpp:
    aclDestroyTensor((*array)[i])), and must never destroy the Tensor's (``create_tensor_list``)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{api}: {name} ({ctype}[]) takes a sequence of handles, got {type(values).__name__}")
    if api != "aclCreateTensorList":
        return [to_handle(v, ctype, api, f"{name}[{k}]") for k, v in enumerate(values)]
    rt = _runtime()
    out = ListElements()
    out.made = []
    try:
        for k, v in enumerate(values):
            if isinstance(v, Tensor):
                _object_handle(v, ctype, api, f"{name}[{k}]", ctype)  # open, and an aclTensor
                out.made.append((k, own_descriptor(rt, v), v))
                out.append(out.made[-1][1])
            else:
                out.append(to_handle(v, ctype, api, f"{name}[{k}]"))
    except BaseException:
        _destroy_all(rt, [d for _, d, _ in out.made])
        raise
    return out


def _destroy_all(rt: Runtime, descriptors: Sequence[Any]) -> None:
    for d in descriptors:
        rt.destroy_tensor(d)


_list_tensors: dict[int, list[Tensor]] = {}  # tensor list address -> the Tensors its descriptors view


def create_tensor_list(rt: Runtime, value: Sequence[Any], size: int) -> Any:
    """aclCreateTensorList(value, size) on ``to_handles``' elements: the descriptors made for
    Tensors are the list's (destroyed with it, or here if it is not made); the Tensors are kept
    alive until aclDestroyTensorList (``list_destroyed``), so their memory outlives the list."""
    elements = list(value)[:size]
    made = value.made if isinstance(value, ListElements) else []
    _destroy_all(rt, [d for k, d, _ in made if k >= size])  # beyond size: not in the list, nobody's
    made = [m for m in made if m[0] < size]
    try:
        handle = rt.create_tensor_list(elements)
    except BaseException:  # no list: the descriptors are nobody's
        _destroy_all(rt, [d for _, d, _ in made])
        raise
    if made:
        _list_tensors[rt.as_int(handle)] = [t for _, _, t in made]
    return handle


def list_destroyed(rt: Runtime, array: Any) -> None:
    """aclDestroyTensorList returned: the Tensors its descriptors viewed are no longer kept."""
    if _list_tensors and array is not None:
        _list_tensors.pop(rt.as_int(array), None)


# -- the fixed functions: handle parameters found by annotation ---------------------------------
def handle_params(fn: Callable[..., Any]) -> tuple[tuple[int, str, str], ...]:
    """(position, name, C type) of each parameter of ``fn`` annotated with a handle type."""
    code = fn.__code__
    hints = typing.get_type_hints(fn, include_extras=True)
    out = []
    for i, name in enumerate(code.co_varnames[:code.co_argcount]):
        ctype = getattr(hints.get(name), "__metadata__", ("",))[0]  # Annotated[Any, "<C type>"]
        if ctype in _HANDLE_TYPES:
            out.append((i, name, ctype))
    return tuple(out)


_HANDLE_TYPES = frozenset(_MADE_BY) | {"aclTensor *[]", "aclScalar *[]"}


def accepting_objects(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, taking what ``to_handle`` takes in each handle parameter (``handle_params``).

    The wrapper is generated with ``fn``'s own parameters, so a call costs one check per handle
    (a live handle of the backend passes as it is) and no argument packing: a ``*args, **kwargs``
    wrapper measured 0.2 us more a call, on functions whose whole pyaclnn cost is ~0.3 us."""
    slots = handle_params(fn)
    if not slots:
        return fn
    api = fn.__name__
    params = inspect.signature(fn).parameters
    if any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in params.values()):
        raise TypeError(f"{api}: only plain parameters can be converted")
    namespace: dict[str, Any] = {"_backend": _backend, "to_handle": to_handle, "to_handles": to_handles, "_fn": fn,
                                 "_refused": refused}
    head = []
    for name, p in params.items():
        if p.default is p.empty:
            head.append(name)
        else:
            namespace[f"_default_{name}"] = p.default
            head.append(f"{name}=_default_{name}")
    lines = [f"def {api}({', '.join(head)}):",
             "    native = (_backend.active or _backend.current()).runtime.handle_class"]
    for _, name, ctype in slots:
        many = ctype.endswith("[]")
        convert = (f"        {name} = {'to_handles' if many else 'to_handle'}({name}, "
                   f"{(ctype[:-2] if many else ctype)!r}, {api!r}, {name!r})")
        lines += [f"    if type({name}) is not native or not {name}:", convert,
                  # a backend whose handles are ints: one outside the pointer range is refused as on acl
                  f"    elif native is int and not 0 < {name} < 18446744073709551616:", convert]
    # a refused call: a handle of another acl_meta.h type is named (``refused``), then re-raised
    typed = [f"({name!r}, {ctype!r}, {ctype!r}, {name})" for _, name, ctype in slots if "*" in ctype]
    if typed:
        lines += ["    try:", f"        return _fn({', '.join(params)})", "    except Exception:",
                  f"        _refused({api!r}, ({', '.join(typed)},))", "        raise"]
    else:
        lines.append(f"    return _fn({', '.join(params)})")
    # compiled under this file's name, so pyaclnn._core.sites counts the wrapper as pyaclnn's own frame
    exec(compile("\n".join(lines), f"{__file__}<{api}>", "exec"), namespace)  # noqa: S102 - fn's own signature only
    call = functools.update_wrapper(namespace[api], fn)
    call.handle_params = tuple((i, name, ctype.removesuffix("[]"), ctype.endswith("[]"))  # type: ignore[attr-defined]
                               for i, name, ctype in slots)  # read by the tests
    return call


# -- the operators: executors planned on pyaclnn Tensors -------------------------------------------
plans: dict[int, Planned] = {}  # executor address -> its Planned (only executors planned on Tensors)


class HandleSlots:
    """The handle parameters of an operator's phase 1: ``positions``, and (position, name, C type,
    C type as declared) of each in ``slots``; none for an operator pyaclnn cannot call (the
    runtime refuses it, naming the parameter)."""
    __slots__ = ("api", "positions", "slots")

    def __init__(self, sig: Any) -> None:
        self.api = sig.api
        self.slots = () if sig.problem else tuple(
            (i, p.name, KIND_CTYPES[p.kind], p.ctype) for i, p in enumerate(sig.params) if p.kind in KIND_CTYPES)
        self.positions = tuple(s[0] for s in self.slots)

    def refused(self, args: Sequence[Any]) -> None:
        """Phase 1 was refused: ``refused`` on these slots of ``args``."""
        refused(self.api, [(name, ctype, shown, args[i]) for i, name, ctype, shown in self.slots if "*" in ctype])


def phase1(rt: Runtime, op: str, handles: HandleSlots, args: tuple) -> tuple[int, Any]:
    """aclnn<op>GetWorkspaceSize(*args) with each handle argument converted (module docstring)."""
    native = rt.handle_class
    api = handles.api
    c_args = list(args)
    plan: Planned | None = None
    try:
        for i, name, ctype, shown in handles.slots:
            a = args[i]
            if type(a) is native and a:
                continue
            if isinstance(a, Tensor) and ctype == "aclTensor *":
                _object_handle(a, ctype, api, name, shown)  # the same checks as everywhere
                plan = plan or Planned(op)
                c_args[i] = plan.descriptor(rt, a)
            else:
                c_args[i] = to_handle(a, ctype, api, name, shown)
        try:
            size, executor = rt.workspace_size(op, tuple(c_args))
        except Exception:
            handles.refused(c_args)
            raise
    except BaseException:
        if plan is not None:
            plan.release(rt, quiet=True)
        raise
    if plan is not None:
        plan.handle = executor
        stale = plans.pop(key := rt.as_int(executor), None)  # an executor freed where pyaclnn did not see it
        plans[key] = plan
        if stale is not None:
            stale.release(rt)
    return size, executor


def phase2(rt: Runtime, op: str, workspace: Any, workspace_size: int, executor: Any, stream: Any,
           extra: tuple = ()) -> None:
    """aclnn<op>(workspace, workspaceSize, executor, <extra>, stream) with its handles converted,
    through the objects' own launch routine: an executor planned on Tensors (its Planned) keeps
    them until phase 2 consumed it, and on a pyaclnn Stream their memory outlives the launch.
    ``extra``: the launch parameters a header declares beyond the four, plain values already
    checked; a pyaclnn Tensor there stands for the descriptor its phase 1 got (as for
    aclSetInputTensorAddr), else for its own aclTensor."""
    native = rt.handle_class
    if type(executor) is not native or not executor:
        executor = to_handle(executor, "aclOpExecutor *", f"aclnn{op}", "executor")
    order = None
    if type(stream) is not native or not stream:
        if type(stream) is Stream:
            order = stream.order
        stream = to_handle(stream, "aclrtStream", f"aclnn{op}", "stream")
    plan = plans.get(rt.as_int(executor)) if plans and executor is not None else None
    if extra:
        extra = _launch_handles(rt, op, plan, extra)
    if plan is not None:
        plan.check_open()
        if not plan.repeatable:  # phase 2 consumes a single-use executor, even when it fails
            plans.pop(rt.as_int(executor), None)
    try:
        launch_refusing(rt, op, plan, workspace, workspace_size, executor, stream, order, extra)
    except BaseException:
        if plan is not None and not plan.repeatable and plan.handle is not None:
            plans[rt.as_int(executor)] = plan  # refused before it ran: still live (_launch.not_run)
        raise


def _launch_handles(rt: Runtime, op: str, plan: Planned | None, extra: tuple) -> tuple:
    """The handle arguments among a launch's extra ones, converted (``phase2``)."""
    api = f"aclnn{op}"
    out = list(extra)
    native = rt.handle_class
    for k, p in enumerate(rt.op_info(op).signature.launch):
        a = extra[k]
        ctype = KIND_CTYPES.get(p.kind)
        if ctype is None or (type(a) is native and a):
            continue
        desc = plan.descriptors.get(id(a)) if plan is not None and isinstance(a, Tensor) else None
        out[k] = desc if desc is not None else to_handle(a, ctype, api, p.name, p.ctype)
    return tuple(out)


def launch_refusing(rt: Runtime, op: str, plan: Planned | None, workspace: Any, workspace_size: int, executor: Any,
                    stream: Any, order: Any = None, extra: tuple = ()) -> None:
    """The one launch (``pyaclnn._objects.launch.launch``); refused, an executor of another type is named."""
    try:
        _launch(rt, op, plan, workspace, workspace_size, executor, stream, order, extra)
    except Exception:
        refused(f"aclnn{op}", (("executor", "aclOpExecutor *", "aclOpExecutor *", executor),))
        raise


def made_repeatable(rt: Runtime, executor: Any) -> None:
    """aclSetAclOpExecutorRepeatable succeeded: the executor's Planned lives until it is destroyed."""
    plan = plans.get(rt.as_int(executor)) if plans and executor is not None else None
    if plan is not None:
        plan.repeatable = True


def destroyed(rt: Runtime, executor: Any) -> None:
    """aclDestroyAclOpExecutor returned: its Planned, if any, goes (the executor is gone already)."""
    plan = plans.pop(rt.as_int(executor), None) if executor is not None else None
    if plan is not None:
        plan.release(rt)


def executor_tensor(rt: Runtime, executor: Any, tensor: Any, api: str) -> Any:
    """The ``tensor`` of aclSet{Input,Output,}TensorAddr: a pyaclnn Tensor stands for the
    descriptor its executor's phase 1 got (CANN moves that one to ``addr``, never the Tensor)."""
    if not isinstance(tensor, Tensor):
        return to_handle(tensor, "aclTensor *", api, "tensor")
    _object_handle(tensor, "aclTensor *", api, "tensor", "aclTensor *")
    plan = plans.get(rt.as_int(executor)) if executor is not None else None
    desc = plan.descriptors.get(id(tensor)) if plan is not None else None
    if desc is None:
        raise TypeError(f"{api}: tensor (aclTensor *) is a pyaclnn.Tensor this executor was not planned with: pass "
                        "the Tensor (or handle) its aclnn<Op>GetWorkspaceSize got, and the new memory as addr")
    return desc
