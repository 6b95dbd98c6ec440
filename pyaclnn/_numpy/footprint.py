"""What a launch of an executor reads and writes, in device bytes, for the stream queues' checks
(``queues.Queues.put``: races, reads of never-written bytes, what it marks written): each
tensor's span, the exact bytes of a strided tensor (its gaps are neither read nor written) and of
the part of an output a kernel writes (its spec's ``written``). Made once per executor and kept
with it (``ExecutorRecord.spans``) until aclSet*TensorAddr moves one of its tensors. Also which
tensors those are: an executor's inputs and outputs (``split_io``) and their views (``list_views``)."""
from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable

import numpy as np

from .._core.strides import byte_boxes, contiguous_strides, dense, extent
from .._registry.operators import OpInfo
from ..dtypes import to_numpy
from .memory import Access, Elements
from .queues import Exact, Exacts
from .records import ExecutorRecord, TensorDesc

__all__ = ["span_of", "io_spans", "written_bytes", "written_counts", "spans_and_unknown", "known_spans", "exacts", "is_list",
           "list_views", "outside", "split_io"]


def span_of(desc: TensorDesc) -> tuple[int, int]:
    """The bytes [start, end) a tensor's shape, strides and offset reach (kept until its
    address changes: aclSet*TensorAddr)."""
    cached = desc.cached_span
    if cached is not None and cached[0] == desc.addr:
        return cached[1], cached[2]
    lo, hi = extent(desc.shape, desc.strides)
    item = to_numpy(desc.dtype).itemsize
    start, end = desc.addr + (lo + desc.offset) * item, desc.addr + (hi + desc.offset + 1) * item
    desc.cached_span = (desc.addr, start, end)
    return start, end


def io_spans(ex: ExecutorRecord) -> tuple[tuple[TensorDesc, ...], tuple[TensorDesc, ...],
                                      tuple[tuple[tuple[int, int], Access], ...]]:
    """What a launch of ``ex`` touches: its non-empty inputs, the non-empty outputs its kernel
    writes whole, and (span, exact bytes) of what it writes of those it writes in part only
    (``written``; an output it does not write at all is in none of them: the device's kernel
    never touches it)."""
    inputs = tuple(d for d in ex.inputs if d is not None and 0 not in d.shape)
    if ex.written is None:
        return inputs, tuple(d for d in ex.outputs if d is not None and 0 not in d.shape), ()
    whole, part = [], []
    for d, n in zip(ex.outputs, ex.written):
        if d is None or 0 in d.shape or n == 0:
            continue
        if n is None or n >= math.prod(d.shape):
            whole.append(d)
        else:
            access = written_bytes(d, n)
            part.append(((access[0], access[1]), access))
    return inputs, tuple(whole), tuple(part)


def written_bytes(desc: TensorDesc, count: int | None = None) -> Access:
    """The bytes of the elements of a non-empty ``desc`` (with ``count``, of its first ``count``
    in row-major order of its view): one span for a contiguous tensor's first elements, else the
    elements of a strided one (its gaps, and its later elements, are not in them)."""
    item = to_numpy(desc.dtype).itemsize
    first = desc.addr + desc.offset * item
    if count is not None and tuple(desc.strides) == contiguous_strides(desc.shape):
        return first, first + count * item
    boxes = tuple((first + start, dims) for start, dims in byte_boxes(desc.shape, desc.strides, item, count))
    end = max(start + sum((d - 1) * s for s, d in dims) + 1 for start, dims in boxes)
    return Elements(min(start for start, _ in boxes), end, boxes)


def _same(access: Access) -> Access:
    return access


def written_counts(info: OpInfo, args: tuple, by_name: dict[str, Any]) -> tuple[int | None, ...] | None:
    """The spec's ``written`` (C output parameter name -> elements, or a tuple per list member)
    as one count per output of ``split_io``, in its order (None: written whole); None when every
    output is written whole."""
    assert info.outputs is not None
    unknown = set(by_name) - {info.names[i] for i in info.outputs}
    if unknown:
        raise ValueError(f"aclnn{info.name}: the spec's written() names no output {sorted(unknown)}")
    keep_null = info.index_rule == "position"
    counts: list[int | None] = []
    for i in info.outputs:
        if not keep_null and args[i] is None:
            continue
        n = by_name.get(info.names[i])
        if isinstance(args[i], tuple):  # a list's members one by one, as split_io counts them
            counts += n if n is not None else (None,) * len(args[i])
        else:
            counts.append(n)
    return tuple(counts) if any(n is not None for n in counts) else None


def spans_and_unknown(descs: tuple[TensorDesc, ...], key: tuple[int, int]
                       ) -> tuple[list[tuple[int, int]], list[Access]]:
    """The spans of ``descs`` (for the race checks), and the exact bytes (``written_bytes``) of
    those not known written under ``key`` (the memory's (frees, unwrites)), which are from now on
    (as an input: checked; as an output: marked)."""
    spans: list[tuple[int, int]] = []
    unknown: list[Access] = []
    for d in descs:
        span = span_of(d)
        spans.append(span)
        if d.known_written != key:
            d.known_written = key
            if d.dense is None:  # (worked out once per tensor)
                d.dense = dense(d.shape, d.strides)
            unknown.append(span if d.dense else written_bytes(d))
    return spans, unknown


def known_spans(spans: tuple, key: tuple[int, int], plan: Any
                ) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...], tuple[Access, ...], tuple[Access, ...]]:
    """A launch's (reads, writes) spans for the race checks and (check, mark), the exact bytes
    of its tensors not known written under ``key`` (``spans_and_unknown``), from its ``spans``
    (``ExecutorRecord.spans``). ``plan``: the phase-1 cache entry when the launch's tensors were
    just found at the addresses ``spans`` was made for; when every tensor is known written
    already, its previous launch's answer for the same ``spans`` is the answer (nothing to check
    or mark), else it keeps this one."""
    rw = plan.rw if plan is not None else None
    if rw is not None and rw[0] is spans:
        for d in spans[0] + spans[1]:
            if d.known_written != key:
                break
        else:
            return rw[1], rw[2], (), ()
    reads, check = spans_and_unknown(spans[0], key)
    writes, mark = spans_and_unknown(spans[1], key)
    if spans[2]:  # outputs the kernel writes in part (the spec's ``written``): only that part
        for span, access in spans[2]:
            writes.append(span)
            mark.append(access)
    found = tuple(reads), tuple(writes), tuple(check), tuple(mark)
    if plan is not None and not spans[2]:
        plan.rw = spans, found[0], found[1]
    return found


def exacts(inputs: tuple[TensorDesc, ...], whole: tuple[TensorDesc, ...],
           part: tuple[tuple[tuple[int, int], Access], ...]) -> Exacts:
    """For the race checks (queues.Queues.put's ``exact``), per read span and per write span in
    the order a launch lists them (inputs; outputs written whole, in part; the launch adds the
    workspace's, exact): how to
    work out a strided tensor's exact bytes (None: a dense tensor's span is exact); None when
    every span is exact. Made once per executor (with its spans)."""
    if not part:  # the usual case: every tensor dense, no closures made
        for d in inputs + whole:
            if d.dense is None:
                d.dense = dense(d.shape, d.strides)
            if not d.dense:
                break
        else:
            return None

    def of(d: TensorDesc) -> Exact:
        if d.dense is None:
            d.dense = dense(d.shape, d.strides)
        return None if d.dense else partial(written_bytes, d)
    reads = tuple(of(d) for d in inputs)
    writes = tuple(of(d) for d in whole) + tuple(partial(_same, a) if type(a) is Elements else None
                                                 for _, a in part)
    return (reads, writes) if any(reads) or any(writes) else None


def is_list(value: Any) -> bool:
    """Whether a resolved argument is an aclTensorList's tensors (a tuple of TensorDesc or views;
    an aclScalarList is a tuple of Scalar, an aclBoolArray one of bools)."""
    return isinstance(value, tuple) and bool(value) and isinstance(value[0], (TensorDesc, np.ndarray))


def list_views(view: Callable[[TensorDesc], np.ndarray | None], value: Any) -> Any:
    """An aclTensorList's members as a tuple of ndarray views (None: outside its allocation);
    any other value as it is."""
    return tuple(view(d) for d in value) if is_list(value) else value


def outside(args: tuple, views: tuple) -> TensorDesc | None:
    """The first tensor (or list member) whose view is None: it reaches outside its allocation."""
    for a, v in zip(args, views):
        if isinstance(a, TensorDesc) and v is None:
            return a
        if is_list(a):
            for d, w in zip(a, v):
                if w is None:
                    return d
    return None


def split_io(info: OpInfo, args: tuple) -> tuple[list[Any], list[Any]]:
    """The tensors aclSetInputTensorAddr / aclSetOutputTensorAddr index, by the op's rule:
    the non-null ones in parameter order, or every position (NULL optional slots included)."""
    keep_null = info.index_rule == "position"
    assert info.inputs is not None and info.outputs is not None  # ops with a reference have roles
    if not keep_null and info.cache.get("numpy:tensors") is not None:  # no lists: the non-null ones
        return ([args[i] for i in info.inputs if args[i] is not None],
                [args[i] for i in info.outputs if args[i] is not None])

    def tensors(positions: tuple[int, ...]) -> list[Any]:  # a list's members count one by one, in order
        return [t for i in positions if keep_null or args[i] is not None
                for t in (args[i] if isinstance(args[i], tuple) else (args[i],))]
    return tensors(info.inputs), tensors(info.outputs)
