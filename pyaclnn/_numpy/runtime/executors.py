"""The reference runtime's operators: phase 1 (the op spec's checks, an executor; the op cache
first: opcache), phase 2 (the launch queued on its stream, with its reads and writes for the
hazard checks: a launch template's repeat here, the full path in launching.py), executor
addresses and repeatability."""
from __future__ import annotations

from typing import Any, Callable

from ... import errors
from ..._core.constants import (ACLNN_ERR_RUNTIME_ERROR, ACLNN_ERR_PARAM_NULLPTR,
                                ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_INNER_NULLPTR)
from ..._core.sites import user_site as _user_site
from ..._registry.operators import OpInfo
from .. import ops
from ..footprint import split_io, written_counts
from ..records import ExecutorRecord, TensorDesc, from_values, values
from ..stale import made_over
from . import opcache
from .launching import NumpyLaunching


# What the NumPy backend looks for besides headers/, for an unknown operator's message.
_SEARCHED = (("custom", "custom operator package (ASCEND_CUSTOM_OPP_PATH, $ASCEND_OPP_PATH/vendors/config.ini)"),
             ("builtin", "CANN aclnnop headers (ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, /usr/local/Ascend)"))



_UNSET = object()  # an OpInfo.cache entry not worked out yet


class NumpyExecutors(NumpyLaunching):
    """aclnn<Op>GetWorkspaceSize / aclnn<Op>, aclSet*TensorAddr, aclDestroyAclOpExecutor."""

    _op_cache: dict[Any, opcache.Entry] | None = None  # phase 1's answers (opcache), made on first use
    _op_infos: dict[str, OpInfo] | None = None  # op_info's answers that found a reference
    # op -> (opcache.values_at of its parameters, its phase 1's answers by C arguments: opcache.Call)
    _calls: dict[str, tuple[tuple, dict[Any, opcache.Call]]] | None = None
    _noted = 0  # the Calls kept in _calls (at most opcache.MAX_CALLS)

    def set_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        self._need_tensor_arg(tensor, "aclSetTensorAddr")
        ex = self._executors.get(executor)
        if ex is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclSetTensorAddr", f"{executor!r} is not a live executor")
        n = len(ex.inputs)  # inputs first, then the outputs continue the numbering
        self._set_addr(executor, index if index < n else index - n, tensor, addr, output=index >= n)

    def set_dynamic_tensor_addr(self, which: str, executor: Any, ir_index: int, relative_index: int,
                                tensors: Any, addr: int) -> None:
        api = f"aclSetDynamic{which}TensorAddr"
        self._need_tensor_arg(tensors, api, "tensors")
        if executor not in self._executors:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"{executor!r} is not a live executor")
        raise self._fail(ACLNN_ERR_PARAM_INVALID, api, ("the NumPy reference does not model aclSetDynamic*TensorAddr (moving one "
                                                        "member of an executor's aclTensorList): make a new executor"))

    # -- operators -------------------------------------------------------------------------------
    def op_info(self, op: str) -> OpInfo:
        """The registry entry of ``op``; NotSupportedError unless it has a NumPy reference
        (UnknownOperatorError if no header declares it)."""
        infos = self._op_infos
        if infos is None:
            infos = self._op_infos = {}
        info = infos.get(op)  # (an operator found once is the registry's same OpInfo every time)
        if info is not None:
            return info
        info = self.registry.get(op) if ops.runs(op) else None
        if info is not None and info.has_reference:
            infos[op] = info
        if info is None or not info.has_reference:
            exc = self._cannot_run(op)
            self._thread.error = str(exc)
            raise exc
        return info

    def known(self, op: str) -> None:
        """UnknownOperatorError unless a header declares ``op`` (index only: nothing parsed)."""
        if not self.registry.declares(op):
            raise self._unknown(op)

    def _unknown(self, op: str) -> errors.UnknownOperatorError:
        kinds = {s.kind for s in self.registry.sources}
        missing = [what for kind, what in _SEARCHED if kind not in kinds]
        return self.registry.unknown(op, (f"; found no {' and no '.join(missing)}" if missing else "")
                                     + f". Operators with a NumPy reference: {', '.join(ops.references())}")

    def _cannot_run(self, op: str) -> errors.NotSupportedError:
        """Why this backend cannot run ``op``: not declared anywhere, or no NumPy reference."""
        return ops.no_reference(op) if self.registry.declares(op) else self._unknown(op)

    def _resolve(self, info: OpInfo, args: tuple, api: str) -> tuple:
        """Replace handles by what they hold, checking they are live (CANN: 161002 otherwise)."""
        kinds = self._kinds
        at = info.cache.get("numpy:tensors", _UNSET)  # the handles' positions when all are tensors (once per op)
        if at is _UNSET:
            at = info.cache["numpy:tensors"] = (tuple(i for i, k in enumerate(info.kinds) if k == "tensor")
                                                if all(k == "tensor" for k in info.kinds if k in kinds) else None)
        if at is not None:  # the usual case: tensors only, one table
            tensors = self._tensors
            out = list(args)
            for i in at:
                value = args[i]
                if value is None:
                    continue
                if type(value) is not int:
                    raise TypeError(f"{api}: {type(value).__name__} {value!r} is no aclTensor handle")
                desc = tensors.get(value)
                if desc is None:
                    raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"{value!r} is not a live aclTensor")
                out[i] = desc
            return tuple(out)
        out = []
        for kind, value in zip(info.kinds, args):
            if value is None or kind not in kinds:
                out.append(value)
                continue
            table, what = kinds[kind]
            if type(value) is not int:  # handles are ints here (cdata on acl): cffi's TypeError there
                raise TypeError(f"{api}: {type(value).__name__} {value!r} is no {what} handle")
            held = table.get(value)
            if held is None:
                raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"{value!r} is not a live {what}")
            if kind == "tensor_list":
                held = tuple(self._tensors[h] for h in held)
            elif kind == "scalar_list":
                held = tuple(self._scalars[h] for h in held)
            out.append(held)
        return tuple(out)

    def workspace_size(self, op: str, args: tuple) -> tuple[int, int]:
        by_op = self._calls
        if by_op is None:
            by_op = self._calls = {}
        found = by_op.get(op)
        if found is None:  # (op_info raises here what the full phase 1 raises first)
            found = by_op[op] = (opcache.values_at(self.op_info(op).kinds, self._kinds), {})
        layout, calls = found
        ckey = args if layout is opcache.NO_VALUES else opcache.call_key(args, layout)
        try:
            call = calls.get(ckey) if ckey is not None else None
        except TypeError:  # an unhashable value among the arguments: the full phase 1
            call = None
        # The same C arguments as a phase 1 before (opcache.Call): the same entry, made from
        # the same resolved arguments, while every handle holds what it held then
        if call is not None and call.soc == self.soc and call.rules == (ops.RULES.get(op) or ops.rules(op)):
            for i, kind, table, held in call.checks:
                value = args[i]
                if type(value) is not kind or (table is not None and table.get(value) is not held):
                    break
            else:
                if not call.members or opcache.members_hold(call.members):
                    return call.entry.workspace_size, self._register(self._executors, from_values(call.record))
        api = f"aclnn{op}GetWorkspaceSize"
        info = self.op_info(op)
        if len(args) != len(info.kinds):
            raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"expected {len(info.kinds)} arguments, got {len(args)}")
        resolved = self._resolve(info, args, api)
        metas = [a.meta() if type(a) is TensorDesc else ops.meta_of(a) for a in resolved]
        cache = self._op_cache
        if cache is None:
            cache = self._op_cache = {}
        key = opcache.key_of(op, self.soc, metas)
        try:
            plan = cache.get(key) if key is not None else None
        except TypeError:  # an aclScalar (a dataclass) or a list of them among the metas
            key = opcache.plain_key(op, self.soc, metas)
            plan = cache.get(key) if key is not None else None
        if plan is None:  # the spec's checks (on a hit skipped, as CANN's L2_DFX_PHASE_1: opcache), its other rules
            try:
                empty = ops.check(op, self.soc, metas)
            except errors.AclError as exc:
                self._thread.error = str(exc)
                raise
            by_name = ops.written(op, self.soc, metas)
            ws = ops.workspace_size(op, self.soc, metas)  # what the real operator asks for
            plan = opcache.Entry(empty, written_counts(info, resolved, by_name) if by_name else None, ws.size,
                                 ws.used, empty and ops.fills_when_empty(op, self.soc, metas))
            if key is not None:
                opcache.store(cache, key, plan)
        at = info.cache.get("numpy:io")  # the positions of tensors and tensor lists (once per op)
        if at is None:
            at = info.cache["numpy:io"] = tuple(i for i, k in enumerate(info.kinds) if k in ("tensor", "tensor_list"))
        slots = tuple([args[i] for i in at])  # the same handles (never reused) hold the same descriptors
        io = plan.io
        if io is not None and io[0] == slots:
            inputs, outputs, handles = io[1], io[2], io[3]
        else:
            inputs, outputs = split_io(info, resolved)
            handles = tuple([h for i, a in zip(at, slots) if a is not None
                             for h in ((a,) if info.kinds[i] == "tensor" else self._tensor_lists[a])])
            plan.io = (slots, inputs, outputs, handles)  # (read only: no record changes its lists)
        record = ExecutorRecord(op, resolved, plan.empty, inputs, outputs, workspace_size=plan.workspace_size,
                                workspace_used=plan.workspace_used, handles=handles, names=info.names,
                                generated=info.index_rule == "position", written=plan.written,
                                fills_empty=plan.fills, plan=plan)
        if key is not None and ckey is not None:
            self._note_call(calls, ckey, op, args, info, plan, values(record))
        return plan.workspace_size, self._register(self._executors, record)

    def _note_call(self, calls: dict, ckey: tuple, op: str, args: tuple, info: OpInfo, plan: opcache.Entry,
                   record: tuple) -> None:
        """Keep the call's key (opcache.call_key) as an opcache.Call for ``plan`` when its plain
        values allow (opcache.PLAIN; a float of a float parameter: by its bits in the key), with
        each argument's type and what each tensor's or list's handle holds now (a list's element
        handles and theirs too); a scalar's or an array's handle is in the key by what it holds
        (call_key: only an int handle is, so its type is known)."""
        kinds = self._kinds
        checks: list[tuple[int, type, dict | None, Any]] = []
        members: list = []
        for i, (kind, value) in enumerate(zip(info.kinds, args)):
            if kind in opcache.VALUE_KINDS:  # (in the key: None, or an int handle by what it holds)
                continue
            if kind not in kinds or value is None:
                if type(value) not in opcache.PLAIN and not (kind == "float" and type(value) is float):
                    return
                checks.append((i, type(value), None, None))
                continue
            table = kinds[kind][0]
            checks.append((i, type(value), table, table[value]))  # (an int: the full phase 1 resolved it)
            if kind in ("tensor_list", "scalar_list"):
                held = self._tensors if kind == "tensor_list" else self._scalars
                members += [(held, h, held[h]) for h in table[value]]
        try:
            hash(ckey)
        except TypeError:
            return
        self._noted += 1
        if self._noted > opcache.MAX_CALLS:  # (bounded as one table: every operator's Calls dropped)
            for _, noted in (self._calls or {}).values():
                noted.clear()
            self._noted = 1
        calls[ckey] = opcache.Call(self.soc, ops.rules(op), tuple(checks), tuple(members), plan, record)

    def launch(self, op: str, workspace: int, workspace_size: int, executor: Any, stream: Any,
               *extra: Any) -> None:
        # ``extra``: the launch arguments a header declares beyond the four; no operator with a
        # reference has any (an operator without one never gets an executor here)
        api = f"aclnn{op}"
        if executor is None:  # opbase CommonOpExecutorRun: checked first, ACLNN_ERR_PARAM_NULLPTR
            if not ops.runs(op):  # ... of an operator this backend can run at all
                raise self._cannot_run(op)
            raise self._fail(ACLNN_ERR_PARAM_NULLPTR, api, "executor is nullptr")
        # No lock: the record is read once and consumed by one pop, each a single dict operation
        # (atomic), so two threads launching one executor serialise at the pop: the one that finds
        # it gone sees a consumed executor, as if the other had launched first.
        executors = self._executors
        ex = executors.get(executor)
        if ex is not None:
            if ex.generated and ex.op == op:
                # NnopbaseRunWithWorkspace (opbase individual_op_api.cpp) checks the workspace
                # before it runs the executor: refused there, the executor stays live
                if workspace_size > 0 and not workspace:
                    raise self._fail(ACLNN_ERR_PARAM_NULLPTR, api, "workspace is nullptr but workspaceSize > 0 "
                                                                   "(the executor was not run: it is still live)")
                if workspace_size < ex.workspace_size:
                    raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"The passed workspace size {workspace_size} "
                                                                   f"does not meet the minimum workspace size "
                                                                   f"{ex.workspace_size} actually required by the "
                                                                   "operator (the executor was not run: it is "
                                                                   "still live)")
            if not ex.repeatable and executors.pop(executor, None) is None:
                ex = None  # phase 2 consumes it, whatever the result (another thread did, since the get)
        if ex is None:
            if not ops.runs(op):
                raise self._cannot_run(op)
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api,
                             f"executor {executor!r} is not live (already launched or destroyed?)")
        made_by = ""
        if ex.op != op:
            self._other_op(api, op, ex.op)
            made_by = f" (an executor of aclnn{ex.op}, which it runs)"
            op = ex.op  # it runs as the operator that made it
        need = ex.workspace_size
        if need or workspace_size:  # (with neither, _launch_workspace has nothing to refuse)
            self._launch_workspace(api, made_by, op, need, workspace, workspace_size,
                                   ex.generated if not made_by else None)
        device = self._thread.device
        if not self._initialized or device is None:  # (what _need_context refuses)
            self._need_context(api)
        if self._streams.get(stream) != device:  # (a live stream of this device: _need_stream passes)
            self._need_stream(stream, api, launch=True)
        if ex.empty and not ex.fills_empty:
            return
        dead = None
        live = self._tensors
        for h in ex.handles:
            if h not in live:
                dead = h
                break
        if dead is not None:  # phase 2 would read a freed aclTensor: refused, as the emulator does
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"tensor {dead!r} was destroyed before phase 2 "
                                                           f"(keep the tensors alive until phase 2 has returned){made_by}")
        if self._poisoned:  # (_launch_fault refuses only on a device in failure mode)
            self._launch_fault(stream, api)
        if ex.workspace_used and not workspace:  # a composite op's kernels fault on it
            self._add_fault(stream, f"{api}{made_by} queued on stream {stream!r}: the kernels' workspace "
                                    f"({ex.workspace_size} bytes, as phase 1 reported) is at NULL: the kernel's "
                                    f"AI Core exception (allocate workspaceSize bytes and pass them)")
            return
        plan = ex.plan
        memory = self.memory
        t = plan.launch if plan is not None else None
        if (t is not None and t.args is ex.args and t.moved == self._moved and t.frees == memory.frees
                and t.unwrites == memory.unwrites and t.workspace == (workspace, workspace_size)):
            # The template of the latest clean launch over the same resolved arguments
            # (opcache.Launch): with no aclTensor moved and no known-written mark dropped since
            # (``_moved``: aclSet*TensorAddr and the hazards that drop marks set a new token, from
            # one atomic counter, so a thread racing another never stores an old one back; so
            # every tensor is at the address the template was made at, and still known written
            # under its (frees, unwrites), as every tensor of a clean launch is when it is made), and
            # no free since (the views, bounds, bases and no stale tensor are as they were: an
            # allocation ends only by a free, which moves ``frees``), the full path below
            # computes exactly its spans, exact bytes and kernel; the dynamic checks (races
            # with queued work, Queues.put) run as always.
            queues = self.queues
            q = queues.queues.get(stream) if stream and not self._captures else None  # (_queue's first answer)
            if q is None:
                q = self._queue(stream)
            try:
                queues.queue(q, api, _user_site(2), t.reads, t.writes, t.kernel, (), None, t.mark, t.exact, (),
                             t.bases if t.allocations == memory.allocations else None)
            except BaseException:  # a hazard: nothing was queued, so nothing is known written
                for d in t.known:
                    d.known_written = None
                self._moved = next(self._moves)
                raise
            return
        self._launch_spans(api, made_by, ex, plan, workspace, workspace_size, stream)

    def _launch_workspace(self, api: str, made_by: str, op: str, need: int, workspace: Any,
                          workspace_size: int, generated: bool | None = None) -> None:
        """Phase 2's workspace checks. Both runners look at the workspaceSize argument, not at
        what phase 1 reported (hicann/opbase op_executor.cpp CommonOpExecutorRun,
        individual_op_api.cpp NnopbaseRunWithWorkspace): NULL with a size > 0 is 161001. Only a
        generated op compares the size with its executor's (161002); a composite op's kernels use
        the address they get (a NULL one faults, ``launch``). A workspace that is not ``need``
        bytes of device memory is refused as the emulator does (emu_nnopbase.c, 361001)."""
        if workspace_size > 0 and not workspace:
            raise self._fail(ACLNN_ERR_PARAM_NULLPTR, api, f"workspace is nullptr but workspaceSize is "
                                                           f"{workspace_size} (phase 1 asked for {need}){made_by}")
        if generated is None:  # (the executor's own operator: the record knows its kind)
            generated = self._generated(op)
        if generated and workspace_size < need:  # (of another generated op: the same check)
            raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"The passed workspace size {workspace_size} does not "
                                                           f"meet the minimum workspace size {need} actually "
                                                           f"required by the operator{made_by}")
        if need > 0 and workspace and not self._in_device_allocation(int(workspace), need):
            raise self._fail(ACLNN_ERR_RUNTIME_ERROR, api, f"workspace {int(workspace):#x} (+{need} bytes) is not "
                                                           f"inside a live aclrtMalloc allocation{made_by}")

    def _generated(self, op: str) -> bool:
        """A generated op (nnopbase executor): its header is generated (the registry's "position" rule)."""
        info = self.registry.get(op)
        return info is not None and info.index_rule == "position"

    def _other_op(self, api: str, op: str, made_by: str) -> None:
        """Phase 2 of ``op`` given an executor of ``made_by``. Phase 2 does not know which operator
        made an executor: a composite op's (hicann/opbase op_executor.cpp CommonOpExecutorRun)
        runs the kernels the aclOpExecutor holds, a generated op's (individual_op_api.cpp
        NnopbaseRunWithWorkspace) the NnopbaseExecutor's own opType; so an executor of the same kind
        runs as the operator that made it. Across the kinds each would read the other's object as
        its own (PtrCastTo), undefined behaviour on a device: refused, 561103, as the emulator does
        (emu_nnopbase.c launch). The executor is consumed either way (the caller took it)."""
        generated = self._generated(op)
        if generated != self._generated(made_by):
            kind = "composite (aclOpExecutor)" if generated else "generated (nnopbase)"
            runner = "NnopbaseRunWithWorkspace" if generated else "CommonOpExecutorRun"
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api,
                             f"{api} was given an executor made by aclnn{made_by}GetWorkspaceSize: a {kind} executor, "
                             f"which {runner} would read as its own kind (undefined behaviour on a device); "
                             f"launch it with aclnn{made_by}")

    def executor_kernel(self, executor: Any) -> Callable[[tuple], None]:
        """The phase-2 kernel a live executor's launch runs: a function of the C arguments with
        ndarray views in the tensor slots (outputs written in place), valid for any arguments of
        the same metadata and plain values, which are all phase 1 looked at. Not a CANN call:
        the NumPy-in/out functions keep it for a repeated call (pyaclnn._functions.hostcall)."""
        ex = self._executors.get(executor)
        if ex is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "executor_kernel", f"{executor!r} is not a live executor")
        return self._kernel(ex)

    def set_executor_repeatable(self, executor: Any) -> None:
        ex = self._executors.get(executor)
        if ex is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclSetAclOpExecutorRepeatable", f"{executor!r} is not a live executor")
        ex.repeatable = True

    def destroy_executor(self, executor: Any) -> None:
        with self._lock:
            if self._executors.pop(executor, None) is None:
                raise self._fail(ACLNN_ERR_INNER_NULLPTR, "aclDestroyAclOpExecutor", f"{executor!r} is not a live executor")

    def _set_addr(self, executor: Any, index: int, tensor: Any, addr: int, output: bool) -> None:
        api = "aclSetOutputTensorAddr" if output else "aclSetInputTensorAddr"
        self._need_tensor_arg(tensor, api)
        ex = self._executors.get(executor)
        if ex is None:
            raise self._fail(ACLNN_ERR_INNER_NULLPTR, api, f"{executor!r} is not a live executor")
        group = ex.outputs if output else ex.inputs
        if not 0 <= index < len(group):
            raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"index {index} out of range [0, {len(group)})")
        slot = group[index]
        if slot is None:  # a generated op's NULL optional slot (NnopbaseSetInputTensorAddr)
            raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"The {index}th {'output' if output else 'input'} in "
                             f"operator {ex.op} is a null pointer. The address cannot be updated")
        if self._tensors.get(tensor) is not slot:
            raise self._fail(ACLNN_ERR_PARAM_INVALID, api, f"tensor is not {'output' if output else 'input'} {index} of this executor")
        slot.addr = int(addr)
        slot.made = made_over(self.memory, slot.addr, api)  # re-pointed: fresh (stale.py)
        slot.known_written = None
        ex.spans = None
        self._moved = next(self._moves)  # (the launch templates over it: NumpyExecutors.launch)

    def set_input_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        self._set_addr(executor, index, tensor, addr, output=False)

    def set_output_tensor_addr(self, executor: Any, index: int, tensor: Any, addr: int) -> None:
        self._set_addr(executor, index, tensor, addr, output=True)
