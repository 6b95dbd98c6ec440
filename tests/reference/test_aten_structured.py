"""The out= form of the structured (non-pointwise) aten overloads pyaclnn/ops/_aten/kernel.py's
``_STRUCTURED`` names, written straight into the output by the aten kernel's repeated launch. The
oracle is torch's functional form: its result, copied in, is what the kernel wrote before."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pyaclnn  # noqa: E402
from aten_support import aten_backend  # noqa: E402
from helpers.spies import answers  # noqa: E402

RNG = np.random.default_rng(8)
_SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-310, 5e-324, 65504.0, 3.0e38]


@pytest.fixture
def aten(use_backend: Callable[..., object], tmp_path: Path) -> object:
    return aten_backend(use_backend, tmp_path)


def _inputs(dtype: Any, shape: tuple[int, ...], seed: int) -> Any:
    """A tensor of ``dtype`` with NaN, infinities, -0.0 and denormals (of float64, float32) scattered
    in (seed 0: none, so a reduction of NaN-free rows is compared too)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 4
    if seed:
        idx = rng.choice(x.size, size=min(x.size, 3 * len(_SPECIALS)), replace=False)
        x.flat[idx] = np.resize(_SPECIALS, len(idx))
    return torch.from_numpy(x).to(dtype)


def _calls(fn: Any, x: Any, dim: int) -> list[tuple[list, dict]]:
    """The (args, kwargs) the table's entries pass to ``fn`` on ``x`` along ``dim``: dims as one
    axis or all, keepdim either way, a keyword-only ``dtype`` (the entry passes one: None, the
    input's, float32, float64)."""
    calls: list[tuple[list, dict]] = [([], {})]
    for a in fn._schema.arguments:
        kind = str(a.type)
        if kind == "Tensor":
            options = [x]
        elif a.name == "dim":
            options = [[dim], list(range(x.dim()))] if "List" in kind else [dim]
        elif a.name == "keepdim":
            options = [False, True]
        elif a.name == "dtype" and a.kwarg_only:
            calls = [(c, dict(k, **{a.name: t})) for c, k in calls
                     for t in (None, x.dtype, torch.float32, torch.float64)]
            continue
        elif a.name == "dtype":  # (softmax's: positional, the entries leave it unset)
            break
        else:
            raise AssertionError(f"{fn}: an argument of type {kind} is not made here")
        calls = [(c + [o], k) for c, k in calls for o in options]
    return calls


def _entries() -> list[tuple[str, Any, Any]]:
    """(op, functional overload, out= form) of every table entry the structured rule admits."""
    from pyaclnn.ops._aten.kernel import _out_overload, _structured_out
    from pyaclnn.ops._aten.spec import aten_callable
    from pyaclnn.ops._aten.table import load
    found = []
    for entry in load().values():
        if not entry.aten.startswith("aten::"):
            continue
        fn = aten_callable(entry)
        out = _structured_out(fn, torch)
        if out is not None and _out_overload(fn, torch) is None:
            found.append((entry.op, fn, out))
    return found


def test_every_named_overload_is_an_admitted_table_entry() -> None:
    """kernel._STRUCTURED names only overloads the table uses and torch pairs with an out= form
    (a name no entry reaches, or a torch without the pair, shows here, not as a silent slow path)."""
    from pyaclnn.ops._aten import kernel
    ops = {op for op, _, _ in _entries()}
    assert {"Amax", "Amin", "Softmax", "LogSoftmax", "Mean", "Cumsum"} <= ops
    names = {(fn._schema.name + ("." + fn._overloadname if fn._overloadname != "default" else ""))
             for _, fn, _ in _entries()}
    assert names == set(kernel._STRUCTURED)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_out_forms_write_the_functional_bytes(dtype: str) -> None:
    """For each admitted entry, over several inputs (with NaN, infinities, -0.0, denormals), every
    dim and keepdim, on small tensors and one large enough for aten's threads and vector paths:
    the out= form writes into an output of the functional result's shape and dtype exactly the
    bytes of that result (the arguments as the entries pass them: a dtype keyword included)."""
    tdt = getattr(torch, dtype)
    torch_threads = torch.get_num_threads()
    compared = 0
    try:
        for threads in (1, max(2, torch_threads)):
            torch.set_num_threads(threads)
            for op, fn, out in _entries():
                for shape in [(8, 16), (3, 5, 7), (1, 33), (300, 1001)]:
                    for seed in (0, 1, 2):
                        x = _inputs(tdt, shape, seed)
                        for dim in range(-len(shape), len(shape)):
                            for args, kwargs in _calls(fn, x, dim):
                                want = fn(*args, **kwargs)
                                got = torch.full_like(want, 7.0)
                                out(*args, **kwargs, out=got)
                                compared += 1
                                assert want.dtype == got.dtype and want.is_contiguous()
                                assert torch.equal(want.view(_bits(want.dtype)), got.view(_bits(got.dtype))), (
                                    op, dtype, shape, seed, args[1:], kwargs, threads)
    finally:
        torch.set_num_threads(torch_threads)
    assert compared > 500


def test_the_out_form_dispatches_the_out_overload() -> None:
    """The callable out_form gives (torch's Python binding), called with each entry's arguments
    as the kernel passes them (the functional form's positional ones, its keywords, out=), reaches
    exactly the out= overload STRUCTURED names, as the overload's own _op does."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from pyaclnn.ops._aten import kernel

    class Record(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list = []

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            self.seen.append(func)
            return func(*args, **(kwargs or {}))
    checked = 0
    for op, fn, out in _entries():
        name = fn._schema.name + ("." + fn._overloadname if fn._overloadname != "default" else "")
        overload = getattr(fn.overloadpacket, kernel._STRUCTURED[name][0])
        x = _inputs(torch.float32, (3, 5), 1)
        for dim in (0, -1):
            for args, kwargs in _calls(fn, x, dim):
                got = torch.empty_like(fn(*args, **kwargs))
                with Record() as record:
                    out(*args, **kwargs, out=got)
                assert record.seen == [overload], (op, args[1:], kwargs, record.seen)
                checked += 1
    assert checked > 20


def _bits(dtype: Any) -> Any:
    return {2: torch.int16, 4: torch.int32, 8: torch.int64}[dtype.itemsize]


@pytest.fixture
def direct(monkeypatch: pytest.MonkeyPatch) -> list:
    """What each kernel._structured_direct call answered (the out= keywords, or None)."""
    from pyaclnn.ops._aten import kernel
    return answers(monkeypatch, kernel, "_structured_direct")


_CASES: dict[str, tuple[Callable[[Any, Any], tuple], Callable[[Any], Any], tuple[int, ...]]] = {
    "Amax": (lambda t, o: (t, [1], False, o), lambda y: torch.amax(y, 1), (8,)),
    "Amin": (lambda t, o: (t, [1], False, o), lambda y: torch.amin(y, 1), (8,)),
    "Softmax": (lambda t, o: (t, 1, o), lambda y: torch.softmax(y, 1), (8, 16)),
    "LogSoftmax": (lambda t, o: (t, 1, o), lambda y: torch.log_softmax(y, 1), (8, 16)),
    "Mean": (lambda t, o: (t, [0], True, int(pyaclnn.DType.FLOAT), o), lambda y: torch.mean(y, [0], True),
             (1, 16)),
    "Cumsum": (lambda t, o: (t, 0, int(pyaclnn.DType.FLOAT), o), lambda y: torch.cumsum(y, 0), (8, 16)),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_repeated_launches_write_through_the_out_form(aten: object, direct: list, case: str) -> None:
    """One plan launched again and again on the same views, with new bytes in the input between
    launches: from the second launch on aten writes into the output itself (kernel._structured_direct
    said so), and every launch reads back torch's functional result."""
    arguments, oracle, out_shape = _CASES[case]
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        t = pyaclnn.Tensor.from_numpy(x)
        out = pyaclnn.Tensor.zeros(out_shape, np.float32)
        for k in range(4):
            y = x * (k + 1) - k
            y[k, k] = [np.nan, np.inf, -0.0, 1e-40][k]
            t.copy_from(y)
            with pyaclnn.Op(case, *arguments(t, out)) as ex:
                ex.run(stream)
            stream.synchronize()
            want = oracle(torch.from_numpy(y)).numpy()
            np.testing.assert_array_equal(out.numpy().view(np.int32), want.view(np.int32))
        assert len(direct) == 1 and direct[0] is not None  # asked once; out= from then on
        t.close()
        out.close()


def test_any_overlap_with_an_input_is_refused() -> None:
    """An output sharing bytes with an input (even the input itself: a softmax or reduction
    written in place may read what it already wrote), a non-contiguous input or output, a read-only
    or integer output: not written through out=."""
    from pyaclnn.ops._aten import kernel
    out_form = kernel._structured_out(torch.ops.aten.softmax.int, torch)
    assert out_form is not None
    base = np.ones((8, 16), np.float32)
    x = base.copy()

    def ask(*v: Any, slot: int) -> dict | None:
        return kernel._structured_direct(v, [], slot, {}, torch.from_numpy, out_form)
    assert ask(x, 1, np.empty_like(x), slot=2) is not None
    assert ask(x, 1, x, slot=2) is None  # the input itself
    assert ask(base, 1, base[1:5], slot=2) is None  # a part of it
    assert ask(x[:, ::2], 1, np.empty((8, 8), np.float32), slot=2) is None  # a strided input
    assert ask(x, 1, np.empty((16, 8), np.float32).T, slot=2) is None  # a strided output
    ro = np.empty_like(x)
    ro.flags.writeable = False
    assert ask(x, 1, ro, slot=2) is None
    assert ask(x, 1, np.empty((8, 16), np.int32), slot=2) is None  # (integers: only floats and bool)
