"""The aten kernel's repeated launch (pyaclnn/ops/_aten/kernel.py ``_run_one``): aten's arguments
kept per views tuple, and the out= form of a pointwise overload writing straight into the output.
The oracle is torch's functional form (its result, copied in, is what the kernel wrote before)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pyaclnn  # noqa: E402
from aten_support import aten_backend  # noqa: E402
from helpers.spies import answers  # noqa: E402

RNG = np.random.default_rng(24)


@pytest.fixture
def aten(use_backend: Callable[..., object], tmp_path: Path) -> object:
    return aten_backend(use_backend, tmp_path)


def _tensor(dtype: type, shape: tuple[int, int]) -> Any:
    x = RNG.standard_normal(shape) * 3
    if dtype in (np.int32, np.bool_):
        return torch.from_numpy((x * 10).astype(dtype))
    x.flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 1e-40, 0.5]
    return torch.from_numpy(x.astype(dtype))


def _arguments(fn: Any, dtype: type, shape: tuple[int, int]) -> list | None:
    """Arguments for ``fn``'s schema up to its first defaulted one (None: a type not made here)."""
    args: list = []
    for a in fn._schema.arguments:
        kind = str(a.type)
        if kind.startswith("Tensor"):
            args.append(torch.from_numpy(RNG.random(shape) > .5) if a.name in ("condition", "mask")
                        else _tensor(dtype, shape))
        elif a.has_default_value():
            break
        elif kind in ("number", "number?", "Scalar", "Scalar?", "float", "float?"):
            args.append(0.75)
        elif kind in ("int", "int?"):
            args.append(1)
        elif kind == "bool":
            args.append(False)
        else:
            return None
    return args


def test_out_forms_write_the_functional_bytes() -> None:
    """Every pair _out_overload finds for a table entry: the out= form writes, into an output of
    the result's shape and float or bool dtype, the bytes of the functional form's result, also
    in place (out= the first input), with NaN, infinities, -0.0 and denormals among the inputs;
    on a small tensor and (float32) on one large enough for aten's threads and oneDNN paths."""
    from pyaclnn.ops._aten.kernel import _out_overload
    from pyaclnn.ops._aten.spec import aten_callable
    from pyaclnn.ops._aten.table import load
    seen, compared = set(), 0
    for entry in load().values():
        if not entry.aten.startswith("aten::"):
            continue
        fn = aten_callable(entry)
        out = _out_overload(fn, torch)
        if out is None or fn in seen:
            continue
        seen.add(fn)
        for dtype, shape in [(d, (8, 16)) for d in (np.float32, np.float16, np.float64, np.int32, np.bool_)] + [
                (np.float32, (300, 1001))]:
            args = _arguments(fn, dtype, shape)
            if args is None:
                break
            try:
                want = fn(*args)
            except RuntimeError:  # (this dtype is not one of the op's)
                continue
            if want.dtype not in (torch.float32, torch.float16, torch.float64, torch.bool):
                continue
            got = torch.empty_like(want)
            out(*args, out=got)
            compared += 1
            assert np.array_equal(want.numpy().view(np.uint8), got.numpy().view(np.uint8)), (entry.op, dtype)
            first = next(i for i, t in enumerate(args) if isinstance(t, torch.Tensor))
            if args[first].dtype == want.dtype:
                mine = list(args)
                mine[first] = args[first].clone()
                out(*mine, out=mine[first])
                assert np.array_equal(want.numpy().view(np.uint8), mine[first].numpy().view(np.uint8)), entry.op
    assert len(seen) > 100 and compared > 300  # (the table's pointwise entries: a few hundred pairs)


def test_python_binding_only_where_it_is_the_one_signature() -> None:
    """_binding takes torch's Python binding (torch.abs) for an out= overload only where the
    binding cannot pick another: aten::add.out (add.Tensor, add.Scalar: two signatures), a
    binding without out= (torch.relu) and an out= form with a non-Tensor argument (logit's eps)
    keep the overload; exp's TorchScript scalar overloads (exp.int) do not count."""
    from pyaclnn.ops._aten.kernel import _binding
    aten = torch.ops.aten
    assert _binding(aten.abs, aten.abs.out, torch) is torch._C._VariableFunctions.abs
    assert _binding(aten.exp, aten.exp.out, torch) is torch._C._VariableFunctions.exp
    for packet in (aten.add, aten.relu, aten.logit):
        assert _binding(packet, packet.out, torch) is None, packet


@pytest.fixture
def direct(monkeypatch: pytest.MonkeyPatch) -> list:
    """What each ``_direct`` call answered (the out= keywords, or None): the tests see the form used."""
    from pyaclnn.ops._aten import kernel
    return answers(monkeypatch, kernel, "_direct")


def _abs(x: pyaclnn.Tensor, out: pyaclnn.Tensor, stream: pyaclnn.Stream) -> np.ndarray:
    with pyaclnn.Op("Abs", x, out) as ex:
        ex.run(stream)
    stream.synchronize()
    return out.numpy()


def test_kept_arguments_follow_the_views(aten: object, direct: list) -> None:
    """Two pairs of tensors alternating through one plan: each launch computes its own tensors
    (a kernel keeping aten's arguments by anything less than the views tuple itself would compute
    the other pair's), and new bytes in a kept input are read (the kept tensors share its memory)."""
    a, b = RNG.standard_normal((8, 16)).astype(np.float32), RNG.standard_normal((8, 16)).astype(np.float32)
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        xa, xb = pyaclnn.Tensor.from_numpy(a), pyaclnn.Tensor.from_numpy(b)
        oa, ob = pyaclnn.Tensor.zeros((8, 16), np.float32), pyaclnn.Tensor.zeros((8, 16), np.float32)
        for k in range(4):
            np.testing.assert_array_equal(_abs(xa, oa, stream), np.abs(a))
            np.testing.assert_array_equal(_abs(xb, ob, stream), np.abs(b))
            np.testing.assert_array_equal(_abs(xa, ob, stream), np.abs(a))
        for k in range(4):  # the same views each time: the direct form from the second launch on
            a = a - 1 - k
            xa.copy_from(a)
            np.testing.assert_array_equal(_abs(xa, oa, stream), np.abs(a))
        assert direct and direct[-1] is not None  # (the direct form ran)
        for t in (xa, xb, oa, ob):
            t.close()


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_a_cast_result_is_written_as_before(aten: object, direct: list, dtype: type) -> None:
    """An output of another dtype than aten's result (phase 1 lets Exp cast it): the result is
    computed in the input's dtype and cast as Tensor.to casts, at every launch of the same views."""
    x = RNG.standard_normal((8, 16)).astype(np.float32) * 4
    want = torch.exp(torch.from_numpy(x)).to(getattr(torch, np.dtype(dtype).name)).numpy()
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        t, out = pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.zeros((8, 16), dtype)
        for _ in range(3):
            with pyaclnn.Op("Exp", t, out) as ex:
                ex.run(stream)
            stream.synchronize()
            np.testing.assert_array_equal(out.numpy(), want)
        assert not direct  # (never asked: the result is not the output's dtype)
        t.close()
        out.close()


def test_in_place_through_the_direct_form(aten: object, direct: list) -> None:
    """InplaceRelu's output is its input: aten's out= form in place, launch after launch."""
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        t = pyaclnn.Tensor.from_numpy(x)
        for k in range(3):
            t.copy_from(x - k)
            with pyaclnn.Op("InplaceRelu", t) as ex:
                ex.run(stream)
            stream.synchronize()
            np.testing.assert_array_equal(t.numpy(), np.maximum(x - k, 0))
        assert direct == [direct[0]] and direct[0] is not None  # asked once: out= in place from then on
        t.close()
