"""The aten tier's phase 2: one table entry's aten function on the launch's NumPy views.

``prepare`` converts every plain C argument once (the aten callable, enums, dtypes, lists) and
leaves slots for the tensors; ``run(views)`` wraps each view as a torch tensor without a copy
(``torch.from_numpy``; bf16 and the 8-bit floats through an unsigned view of the same bytes:
ml_dtypes <-> torch), calls aten, and writes each result into its output view: cast to the
output's dtype first (``Tensor.to``: floats to integers truncate, integers wrap, as CANN's Cast),
never resized (phase 1 checked the shapes against the same rule). The result is whole before it
is written, so an output may overlap an input (the in-place forms).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..._spec import value_key
from ...dtypes import to_numpy
from ...errors import NotSupportedError
from .spec import _TORCH_NAMES, aten_callable, bind, plain, torch_dtype, torch_module
from .table._entry import Entry, Int64, OutDtype, OutShape

__all__ = ["AtenKernel", "to_torch", "write"]

# numpy dtype -> (the unsigned dtype its bytes are viewed as, or None, torch dtype): filled on first use
_NP: dict[np.dtype, tuple[np.dtype | None, Any]] = {}


def _np_map() -> dict[np.dtype, tuple[np.dtype | None, Any]]:
    if not _NP:
        torch_module()
        for dt in _TORCH_NAMES:
            try:
                npdt = to_numpy(dt)
                tdt = torch_dtype(dt)
            except (NotSupportedError, ValueError):
                continue
            carrier = np.dtype(f"uint{8 * npdt.itemsize}") if npdt.kind == "V" or type(npdt).__module__.startswith(
                "ml_dtypes") or npdt.name in ("bfloat16", "float8_e5m2", "float8_e4m3fn") else None
            _NP[npdt] = (carrier, tdt)
    return _NP


def to_torch(a: np.ndarray, torch: Any) -> Any:
    """The torch tensor on ``a``'s memory (no copy)."""
    carrier, tdt = _NP.get(a.dtype) or _np_map()[a.dtype]
    if carrier is None:
        return torch.from_numpy(a)
    return torch.from_numpy(a.view(carrier)).view(tdt)


def write(out: np.ndarray, t: Any, torch: Any, what: str) -> None:
    """``t`` cast to ``out``'s dtype, copied into ``out`` (same shape: never resized)."""
    carrier, tdt = _NP.get(out.dtype) or _np_map()[out.dtype]
    if t.shape != out.shape:  # (torch.Size is a tuple: the usual case costs one comparison)
        if t.numel() == 0 and out.size:  # aten computes nothing there in that mode (BatchNorm's saved stats, eval)
            return
        if t.dim() == 0 and out.size == 1:  # an entry's ``single`` output
            t = t.reshape(out.shape)
        else:
            raise NotSupportedError(f"{what}: aten's result has shape {tuple(t.shape)}, the output {out.shape}")
    if t.dtype != tdt:
        t = t.to(tdt)
    if carrier is None:
        np.copyto(out, t.numpy(), casting="no")
    else:
        np.copyto(out, t.view(getattr(torch, carrier.name)).numpy().view(out.dtype), casting="no")


_TENSOR_TYPES: set[type] = {np.ndarray}  # and the runtime's tensor descriptor, once seen


def _is_tensor(value: Any) -> bool:
    """A tensor slot of the C arguments: an ndarray view or the runtime's tensor descriptor."""
    if type(value) in _TENSOR_TYPES:
        return True
    if isinstance(value, np.ndarray) or (hasattr(value, "meta") and hasattr(value, "strides")):
        _TENSOR_TYPES.add(type(value))
        return True
    return False


def _is_list(value: Any) -> bool:
    return isinstance(value, tuple) and bool(value) and all(_is_tensor(v) for v in value)


class AtenKernel:
    """The phase 2 of one table entry."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        self._index = {n: i for i, n in enumerate(entry.params)}
        self._fn: Callable[..., Any] | None = None
        self._runs: dict[tuple, Callable[[tuple], None]] = {}
        # an OutDtype or OutShape argument is made from a tensor's metadata at _make: then a run is
        # kept per tensors' dtypes and shapes too (else one made for fp16 ran a bf16 call as fp16)
        self._by_meta = any(isinstance(c, (OutDtype, OutShape)) for c in list(entry.args) + [v for _, v in entry.kwargs])

    def prepare(self, soc: str, a: tuple, empty: bool = False) -> Callable[[tuple], None]:
        """run(views) for C arguments of ``a``'s metadata and plain values (made once per
        distinct plain values: a repeated call reuses it)."""
        shape = tuple("T" if type(x) in _TENSOR_TYPES or _is_tensor(x) else "L" if type(x) is tuple and _is_list(x)
                      else value_key(x) for x in a)
        if self._by_meta:
            shape += tuple((str(x.dtype), tuple(x.shape)) for x in a if type(x) in _TENSOR_TYPES)
        try:
            run = self._runs.get(shape)
        except TypeError:  # a value that cannot be a key (a NaN is one, and misses)
            return self._make(a)
        if run is None:
            run = self._make(a)
            if len(self._runs) > 256:
                self._runs.clear()
            self._runs[shape] = run
        return run

    def _make(self, a: tuple) -> Callable[[tuple], None]:
        entry = self.entry
        torch = torch_module(entry.op)
        fn = self._fn or aten_callable(entry)
        self._fn = fn
        lists = {i for i, x in enumerate(a) if _is_list(x)}
        tensors = {i for i, x in enumerate(a) if _is_tensor(x)} | lists
        # C position -> a placeholder where aten takes that tensor; plain values converted now
        values = tuple(_Slot(i) if i in tensors else x for i, x in enumerate(a))
        args, kwargs = bind(entry, self._index, values, lambda v: v if isinstance(v, _Slot) else plain(v), torch, a)
        pos = [(k, v.index) for k, v in enumerate(args) if isinstance(v, _Slot)]
        kw = [(k, v.index) for k, v in kwargs.items() if isinstance(v, _Slot)]
        bits = a[self._index[entry.mask]] if entry.mask else None  # Entry.mask: outputs left unwritten
        outs = tuple(None if n is None or (bits is not None and k < len(bits) and not bits[k]) else self._index[n]
                     for k, n in enumerate(entry.out))
        upcast = entry.upcast
        longs = {self._index[c.param] for c in list(entry.args) + [v for _, v in entry.kwargs] if isinstance(c, Int64)}
        what = f"aclnn{entry.op} ({entry.aten})"
        promote = [self._index[n] for n in entry.promote]  # Entry.promote: cast to their promoted dtype
        # OpOverload.__call__ only forwards to its _op: calling that saves a Python frame a call
        # (a private attribute of torch's, so any torch without it gets the overload itself)
        call = getattr(fn, "_op", fn) if isinstance(fn, torch._ops.OpOverload) else fn
        refusals = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError)

        def refused(exc: BaseException) -> NotSupportedError:
            return NotSupportedError(f"{what} cannot compute these arguments on the CPU: "
                                     f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}")
        if not lists and not kw and not longs and not upcast and not promote and len(outs) == 1 and outs[0] is not None:
            out = _out_overload(fn, torch)  # pointwise, else a structured kernel's (_STRUCTURED)
            return _run_one(call, args, kwargs, pos, outs[0], a, torch, what, refusals, refused,
                            *((out, False) if out is not None else (_structured_out(fn, torch), True)))

        def tensor(v: Any, i: int) -> Any:
            x = v[i]
            if i in lists:
                ts = [to_torch(t, torch) for t in x]
                return [t.float() if upcast and t.dtype in (torch.float16, torch.bfloat16) else t for t in ts]
            if x is None:
                return None
            t = to_torch(x, torch)
            if i in longs:
                return t.long()
            return t.float() if upcast and t.dtype in (torch.float16, torch.bfloat16) else t

        def run(v: tuple) -> None:
            call_args = list(args)
            for k, i in pos:
                call_args[k] = tensor(v, i)
            call_kwargs = dict(kwargs)
            for name, i in kw:
                call_kwargs[name] = tensor(v, i)
            if promote:
                _promote(call_args, call_kwargs, pos, kw, promote, torch)
            try:
                result = call(*call_args, **call_kwargs)
            except refusals as exc:
                raise refused(exc) from None
            items = (result,) if len(outs) == 1 else result
            for slot, item in zip(outs, items):
                if slot is None:
                    continue
                target = v[slot]
                if target is None or item is None:  # an optional output not asked for, or not computed
                    continue
                if isinstance(target, tuple):
                    for o, t in zip(target, item):
                        write(o, t, torch, what)
                else:
                    write(target, item, torch, what)
        return run


def _np_dtype(x: Any) -> np.dtype | None:
    """The NumPy dtype of a tensor slot of prepare's arguments (a view, or a descriptor)."""
    if x is None:
        return None
    return x.dtype if isinstance(x, np.ndarray) else to_numpy(x.dtype)


def _out_overload(fn: Any, torch: Any) -> Any:
    """The out= form of a pointwise aten overload (``fn``), called as its _op, or None. Pointwise
    (``torch.Tag.pointwise``): the result's shape and dtype follow from the arguments' alone, and
    the functional form and its out= form are one TensorIterator kernel (a structured kernel's
    ``impl`` writes into the output the functional form allocates, or into ``out``). The pair is
    torchgen's: the same arguments, by name and type, plus one keyword-only ``out``."""
    try:
        if not isinstance(fn, torch._ops.OpOverload) or torch.Tag.pointwise not in fn.tags:
            return None
        packet = fn.overloadpacket
        for name in packet.overloads():
            overload = getattr(packet, name)
            if _is_out_form(overload, fn):
                return _binding(packet, overload, torch) or getattr(overload, "_op", overload)
    except AttributeError:  # a torch without tags or Argument.is_out: the functional form only
        pass
    return None


def _is_out_form(overload: Any, fn: Any) -> bool:
    """Whether ``overload``'s schema is ``fn``'s arguments (names and types) plus one keyword-only
    ``out``: the out= form torchgen pairs with a functional form."""
    args = overload._schema.arguments
    outs = [a for a in args if a.is_out]
    return (len(outs) == 1 and outs[0].name == "out" and outs[0].kwarg_only
            and [(a.name, str(a.type)) for a in args if not a.is_out]
            == [(a.name, str(a.type)) for a in fn._schema.arguments])


def _binding(packet: Any, overload: Any, torch: Any) -> Any:
    """torch's Python binding of ``overload`` (an out= form: ``torch.abs`` for aten::abs.out), or
    None where it might call another overload. The binding parses its arguments in C++ (about 0.6
    us less a call than the overload's ``_op``, which matches them against the JIT schema) and
    calls the same dispatcher operator: torchgen's python_torch_functions groups a native
    function's functional and out= forms into one signature, whose ``out=`` dispatches to
    ``<name>.out``. Taken only when that is the only signature the binding can pick: the packet's
    overloads that take a Tensor are exactly its functional form and this out= form (the
    others, e.g. aten::exp.int, are TorchScript's scalar ops, which no binding reaches), and
    every argument but ``out`` is a positional Tensor (so nothing is bound by name or default)."""
    name = packet.__name__
    binding = getattr(torch._C._VariableFunctions, name, None)
    if binding is None:
        return None
    tensor_forms = {o for o in packet.overloads()
                    if any(str(a.type).startswith("Tensor") for a in getattr(packet, o)._schema.arguments)}
    if tensor_forms != {"default", overload._overloadname}:
        return None
    inputs = [a for a in overload._schema.arguments if not a.is_out]
    if any(str(a.type) != "Tensor" or a.kwarg_only for a in inputs):
        return None
    try:  # some bindings have no out= (torchgen leaves it out of torch.relu): the parser says so
        binding(*[torch.zeros(1) for _ in inputs], out=torch.empty(1))
    except TypeError:
        return None
    except RuntimeError:  # (the kernel's refusal of the dtype: the parser took the arguments)
        pass
    return binding


_MATCHED = object()  # a views tuple's first run: aten's result had the output's shape and dtype


def _run_one(call: Callable[..., Any], args: list, kwargs: dict, pos: list[tuple[int, int]], slot: int, a: tuple,
             torch: Any, what: str, refusals: tuple, refused: Callable[[BaseException], Exception],
             call_out: Callable[..., Any] | None = None, structured: bool = False
             ) -> Callable[[tuple], None]:
    """The phase 2 of the usual entry (tensors by position, one output), with each tensor's
    conversion looked up once: run's steps without its branches.

    The last views tuple ``v`` is kept with aten's arguments made from it: a launch of the same
    plan at the same addresses passes the same tuple again (the runtime keeps it while no memory
    was freed), and an ndarray's shape, strides, dtype and memory never change, so the torch
    tensors made from it are the ones it would make again. ``call_out``: the entry's out= form
    (``_out_overload``); from the second run of one tuple on it writes straight into the output
    where that gives the same bytes as the result copied in (``_direct``, or
    ``_structured_direct`` for a ``structured`` kernel's out= form: ``_structured_out``)."""
    from_numpy = torch.from_numpy
    ins = []
    for k, i in pos:  # (aten position, C position, the view's dtype, the unsigned carrier or None, torch dtype)
        npdt = _np_dtype(a[i])
        carrier, tdt = (_NP.get(npdt) or _np_map()[npdt]) if npdt is not None else (None, None)
        ins.append((k, i, npdt, carrier, tdt))
    out_dt = _np_dtype(a[slot])
    out_carrier, out_tdt = (_NP.get(out_dt) or _np_map()[out_dt]) if out_dt is not None else (None, None)
    # the last views, aten's arguments made from them, and what _direct found: None (not asked:
    # the first run), _MATCHED (ask it), False (no) or the out= keywords (one tuple: replaced whole)
    last: list[tuple[Any, tuple, Any]] = [(None, (), None)]

    def run_one(v: tuple) -> None:
        seen, call_args, state = last[0]
        if v is seen:
            if state is _MATCHED:
                ask = _structured_direct if structured else _direct
                state = ask(v, call_args, slot, kwargs, from_numpy, call_out) or False
                last[0] = (v, call_args, state)
            if state:
                try:
                    call_out(*call_args, **state)  # type: ignore[misc]
                    return
                except refusals:  # (refused before it writes anything) the usual path says why
                    state = False
                    last[0] = (v, call_args, False)
        else:
            made = list(args)
            for k, i, npdt, carrier, tdt in ins:
                x = v[i]
                if x is None:
                    made[k] = None
                elif carrier is None and x.dtype is npdt:
                    made[k] = from_numpy(x)
                else:
                    made[k] = to_torch(x, torch)
            call_args, state = tuple(made), None  # (a tuple: each call unpacks it as it is)
            last[0] = (v, call_args, None)
        try:
            result = call(*call_args, **kwargs)
        except refusals as exc:
            raise refused(exc) from None
        target = v[slot]
        if target is None or result is None:
            return
        if (out_carrier is None and target.dtype is out_dt and result.shape == target.shape
                and result.dtype is out_tdt):  # the usual result: the output's shape and dtype
            target[...] = result.numpy()  # (the dtypes are the same: nothing is cast; copyto's keywords cost more)
            if state is None and call_out is not None:
                last[0] = (v, call_args, _MATCHED)
        else:
            write(target, result, torch, what)
    return run_one


def _direct(v: tuple, call_args: tuple, slot: int, kwargs: dict, from_numpy: Callable[..., Any],
            call_out: Callable[..., Any] | None) -> dict | None:
    """The out= keywords that make aten write the result of ``call_args`` into ``v[slot]`` itself,
    or None where that might differ from the result computed, then copied in (``_run_one``):
    pointwise aten on the same tensors gave a result of the output's shape and dtype (so out=
    casts and resizes nothing); the output is C-contiguous and writable, of a float or bool dtype
    (their CPU kernels raise nothing once running, so an out= form refused has written nothing:
    the usual path then reports it); and every tensor argument is C-contiguous, of the output's
    shape, and either disjoint from the output or exactly it (an in-place form): so TensorIterator
    runs the same loop over the same layout as for the result it allocates (no broadcast, no
    other order, no partial overlap)."""
    target = v[slot]
    if not _direct_target(target, call_out):
        return None
    start = target.__array_interface__["data"][0]
    for x in v:
        if x is None or x is target or not isinstance(x, np.ndarray):
            continue
        if x.shape != target.shape or not x.flags.c_contiguous:
            return None
        if np.may_share_memory(x, target) and not (x.__array_interface__["data"][0] == start
                                                  and x.dtype == target.dtype):
            return None
    return dict(kwargs, out=from_numpy(target))


def _direct_target(target: Any, call_out: Callable[..., Any] | None) -> bool:
    """What ``_direct`` and ``_structured_direct`` ask of the output alike: an out= form to call,
    and an output that is C-contiguous and writable (read-only memory: the usual path's copy
    refuses it), of a float or bool dtype (a refusal comes before anything is written)."""
    if call_out is None or target is None or target.dtype.kind not in "fb":
        return False
    flags = target.flags
    return bool(flags.c_contiguous and flags.writeable)


# -- the out= form of a few non-pointwise aten overloads whose functional form is the same kernel --
# torchgen's structured kernels (native_functions.yaml ``structured: True`` / ``structured_delegate``):
# the functional form's ``meta`` allocates the output, then calls the ``impl`` the out= form calls on
# ``out`` (a meta that finds ``out`` of the right shape, dtype and strides writes it, no proxy). torch
# exposes no flag for it, so the overloads are named here, each checked by
# tests/reference/test_aten_structured.py (out= against the functional result, bitwise, over NaN,
# infinities, -0.0, denormals, float16/bfloat16/float64, a large tensor for aten's threads):
#
#   amax, amin           amax.out / amin.out: structured (ReduceOps.cpp TORCH_IMPL_FUNC(amax_out))
#   softmax.int          softmax.int_out: at::_softmax_out into a contiguous out, the functional
#   log_softmax.int      at::_softmax (structured _softmax.out; SoftMax.cpp softmax_out), no dtype cast
#   mean.dim             structured_delegate: mean.out (ReduceOps.cpp TORCH_IMPL_FUNC(mean_out))
#   cumsum               structured_delegate: cumsum.out (ReduceOps.cpp TORCH_IMPL_FUNC(cumsum_out))
# aten overload name -> (its out= overload's name in the same packet, torch's Python binding of it)
_STRUCTURED: dict[str, tuple[str, str]] = {
    "aten::amax": ("out", "amax"),
    "aten::amin": ("out", "amin"),
    "aten::softmax.int": ("int_out", "softmax"),
    "aten::log_softmax.int": ("int_out", "log_softmax"),
    "aten::mean.dim": ("out", "mean"),
    "aten::cumsum": ("out", "cumsum"),
}


def _structured_out(fn: Any, torch: Any) -> Callable[..., Any] | None:
    """The out= form of ``fn`` (an OpOverload named in _STRUCTURED), or None. Its out= overload's
    schema must be ``fn``'s arguments (names and types) plus one keyword-only ``out``. Called
    through torch's Python binding (``torch.amax``: its C++ parser costs about 1 us less a call
    than the overload's ``_op``); given the functional form's positional arguments, its keywords
    and ``out=``, the binding dispatches to that out= overload (torchgen groups the functional and
    out= forms in one signature; the test records the overload dispatched for every entry)."""
    try:
        names = _STRUCTURED.get(fn._schema.name + ("." + fn._overloadname if fn._overloadname != "default" else ""))
        if names is None:
            return None
        overload = getattr(fn.overloadpacket, names[0])
        if _is_out_form(overload, fn):
            return getattr(torch._C._VariableFunctions, names[1], None) or getattr(overload, "_op", overload)
    except AttributeError:  # not an OpOverload, or a torch without that overload or Argument.is_out
        pass
    return None


def _structured_direct(v: tuple, call_args: tuple, slot: int, kwargs: dict, from_numpy: Callable[..., Any],
                       call_out: Callable[..., Any] | None) -> dict | None:
    """The out= keywords that make a _STRUCTURED overload write into ``v[slot]`` itself, or None
    (``_direct``'s rule for these ops; _run_one asks only after the functional result on the same
    tensors had the output's shape and dtype, so out= resizes and casts nothing): the output
    C-contiguous (the layout the functional meta allocates for C-contiguous inputs) and writable,
    of a float or bool dtype (a refusal comes from the meta, before anything is written); every
    input C-contiguous and sharing no byte with the output (even an exact alias would change a
    reduction's or a softmax's result: the output is written while the input is still read)."""
    target = v[slot]
    if not _direct_target(target, call_out):
        return None
    for i, x in enumerate(v):
        if i == slot or not isinstance(x, np.ndarray):
            continue
        if not x.flags.c_contiguous or np.may_share_memory(x, target):
            return None
    return dict(kwargs, out=from_numpy(target))


def _promote(args: list, kwargs: dict, pos: list, kw: list, promote: list[int], torch: Any) -> None:
    """The ``Entry.promote`` tensors among aten's arguments cast to their promoted dtype (torch's
    promote_types: the table CANN's op::PromoteType copies, for the dtypes phase 1 let through)."""
    where = [(args, k, i) for k, i in pos if i in promote] + [(kwargs, k, i) for k, i in kw if i in promote]
    present = [box[k] for box, k, _ in where if box[k] is not None]
    if not present:
        return
    dtype = present[0].dtype
    for t in present[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    for box, k, _ in where:
        if box[k] is not None and box[k].dtype != dtype:
            box[k] = box[k].to(dtype)


class _Slot:
    """Where a tensor goes in aten's arguments: C position ``index``."""
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

