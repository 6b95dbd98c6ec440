"""The aten tier's phase 1: the checks CANN makes for every operator, on one table entry.

Generic rules (``Entry.traced`` names the op source where an entry's were traced instead), in
this order, as the op_api sources order them (CheckNotNull, CheckDtypeValid, CheckShape):

1. a required pointer (a parameter not named ``...Optional`` nor in ``nullable``) is nullptr:
   161001, in C order;
2. a tensor of rank > 8 (OP_CHECK_MAX_DIM): 161002;
3. an input dtype outside the entry's ``dtypes`` (bf16 only on ``SOCS_BF16``; ``dtypes_v1`` on
   the other SoCs where the source has its own list), or one torch has no dtype for; then the
   ``same_dtype`` parameters of another dtype than the first: 161002;
4. a ``dim`` parameter (an int or an aclIntArray) outside [-rank, rank) of the first input
   tensor (rank 0 counts as 1): 161002 (the op sources' CheckDim; aten's meta kernels do not
   always check it, its CPU kernels do);
5. the output rule: aten's meta kernels (tensors on torch's ``meta`` device: shapes and dtypes,
   no data) run on the arguments; what aten refuses is 161002 with aten's message;
6. each output: rank, then shape equal to the rule's (CANN refuses a wrong ``out`` with 161002
   where torch would resize it), then dtype in ``out_dtypes`` or the rule's dtype castable to it
   (opbase CanCast): 161002.

True (empty: nothing to compute) when every output has no element.

torch is imported here, on the first check of an aten-tier operator (``torch_module``): never at
``import pyaclnn``, never for the exact references. It runs with one intra-op thread unless
PYACLNN_NUM_THREADS says otherwise (small calls on a shared 2-core machine were 5-20x slower on
two): ``torch.set_num_threads`` is process-wide, so this sets it once, when torch is first needed.
"""
from __future__ import annotations

import importlib
import os
import threading
from typing import Any, Callable, Sequence

from ..._spec import (MAX_DIM, TensorMeta, can_cast, fail_invalid, fail_null, fmt_dtypes, fmt_shape, promote_type,
                      value_key)
from ...dtypes import DType, from_numpy
from ...errors import NotSupportedError
from .table._entry import SOCS_BF16, Conv, Dtype, Entry, Int64, IntTensor, OutDtype, OutShape

__all__ = ["AtenSpec", "torch_module", "torch_dtype", "dtype_of_torch", "aten_callable", "THREADS_ENV",
           "kernel_threads", "EXTRA_HINT"]

THREADS_ENV = "PYACLNN_NUM_THREADS"
EXTRA_HINT = "pip install 'pyaclnn[torch]'"

_torch: Any = None
_lock = threading.Lock()
_TO_TORCH: dict[int, Any] = {}
_FROM_TORCH: dict[Any, DType] = {}

# aclDataType -> the name of torch's dtype (what torch has; COMPLEX32 has no NumPy peer, so no view)
_TORCH_NAMES = {DType.FLOAT: "float32", DType.FLOAT16: "float16", DType.INT8: "int8", DType.INT32: "int32",
                DType.UINT8: "uint8", DType.INT16: "int16", DType.UINT16: "uint16", DType.UINT32: "uint32",
                DType.INT64: "int64", DType.UINT64: "uint64", DType.DOUBLE: "float64", DType.BOOL: "bool",
                DType.COMPLEX64: "complex64", DType.COMPLEX128: "complex128", DType.BF16: "bfloat16",
                DType.FLOAT8_E5M2: "float8_e5m2", DType.FLOAT8_E4M3FN: "float8_e4m3fn"}


def kernel_threads() -> int:
    """The torch thread count of the aten tier: ``THREADS_ENV`` (PYACLNN_NUM_THREADS) if a positive
    integer, else 1 (torch's default of one thread per core made a small call 5-20x slower)."""
    env = (os.environ.get(THREADS_ENV) or "").strip()
    return int(env) if env.isdigit() and int(env) > 0 else 1


def torch_module(op: str = "") -> Any:
    """torch, imported (and its thread count set) on first use; NotSupportedError naming the
    extra when it is not installed."""
    global _torch
    if _torch is None:
        with _lock:
            if _torch is None:
                try:
                    torch = importlib.import_module("torch")
                except ImportError as exc:
                    what = f"aclnn{op}" if op else "this operator"
                    raise NotSupportedError(
                        f"{what} runs on the NumPy reference through PyTorch's CPU kernels (the aten tier), "
                        f"and torch cannot be imported ({exc}): install the extra, {EXTRA_HINT}") from None
                torch.set_num_threads(kernel_threads())
                for dt, name in _TORCH_NAMES.items():
                    tdt = getattr(torch, name, None)
                    if tdt is not None:
                        _TO_TORCH[int(dt)] = tdt
                        _FROM_TORCH[tdt] = dt
                _torch = torch
    return _torch


def torch_dtype(dtype: int) -> Any:
    """The torch dtype of an aclDataType (ValueError when torch has none)."""
    found = _TO_TORCH.get(int(dtype))
    if found is None:
        torch_module()
        found = _TO_TORCH.get(int(dtype))
        if found is None:
            raise ValueError(f"aclDataType {dtype} has no torch dtype")
    return found


def dtype_of_torch(tdt: Any) -> DType:
    return _FROM_TORCH[tdt]


def aten_callable(entry: Entry) -> Callable[..., Any]:
    """The function ``entry.aten`` names: torch.ops.aten.<name>.<overload>, a torch callable, or a
    composition of this package's ``compose`` modules."""
    torch = torch_module(entry.op)
    try:
        if entry.aten.startswith(("torch:", "compose:")):
            kind, _, path = entry.aten.partition(":")
            module, _, attr = path.rpartition(".")
            module = f"{__package__}.compose.{module}" if kind == "compose" else module
            return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]
        name, _, overload = entry.aten[6:].partition(".")
        return getattr(getattr(torch.ops.aten, name), overload or "default")  # type: ignore[no-any-return]
    except (AttributeError, ImportError, RuntimeError) as exc:
        raise NotSupportedError(f"aclnn{entry.op}: this torch ({torch.__version__}) has no {entry.aten} "
                                f"({exc})") from None


def plain(value: Any) -> Any:
    """A C argument that is not a tensor, as aten takes it: an aclScalar's number, an array's
    list, a char*'s str; others as they are."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, bytes):
        return value.decode()
    number = getattr(value, "value", None)
    return value if number is None or not hasattr(value, "dtype") else number


def _key(value: Any) -> Any:
    """A meta as the key of the rules' answers: a tensor by its shape and dtype, the rest as
    ``value_key`` (with its type, a float by its bits)."""
    if isinstance(value, TensorMeta):
        return (value.shape, value.dtype)
    if isinstance(value, tuple):
        return tuple(_key(v) for v in value)
    return value_key(value)


class AtenSpec:
    """The phase-1 checks of one table entry (the spec of an aten-tier operator)."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        self.OP = entry.op
        self.API = f"aclnn{entry.op}GetWorkspaceSize"
        self._index = {n: i for i, n in enumerate(entry.params)}
        self._outs = tuple(None if n is None else self._index[n] for n in entry.out)
        self._out_set = {i for i in self._outs if i is not None}
        # Entry.mask: the outputs it gates (bit, C position), their nullptr checked by their bit
        self._mask = self._index[entry.mask] if entry.mask else None
        self._gated = tuple((bit, self._index[n]) for bit, n in enumerate(entry.out) if n and entry.mask)
        self._required = tuple(not n.endswith("Optional") and n not in entry.nullable for n in entry.params)
        self._unwritten_seen = False  # a rule left an output uncomputed (``written`` then looks)
        self._promote = tuple(self._index[n] for n in entry.promote)  # Entry.promote: checked as one dtype
        self._inputs = {self._index[n] for n in entry.referenced()}  # what aten reads (in-place outputs too)
        self._rules: dict[Any, tuple] = {}  # key of the arguments -> the outputs' (shape, dtype)
        self._accepted: dict[Any, bool] = {}  # (soc, arguments) accepted -> empty
        self._fn: Callable[..., Any] | None = None
        self._dim = self._index.get("dim")

    def _allowed(self, name: str, soc: str) -> tuple[DType, ...] | None:
        """The dtypes input ``name`` may have on ``soc`` (None: any)."""
        dtypes = self.entry.dtypes
        if not isinstance(dtypes, tuple) and dtypes is not None:  # by parameter name
            dtypes = dtypes.get(name, dtypes.get("*"))
        if dtypes is not None and soc not in SOCS_BF16:
            if self.entry.dtypes_v1 is not None:  # the source's list for the other SoCs
                return self.entry.dtypes_v1
            dtypes = tuple(d for d in dtypes if d != DType.BF16)
        return dtypes

    def _check_dim(self, metas: Sequence[Any]) -> None:
        first = next((m for i, m in enumerate(metas) if isinstance(m, TensorMeta) and i in self._inputs), None)
        value = metas[self._dim]  # type: ignore[index]
        if first is None or not isinstance(value, (int, tuple)) or isinstance(value, bool):
            return
        rank = max(first.ndim, 1)
        for d in (value if isinstance(value, tuple) else (value,)):
            if isinstance(d, int) and not -rank <= d < rank:
                fail_invalid(self.API, f"dim {d} is out of range [{-rank}, {rank - 1}] for a rank-{first.ndim} input")

    def _rule(self, metas: Sequence[Any]) -> tuple[Any, ...]:
        """The outputs' (shape, dtype) for ``metas``: aten's meta kernels, or its CPU kernel on
        zeros (no meta kernel, or the entry's ``rule`` is ``"cpu"``: a meta kernel that checks
        less than the CPU one)."""
        torch = torch_module(self.OP)
        fn = self._fn or self._resolve()

        def meta(m: Any) -> Any:
            if isinstance(m, TensorMeta):
                return torch.empty(m.shape, dtype=self._compute_dtype(m.dtype), device="meta")
            if isinstance(m, tuple) and m and all(isinstance(t, TensorMeta) for t in m):
                return [meta(t) for t in m]
            return plain(m)

        def zeros(m: Any) -> Any:
            if isinstance(m, TensorMeta):
                return torch.zeros(m.shape, dtype=self._compute_dtype(m.dtype))
            if isinstance(m, tuple) and m and all(isinstance(t, TensorMeta) for t in m):
                return [zeros(t) for t in m]
            return plain(m)
        def on_meta(a: Any) -> Any:  # a tensor a Conv made from a plain value (IntTensor's) joins them
            return a.to("meta") if isinstance(a, torch.Tensor) else a
        if self.entry.rule != "cpu":
            try:
                args, kwargs = bind(self.entry, self._index, metas, meta, torch)
                return results_of(self.entry, fn(*[on_meta(a) for a in args],
                                                 **{k: on_meta(v) for k, v in kwargs.items()}))
            except NotImplementedError:  # no meta kernel: the CPU kernel on zeros
                pass
            except _REFUSALS as exc:
                if not (isinstance(exc, RuntimeError) and "meta" in str(exc)):
                    fail_invalid(self.API, f"{self.entry.aten} refuses these arguments: {_first_line(exc)}")
                # else a kernel that wants one tensor on the CPU (.item() of a one-element scalar): zeros
        try:
            args, kwargs = bind(self.entry, self._index, metas, zeros, torch)
            return results_of(self.entry, fn(*args, **kwargs))
        except _REFUSALS + (NotImplementedError,) as exc:
            fail_invalid(self.API, f"{self.entry.aten} refuses these arguments: {_first_line(exc)}")

    def _compute_dtype(self, dtype: int) -> Any:
        """The torch dtype aten computes a tensor of ``dtype`` in (float32 for fp16/bf16 under
        ``Entry.upcast``, as phase 2 hands them)."""
        if self.entry.upcast and dtype in (DType.FLOAT16, DType.BF16):
            return torch_dtype(DType.FLOAT)
        return torch_dtype(dtype)

    def _resolve(self) -> Callable[..., Any]:
        fn = self._fn = aten_callable(self.entry)
        return fn

    def check(self, soc: str, *metas: Any) -> bool:
        """Raise the first failing rule's error (module docstring); True means empty. A call whose
        arguments were accepted before (the same SoC, metadata and plain values: everything
        these rules read) is accepted again at the cost of a dict lookup."""
        try:
            key: Any = (soc, metas)
            accepted = self._accepted.get(key)
        except TypeError:  # an aclScalar (a dataclass) or a list among them: not hashable as is
            key = (soc, tuple(_key(m) for m in metas))
            accepted = self._accepted.get(key)
        if accepted is not None:
            return accepted
        empty = self._check(soc, metas)
        if len(self._accepted) > 512:
            self._accepted.clear()
        self._accepted[key] = empty
        return empty

    def _check(self, soc: str, metas: tuple) -> bool:
        api, entry = self.API, self.entry
        if _torch is None:
            torch_module(self.OP)
        if len(metas) != len(entry.params):
            fail_invalid(api, f"expected {len(entry.params)} arguments ({', '.join(entry.params)}), got {len(metas)}")
        for name, m, required in zip(entry.params, metas, self._required):  # CheckNotNull, in C order
            if m is None and required:
                fail_null(api, f"{name} is nullptr")
        if self._mask is not None:  # an output its mask bit asks for may not be nullptr
            bits = metas[self._mask]
            for bit, at in self._gated:
                if bits is not None and bit < len(bits) and bits[bit] and metas[at] is None:
                    fail_null(api, f"{entry.params[at]} is nullptr but {entry.mask}[{bit}] is true")
        if entry.socs and soc not in entry.socs:  # the sources' SoC checks (Entry.socs)
            fail_invalid(api, f"aclnn{self.OP} is not supported on {soc} (only on {', '.join(entry.socs)})")
        for i, (name, m) in enumerate(zip(entry.params, metas)):
            allowed = self._allowed(name, soc)
            tensors = (m,) if isinstance(m, TensorMeta) else m if isinstance(m, tuple) and m and \
                isinstance(m[0], TensorMeta) else ()
            for t in tensors:
                if t.ndim > MAX_DIM:
                    fail_invalid(api, f"{name} rank {t.ndim} > {MAX_DIM} (shape {fmt_shape(t.shape)})")
                if int(t.dtype) not in _TO_TORCH:
                    fail_invalid(api, f"{name} dtype {DType(t.dtype)} is not supported (torch has no such dtype)")
                if i in self._inputs and allowed is not None and t.dtype not in allowed and i not in self._promote:
                    fail_invalid(api, f"{name} dtype {DType(t.dtype)} not supported on {soc} "
                                      f"(supported: {fmt_dtypes(allowed)})")
        if self._promote:
            metas = self._promoted(soc, metas)
        if entry.same_dtype:  # OP_CHECK_DTYPE_NOT_MATCH
            first = metas[self._index[entry.same_dtype[0]]]
            for name in entry.same_dtype[1:]:
                t = metas[self._index[name]]
                if t is not None and first is not None and t.dtype != first.dtype:
                    fail_invalid(api, f"{name} dtype {DType(t.dtype)} should be the same as "
                                      f"{entry.same_dtype[0]} dtype {DType(first.dtype)}")
        if self._dim is not None:
            self._check_dim(metas)
        key = tuple(_key(m) for m in metas)
        rule = self._rules.get(key)
        if rule is None:
            rule = self._rule(metas)
            if len(self._rules) > 256:
                self._rules.clear()
            self._rules[key] = rule
        empty = True
        skipped = self._skipped(metas)
        for pos, got in zip(self._outs, rule):
            if pos is None or got is None or pos in skipped:
                if pos is not None and metas[pos] is not None:
                    self._unwritten_seen = True
                continue
            name, m = entry.params[pos], metas[pos]
            if m is None:  # an optional output not asked for
                continue
            if not isinstance(m, TensorMeta) and len(m) != len(got):
                fail_invalid(api, f"{name} holds {len(m)} tensors; the result has {len(got)}")
            pairs = ((m, got),) if isinstance(m, TensorMeta) else zip(m, got)
            single = name in entry.single
            for t, (shape, dt) in pairs:
                if tuple(t.shape) != shape and not (single and shape == () and t.numel == 1 and t.ndim <= 1):
                    fail_invalid(api, f"Shape of {name} should be {fmt_shape(shape)}, but current is "
                                      f"{fmt_shape(t.shape)}")
                out_dt = DType(t.dtype)
                if entry.out_dtypes is not None and out_dt not in entry.out_dtypes:
                    fail_invalid(api, f"{name} dtype {out_dt} not supported (supported: "
                                      f"{fmt_dtypes(entry.out_dtypes)})")
                if entry.out_dtypes is None and not can_cast(dt, out_dt):
                    fail_invalid(api, f"result dtype {dt} can't be cast to the desired output type {out_dt} "
                                      f"({name})")
                if t.numel:
                    empty = False
        return empty

    def _promoted(self, soc: str, metas: tuple) -> tuple:
        """``metas`` with the ``Entry.promote`` tensors at their promoted dtype (what aten gets),
        after checking it (CheckPromoteType: none is 161002, then the dtype list)."""
        present = [(self.entry.params[i], metas[i]) for i in self._promote if metas[i] is not None]
        if not present:
            return metas
        dtype = present[0][1].dtype
        for _, m in present[1:]:
            dtype = promote_type(dtype, m.dtype)
        if dtype == DType.DT_UNDEFINED:
            fail_invalid(self.API, " and ".join(f"{n} dtype {DType(m.dtype)}" for n, m in present) +
                         " can not be promoted")
        allowed = self._allowed(present[0][0], soc)
        if allowed is not None and dtype not in allowed:
            fail_invalid(self.API, f"promoted dtype {DType(dtype)} not supported on {soc} (supported: "
                                   f"{fmt_dtypes(allowed)})")
        return tuple(m._replace(dtype=dtype) if i in self._promote and m is not None else m
                     for i, m in enumerate(metas))

    def _skipped(self, metas: Sequence[Any]) -> set[int]:
        """The C positions of the outputs ``Entry.mask`` leaves out (its bit false)."""
        if self._mask is None or metas[self._mask] is None:
            return set()
        bits = metas[self._mask]
        return {pos for bit, pos in self._gated if bit < len(bits) and not bits[bit]}

    def written(self, soc: str, *metas: Any) -> dict[str, Any] | None:
        """What phase 2 writes of the outputs (pyaclnn._numpy.ops.written), for a call ``check``
        accepted: an output the mask leaves out, or one aten leaves uncomputed (an undefined
        result), is never written (0 elements: its bytes stay as they were, as on a device);
        None: every output is written whole."""
        if self._mask is None and not self._unwritten_seen:
            return None
        skipped = self._skipped(metas)
        if self._promote:
            metas = self._promoted(soc, metas)
        rule = self._rules.get(tuple(_key(m) for m in metas))
        if rule is None:
            rule = self._rule(metas)
        for pos, got in zip(self._outs, rule):
            if pos is not None and got is None:
                skipped.add(pos)
        return {self.entry.params[pos]: 0 if isinstance(metas[pos], TensorMeta) else (0,) * len(metas[pos])
                for pos in skipped if metas[pos] is not None} or None


def acl_dtype(dtype: Any) -> DType:
    """The aclDataType of a DType or a NumPy dtype (a tensor's meta, or its phase-2 view)."""
    return dtype if isinstance(dtype, DType) else from_numpy(dtype)


# what aten raises for arguments it refuses (its meta kernels' checks are Python asserts too)
_REFUSALS: tuple[type[BaseException], ...] = (RuntimeError, ValueError, TypeError, IndexError, AssertionError)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def results_of(entry: Entry, result: Any) -> tuple[Any, ...]:
    """aten's result as one item per ``entry.out``: (shape, DType), or a tuple of them for a list."""
    items = (result,) if len(entry.out) == 1 else tuple(result)
    if len(items) < len(entry.out):
        raise ValueError(f"{entry.aten} returned {len(items)} results; the entry expects {len(entry.out)}")

    def one(t: Any) -> Any:
        if t is None:  # not computed (an output mask that is false)
            return None
        if isinstance(t, (list, tuple)):
            return tuple(one(x) for x in t)
        return tuple(t.shape), dtype_of_torch(t.dtype)
    return tuple(one(t) for t in items[:len(entry.out)])


def bind(entry: Entry, index: dict[str, int], values: Sequence[Any], tensor: Callable[[Any], Any],
         torch: Any, outputs: Sequence[Any] | None = None) -> tuple[list, dict]:
    """aten's (args, kwargs) from the C arguments ``values``; ``tensor`` makes a tensor (or a
    list, or a plain value) of one C argument; ``outputs``: the C arguments an output's dtype or
    shape is read from (default: ``values``)."""
    described = values if outputs is None else outputs

    def one(a: Any) -> Any:
        if isinstance(a, str):
            return tensor(values[index[a]])
        if isinstance(a, OutDtype):
            return torch_dtype(acl_dtype(described[index[a.param]].dtype))
        if isinstance(a, OutShape):
            return list(described[index[a.param]].shape)
        if isinstance(a, Conv) and values[index[a.param]] is None:
            return None
        if isinstance(a, Int64):  # a tensor now (phase 1), or phase 2's slot: the kernel converts it
            t = tensor(values[index[a.param]])
            return t.long() if hasattr(t, "long") else t
        if isinstance(a, IntTensor):
            return torch.tensor(list(values[index[a.param]]), dtype=torch.int64)
        if isinstance(a, Dtype):
            return torch_dtype(int(values[index[a.param]]))
        if isinstance(a, Conv):
            return a.convert(plain(values[index[a.param]]), torch)
        return a
    kwargs = {}
    for k, v in entry.kwargs:  # a nullptr (an optional scalar, array, tensor) leaves aten's default
        value = one(v)
        if value is not None:
            kwargs[k] = value
    return [one(a) for a in entry.args], kwargs
