"""The reference runtime's phase 2, its full path (NumpyExecutors.launch takes it when no launch
template of the executor's phase-1 entry applies: opcache.Launch): the tensors' views and the
bounds, tensors over freed memory (stale.py), an output partly overlapping an input, the spans
and what is known written, the kernel bound to the views, the queueing; a launch that reported
nothing leaves the template the next launch of the same arguments reuses."""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

import numpy as np

from ..._core.sites import user_site as _user_site
from ...dtypes import to_numpy
from .. import ops
from ..footprint import exacts, io_spans, known_spans, list_views, outside, span_of, written_bytes
from ..overlap import partial_overlap
from ..queues import hazard
from ..records import ExecutorRecord, TensorDesc
from ..stale import stale_tensor
from . import opcache
from .descriptors import NumpyDescriptors


def _nothing(args: tuple) -> None:
    """Phase 2 of a call on empty inputs: nothing to compute (outputs are left as they are)."""


class NumpyLaunching(NumpyDescriptors):
    """The full path of aclnn<Op> (phase 2): see the module docstring."""

    def _launch_spans(self, api: str, made_by: str, ex: ExecutorRecord, plan: Any,
                      workspace: Any, workspace_size: int, stream: Any) -> None:
        """The launch's full path (``plan``: ``ex``'s phase-1 entry, opcache.Entry, or None): the
        views and the bounds, stale tensors, the spans and the overlap of an output with an
        input, what is known written, the kernel, the queueing; a launch that reported nothing
        leaves its template (opcache.Launch)."""
        memory = self.memory
        moved = self._moved  # (read first: a tensor moved while this works would make the template stale)
        clean = ex.spans is None  # (its spans are worked out here: their overlap check runs)
        # What an executor of the same plan (phase-1 cache entry) worked out for the same tensors
        # at the same addresses (kept only when nothing was reported): its spans, and its views
        # while no memory was freed since (nothing then reaches outside its allocation)
        last = plan.spans if plan is not None and ex.spans is None else None
        if last is not None and (last[0] != ex.handles or [d.addr for d in last[1]] != last[2]):
            last = None
        if last is not None and last[4] == memory.frees:
            views = last[5]
            bad = None
        else:
            view = self._view
            views = tuple([view(a) if type(a) is TensorDesc else list_views(view, a) for a in ex.args])
            bad = outside(ex.args, views)
            if last is not None and bad is None:
                last = plan.spans = last[:4] + (memory.frees, views)
        if bad is not None:
            # Phase 2 does not look at tensor addresses (opbase CommonOpExecutorRun launches the
            # kernels; the launch is asynchronous): the kernel's out-of-bounds access is an AI
            # Core exception on the device, which the next synchronisation of the stream reports
            # (hicann/runtime errcode_manage.cc: RT_ERROR_TSFW_AICORE_EXCEPTION ->
            # ACL_ERROR_RT_AICORE_EXCEPTION; an AIV-only kernel reports 507035 instead). The
            # reference names it here first: a hazard, at the line that launched it.
            name = next((f"{n}[{a.index(bad)}]" if isinstance(a, tuple) else n) for n, a in zip(ex.names, ex.args)
                        if a is bad or isinstance(a, tuple) and any(t is bad for t in a)) if ex.names else "a tensor"
            site = _user_site()
            start, end = span_of(bad)
            freed = self.memory.freed_over(start, end)
            hazard(f"{api} at {site}: {name} at {bad.addr:#x} (offset {bad.offset}, shape {bad.shape}, strides "
                   f"{bad.strides}, {to_numpy(bad.dtype)}) reaches outside its device allocation{freed}: the kernel would "
                   "read or write out of bounds (an AI Core exception at the next synchronize on a device, or "
                   "garbage inside the allocator's padding)", site)
            self._add_fault(stream, f"{api}{made_by} queued on stream {stream!r}: tensor at {bad.addr:#x} (offset "
                                    f"{bad.offset}, shape {bad.shape}, strides {bad.strides}) reaches outside "
                                    f"its device allocation: the kernel's AI Core exception")
            return
        if ex.checked_frees != self.memory.frees and self._check_stale(api, made_by, ex):
            clean = False  # a free since: a tensor over reused memory (stale.py), reported
        spans = ex.spans
        if spans is None:  # until aclSet*TensorAddr moves one of its tensors
            if last is not None:
                spans = ex.spans = last[3]
            else:
                io = io_spans(ex)
                overlaps = self._check_io_overlap(api, ex, io)
                clean = clean and not overlaps
                spans = ex.spans = io + (exacts(*io),)
                if plan is not None and not overlaps:  # (a hazard reported is reported at every launch)
                    descs = [self._tensors[h] for h in ex.handles]
                    plan.spans = (ex.handles, descs, [d.addr for d in descs], spans, memory.frees, views)
        # A tensor whose bytes were found written (or marked, as a launch's output), with no free
        # or un-write of memory since, needs neither again: only the others are checked and marked.
        # The race checks take each tensor's span; the uninitialised-read check and the marking
        # its elements' bytes exactly (a strided tensor's gaps are neither read nor written).
        key = (memory.frees, memory.unwrites)
        reads, writes, check, mark = known_spans(spans, key, plan if last is not None else None)
        exact = spans[3]
        if workspace_size > 0 and workspace:
            writes += ((int(workspace), int(workspace) + workspace_size),)
            if exact is not None:
                exact = (exact[0], exact[1] + (None,))
        run = self._kernel(ex)
        kernel = plan.call if plan is not None else None
        if kernel is None or kernel.func is not run or kernel.args[0] is not views:
            kernel = partial(run, views)  # (a partial: no Python frame of its own when it runs)
            if plan is not None:
                plan.call = kernel
        stamp = (memory.frees, memory.unwrites, memory.allocations)
        try:
            self.queues.put(self._queue(stream), api, reads, writes, kernel, check_init=check, mark=mark, exact=exact)
        except BaseException:  # a hazard: nothing was queued, so nothing is known written
            for d in spans[0] + spans[1]:
                d.known_written = None
            self._moved = next(self._moves)  # (the launch templates over them: NumpyExecutors.launch)
            raise
        if clean and plan is not None and stamp == (memory.frees, memory.unwrites, memory.allocations):
            # (a launch that reported a hazard leaves none: a hazard is reported at every launch)
            made = opcache.Launch(ex.args, spans[0] + spans[1], memory.frees, memory.unwrites,
                                  (workspace, workspace_size), reads, writes, tuple([a for _, a in spans[2]]),
                                  exact, kernel, memory.allocations, self.queues.bases(reads + writes))
            made.moved = moved  # (set before another thread can find it)
            plan.launch = made

    def _check_io_overlap(self, api: str, ex: ExecutorRecord, io: tuple) -> bool:
        """An output partly overlapping an input of the same launch (pyaclnn._numpy.overlap): a
        hazard (True once reported, when PYACLNN_HAZARDS lets the launch go on). ``io``:
        ``io_spans(ex)`` (its non-empty inputs and outputs)."""
        inputs, outputs = io[0], io[1]
        if io[2]:  # outputs written in part are not in io[1]
            outputs = tuple(d for d in ex.outputs if d is not None and 0 not in d.shape)
        spans = [span_of(d) for d in inputs]
        for out in outputs:  # the usual case first: no span meets another (plain loops: once per executor)
            o0, o1 = span_of(out)
            for i0, i1 in spans:
                if o0 < i1 and i0 < o1:
                    break
            else:
                continue
            break
        else:
            return False
        found = partial_overlap(outputs, inputs, span_of, written_bytes)
        if found is None:
            return False
        out, inp, hit = found

        def name(d: TensorDesc) -> str:
            for n, a in zip(ex.names, ex.args):
                if a is d:
                    return n
                if isinstance(a, tuple) and any(t is d for t in a):
                    return f"{n}[{next(i for i, t in enumerate(a) if t is d)}]"
            return "a tensor"
        site = _user_site()
        hazard(f"{api} at {site}: output {name(out)} (at {out.addr:#x}, offset {out.offset}, shape {out.shape}, "
               f"strides {out.strides}) partly overlaps input {name(inp)} (at {inp.addr:#x}, offset {inp.offset}, "
               f"shape {inp.shape}, strides {inp.strides}): bytes [{hit[0]:#x}, +{hit[1] - hit[0]}) are both read and "
               f"written, so the device's result depends on its tiling (torch refuses this too: some elements of "
               f"the input and the written-to tensor refer to a single memory location). Write to separate memory, "
               f"or use exactly the input's memory where the operator allows in-place use", site)
        return True

    def _check_stale(self, api: str, made_by: str, ex: ExecutorRecord) -> bool:
        """A launch through a tensor whose allocation was freed and its address handed out again:
        a use after free the bounds do not show (pyaclnn._numpy.stale); the device would run it.
        True when one was reported (PYACLNN_HAZARDS lets the launch go on)."""
        frees = self.memory.frees
        plan = ex.plan  # none stale for the same handles, no free since: none is now (a move re-makes one)
        fresh = plan.fresh if plan is not None else None
        if fresh is None or fresh[1] != frees or fresh[0] != ex.handles:
            why = stale_tensor(self.memory, ex.args, ex.names, self._tensor_site)
            if why is not None:
                site = _user_site()
                hazard(f"{api} at {site}{made_by}: {why}", site)
                ex.checked_frees = frees
                return True
            if plan is not None:
                plan.fresh = ex.handles, frees
        ex.checked_frees = frees
        return False

    def _tensor_site(self, desc: TensorDesc) -> Any:
        """The user's line that made ``desc``'s aclTensor, where handle sites are tracked (else None)."""
        sites = self._sites
        tensors = self._tensors.copy() if sites else {}  # (a copy: other threads register without a lock)
        handle = next((h for h, d in tensors.items() if d is desc), None)
        return sites.get(handle) if sites is not None and handle is not None else None

    def _kernel(self, ex: ExecutorRecord) -> Callable[[tuple], None]:
        """The operator's kernel bound to ``ex``'s plain values (made once per executor, and kept
        in its phase-1 cache entry for the executors of the same metadata and plain values);
        nothing to run on an empty call that writes nothing (``fills_empty``)."""
        run = ex.kernel
        if run is None:
            plan = ex.plan
            run = plan.kernel if plan is not None else None
            if run is None:
                writes = not ex.empty or ex.fills_empty
                run = ops.prepare(ex.op, self.soc, ex.args, ex.empty) if writes else _nothing
                if plan is not None:
                    plan.kernel = run
            ex.kernel = run
        return run

    def _view(self, desc: TensorDesc) -> np.ndarray | None:
        """The ndarray a tensor's kernel reads or writes (None: outside its allocation). Kept
        with the descriptor while its address is the same and nothing was freed since (a free
        may end the allocation under it): a launch then costs no new view."""
        memory = self.memory
        cached = desc.cached_view
        if cached is not None and cached[0] == desc.addr and cached[1] == memory.frees:
            return cached[2]
        view = memory.view(desc.addr, desc.shape, to_numpy(desc.dtype), desc.strides, desc.offset,
                           span_of(desc))  # (its span is kept: the launch's hazard spans use it too)
        desc.cached_view = (desc.addr, memory.frees, view) if view is not None else None
        return view
