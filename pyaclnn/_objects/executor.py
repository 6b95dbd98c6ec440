"""Two-phase operator calls as objects (docs/api/executors.md says the same to users).

Constructing an operator's object (``Op(name, ...)``, or the class of an operator pyaclnn
ships, ``pyaclnn/ops/<op>/api.py``) is phase 1, ``aclnn<Op>GetWorkspaceSize``: the library checks
the arguments and returns an executor and its ``workspace_size``. ``run(stream)`` is phase 2,
``aclnn<Op>(workspace, size, executor, stream)``, with the workspace taken from the stream's pool. Phase 2 only queues the kernel:
what it uses stays allocated until the stream has passed it (``pyaclnn._objects.lifetimes``).

An executor is single-use: phase 2 frees it inside CANN even when it fails, so pyaclnn marks
it consumed *before* the call, and a second ``run`` raises ExecutorConsumedError. With
``repeatable=True`` (aclSetAclOpExecutorRepeatable, right after phase 1) it can run many
times, ``set_input``/``set_output`` point it at new tensors of the same layout
(aclSetInputTensorAddr / aclSetOutputTensorAddr), and ``close()`` calls
aclDestroyAclOpExecutor.

CANN may refuse repeatable with 561000: when the same op and layout ran before, phase 1 returns
its op-cache entry (on by default), which cannot be made repeatable; some ops refuse too. Then
the executor re-plans instead (``replans`` is True): every ``run`` is phase 1 (a cache hit) plus
phase 2 on the current tensors, with the same results and the same set_input/set_output.
"""
from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING, Any, Sequence, cast

import numpy as np

from . import backend as _backend
from .device import Device, default_device
from .stream import Stream, default_stream, open_stream
from .launch import Planned, launch
from .resource import Resource
from .._registry.signature import KINDS, c_element, c_scalar, c_values
from .tensor import Tensor, own_descriptor
from ..dtypes import DType, from_numpy
from ..errors import AclError, AclnnInnerError, AclnnParamInvalidError, ClosedError, ExecutorConsumedError, NotSupportedError
from .arguments import Slots, bind, make, other_device, present_at, scalar_dtype, slots_of, type_name, upload_arrays, upload_hint

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["Executor", "Op", "bind", "scalar_dtype", "default_stream"]

# The one-operator classes (pyaclnn/ops/<op>/api.py), by operator name: each
# registers itself when it is defined (Executor.__init_subclass__).
_BY_OP: dict[str, type["Executor"]] = {}

class Executor(Resource):
    """An aclOpExecutor planned by phase 1. See the module docstring for its life cycle.

    Made by an operator class (``MseLossBackward(...)``, ``Op(...)``); never constructed
    directly. ``close()`` (or ``with``) frees a repeatable executor (aclDestroyAclOpExecutor)
    and the arguments it owns.

    Attributes:
        op: the operator's name without ``aclnn`` (e.g. ``MseLossBackward``).
        workspace_size: the bytes phase 2 needs (the ``*workspaceSize`` of ``aclnn<Op>GetWorkspaceSize``).
        repeatable: whether the executor runs many times.
        device: the Device of its tensors.
        inputs: the non-None input Tensors, in parameter order (``set_input``'s indices).
        outputs: the non-None output Tensors, in parameter order (``set_output``'s indices).
    """
    _what = "Executor"
    acl_hint = (" (a pyaclnn executor runs, re-points and frees its aclOpExecutor itself: run(stream), "
                 "set_input/set_output, close())")
    op = ""
    _replan = False
    workspace_size: int  # bytes phase 2 needs (aclnn<Op>GetWorkspaceSize's *workspaceSize)
    # what only the generic object uploads and makes: its own where it has any (_plan)
    uploads: Sequence[Tensor] = ()  # the Tensors it uploaded from ndarrays
    _lists: dict[int, list[Tensor]] | None = None  # argument slot -> the Tensors of its list

    def __init__(self) -> None:
        # the operator classes and Op plan in their own __init__; a bare Executor() was an empty
        # object whose repr raised AttributeError
        raise TypeError("pyaclnn.Executor is made by phase 1 of an operator: pyaclnn.Op(name, ...) or an "
                        "operator class of pyaclnn (pyaclnn.<Name>(...))")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("op"):  # a one-operator class: from_args plans its operator with it
            _BY_OP[cls.op] = cls

    def _plan(self, args: tuple, repeatable: bool, slots: Slots | None = None) -> None:
        if repeatable is not False:
            if not isinstance(repeatable, (bool, np.bool_)):  # "no" would read as True
                raise TypeError(f"aclnn{self.op}: repeatable must be True or False, got "
                                f"{type(repeatable).__name__} {repeatable!r}")
            repeatable = bool(repeatable)
        if slots is None:  # (Op passes the slots of the OpInfo it bound the arguments with)
            slots = slots_of((_backend.active or _backend.current()).runtime, self.op)
        self._slots = slots
        if slots.launch is None:
            sig = slots.info.signature
            missing = [p.name for p in sig.launch if p.name not in slots.names]
            raise NotSupportedError(
                f"aclnn{self.op}'s launch function takes {', '.join(missing)}, which its phase 1 does not: the "
                f"object passes phase 1's values by name; call pyaclnn.acl.aclnn{self.op}GetWorkspaceSize and "
                f"pyaclnn.acl.aclnn{self.op} with every argument instead")
        if slots.values:
            args = c_values(slots.info.signature, args)  # plain values: TypeError before any allocation
        # one pass over the tensor arguments: each open, all on one device (Op uploads ndarrays below)
        tensors: list[Tensor] = []
        uses: list[dict] = []  # their storages' stream-order records (Planned.uses)
        c_args = list(args)
        device: Device | None = None
        arrays = False
        for i in slots.tensors:
            t = args[i]
            if t is None:
                continue
            if not isinstance(t, Tensor):
                generic = isinstance(self, Op)
                if isinstance(t, np.ndarray) and generic:
                    arrays = True  # the generic object uploads arrays (below)
                    continue
                if generic:  # name the C parameter, as for every other kind
                    raise TypeError(f"aclnn{self.op}GetWorkspaceSize: {slots.names[i]} takes "
                                    f"{KINDS['tensor']}, got {type_name(t)}{upload_hint(t)}")
                raise TypeError(f"aclnn{self.op}: tensor arguments must be pyaclnn.Tensor or None, got "
                                f"{type_name(t)} (Tensor.from_numpy uploads an array or a DLPack tensor; "
                                "the pyaclnn.<op>() functions take NumPy arrays)")
            if not t.is_open:
                raise ClosedError(f"aclnn{self.op}: a tensor argument is closed")
            if device is None:
                device = t.device
            elif t.device is not device and t.device.id != device.id:
                raise other_device(self.op, t, device)
            tensors.append(t)
            uses.append(t.storage.uses)
            c_args[i] = t.raw
        device = device or default_device()
        device.use()
        self.device, self.repeatable = device, repeatable
        runtime = self.runtime = device.runtime
        # the executor and what it uses (pyaclnn._objects.launch), shared with the release function
        # (its Tensors keep them alive until phase 2: tensor-list members and uploads added by _make)
        planned = self.planned = Planned(self.op, tensors, uses)
        try:
            if arrays or slots.lists or repeatable:  # Tensors of its own (else the class's empty defaults)
                args = self._make(args, c_args, arrays)
            elif slots.made:  # scalars and arrays only (Sub's alpha, Amax's dims): no Tensor of its own
                make(runtime, slots.made, args, c_args, planned.owned, self.op, slots.names)
            if slots.streams:  # (an aclrtStream parameter: ops-cv's; most ops have none)
                for i in slots.streams:
                    if isinstance(args[i], Stream):
                        c_args[i] = args[i].raw
            self._c_args = c_args
            self.workspace_size, planned.handle = runtime.workspace_size(self.op, tuple(c_args))
            if repeatable:
                try:
                    runtime.set_executor_repeatable(planned.handle)
                    planned.repeatable = True
                except AclnnInnerError:
                    self._fall_back_to_replanning(args, c_args)
                # (argument slot, C index) of each non-NULL input and output, for set_input/set_output;
                # the groups they index (a single-use executor's: worked out when first read)
                self._in_at, self._out_at = present_at(slots, args, slots.inputs), present_at(slots, args, slots.outputs)
                self.inputs, self.outputs = self._group(slots.inputs, args), self._group(slots.outputs, args)
            self._args = list(args) if repeatable else args  # for Op[name]; set_input/set_output replace theirs
            self._own(device.backend, device, "executor", _destroy_executor, device, planned, self.uploads)
        except BaseException:
            if not self._registered():  # (registered: close() or GC frees it)
                try:
                    _destroy_executor(device, planned, self.uploads)
                except Exception:  # noqa: BLE001 - the phase-1 error is the one to report
                    pass
            raise

    def _make(self, args: tuple, c_args: list[Any], arrays: bool) -> tuple:
        """The Tensors of its own, in ``c_args``: each ndarray of a tensor slot uploaded, a repeatable
        executor's private aclTensor per tensor slot (aclCreateTensor: set_input/set_output move it,
        never the user's Tensor's own), then each scalar, array and list made (``make``). Returns
        ``args`` with the uploaded Tensors; the planned Tensors are then the tensor arguments'
        (uploads included) and the lists' members."""
        device, runtime, planned, slots = self.device, self.runtime, self.planned, self._slots
        present = [i for i in slots.tensors if args[i] is not None]  # the non-None tensor slots
        uploads: list[Tensor] = []  # the Tensors it uploads from ndarrays (closed with the executor)
        lists: dict[int, list[Tensor]] = {}  # argument slot -> the Tensors of its list
        if arrays or slots.lists:  # (else the class's empty defaults: a repeatable executor's descriptors only)
            self.uploads, self._lists = uploads, lists
        if arrays:
            args = self._upload(args, device, uploads)
            for i in present:
                c_args[i] = args[i].raw
        if self.repeatable:
            for i in present:
                c_args[i] = own_descriptor(runtime, args[i])
                planned.owned.append(("tensor", c_args[i]))
            self._arg_at = {slot: k for k, slot in enumerate(present)}  # where _set updates planned.tensors
        make(runtime, slots.made, args, c_args, planned.owned, self.op, slots.names, device, uploads, lists)
        if arrays or lists:  # (else planned's are _plan's: the tensor arguments', in this order)
            tensors = [args[i] for i in present] + [t for members in lists.values() for t in members]
            planned.tensors, planned.uses = tensors, [t.storage.uses for t in tensors]
        return args

    @functools.cached_property
    def inputs(self) -> list[Tensor]:
        """The non-None input Tensors, in parameter order (``set_input``'s indices). A repeatable
        executor's are set by phase 1 (set_input updates them); a single-use one's arguments never
        change, so they are the same whenever first read."""
        return self._group(self._slots.inputs, self._args)

    @functools.cached_property
    def outputs(self) -> list[Tensor]:
        """The non-None output Tensors, in parameter order (``set_output``'s indices)."""
        return self._group(self._slots.outputs, self._args)

    @staticmethod
    def _group(slots: tuple[int, ...], args: Sequence[Any]) -> list[Tensor]:
        return [args[i] for i in slots if args[i] is not None]

    def _upload(self, args: tuple, device: Device, uploads: list[Tensor]) -> tuple:
        def name(i: int) -> str:  # asked only for an error
            return str(self.runtime.op_info(self.op).signature.params[i].name)
        return upload_arrays(f"aclnn{self.op}GetWorkspaceSize", args, self._slots.tensors, name, device, uploads)

    def _fall_back_to_replanning(self, args: tuple, c_args: list[Any]) -> None:
        """aclSetAclOpExecutorRepeatable said 561000: phase 1 gave the op cache's entry for this op
        and layout (hicann/opbase acl_op_api.cpp: a cache wrapper is no executor that can repeat),
        or the op cannot repeat. Free it and plan anew on every run (phase 1 is then a cache hit)."""
        runtime, planned = self.runtime, self.planned
        executor, planned.handle = planned.handle, None
        runtime.destroy_executor(executor)
        descriptors = Planned(self.op)  # the private descriptors go: the plans use the tensors' own
        descriptors.owned = [entry for entry in planned.owned if entry[0] == "tensor"]
        planned.owned[:] = [entry for entry in planned.owned if entry[0] != "tensor"]  # arrays, scalars, lists stay
        descriptors.release(runtime)
        for i in self._slots.tensors:
            if args[i] is not None:
                c_args[i] = args[i].raw
        self._c_args, self._replan = c_args, True

    @property
    def replans(self) -> bool:
        """True when CANN refused repeatable (561000) and every run plans anew (module docstring).

        Results, ``set_input`` and ``set_output`` are the same either way.
        """
        return self._replan

    def _run_replanned(self, stream: Stream | None) -> None:
        """Phase 1 on the current tensors, then phase 2, which consumes that executor: a
        single-use Planned of its own, using this executor's Tensors (its arrays, scalars and
        lists stay this executor's, for the next run)."""
        self.planned.check_open()
        device, runtime = self.device, self.runtime
        stream = open_stream(default_stream(device) if stream is None else stream, self.op)
        device.use()
        once = Planned(self.op, list(self.planned.tensors))
        size, once.handle = runtime.workspace_size(self.op, tuple(self._c_args))
        try:
            workspace = stream.workspace(size) if size > 0 else 0
        except BaseException:
            once.destroy(runtime)
            raise
        at = self._slots.launch  # the extra launch parameters: phase 1's values, by name
        launch(runtime, self.op, once, workspace, size, once.handle, stream.raw, stream.order,
               tuple([self._c_args[i] for i in at]) if at else ())

    @classmethod
    def from_args(cls, op: str, args: Sequence[Any], repeatable: bool = False) -> "Executor":
        """Phase 1 from the C-shaped argument tuple of ``op`` (its header's parameter order)."""
        executor = object.__new__(_BY_OP.get(op, Op))
        executor.op = op
        executor._plan(tuple(args), repeatable)  # private: its own class's phase 1, on the instance it just made
        return executor

    @property
    def launched(self) -> bool:
        """True once phase 2 consumed this single-use executor."""
        return self.planned.handle is None and not self.closed and not self._replan

    def run(self, stream: Stream | None = None) -> None:
        """Phase 2: ``aclnn<Op>(workspace, workspace_size, executor, stream)``, through the one
        launch routine that ``pyaclnn.acl`` uses too.

        Queues the operator; the workspace comes from the stream's own buffer. What the launch
        uses stays allocated until the stream has passed it. A launch function declared with
        more parameters (ops-cv's aclnnGaussianBlur(workspace, workspaceSize, executor, src,
        ksize, sigmaX, sigmaY, borderType, dst, stream)) gets phase 1's values for them, by name.

        Args:
            stream: the Stream to queue on; None for this thread's stream on the executor's
                device.

        Raises:
            ExecutorConsumedError: a single-use executor that already ran (CANN freed it).
            ClosedError: the executor, or one of its tensors, is closed.
            AclError: the status phase 2 returned.
        """
        if not self.is_open:  # self.closed, without the property call (hot path)
            raise ClosedError(f"{self.op} executor is closed")
        planned = self.planned
        executor = planned.handle
        if executor is None:
            if self._replan:
                return self._run_replanned(stream)
            raise ExecutorConsumedError(
                f"aclnn{self.op}: this executor was already launched; CANN freed it. "
                "Plan a new one, or pass repeatable=True to run it many times")
        device = self.device
        if stream is None:
            stream = default_stream(device)  # (open: it makes a new one for a closed one)
        elif not isinstance(stream, Stream) or not stream.is_open:
            open_stream(stream, self.op)  # raises
        device.use()
        size = self.workspace_size
        workspace = stream.workspace(size) if size > 0 else 0
        at = self._slots.launch  # the extra launch parameters: phase 1's values, by name
        if at:
            launch(self.runtime, self.op, planned, workspace, size, executor, stream.raw, stream.order,
                   tuple([self._c_args[i] for i in at]))
        else:
            launch(self.runtime, self.op, planned, workspace, size, executor, stream.raw, stream.order)

    def set_input(self, index: int | str, tensor: Tensor) -> None:
        """Point input ``index`` (non-null input tensors, in parameter order; or the C parameter
        name) at ``tensor``: aclSetInputTensorAddr, with the C index of the op's rule
        (``OpInfo.index_rule``: generated operators count NULL optional inputs).

        Args:
            index: the position among the non-None input tensors, or the C parameter name.
            tensor: a Tensor of the same shape, dtype, strides and offset as the one it replaces.

        Raises:
            ExecutorConsumedError: the executor is not repeatable.
            ValueError: a tensor of another layout, or on another device.
            KeyError: no input tensor of that name.
            IndexError: no input at that position.
            TypeError: an index that is neither an int nor a str, or no Tensor.
        """
        self._set(index, tensor, output=False)

    def set_output(self, index: int | str, tensor: Tensor) -> None:
        """Point output ``index`` (as for set_input) at ``tensor`` (aclSetOutputTensorAddr).

        Args:
            index: the position among the non-None output tensors, or the C parameter name.
            tensor: a Tensor of the same layout as the one it replaces.
        """
        self._set(index, tensor, output=True)

    def _set(self, index: int | str, tensor: Tensor, output: bool) -> None:
        if not self.is_open:  # self.check_open(), without the call (hot path)
            raise ClosedError(f"{self._what} is closed")
        if not isinstance(tensor, Tensor):
            raise TypeError(f"aclnn{self.op}: set_input/set_output take a pyaclnn.Tensor, got "
                            f"{type(tensor).__name__} (Tensor.from_numpy uploads an array)")
        if not tensor.is_open:
            raise ClosedError(f"aclnn{self.op}: set_input/set_output got a closed Tensor")
        if tensor.device is not self.device and tensor.device.id != self.device.id:
            raise other_device(self.op, tensor, self.device)
        self.device.use()
        if not self.repeatable:
            raise ExecutorConsumedError(f"aclnn{self.op}: set_input/set_output need repeatable=True")
        if not self._slots.roles_known:
            raise NotSupportedError(f"aclnn{self.op}: set_input/set_output cannot be used: "
                                    f"{self._slots.info.roles_problem}")
        group = self.outputs if output else self.inputs
        at = self._out_at if output else self._in_at
        which = "output" if output else "input"
        if isinstance(index, bool) or not isinstance(index, (int, str, np.integer)):
            raise TypeError(f"aclnn{self.op}: set_input/set_output take an int position or a C parameter "
                            f"name, got {type(index).__name__} {index!r}")
        if isinstance(index, str):
            names = self._slots.names
            found = [k for k, (slot, _) in enumerate(at) if names[slot] == index]
            if not found:
                raise KeyError(f"aclnn{self.op}: {index!r} is not a non-null {which} tensor of this executor "
                               f"({which}s: {', '.join(names[slot] for slot, _ in at)})")
            index = found[0]
        if not 0 <= index < len(group):
            raise IndexError(f"{which} index {index} out of range [0, {len(group)})")
        old = group[index]
        if (tensor.shape, tensor.dtype, tensor.strides, tensor.offset) != (old.shape, old.dtype, old.strides, old.offset):
            raise ValueError(f"aclnn{self.op}: a repeatable executor keeps its tensors' layout; "
                             f"got shape {tensor.shape} {tensor.dtype} strides {tensor.strides} offset "
                             f"{tensor.offset}, expected {old.shape} {old.dtype} strides {old.strides} "
                             f"offset {old.offset}")
        slot, c_index = at[index]
        if self._replan:  # the next run plans with this tensor
            self._c_args[slot] = tensor.raw
        elif output:
            self.runtime.set_output_tensor_addr(self.planned.handle, c_index, self._c_args[slot], tensor.storage.addr)
        else:
            self.runtime.set_input_tensor_addr(self.planned.handle, c_index, self._c_args[slot], tensor.storage.addr)
        group[index] = tensor
        cast("list[Any]", self._args)[slot] = tensor  # (a repeatable executor's: a list)
        self.planned.replace(self._arg_at[slot], tensor)

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("launched" if self.launched else
                                              ("repeatable" if self.repeatable else "planned"))
        return f"<pyaclnn.{type(self).__name__} {state} workspace_size={self.workspace_size}>"


class Op(Executor):
    """Any aclnn operator as a two-phase object, built from its header's signature.

    ``Op("Add", x, y, 1.0, out)`` or ``Op("Add", self=x, other=y, alpha=1.0, out=out)`` is
    phase 1, ``aclnnAddGetWorkspaceSize`` (arguments by position or by their C parameter
    names); ``run(stream)`` is phase 2. Each Python value becomes what its C parameter takes:

    - ``aclTensor*``: a Tensor, or an ndarray (copied to a new device tensor this object owns:
      read results with ``op["out"].numpy()``); None is nullptr;
    - ``aclScalar*``: a Python number (bool -> ACL_BOOL, int -> ACL_INT64, float -> ACL_DOUBLE,
      complex -> ACL_COMPLEX128: the rule of torch_npu's op-plugin, whose at::Scalar of a Python
      number is a Double, Long, Bool or ComplexDouble) or a NumPy scalar (its own dtype);
    - ``aclIntArray*`` / ``aclFloatArray*`` / ``aclBoolArray*``: a sequence of ints / floats / bools;
    - ``aclTensorList*``: a sequence of Tensors or ndarrays (``op[name]`` is then the list of its
      Tensors); ``aclScalarList*``: of numbers;
    - integers, floats, bools, ``char*`` (a str), ``aclDataType`` (an int or DType).

    ``repeatable=True``, ``set_input``/``set_output`` (by C index or parameter name) and
    ``close()`` are those of every executor. ``python -m pyaclnn ops`` lists the operators found.

    Args:
        op: the operator's name, with or without ``aclnn`` (``"Add"``).
        *args: the C parameters before ``workspaceSize``, in header order.
        repeatable: make the executor runnable many times.
        **kwargs: the same parameters by their C names.

    Raises:
        UnknownOperatorError: no header the backend searched declares the operator.
        NotSupportedError: the NumPy backend has no reference for it, or a parameter's C type
            cannot be passed.
        TypeError: a value its C parameter cannot take.
        AclError: the status phase 1 returned.

    Examples:
        >>> g = np.array([[0, 1], [2, 3]], np.float32)
        >>> op = pyaclnn.Op("MseLossBackward", gradOutput=g, self=g, target=np.ones((2, 2), np.float32),
        ...                 reduction=1, out=np.zeros((2, 2), np.float32))
        >>> op.run()
        >>> op["out"].numpy()
        array([[-0.,  0.],
               [ 1.,  3.]], dtype=float32)
        >>> op.close()
    """

    def __init__(self, op: str, /, *args: Any, repeatable: bool = False, **kwargs: Any) -> None:
        if not isinstance(op, str):
            raise TypeError(f"pyaclnn.Op takes the operator's name first, a str (the C name without its aclnn "
                            f"prefix), got {type(op).__name__} {op!r}")
        self.op = op
        slots = slots_of((_backend.active or _backend.current()).runtime, op)
        if kwargs or len(args) != slots.count or slots.problem:  # (else bind returns args as they are)
            args = bind(slots.info, args, kwargs)
        self._plan(args, repeatable, slots)

    def __getitem__(self, name: str) -> Any:
        """The argument of parameter ``name``: for a tensor, the Tensor passed (or uploaded from an
        ndarray); for a tensor list, the list of its Tensors; for any other parameter, the value
        passed (a float for an ``aclScalar *``, a tuple for an ``aclIntArray *``); None for a nullptr."""
        try:
            slot = self._slots.at.get(name)  # (None for a name that is no parameter's, or no str)
        except TypeError:  # unhashable
            slot = None
        if slot is None:
            names = self._slots.names
            raise KeyError(f"aclnn{self.op} has no parameter {name!r} (parameters: {', '.join(names)})")
        lists = self._lists
        if lists and slot in lists:
            return list(lists[slot])
        return self._args[slot]


def _destroy_executor(device: Device, planned: Planned, uploads: Sequence[Tensor]) -> None:
    """The executor's release: aclDestroyAclOpExecutor if phase 2 has not consumed it (an
    executor that never ran is freed whatever its repeatable flag: Planned.destroy), then the
    handles made for it, then the Tensors it uploaded."""
    try:
        if planned.handle is not None or planned.owned or planned.tensors:  # (launched: phase 2 released it)
            planned.destroy(device.runtime)
    finally:
        while uploads:  # (an executor that uploaded none has the empty tuple)
            cast("list[Tensor]", uploads).pop().close()
