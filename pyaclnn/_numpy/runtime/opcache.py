"""The reference runtime's phase-1 op cache: what aclnn<Op>GetWorkspaceSize works out from the
arguments' metadata and plain values, kept per (SoC, operator, its spec's rules, those values).

CANN keeps such a cache (hicann/opbase src/nnopbase/common/utils/op_cache.cpp,
OpExecCacheManager): its key is the API name, the op config and per tensor its view shape,
strides, storage shape, dtype, view offset and format, plus the attribute values, and an entry
is added only after a phase 1 that succeeded (AddOpExecCache), so a refusal is never cached.
Phase 1 looks it up FIRST: include/nnopbase/opdev/op_dfx.h, L2_DFX_PHASE_1 returns the cached
executor (GetFromCache) before the operator's CheckParams runs. The reference does the same: on a
hit the spec's checks are skipped, as they would accept the call again. That is exact because
the key holds everything the checks read: the SoC, the spec's rule functions (``check`` and the
others, ops.rules: a rule replaced on the spec at run time, as tests do, is a new key), every
argument's meta (a tensor's TensorMeta whole: its shape, dtype and strides, all a check sees; a
nullptr as None; each plain value with its type, so 1, 1.0 and True are three keys, and a float
by its bits), and the checks are pure functions of those. A refusal runs the checks every time (its message is
theirs). An entry holds the answers of the spec's other rules (``written``, ``workspace_size``,
``empty_fills``), the kernel phase 2 runs (``ops.prepare``: valid for any arguments of the same
metadata and plain values), the spans of the latest launch's tensors (reused only for the same
tensors at the same addresses) and a launch template (``Launch``). Per runtime, bounded.

A further shortcut (``Call``) keys an entry by the C arguments themselves (the handles and plain
values the caller passed): while each handle is live and holds the same object it held (a
handle is never reused; a TensorDesc's metadata never changes, only its address: aclInitTensor
makes a new one; an aclScalar, an array, a list's element handles are never changed), the
resolved arguments, hence their metas and the entry, are the ones the full phase 1 computes.
An aclScalar's or an array's handle is in that key by what it holds instead (``call_key``: a
new aclScalar of the same value is the same key, as in CANN's op cache, op_cache.cpp
AddParamToBuf(aclScalar / aclIntArray ...), which hashes their values and dtype, not their
address): its value exactly (each with its type; a float by its bits: 0.0 and -0.0, NaN and
-NaN are two keys) and a scalar's dtype, all that its resolved object holds, so the call's
resolved arguments are equal, value for value, type for type, to the ones the full phase 1
would resolve; the Call's record keeps the first call's objects, which hold those same values.
A float of a plain (double/float) parameter is in it by its bits too.
"""
from __future__ import annotations

from typing import Any, Callable

from .. import ops
from ..._spec import TensorMeta, value_key

MAX_ENTRIES = 1024
MAX_CALLS = 256

# Plain values a Call may hold as they are: equal values of one of these types are the same key
# for the rules (value_key); a float is not (0.0 == -0.0): call_key puts it in by its bits
PLAIN = frozenset((int, bool, str, bytes, type(None)))
# The handles a Call's key holds by their values (call_key), not by the handle
VALUE_KINDS = frozenset(("scalar", "int_array", "float_array", "bool_array"))
NO_VALUES = ((), ())  # values_at of an operator with no such handle and no float parameter


class Entry:
    """What phase 1 worked out for one key (see the module docstring)."""
    __slots__ = ("empty", "written", "workspace_size", "workspace_used", "fills", "kernel", "spans", "io", "rw",
                 "call", "fresh", "launch")

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
        self.launch: Launch | None = None  # the latest clean launch's template


class Launch:
    """What a launch of an executor worked out that a later launch of an executor of the same
    entry, over the same resolved arguments (the same tuple: ``Call``), reuses while every tensor
    is at the same address and the memory as it was (NumpyExecutors.launch): made only by a
    launch that reported nothing, while no aclTensor moved since (``moved``). ``known``: the
    tensors whose bytes it checks or marks unless known written (footprint.known_spans);
    ``mark``: what it marks whatever is known (an output written in part: the spec's ``written``)."""
    __slots__ = ("args", "known", "frees", "unwrites", "workspace", "reads", "writes", "mark",
                 "exact", "kernel", "allocations", "bases", "moved")
    moved: int  # the runtime's _moved when it was made (NumpyExecutors.launch)

    def __init__(self, args: tuple, known: tuple, frees: int, unwrites: int,
                 workspace: tuple[Any, int], reads: tuple, writes: tuple, mark: tuple, exact: Any,
                 kernel: Callable[[], None], allocations: int, bases: tuple[int, ...]) -> None:
        self.args, self.known, self.workspace = args, known, workspace
        self.frees, self.unwrites, self.allocations = frees, unwrites, allocations
        self.reads, self.writes, self.mark, self.exact, self.kernel = reads, writes, mark, exact, kernel
        self.bases = bases  # Queues.bases of reads + writes, while ``allocations`` is the memory's


class Call:
    """A phase 1's C arguments (see the module docstring): valid while ``soc`` and ``rules`` are
    the runtime's and the operator's (ops.rules), and each (position, type, table, object) of
    ``checks`` holds: the argument there has that type (1, True and 1.0 are equal keys) and, with
    a table, that live handle still holds that object; ``members``: (table, handle, object) of a
    list's element handles. ``record``: the ExecutorRecord's field values (records.values)."""
    __slots__ = ("soc", "rules", "checks", "members", "entry", "record")

    def __init__(self, soc: str, rules: tuple, checks: tuple, members: tuple, entry: Entry, record: tuple) -> None:
        self.soc, self.rules, self.checks, self.members = soc, rules, checks, members
        self.entry, self.record = entry, record


def members_hold(members: tuple) -> bool:
    """Whether each (table, handle, object) of a Call's ``members`` still holds."""
    for table, handle, held in members:
        if table.get(handle) is not held:
            return False
    return True


def values_at(kinds: tuple[str, ...], tables: dict[str, tuple[dict, str]]) -> tuple:
    """(the (position, table, kind) of each scalar and array parameter, the positions of the
    float parameters) of an operator of parameter ``kinds``; NO_VALUES when it has none."""
    handles = tuple((i, tables[k][0], k) for i, k in enumerate(kinds) if k in VALUE_KINDS)
    floats = tuple(i for i, k in enumerate(kinds) if k == "float")
    return (handles, floats) if handles or floats else NO_VALUES


def call_key(args: tuple, at: tuple) -> tuple | None:
    """The key of a Call among its operator's (module docstring): ``args`` with each live
    aclScalar's or array's handle replaced by what it holds, exactly (a scalar: its dtype and its
    value's value_key, with its type and a float's bits; an int or bool array: its tuple of ints
    or bools as it is; a float array by its floats' bits) and a float value of a float parameter
    by its bits; None when a handle is not a live one (the full phase 1 refuses it)."""
    handles, floats = at
    key = list(args)
    for i, table, kind in handles:
        h = args[i]
        if h is None:
            continue
        held = table.get(h) if type(h) is int else None
        if held is None:
            return None
        if kind == "scalar":
            key[i] = (held.dtype, value_key(held.value))
        elif kind == "float_array":
            key[i] = value_key(held)
        else:  # (int arrays hold ints, bool arrays bools: create_*_array converts each)
            key[i] = held
    if floats:  # (most operators have none: no loop to set up)
        for i in floats:
            if type(args[i]) is float:
                key[i] = value_key(args[i])
    return tuple(key)


def key_of(op: str, soc: str, metas: list[Any]) -> Any:
    """The cache key of a call of ``op`` on ``metas`` (tensors' metas and nullptrs as they are;
    any other value through ``plain_key``); its lookup raises TypeError when a value is not
    hashable as it is (an aclScalar: ``plain_key`` then)."""
    for m in metas:
        if m is not None and type(m) is not TensorMeta:  # a plain value: with its type (1, 1.0, True)
            return plain_key(op, soc, metas)
    return soc, op, ops.rules(op), tuple(metas)


def plain_key(op: str, soc: str, metas: list[Any]) -> Any:
    """The key of ``key_of`` where a value is not a tensor's meta: each with its type, a float by
    its bits, an aclScalar as its value and dtype; None when one cannot be a key."""
    key = (soc, op, ops.rules(op), tuple([m if m is None or type(m) is TensorMeta else value_key(m) for m in metas]))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def store(cache: dict[Any, Any], key: Any, value: Any, limit: int = MAX_ENTRIES) -> None:
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
