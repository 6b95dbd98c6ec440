"""The reference runtime's phase-1 op cache: what aclnn<Op>GetWorkspaceSize works out from the
arguments' metadata and plain values alone, once its checks accepted them, kept per (SoC, whether
the call is empty, operator, those values).

CANN keeps such a cache too (hicann/opbase src/nnopbase/common/utils/op_cache.cpp,
OpExecCacheManager: executors keyed by a hash of the operator and its arguments, added after a
phase 1 that succeeded). The checks themselves run at every phase 1 (a refusal is theirs, every
time); an entry holds the answers of the op spec's other pure rules (``written``,
``workspace_size``, ``empty_fills``), and once made, the kernel phase 2 runs (``ops.prepare``:
valid for any arguments of the same metadata and plain values) and the spans of the latest
launch's tensors (reused only for the same tensors at the same addresses). The key holds every
value the rules read (a tensor's shape, dtype and strides, each plain value with its type, so 1,
1.0 and True are three keys, and a float by its bits) and the rules' own functions (a spec
replaced at run time, as tests do, is a new key), so an answer from the cache is the one the rules
would compute. Per runtime, bounded.
"""
from __future__ import annotations

from typing import Any, Callable

from .. import ops
from ..._spec import TensorMeta, value_key

MAX_ENTRIES = 1024


class Entry:
    """What phase 1 worked out for one key (see the module docstring)."""
    __slots__ = ("empty", "written", "workspace_size", "workspace_used", "fills", "kernel", "spans", "io", "rw", "call", "fresh")

    def __init__(self, empty: bool, written: tuple[int | None, ...] | None, workspace_size: int,
                 workspace_used: bool, fills: bool) -> None:
        self.empty, self.written, self.fills = empty, written, fills
        self.workspace_size, self.workspace_used = workspace_size, workspace_used
        self.kernel: Callable[[tuple], None] | None = None  # ops.prepare's, made at the first launch
        # the latest launch's (handles, their descriptors, their addresses, the spans worked out
        # for them, the memory's frees count, the views: NumpyExecutors.launch), for the next
        # executor of the same tensors at the same places
        self.spans: tuple[tuple[int, ...], list[Any], list[int], tuple, int, tuple] | None = None
        # the latest phase 1's (tensor handles by position, inputs, outputs, non-NULL handles), for
        # the next phase 1 of the same handles (an operator of tensor arguments only)
        self.io: tuple[tuple[Any, ...], list[Any], list[Any], tuple[int, ...]] | None = None
        # footprint.known_spans's (spans, reads, writes) of the latest launch over ``spans``; the
        # kernel bound to the latest launch's views (a functools.partial)
        self.rw: tuple[tuple, tuple, tuple] | None = None
        self.call: Any = None
        # (handles, the memory's frees count) of the latest launch whose tensors none was stale (stale.py)
        self.fresh: tuple[tuple[int, ...], int] | None = None


def key_of(op: str, metas: list[Any]) -> Any:
    """The cache key of a call of ``op`` on ``metas``: the operator, its spec's rules, the metas
    (tensors' metas and nullptrs as they are; any other value through ``plain_key``); None when
    a value cannot be a key (a TypeError from the lookup: an unhashable value, ``plain_key`` then)."""
    for m in metas:
        if m is not None and type(m) is not TensorMeta:  # a plain value: with its type (1, 1.0, True)
            return plain_key(op, metas)
    spec = ops.spec_of(op)
    return (op, getattr(spec, "written", None), getattr(spec, "workspace_size", None),
            getattr(spec, "empty_fills", None), tuple(metas))


def plain_key(op: str, metas: list[Any]) -> Any:
    """The key of ``key_of`` where a value is not a tensor's meta: each with its type, a float by
    its bits, an aclScalar as its value and dtype; None when one cannot be a key."""
    spec = ops.spec_of(op)
    key = (op, getattr(spec, "written", None), getattr(spec, "workspace_size", None),
           getattr(spec, "empty_fills", None),
           tuple([m if m is None or type(m) is TensorMeta else value_key(m) for m in metas]))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def store(cache: dict[Any, Entry], key: Any, entry: Entry) -> None:
    if len(cache) >= MAX_ENTRIES:
        cache.clear()
    cache[key] = entry
