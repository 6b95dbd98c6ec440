"""aclnnForeachMulScalarList on the NumPy reference: against torch._foreach_mul (per SoC, with the
kernel's rounding), the CANN page's sample, every status of the generated aclnn and its tilings on
both backends where the emulator models them, and randomised calls bit-exact against the C emulator
(tests/emulator/src/emu_ops_nn.c) with the same statuses."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from conftest import outcome
from pyaclnn.ops import samples as _samples
from pyaclnn._spec import TensorMeta
from pyaclnn.dtypes import DType
from pyaclnn.ops.foreach_mul_scalar_list import spec as fe_spec

torch = pytest.importorskip("torch")

BF16 = np.dtype(ml_dtypes.bfloat16)
F32, F16, I32 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.int32)
OK = None


def fmul(xs, scalars, outs=...):
    """aclnnForeachMulScalarList through pyaclnn.Op on the active backend: the out arrays, or the
    AclError raised (outs: zeros like xs unless given; None is the nullptr)."""
    if outs is ...:
        outs = [np.zeros(x.shape, x.dtype) for x in xs]
    try:
        with pyaclnn.Op("ForeachMulScalarList", xs, scalars, outs) as op:
            op.run()
            return [t.numpy() for t in op["out"]]
    except pyaclnn.AclError as exc:
        return exc


def to_torch(a: np.ndarray):
    a = a.copy(order="C")  # (ascontiguousarray makes a 0-d array 1-d)
    return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if a.dtype == BF16 else torch.from_numpy(a)


def from_torch(t) -> np.ndarray:
    return t.view(torch.int16).numpy().view(BF16) if t.dtype == torch.bfloat16 else t.numpy()


def torch_foreach_mul(xs, scalars):
    """torch._foreach_mul on CPU (float tensors compute in float32, one rounding to their dtype)."""
    return [from_torch(t) for t in torch._foreach_mul([to_torch(x) for x in xs], list(scalars))]


def _data(rng, shape, dt):
    if dt == I32:
        return rng.integers(-2**31, 2**31, shape, dtype=np.int64).astype(np.int32)
    return np.asarray(rng.standard_normal(shape) * 50, np.float32).astype(dt)


def _same(got, want):
    assert not isinstance(got, Exception), got
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(np.ascontiguousarray(g).view(np.uint8), np.ascontiguousarray(w).view(np.uint8))


@pytest.mark.parametrize("soc", ["Ascend910B", "Ascend910_93", "Ascend950"])
@pytest.mark.parametrize("dt", [F32, BF16, I32])
def test_against_torch(use_backend, soc, dt) -> None:
    """float32, bfloat16 (through float32, CAST_RINT) and int32 (wrapping) are torch's results on
    every SoC; the scalars reach the kernel as float32 (int64 for int32 tensors)."""
    use_backend("numpy", soc=soc)
    rng = np.random.default_rng(7)
    xs = [_data(rng, s, dt) for s in [(2, 3), (5,), (), (1, 2, 2)]]
    if dt == I32:
        scalars = [3, -2, 7, 1 << 20]  # int64 scalars; the products wrap in int32
        want = torch_foreach_mul(xs, scalars)
    else:
        scalars = [np.float32(v) for v in (0.3, -1.5, 2.25, 1e-3)]
        want = torch_foreach_mul(xs, [float(s) for s in scalars])
    _same(fmul(xs, scalars), want)


def test_python_floats_are_taken_as_float32(use_backend) -> None:
    """A Python float is an ACL_DOUBLE aclScalar; nnopbase stores it as float
    (NnopbaseExecutorAddScalarListInput), so it matches the (float32, float32) row."""
    use_backend("numpy")
    xs = [np.array([1.0, 3.0], F32), np.array([[7.0]], F32)]
    _same(fmul(xs, [0.1, 1 / 3]), torch_foreach_mul(xs, [float(np.float32(0.1)), float(np.float32(1 / 3))]))
    _same(fmul(xs, [np.float32(2), 0.1]), torch_foreach_mul(xs, [2.0, float(np.float32(0.1))]))  # mixed: FLOAT
    assert fmul(xs, [2, 0.5]).status == 161002  # scalars[0] int64 with a double: pyaclnn refuses the garbled pack


def test_float16_on_a2_rounds_the_scalar_to_half_first(use_backend) -> None:
    """A2/A3 compute float16 natively: the scalar becomes half (foreach_one_scalar_list_binary.h
    ProcessPlusInLoop), then one rounding of the exact product; 950 multiplies in float32 by the
    float32 scalar. 1000 * 1.0003: half(1.0003) is 1, so 1000 on A2; 1000.3 rounds to 1000.5 on 950."""
    xs = [np.array([1000.0, -3.0, 0.5, 65504.0], F16), np.array([[1.0, 2.0]], F16)]
    scalars = [np.float32(1.0003), np.float32(0.3)]
    half_scalars = [float(np.float16(s)) for s in scalars]
    use_backend("numpy", soc="Ascend910B")
    got = fmul(xs, scalars)
    _same(got, torch_foreach_mul(xs, half_scalars))
    assert got[0][0] == 1000.0
    use_backend("numpy", soc="Ascend950")
    got = fmul(xs, scalars)
    _same(got, torch_foreach_mul(xs, [float(s) for s in scalars]))
    assert got[0][0] == 1000.5


def test_out_may_be_shaped_otherwise_and_strided(use_backend) -> None:
    """out[i] needs only as many elements: x[i]'s go to its first ones in row-major order of its
    view (the kernel writes flat); strided x and out; out may be x itself (in place)."""
    use_backend("numpy")
    base = np.arange(24, dtype=F32).reshape(4, 6)
    x0, x1 = base[::2, 1::2], np.arange(4, dtype=F32)       # (2, 3) strided, (4,)
    big = np.full((3, 3), -1.0, F32)
    strided_out = np.full((4, 4), -1.0, F32)[::2, ::2]        # (2, 2), 4 elements
    got = fmul([x0, x1], [np.float32(2), np.float32(-1)], [big, strided_out])
    want = torch_foreach_mul([x0, x1], [2.0, -1.0])
    np.testing.assert_array_equal(got[0].reshape(-1)[:6], want[0].reshape(-1))
    assert (got[0].reshape(-1)[6:] == -1).all()
    np.testing.assert_array_equal(got[1], want[1].reshape(2, 2))
    x = pyaclnn.Tensor.from_numpy(np.array([1.0, 2.0], F32))
    with pyaclnn.Op("ForeachMulScalarList", [x], [np.float32(3)], [x]) as op:
        op.run()
    assert x.numpy().tolist() == [3.0, 6.0]


def test_sample_prints_the_documented_values(use_backend) -> None:
    """The page's sample: [1..6] (2, 3) * 1.2f and [70, 80, 90] * 2.2f, as torch computes them."""
    use_backend("numpy")
    lines: list[str] = []
    assert _samples.run("ForeachMulScalarList", lines.append), lines
    want = torch_foreach_mul([np.arange(1, 7, dtype=F32).reshape(2, 3), np.array([70, 80, 90], F32)],
                             [float(np.float32(1.2)), float(np.float32(2.2))])
    printed = [float(line.split("is: ")[1].split()[0]) for line in lines if " result[" in line]
    np.testing.assert_allclose(printed, np.concatenate([w.ravel() for w in want]), atol=5e-7)


def test_every_out_tensor_empty_skips_the_tiling(use_backend) -> None:
    """NnopbaseExecutorMatchCache / DoTiling: every out tensor empty -> no tiling, no kernel:
    success even where the tiling would refuse (out smaller than x, scalars too few), workspace 0."""
    use_backend("numpy")
    xs = [np.ones((2, 2), F32), np.ones(3, F32)]
    got = fmul(xs, [np.float32(2)], [np.zeros((0,), F32), np.zeros((2, 0), F32)])
    assert [g.shape for g in got] == [(0,), (2, 0)]
    assert fmul(xs, [np.float32(2)], [np.zeros((0,), F32), np.zeros(1, F32)]).status == 561002
    meta = [TensorMeta((2,), DType.FLOAT)]
    assert fe_spec.workspace_size("Ascend910B", meta, (), [TensorMeta((0,), DType.FLOAT)]) == (0, False)
    assert fe_spec.workspace_size("Ascend910B", meta, (), meta) == (32, False)  # the tilings' fixed reserve


class S:  # an aclScalarList member as the reference's check sees it
    def __init__(self, value, dtype):
        self.value, self.dtype = value, dtype


def _check(soc, *args):
    """The spec's check on metadata (a NULL member, a 257-tensor list)."""
    try:
        return fe_spec.check(soc, *args)
    except pyaclnn.AclError as exc:
        return exc


T2 = TensorMeta((2,), DType.FLOAT)
SF = S(2.0, DType.FLOAT)


def _x(*arrays):
    return list(arrays)


# (call, status, error class, words of the message): each rule of the generated aclnn and of the
# A2/A3 tiling (foreach_tiling_class.h CheckOpInfo), which the emulator models too
A2_CASES = [
    (lambda: fmul(None, [np.float32(2)], [np.zeros(2, F32)]), 161001, "AclnnParamNullptrError", "x is nullptr"),
    (lambda: fmul([np.ones(2, F32)], None, [np.zeros(2, F32)]), 161001, "AclnnParamNullptrError", "scalars is nullptr"),
    (lambda: fmul([np.ones(2, F32)], [np.float32(2)], None), 161001, "AclnnParamNullptrError", "out is nullptr"),
    (lambda: fmul([np.ones(2, np.float64)], [2.0]), 161002, "AclnnParamInvalidError", "not in the op definition"),
    (lambda: fmul([np.ones(2, F32)], [2]), 161002, "AclnnParamInvalidError", "scalars int64"),
    (lambda: fmul([np.ones(2, I32)], [np.float32(2)]), 161002, "AclnnParamInvalidError", "scalars float"),
    (lambda: fmul([np.ones(2, F32)], [np.float32(2)], [np.zeros(2, F16)]), 161002, "AclnnParamInvalidError",
     "out float16"),
    (lambda: fmul([np.ones((1,) * 9, F32)], [np.float32(2)]), 561002, "AclnnInnerTilingError", "rank 9 exceeds 8"),
    (lambda: fmul([np.ones(2, F32)] * 2, [np.float32(2)]), 561002, "AclnnInnerTilingError", "scalars holds 1"),
    (lambda: fmul([np.ones(2, F32)], [np.float32(2)] * 2), 561002, "AclnnInnerTilingError", "scalars holds 2"),
    (lambda: fmul([np.ones(2, F32)] * 2, [np.float32(2)] * 2, [np.zeros(2, F32)]), 561002, "AclnnInnerTilingError",
     "output 1 desc is null"),
    (lambda: fmul([np.ones(2, F32)] * 2, [np.float32(2)] * 2, [np.zeros(2, F32), np.zeros(2, F16)]), 561002,
     "AclnnInnerTilingError", "out[1] dtype float16"),
    (lambda: fmul([np.ones((2, 2), F32)], [np.float32(2)], [np.zeros(3, F32)]), 561002, "AclnnInnerTilingError",
     "fewer than x[0]"),
    (lambda: fmul([np.ones(2, F32), np.ones(2, F16)], [np.float32(2)] * 2, [np.zeros(2, F32)] * 2), 561002,
     "AclnnInnerTilingError", "x[1] dtype float16 differs"),
    # accepted: an out list longer than x (not read), an out of another shape with enough elements
    (lambda: fmul([np.ones(2, F32)], [np.float32(2)], [np.zeros(2, F32), np.zeros(5, F16)]), OK, "", ""),
    (lambda: fmul([np.ones((2, 2), F32)], [np.float32(2)], [np.zeros(5, F32)]), OK, "", ""),
]


@pytest.mark.parametrize("backend", ["numpy", "acl"], indirect=True)
@pytest.mark.parametrize("call, status, cls, text", A2_CASES)
def test_statuses_on_both_backends(backend, call, status, cls, text) -> None:
    got = call()
    if status is OK:
        assert not isinstance(got, Exception), got
    else:
        assert isinstance(got, pyaclnn.AclError) and (got.status, type(got).__name__) == (status, cls), got
        if backend == "numpy":  # the emulator words its own messages
            assert text in str(got), got


@pytest.mark.parametrize("soc, call, status, text", [
    ("Ascend910B", lambda: _check("Ascend910B", [T2, None], [SF, SF], [T2, T2]), 161001, "x[1] is nullptr"),
    ("Ascend910B", lambda: _check("Ascend910B", [T2], [None], [T2]), 161001, "scalars[0] is nullptr"),
    ("Ascend910B", lambda: _check("Ascend910B", [T2] * 257, [SF] * 257, [T2] * 257), 161002, "exceeds limit: 256"),
    ("Ascend910B", lambda: _check("Ascend910B", [T2], [SF], [T2] * 257), 161002, "output out is 257"),
    ("Ascend910B", lambda: _check("Ascend910B", [], [], []), 561002, "x holds no tensor"),
    ("Ascend910", lambda: fmul([np.ones(2, F32)], [np.float32(2)]), 561003, "no kernel on Ascend910"),
    ("Ascend310P", lambda: fmul([np.ones(2, np.float64)], [2.0]), 561003, "no kernel on Ascend310P"),  # before dtypes
    # Ascend950's tiling (ForeachRegbaseTilingUnaryScalarList2) checks what A2's does not
    ("Ascend950", lambda: fmul([np.ones(2, F32)], [np.float32(2)], [np.zeros(2, F32), np.zeros(2, F32)]), 561002,
     "tensor nums in {x, y}"),
    ("Ascend950", lambda: fmul([np.ones(2, F32)], [np.float32(2)], [np.zeros((1,) * 7 + (2, 1), F32)]), 561002,
     "out[0] rank 9"),
    ("Ascend950", lambda: fmul([np.ones(2, F32), np.ones(2, F16)], [np.float32(2)] * 2, [np.zeros(2, F32)] * 2),
     561002, "x[1] dtype float16 differs"),
    ("Ascend950", lambda: fmul([np.ones(2, BF16)], [2.0]), OK, ""),
    ("Ascend910_93", lambda: fmul([np.ones(2, F32)], [np.float32(2)], [np.zeros(2, F32), np.zeros(2, F32)]), OK, ""),
])
def test_reference_only_statuses(use_backend, soc, call, status, text) -> None:
    """What the emulator (Ascend910B, at most 4 tensors per list) does not model: the SoCs without a
    kernel, nnopbase's 256-tensor limit, NULL members (refused as the generated check words it),
    the empty x list (pyaclnn refuses), and the 950 tiling."""
    use_backend("numpy", soc=soc)
    got = call()
    if status is OK:
        assert not isinstance(got, Exception), got
    else:
        assert isinstance(got, pyaclnn.AclError) and got.status == status and text in str(got), got


EMULATED = [F32, F16, BF16, I32]


def _random_case(rng):
    dt = EMULATED[int(rng.integers(len(EMULATED)))]
    n = int(rng.integers(1, 5))
    xs, outs, scalars = [], [], []
    for _ in range(n):
        shape = tuple(int(d) for d in rng.integers(0 if rng.random() < 0.1 else 1, 4, int(rng.integers(0, 4))))
        x_dt = dt if rng.random() > 0.05 else EMULATED[int(rng.integers(len(EMULATED)))]
        xs.append(_data(rng, shape, x_dt))
        size = int(np.prod(shape))
        out_shape = shape if rng.random() < 0.7 else (size + int(rng.integers(-1 if size else 0, 3)),)
        out_dt = dt if rng.random() > 0.05 else EMULATED[int(rng.integers(len(EMULATED)))]
        outs.append(np.zeros(out_shape, out_dt))
    for _ in range(n):
        if dt == I32:
            scalars.append(int(rng.integers(-2**40, 2**40)) if rng.random() < 0.3 else int(rng.integers(-9, 9)))
        else:
            v = float(rng.standard_normal() * 4)
            scalars.append(np.float32(v) if rng.random() < 0.6 else v)
        if rng.random() < 0.05:
            scalars[-1] = np.float32(2) if dt == I32 else 2  # a dtype off the row
    if rng.random() < 0.07:
        scalars = scalars[:-1] if rng.random() < 0.5 else scalars + scalars[:1]
    if rng.random() < 0.07:
        outs = outs[:-1] if rng.random() < 0.5 else outs + [np.zeros(2, dt)]
    if rng.random() < 0.05:
        outs = [np.zeros((0,), o.dtype) for o in outs]  # nothing runs
    return xs, scalars, outs


def _outcome(got):
    return outcome(got) if isinstance(got, Exception) else ("ok", [outcome(g) for g in got])


def test_reference_and_emulator_agree_on_random_calls(reference_then_emulator) -> None:
    rng = np.random.default_rng(18)
    cases = [_random_case(rng) for _ in range(300)]
    refs, emus = reference_then_emulator(
        lambda: [_outcome(fmul(xs, sc, [o.copy() for o in outs])) for xs, sc, outs in cases])
    kinds = {(r[0], r[2]) if r[0] == "error" else r[0] for r in refs}
    assert {"ok", ("error", 161002), ("error", 561002)} <= kinds  # the cases reach each outcome
    for case, ref, emu in zip(cases, refs, emus):
        assert ref == emu, (case, ref, emu)
