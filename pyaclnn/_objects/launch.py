"""Phase 2 in one place, and the one lifetime model of what an executor uses.

Every layer launches an operator here: the objects (``Executor.run``, and each run of an
executor that re-plans), and ``pyaclnn.acl``'s ``aclnn<Op>(workspace, workspaceSize, executor,
stream)`` (with the extra launch parameters a header may declare before the stream). An
executor phase 1 made is described by a ``Planned``:

- the pyaclnn Tensors it reads and writes: kept alive, checked open at launch, and their
  memory stream-ordered after the launch (``pyaclnn._objects.lifetimes``: freed only once the stream
  passed it, host reads wait for it);
- the handles made for it (private aclTensor descriptors, arrays, scalars, lists), which CANN
  needs until phase 2 returned (abi.md §6.2) and which are destroyed then;
- the executor itself: a single-use one is consumed by phase 2 even when phase 2 fails
  (hicann/opbase CommonOpExecutorRun frees it on every path; abi.md §6.1), so it is marked
  consumed before the call; a repeatable one lives until aclDestroyAclOpExecutor (``destroy``).
  One exception: a generated operator's phase 2 that refuses its workspace (``not_run``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import lifetimes
from ..errors import ClosedError

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["Planned", "launch"]

# Parameter kinds made into an aclnn meta object, and the runtime call that destroys each.
DESTROY = {"tensor": "destroy_tensor", "scalar": "destroy_scalar", "int_array": "destroy_int_array",
           "float_array": "destroy_float_array", "bool_array": "destroy_bool_array",
           "tensor_list": "destroy_tensor_list", "scalar_list": "destroy_scalar_list"}


class Planned:
    """One aclOpExecutor of ``op`` made by phase 1, and what it uses (module docstring).

    ``handle`` is the executor (None once phase 2 consumed it), ``tensors`` the pyaclnn
    Tensors it uses (``uses``: their storages' stream-order records, in the same order),
    ``owned`` the (kind, handle) pairs made for it, ``descriptors`` the aclTensor made for
    each Tensor (by ``id``) where a Tensor is given to CANN through a descriptor of its own."""
    __slots__ = ("op", "handle", "repeatable", "tensors", "uses", "owned", "descriptors")

    def __init__(self, op: str, tensors: list[Any] | None = None, uses: list[dict] | None = None) -> None:
        self.op = op
        self.handle: Any = None
        self.repeatable = False
        self.tensors: list[Any] = tensors if tensors is not None else []
        # (phase 1 passes the uses it collected while checking the tensors)
        self.uses: list[dict] = uses if uses is not None else lifetimes.uses_of(self.tensors)
        self.owned: list[tuple[str, Any]] = []
        self.descriptors: dict[int, Any] = {}

    def use(self, tensor: Any) -> None:
        """``tensor`` is read or written by the executor (kept until phase 2 returned)."""
        self.tensors.append(tensor)
        self.uses.append(tensor.storage.uses)

    def add(self, tensors: list[Any]) -> None:
        """``use`` for each of ``tensors`` (in one step: phase 1 adds all of its own at once)."""
        self.tensors += tensors
        self.uses += [t.storage.uses for t in tensors]

    def replace(self, k: int, tensor: Any) -> None:
        """The executor's ``k``-th Tensor is now ``tensor`` (set_input / set_output)."""
        self.tensors[k], self.uses[k] = tensor, tensor.storage.uses

    def descriptor(self, runtime: Runtime, tensor: Any) -> Any:
        """The aclTensor given to CANN for ``tensor``: one of the executor's own per Tensor (a
        Tensor in two slots is one aclTensor there, as in C), so CANN's aclSet*TensorAddr,
        which moves the aclTensor it is given, never moves the Tensor's own."""
        desc = self.descriptors.get(id(tensor))
        if desc is None:
            from .tensor import own_descriptor  # the object layer, imported when first needed
            desc = self.descriptors[id(tensor)] = own_descriptor(runtime, tensor)
            self.owned.append(("tensor", desc))
            self.use(tensor)
        return desc

    def check_open(self) -> None:
        for t in self.tensors:
            if not t.is_open:
                raise ClosedError(f"aclnn{self.op}: a pyaclnn.Tensor this executor was planned with is closed "
                                  "(keep its tensors open until it has run)")

    def release(self, runtime: Runtime, quiet: bool = False) -> None:
        """Destroy the handles made for the executor (phase 2 returned, or the executor is gone)
        and let go of its Tensors. A refused destroy does not stop the others; the first error
        is raised unless ``quiet`` (an operator's own error is being raised)."""
        owned = self.owned
        self.owned, self.tensors, self.uses = [], [], []
        if self.descriptors:  # (usually none: a repeatable executor's, or a re-planning one's)
            self.descriptors = {}
        error: Exception | None = None
        while owned:
            kind, handle = owned.pop()
            try:
                getattr(runtime, DESTROY[kind])(handle)
            except Exception as exc:  # noqa: BLE001 - re-raised below
                error = error or exc
        if error is not None and not quiet:
            raise error

    def destroy(self, runtime: Runtime) -> None:
        """aclDestroyAclOpExecutor on an executor not consumed yet (it frees one that never ran,
        whatever its repeatable flag: nnopbase source; abi.md §6.1), then ``release``."""
        handle, self.handle = self.handle, None
        try:
            if handle is not None:
                runtime.destroy_executor(handle)
        finally:
            if self.owned or self.tensors:  # phase 2 released them already (the usual case)
                self.release(runtime)


def not_run(runtime: Runtime, op: str, exc: BaseException) -> bool:
    """A generated operator's phase 2 refused its workspace (161001: NULL with a size; 161002: a
    size below the operator's) before running the executor: NnopbaseRunWithWorkspace (hicann/opbase
    src/nnopbase/individual_op/api/individual_op_api.cpp) returns before
    NnopbaseExecutorRunWithWorkspace, so the executor is not consumed. So does a launch that takes
    its parameters again and refuses them (ops-cv aclnn_gaussian_blur.cpp aclnnGaussianBlur:
    CheckParams returns before CommonOpExecutorRun)."""
    if getattr(exc, "status", None) not in (161001, 161002):
        return False
    try:
        info = runtime.op_info(op)
        return bool(info.index_rule == "position" or info.signature.launch)
    except Exception:  # noqa: BLE001 - an operator the runtime cannot describe: taken as consumed
        return False


def launch(runtime: Runtime, op: str, planned: Planned | None, workspace: Any, size: int, executor: Any, stream: Any,
           order: lifetimes.Order | None, extra: tuple = ()) -> None:
    """aclnn<op>(workspace, size, executor, <extra>, stream): phase 2, for every layer.

    ``planned`` describes ``executor`` (None: an executor pyaclnn did not plan, launched as
    given); ``order`` is the stream's bookkeeping when the stream is a pyaclnn Stream; ``extra``
    the launch arguments the operator's header declares beyond the four (``Signature.launch``:
    aclnnGaussianBlur's src ... dst), as the runtime takes them. (The usual four are passed
    without unpacking ``extra``: that costs 0.1-0.2 us a call.)"""
    call = runtime.launch
    workspace = workspace or 0
    if planned is None:
        call(op, workspace, size, executor, stream, *extra) if extra else call(op, workspace, size, executor, stream)
        return
    for t in planned.tensors:
        if not t.is_open:
            planned.check_open()  # raises, naming the operator
    if planned.repeatable:
        call(op, workspace, size, executor, stream, *extra) if extra else call(op, workspace, size, executor, stream)
    else:
        planned.handle = None  # consumed by phase 2, even if it fails
        try:
            if extra:
                call(op, workspace, size, executor, stream, *extra)
            else:
                call(op, workspace, size, executor, stream)
        except BaseException as exc:
            if not_run(runtime, op, exc):
                planned.handle = executor  # still live: its Tensors and handles stay with it
            else:
                planned.release(runtime, quiet=True)
            raise
    if order is not None:  # what the launch uses outlives it
        lifetimes.launched(order, planned.uses)
        if order.graph is not None:  # captured: a Graph keeps it until it is closed
            order.graph.keep(planned)
    if not planned.repeatable:
        if planned.owned:
            planned.release(runtime)
        else:  # nothing made for it (so no descriptors either): release only lets go of its Tensors
            planned.tensors, planned.uses = [], []
