"""What the reference runtime keeps for each handle phase 1 reads or makes: a tensor
descriptor (aclTensor), a scalar (aclScalar), an executor (aclOpExecutor)."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable

import numpy as np

from ..dtypes import DType
from . import ops
from .stale import Made


@dataclass
class TensorDesc:
    shape: tuple[int, ...]
    dtype: DType
    strides: tuple[int, ...]
    offset: int
    fmt: int
    storage_shape: tuple[int, ...]
    addr: int
    cached_span: tuple[int, int, int] | None = None  # (addr, start, end) of the last span_of
    dense: bool | None = None  # whether its elements fill that span, exactly once (None: not asked yet)
    known_written: tuple[int, int] | None = None  # memory (frees, unwrites) when its bytes were known written
    cached_view: tuple[int, int, np.ndarray] | None = None  # (addr, memory frees, view) of the last _view
    cached_meta: ops.TensorMeta | None = None  # meta(): shape, dtype and strides never change (only addr does)
    made: Made | None = None  # the allocation it was made or re-pointed over (pyaclnn._numpy.stale)

    def meta(self) -> ops.TensorMeta:
        meta = self.cached_meta
        if meta is None:
            meta = self.cached_meta = ops.TensorMeta(self.shape, self.dtype, self.strides)
        return meta


@dataclass(slots=True)  # (made for every aclScalar: slots make it cheaper; eq keeps it unhashable, so
class Scalar:            # the op cache keys it by value: opcache.plain_key)
    value: Any
    dtype: DType


@dataclass(slots=True)  # (made at every phase 1: slots make it and its reads cheaper)
class ExecutorRecord:
    op: str
    args: tuple                  # C-shaped args with TensorDesc in tensor positions
    empty: bool
    inputs: list[TensorDesc | None]
    outputs: list[TensorDesc | None]  # None: a NULL optional slot (index rule "position")
    repeatable: bool = False
    workspace_size: int = 0
    workspace_used: bool = False  # the kernels read or write it (a 0-byte tiling request is never touched)
    handles: tuple[int, ...] = ()  # the aclTensors phase 1 captured (list elements included)
    names: tuple[str, ...] = ()    # the C parameter names, for messages
    spans: tuple | None = None     # what a launch reads and writes (footprint.io_spans), for pyaclnn._numpy.queues
    written: tuple[int | None, ...] | None = None  # per output, the elements its kernel writes (None: all;
    #                                                the spec's ``written``); None: every output whole
    generated: bool = False      # a generated (nnopbase) op: phase 2 is NnopbaseRunWithWorkspace
    kernel: Callable[[tuple], None] | None = None  # its phase 2, once made (NumpyRuntime._kernel)
    fills_empty: bool = False    # an empty call whose phase 2 still writes (the spec's ``empty_fills``)
    plan: Any = None             # its phase-1 cache entry (runtime/opcache.Entry), which keeps its kernel
    checked_frees: int = -1      # the memory's frees when its tensors were last found not stale (stale.py)


_FIELDS = tuple(f.name for f in fields(ExecutorRecord))
_new = object.__new__


def values(record: ExecutorRecord) -> tuple:
    """``record``'s field values in their order: a template for ``from_values``."""
    return tuple([getattr(record, name) for name in _FIELDS])


def from_values(v: tuple) -> ExecutorRecord:
    """A new ExecutorRecord of the field values ``v`` (``values``): a phase 1 answered by the op
    cache copies its template, cheaper than the dataclass's keyword __init__ (a field added to
    the class and not here makes ``v`` one value too long: ValueError at the first use)."""
    ex = _new(ExecutorRecord)
    (ex.op, ex.args, ex.empty, ex.inputs, ex.outputs, ex.repeatable, ex.workspace_size, ex.workspace_used,
     ex.handles, ex.names, ex.spans, ex.written, ex.generated, ex.kernel, ex.fills_empty, ex.plan,
     ex.checked_frees) = v
    return ex
