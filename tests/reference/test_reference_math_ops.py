"""The references of the ops-math operators (pyaclnn/ops/add, inplace_add) against PyTorch CPU, the
CANN documentation's samples, and the CANN emulator (randomised: same statuses, same bits).

Oracles: torch for the values where its arithmetic is the device's (alpha 1, integers, Mul then Add
where each op rounds); the Axpy golden of hicann/ops-math math/axpy/tests/assets/golden.py where
the device rounds once; torch.promote_types / torch.can_cast for opbase's PromoteType / CanCast
(the same table); the statuses of hicann/ops-math math/add/op_api/aclnn_add.cpp, case by case.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from conftest import outcome
from pyaclnn.ops import samples as _samples
from pyaclnn.dtypes import DType
from helpers.data import random_array

torch = pytest.importorskip("torch")

BF16 = np.dtype(ml_dtypes.bfloat16)
OK = None


def add(a, b, alpha, out_dtype=None, out_shape=None):
    """aclnnAdd through pyaclnn.Op on the active backend: the out array, or the AclError raised."""
    out = np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)) if out_shape is None else out_shape,
                   out_dtype or np.result_type(a, b))
    try:
        with pyaclnn.Op("Add", a, b, alpha, out) as op:
            op.run()
            return op["out"].numpy()
    except pyaclnn.AclError as exc:
        return exc


def inplace_add(a, b, alpha):
    try:
        with pyaclnn.Op("InplaceAdd", a, b, alpha) as op:
            op.run()
            return op["selfRef"].numpy()
    except pyaclnn.AclError as exc:
        return exc


# -- promotion and casting: opbase's table is PyTorch's ------------------------------------------------
TORCH = {DType.FLOAT: torch.float32, DType.FLOAT16: torch.float16, DType.BF16: torch.bfloat16,
         DType.DOUBLE: torch.float64, DType.INT8: torch.int8, DType.UINT8: torch.uint8, DType.INT16: torch.int16,
         DType.INT32: torch.int32, DType.INT64: torch.int64, DType.BOOL: torch.bool,
         DType.COMPLEX64: torch.complex64, DType.COMPLEX128: torch.complex128, DType.COMPLEX32: torch.complex32}


def test_promote_type_and_can_cast_are_torchs() -> None:
    from pyaclnn._spec import can_cast, promote_type
    back = {v: k for k, v in TORCH.items()}
    for a in TORCH:
        for b in TORCH:
            assert promote_type(a, b) == back[torch.promote_types(TORCH[a], TORCH[b])], (a, b)
            assert can_cast(a, b) == torch.can_cast(TORCH[a], TORCH[b]), (a, b)
    assert promote_type(DType.UINT16, DType.INT32) == DType.DT_UNDEFINED  # no row in the table
    assert promote_type(DType.UINT64, DType.COMPLEX64) == DType.COMPLEX128


# -- values against torch -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,alpha", [(np.float32, 1.0), (np.float32, 2.5), (np.float16, 1.0), (np.float16, -0.3),
                                         (np.int32, 3), (np.int64, -2), (np.int8, 5), (np.float64, 0.7),
                                         (np.uint8, 7), (np.int16, -3), (np.bool_, True)])
def test_add_against_torch(use_backend, dtype, alpha) -> None:
    use_backend("numpy")
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((2, 3, 4)) * 50).astype(dtype)
    b = (rng.standard_normal((3, 1)) * 50).astype(dtype)
    scalar = {np.float16: np.float32(alpha)}.get(dtype, alpha)
    got = add(a, b, scalar)
    want = torch.add(torch.from_numpy(a), torch.from_numpy(b), alpha=alpha).numpy()
    if dtype in (np.float32, np.float16) and alpha != 1:
        # Axpy, rounded once (golden.py: float16 in float32, float32 in float64); torch rounds
        # alpha * other first, so it is only close
        wide = np.float32 if dtype == np.float16 else np.float64
        golden = (a.astype(wide) + b.astype(wide) * wide(np.float32(alpha))).astype(dtype)
        np.testing.assert_array_equal(got, golden)
        np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == np.float16 else 1e-6)
    elif dtype == np.float64 and alpha != 1:  # not an Axpy dtype: Mul, then Add, as torch
        np.testing.assert_allclose(got, want, rtol=1e-15)
    else:
        np.testing.assert_array_equal(got, want)


def test_add_int32_axpy_runs_in_float32(use_backend) -> None:
    """int32 with alpha != 1 is Axpy, computed in float32 and truncated (golden.py): torch differs
    above 2**24; alpha 1 is the exact integer Add."""
    use_backend("numpy")
    a, b = np.array([2**24 + 1, 7, -7, 100], np.int32), np.array([1, 2, 2, -3], np.int32)
    got = add(a, b, np.int32(2))
    assert got.tolist() == [2**24 + 2, 11, -3, 94]
    assert torch.add(torch.from_numpy(a), torch.from_numpy(b), alpha=2)[0] == 2**24 + 3
    assert add(a, b, np.int32(1))[0] == 2**24 + 2


def test_add_bfloat16_on_a2_multiplies_then_adds_and_on_950_is_axpy(use_backend) -> None:
    """bf16 is no Axpy dtype on 910B: other * alpha (alpha cast to bf16) rounds, then the sum (torch
    does the same, op by op); on 950 (regbase) Axpy takes bf16 and rounds once, in float32."""
    rng = np.random.default_rng(2)
    a = torch.from_numpy(rng.standard_normal(64).astype(np.float32)).to(torch.bfloat16)
    b = torch.from_numpy(rng.standard_normal(64).astype(np.float32)).to(torch.bfloat16)
    na, nb = a.float().numpy().astype(BF16), b.float().numpy().astype(BF16)
    use_backend("numpy", soc="Ascend910B")
    want = (a + b * torch.tensor(0.3, dtype=torch.bfloat16)).float().numpy()
    np.testing.assert_array_equal(add(na, nb, np.float32(0.3)).astype(np.float32), want)
    use_backend("numpy", soc="Ascend950")
    golden = (a.float().numpy() + b.float().numpy() * np.float32(0.3)).astype(BF16).astype(np.float32)
    np.testing.assert_array_equal(add(na, nb, np.float32(0.3)).astype(np.float32), golden)


def test_add_mixed_float16_float32_and_promotion_against_torch(use_backend) -> None:
    use_backend("numpy")
    a = np.array([1.5, -2.25, 1e-4], np.float16)
    b = np.array([[1e8], [3.0]], np.float32)
    got = add(a, b, 1.0, np.float32)
    np.testing.assert_array_equal(got, (torch.from_numpy(a) + torch.from_numpy(b)).numpy())
    i = np.array([1, 2, 3], np.uint8)
    j = np.array([-1, -2, 120], np.int8)
    got = add(i, j, 1, np.int16)  # uint8 + int8 -> int16
    np.testing.assert_array_equal(got, (torch.from_numpy(i) + torch.from_numpy(j)).numpy())


def test_add_nan_alpha_counts_as_one(use_backend) -> None:
    """IsEqualToOne is !(alpha > 1 || alpha < 1): a NaN alpha takes the plain Add."""
    use_backend("numpy")
    assert add(np.array([1, 2], np.float32), np.array([10, 20], np.float32), np.float32(np.nan)).tolist() == [11, 22]


def test_inplace_add_writes_self_ref_and_reads_it_whole(use_backend) -> None:
    use_backend("numpy")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.array([10, 20, 30], np.float32)
    got = inplace_add(x, y, np.float32(2))
    np.testing.assert_array_equal(got, torch.from_numpy(x).add(torch.from_numpy(y), alpha=2).numpy())
    with pyaclnn.Device(0) as device, device.create_stream() as stream:  # self and other one tensor
        t = pyaclnn.Tensor.from_numpy(np.array([1, 2, 3], np.int64))
        with pyaclnn.Op("InplaceAdd", t, t, 3) as op:
            op.run(stream)
        stream.synchronize()
        assert t.numpy().tolist() == [4, 8, 12]


# -- statuses, in the source's order ------------------------------------------------------------------
F32 = np.float32


@pytest.mark.parametrize("call, status, text", [
    (lambda: add(None, np.ones(2, F32), 1.0), 161001, "self is nullptr"),
    (lambda: add(np.ones(2, F32), np.ones(2, F32), None), 161001, "alpha is nullptr"),
    (lambda: add(np.ones(2, np.uint16), np.ones(2, F32), 1.0, F32), 161002, "self dtype uint16 not supported"),
    (lambda: add(np.ones(2, F32), np.ones(2, F32), 1 + 2j, F32), 161002, "Alpha dtype complex128 can't be cast"),
    (lambda: add(np.ones(2, np.int32), np.ones(2, np.int32), 1.5, np.int32), 161002,
     "Alpha dtype float64 can't be cast to the promote dtype int32"),
    (lambda: add(np.ones(2, bool), np.ones(2, bool), 1.5, bool), 161002,
     "Alpha dtype float64 can't be cast to the promote dtype bool"),
    (lambda: add(np.ones(2, F32), np.ones(2, F32), 1.0, np.int32), 161002, "Promote dtype float32 can't be cast"),
    (lambda: add(np.ones((2, 3), F32), np.ones(2, F32), 1.0, F32, (2, 3)), 161002, "can not broadcast"),
    (lambda: add(np.ones((2, 3), F32), np.ones(3, F32), 1.0, F32, (3, 2)), 161002, "Shape of out should be (2, 3)"),
    (lambda: add(np.ones((1,) * 9, F32), np.ones(1, F32), 1.0, F32), 161002, "self rank 9 > 8"),
    (lambda: inplace_add(np.ones(3, F32), np.ones((2, 3), F32), 1.0), 161002, "Expected shape of selfRef"),
    (lambda: inplace_add(np.ones(3, np.int32), np.ones(3, F32), 1.0), 161002,
     "Promote dtype float32 can't be cast to the desired output type int32"),
])
def test_add_statuses(use_backend, call, status, text) -> None:
    use_backend("numpy")
    err = call()
    assert isinstance(err, pyaclnn.AclError) and err.status == status and text in str(err), err


def test_add_bf16_is_refused_on_910_and_310p(use_backend) -> None:
    """GetDtypeSupportListBySocVersion: bf16 only on DAV_2201 (910B, 910_93) and DAV_3510 (950)."""
    x = np.ones(2, BF16)
    for soc, ok in (("Ascend910", False), ("Ascend310P", False), ("Ascend910B", True), ("Ascend950", True)):
        use_backend("numpy", soc=soc)
        got = add(x, x, 1.0, BF16)
        assert (not isinstance(got, Exception)) if ok else got.status == 161002, soc


def test_add_regbase_checks_the_promoted_dtype_against_the_list(use_backend) -> None:
    """On 950 the promoted dtype must be in the support list too: int8 + uint8 -> int16 is listed,
    float16 + bf16 -> float32 is; on 950 a complex alpha never counts as 1 (no effect on results here)."""
    use_backend("numpy", soc="Ascend950")
    assert add(np.ones(2, np.int8), np.ones(2, np.uint8), 1, np.int16).tolist() == [2, 2]
    assert add(np.ones(2, np.float16), np.ones(2, BF16), 1.0, F32).tolist() == [2.0, 2.0]


def test_empty_add_succeeds_and_writes_nothing(use_backend) -> None:
    use_backend("numpy")
    out = add(np.ones((0, 3), F32), np.ones(3, F32), 2.0)
    assert out.shape == (0, 3)


# -- the documented samples ---------------------------------------------------------------------------
def test_add_samples_print_the_documented_values(use_backend) -> None:
    use_backend("numpy")
    self_ = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7], dtype=torch.float64)
    other = torch.tensor([1, 1, 1, 2, 2, 2, 3, 3], dtype=torch.float64)
    want = torch.add(self_, other, alpha=1.2).numpy()
    for name in ("Add", "InplaceAdd"):
        np.testing.assert_allclose(_samples.EXPECTED[name]["result"], want, rtol=1e-12)
        lines: list[str] = []
        assert _samples.run(name, lines.append), lines


# -- the reference against the emulator (Ascend910B, the SoC it models) --------------------------------
EMULATED = [np.dtype(d) for d in (np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.int32,
                                   np.int64, np.bool_)] + [BF16]
ALPHAS = (np.float32, np.float64, np.int64, np.int32, np.bool_)


def _random_case(rng: np.random.Generator) -> tuple:
    def dtype():
        return EMULATED[rng.integers(len(EMULATED))]

    def array(shape, dt):
        return random_array(rng, shape, dt)

    rank = int(rng.integers(0, 4))
    shape = tuple(int(d) for d in rng.integers(1, 4, rank))
    other_shape = tuple(d if rng.random() < 0.7 else 1 for d in shape)[int(rng.integers(0, rank + 1)):]
    if rng.random() < 0.1:
        other_shape = other_shape + (5,)  # usually does not broadcast
    if rng.random() < 0.05:
        shape = (0,) + shape
    a, b = array(shape, dtype()), array(other_shape, dtype())
    adt = ALPHAS[rng.integers(len(ALPHAS))]
    alpha = np.dtype(adt).type(rng.choice([1, 1, 2, -3, 0])) if adt != np.bool_ else np.bool_(rng.random() < 0.5)
    if np.dtype(adt).kind == "f" and rng.random() < 0.5:
        alpha = np.dtype(adt).type(rng.standard_normal())
    out_dtype = dtype()
    try:
        out_shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        out_shape = a.shape
    if rng.random() < 0.1:
        out_shape = out_shape + (1,)
    return a, b, alpha, out_dtype, out_shape


def test_reference_and_emulator_agree_on_random_add_and_inplace_add(reference_then_emulator) -> None:
    rng = np.random.default_rng(18)
    cases = [_random_case(rng) for _ in range(300)]
    refs, emus = reference_then_emulator(lambda: [
        (outcome(add(a, b, alpha, dt, shape)), outcome(inplace_add(a.copy(), b, alpha)))
        for a, b, alpha, dt, shape in cases])
    statuses = {r[0][0] for r in refs}
    assert statuses == {"ok", "error"}  # the cases reach both
    for case, ref, emu in zip(cases, refs, emus):
        assert ref == emu, (case, ref[:1], emu[:1])


# -- aclnnReduceSum -------------------------------------------------------------------------------------
def reduce_sum(x, dims, keep, dtype, out_shape=None, out_dtype=None):
    """aclnnReduceSum through pyaclnn.Op: out, or the AclError raised."""
    if out_shape is None:
        axes = [d % max(x.ndim, 1) for d in dims] if dims else list(range(x.ndim))
        out_shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape) if keep or d not in axes)
    np_dtype = {DType.BF16: BF16}.get(DType(dtype)) or (np.dtype(np.bool_) if dtype == DType.BOOL else
                                                        pyaclnn.dtypes.to_numpy(dtype))
    out = np.zeros(out_shape, out_dtype or np_dtype)
    try:
        with pyaclnn.Op("ReduceSum", x, list(dims), keep, int(dtype), out) as op:
            op.run()
            return op["out"].numpy()
    except pyaclnn.AclError as exc:
        return exc


@pytest.mark.parametrize("src,dims,keep,dtype", [
    (np.float32, [1], False, DType.FLOAT), (np.float32, [0, 2], True, DType.FLOAT), (np.int32, [-1], False, DType.INT32),
    (np.int8, [0], False, DType.INT64), (np.float16, [], False, DType.FLOAT16), (np.float64, [2, 0], False, DType.DOUBLE),
    (np.uint8, [1], True, DType.UINT8)])
def test_reduce_sum_against_torch(use_backend, src, dims, keep, dtype) -> None:
    use_backend("numpy")
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 3, 4)) * 10).astype(src)
    got = reduce_sum(x, dims, keep, dtype)
    want = torch.sum(torch.from_numpy(x), dim=dims or None, keepdim=keep,
                     dtype={DType.FLOAT: torch.float32, DType.INT32: torch.int32, DType.INT64: torch.int64,
                            DType.FLOAT16: torch.float16, DType.DOUBLE: torch.float64, DType.UINT8: torch.uint8}[dtype])
    if np.dtype(src).kind == "f":
        # one rounding of the float64 sum (torch sums in float32 steps, so it is only close)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-3 if src == np.float16 else 1e-6)
        exact = x.astype(np.float64).sum(axis=tuple(dims) if dims else None, keepdims=keep)
        if got.dtype == np.float64:
            np.testing.assert_allclose(got, exact, rtol=1e-15)
        else:  # float32, float16: exact in float64 (24 terms), rounded once
            np.testing.assert_array_equal(got, exact.astype(np.float32).astype(got.dtype))
    else:
        np.testing.assert_array_equal(got, want.numpy())


def test_reduce_sum_bool_is_any_into_bool_and_a_count_into_int64(use_backend) -> None:
    use_backend("numpy")
    x = np.array([[0, 0, 3], [0, 0, 0]], np.int32)
    assert reduce_sum(x, [1], False, DType.BOOL).tolist() == [True, False]
    b = np.array([[True, False, True], [True, True, True]])
    assert reduce_sum(b, [1], False, DType.INT64).tolist() == torch.from_numpy(b).sum(dim=1).tolist()


def test_reduce_sum_scalar_self_and_one_element_outs(use_backend) -> None:
    """A 0-d self is Cast + ViewCopy (out must hold one element, else 561103); a full reduction may
    land in any one-element out (CheckShapeAndScalarSame)."""
    use_backend("numpy")
    assert reduce_sum(np.array(2.5, np.float32), [0], False, DType.FLOAT, (1,)).tolist() == [2.5]
    assert reduce_sum(np.array(2.5, np.float32), [], False, DType.FLOAT, (2,)).status == 561103
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert reduce_sum(x, [], False, DType.FLOAT, (1, 1)).tolist() == [[15.0]]
    assert reduce_sum(x, [], False, DType.FLOAT, (2,)).status == 161002


@pytest.mark.parametrize("call, status, text", [
    (lambda: reduce_sum(None, [0], False, DType.FLOAT, (1,)), 161001, "self is nullptr"),
    (lambda: reduce_sum(np.ones(2, np.uint16), [0], False, DType.FLOAT, (), np.float32), 161002, "self dtype uint16"),
    (lambda: reduce_sum(np.ones(2, F32), [0], False, DType.UINT16, (), np.float32), 161002, "type uint16 should be"),
    (lambda: reduce_sum(np.ones(2, F32), [0], False, DType.INT64, (), np.float32), 161002,
     "out dtype float32 should be the same as dtype int64"),
    (lambda: reduce_sum(np.ones((1,) * 9, F32), [0], False, DType.FLOAT, (1,) * 8), 161002, "self rank 9 > 8"),
    (lambda: reduce_sum(np.ones((2, 3), F32), [2], False, DType.FLOAT, (2,)), 161002, "must be in the range of [-2, 1]"),
    (lambda: reduce_sum(np.ones((2, 3), F32), [1, -1], False, DType.FLOAT, (2,)), 161002, "appears multiple times"),
    (lambda: reduce_sum(np.ones((2, 3), F32), [1], True, DType.FLOAT, (2,)), 161002, "is not equal with shape"),
    (lambda: reduce_sum(np.ones((0, 3), np.complex64), [0], False, DType.COMPLEX64, (3,)), 161002,
     "not supported for an empty self"),
])
def test_reduce_sum_statuses(use_backend, call, status, text) -> None:
    use_backend("numpy")
    err = call()
    assert isinstance(err, pyaclnn.AclError) and err.status == status and text in str(err), err


def test_reduce_sum_empty_self_fills_out_with_zero_and_bf16_per_soc(use_backend) -> None:
    use_backend("numpy")
    assert reduce_sum(np.ones((0, 3), F32), [0], False, DType.FLOAT, (4,)).tolist() == [0.0] * 4
    for soc, ok in (("Ascend910", False), ("Ascend310P", False), ("Ascend910_93", True), ("Ascend950", True)):
        use_backend("numpy", soc=soc)
        got = reduce_sum(np.ones(3, BF16), [0], False, DType.BF16)
        assert (not isinstance(got, Exception) and float(got) == 3.0) if ok else got.status == 161002, soc


def test_reduce_sum_sample_prints_the_documented_values(use_backend) -> None:
    use_backend("numpy")
    want = torch.arange(8, dtype=torch.float64).reshape(4, 2).sum(dim=0).numpy()
    np.testing.assert_array_equal(_samples.EXPECTED["ReduceSum"]["result"], want)
    lines: list[str] = []
    assert _samples.run("ReduceSum", lines.append), lines


def _random_reduce_case(rng):
    def dtype():
        return EMULATED[rng.integers(len(EMULATED))]
    x_dt = dtype()
    shape = tuple(int(d) for d in rng.integers(1, 4, int(rng.integers(0, 4))))
    if rng.random() < 0.05:
        shape = shape + (0,)
    if x_dt == np.bool_:
        x = np.asarray(rng.integers(0, 2, shape), bool)
    elif x_dt.kind in "iu":
        x = np.asarray(rng.integers(-20 if x_dt.kind == "i" else 0, 20, shape)).astype(x_dt)
    else:
        x = np.asarray(rng.standard_normal(shape) * 8, np.float32).astype(x_dt)
    n = max(len(shape), 1)
    dims = [int(d) for d in rng.integers(-n - (rng.random() < 0.05), n, int(rng.integers(0, n + 1)))]
    keep = bool(rng.random() < 0.5)
    out_dt = dtype() if rng.random() < 0.9 else x_dt
    dt = int(pyaclnn.dtypes.from_numpy(out_dt)) if rng.random() < 0.95 else int(DType.FLOAT)
    axes = sorted({d % n for d in dims}) if dims else list(range(len(shape)))
    out_shape = tuple(1 if d in axes else s for d, s in enumerate(shape) if keep or d not in axes)
    if rng.random() < 0.1:
        out_shape = out_shape + (2,)
    return x, dims, keep, dt, out_shape, out_dt


def test_reference_and_emulator_agree_on_random_reduce_sum(reference_then_emulator) -> None:
    rng = np.random.default_rng(24)
    cases = [_random_reduce_case(rng) for _ in range(300)]
    refs, emus = reference_then_emulator(lambda: [outcome(reduce_sum(x, dims, keep, dt, shape, odt))
                                                  for x, dims, keep, dt, shape, odt in cases])
    assert {r[0] for r in refs} == {"ok", "error"}
    for case, ref, emu in zip(cases, refs, emus):
        assert ref == emu, ([getattr(c, "shape", c) for c in case], ref[:3], emu[:3])


# -- aclnnAmpUpdateScale ----------------------------------------------------------------------------------
def amp(scale, tracker, found, growth=2.0, backoff=0.5, interval=3, dtype=np.float32, outs=None):
    """aclnnAmpUpdateScale through pyaclnn.Op: (updated scale, updated tracker) or the AclError."""
    s = np.asarray(scale, dtype)
    g = np.asarray(tracker, np.int32)
    f = np.asarray(found, dtype)
    us, ug = outs or (np.zeros((1,), dtype), np.zeros((1,), np.int32))
    try:
        with pyaclnn.Op("AmpUpdateScale", s, g, f, growth, backoff, interval, us, ug) as op:
            op.run()
            return op["updatedScale"].numpy(), op["updatedGrowthTracker"].numpy()
    except pyaclnn.AclError as exc:
        return exc


@pytest.mark.parametrize("scale,tracker,found,interval", [
    (1024.0, 0, 0.0, 3), (1024.0, 2, 0.0, 3), (1024.0, 2, 1.0, 3), (3e38, 4, 0.0, 5), (8.0, 1, float("nan"), 2),
    (8.0, 2**31 - 1, 0.0, 7)])
def test_amp_update_scale_against_torch(use_backend, scale, tracker, found, interval) -> None:
    use_backend("numpy")
    got_scale, got_tracker = amp([scale], [tracker], [found], interval=interval)
    ws, wg = torch.tensor([scale]), torch.tensor([tracker], dtype=torch.int32)
    torch._amp_update_scale_(ws, wg, torch.tensor([found]), 2.0, 0.5, interval)
    assert got_scale.tolist() == ws.tolist() and got_tracker.tolist() == wg.tolist()


def test_amp_update_scale_half_scales_and_aliased_outputs(use_backend) -> None:
    use_backend("numpy")
    for dt, tdt in ((np.float16, torch.float16), (BF16, torch.bfloat16)):
        got_scale, got_tracker = amp([3.0], [1], [0.0], growth=1.7, interval=2, dtype=dt)
        ws = torch.tensor([3.0])  # torch's CPU kernel takes float32 only: the float32 result, rounded once
        wg = torch.tensor([1], dtype=torch.int32)
        torch._amp_update_scale_(ws, wg, torch.tensor([0.0]), 1.7, 0.5, 2)
        assert got_scale.astype(np.float32).tolist() == ws.to(tdt).float().tolist() and got_tracker.tolist() == wg.tolist()
    with pyaclnn.Device(0) as device, device.create_stream() as stream:  # torch_npu passes its tensors as outputs
        s = pyaclnn.Tensor.from_numpy(np.array([8.0], np.float32))
        g = pyaclnn.Tensor.from_numpy(np.array([1], np.int32))
        f = pyaclnn.Tensor.from_numpy(np.array([0.0], np.float32))
        with pyaclnn.Op("AmpUpdateScale", s, g, f, 2.0, 0.5, 2, s, g) as op:
            op.run(stream)
        stream.synchronize()
        assert s.numpy().tolist() == [16.0] and g.numpy().tolist() == [0]


@pytest.mark.parametrize("call, status, text", [
    (lambda: amp([1.0], [0], [0.0], outs=(np.zeros(1, F32), None)), 161001, "updatedGrowthTracker is nullptr"),
    (lambda: amp([1.0], [0], [0.0], outs=(np.zeros(1, np.float16), np.zeros(1, np.int32))), 161002,
     "is not in the op definition"),
    (lambda: amp([1.0], [0], [0.0], dtype=np.float64, outs=(np.zeros(1), np.zeros(1, np.int32))), 161002,
     "is not in the op definition"),
    (lambda: amp([1.0], [0], [0.0], interval=0), 561002, "growthInterval 0 must be in range"),
    (lambda: amp([1.0], [0], [0.0], interval=2**31), 561002, "must be in range [1, INT32_MAX]"),
    (lambda: amp([1.0, 2.0], [0], [0.0]), 561002, "currentScale must be scalar [1]"),
    (lambda: amp([[1.0]], [0], [0.0]), 561002, "currentScale must be scalar [1]"),
    (lambda: amp([1.0], [0], [0.0], outs=(np.zeros(0, F32), np.zeros(1, np.int32))), 561002, "updatedScale is empty"),
])
def test_amp_update_scale_statuses(use_backend, call, status, text) -> None:
    use_backend("numpy")
    err = call()
    assert isinstance(err, pyaclnn.AclError) and err.status == status and text in str(err), err


def test_amp_update_scale_runs_only_where_the_definition_has_a_kernel(use_backend) -> None:
    """amp_update_scale_def.cpp configures ascend910b, ascend910_93 and ascend950; the page: not 910
    or 310P. A 0-d input counts as [1] (EnsureNotScalar)."""
    for soc, ok in (("Ascend910B", True), ("Ascend910_93", True), ("Ascend950", True), ("Ascend910", False),
                    ("Ascend310P", False)):
        use_backend("numpy", soc=soc)
        got = amp(1.0, 0, 0.0)
        assert (not isinstance(got, Exception)) if ok else got.status == 561003, soc
        if not ok:  # the SoC before the dtypes (nnopbase CheckSocVersionAndParam)
            got = amp([1.0], [0], [0.0], dtype=np.float64, outs=(np.zeros(1), np.zeros(1, np.int32)))
            assert got.status == 561003, (soc, got)


def test_amp_update_scale_sample_prints_the_documented_values(use_backend) -> None:
    use_backend("numpy")
    ws, wg = torch.tensor([65536.0]), torch.tensor([900], dtype=torch.int32)
    torch._amp_update_scale_(ws, wg, torch.tensor([0.0]), 2.0, 0.5, 1000)
    assert _samples.EXPECTED["AmpUpdateScale"] == {"updatedScale": tuple(ws.tolist()),
                                                   "updatedGrowthTracker": tuple(float(v) for v in wg.tolist())}
    lines: list[str] = []
    assert _samples.run("AmpUpdateScale", lines.append), lines


def test_reference_and_emulator_agree_on_random_amp_update_scale(reference_then_emulator) -> None:
    rng = np.random.default_rng(25)
    cases = []
    quiet = np.errstate(over="ignore")  # 3e38 * 2 is inf in float32, 3e38 in float16: cases too
    quiet.__enter__()
    for _ in range(200):
        dt = [np.dtype(np.float32), np.dtype(np.float16), BF16, np.dtype(np.float64)][int(rng.integers(0, 4)) if
                                                                                       rng.random() < 0.5 else 0]
        shape = [(1,), (), (2,), (1, 1)][int(rng.integers(0, 4)) if rng.random() < 0.3 else 0]
        scale = np.full(shape, rng.choice([1.0, 3.0, 65504.0, 3e38]) * rng.uniform(0.5, 2), np.float32)
        found = np.full((1,), rng.choice([0.0, 0.0, 1.0, np.nan, np.inf]), np.float32)
        interval = int(rng.choice([1, 2, 3, 0, 2**31 - 1]))
        tracker = int(rng.choice([0, 1, 2, interval - 1]))
        cases.append((scale.astype(dt), tracker, found.astype(dt), float(rng.choice([2.0, 1.5])), 0.5, interval, dt))
    quiet.__exit__(None, None, None)
    def run() -> list:
        out = []
        for s, g, f, growth, backoff, interval, dt in cases:
            r = amp(s, [g], f, growth, backoff, interval, dtype=dt)
            out.append(outcome(r) if isinstance(r, Exception) else tuple(outcome(x) for x in r))
        return out
    refs, emus = reference_then_emulator(run)
    assert {type(r[0]) for r in refs} == {str, tuple}
    for case, ref, emu in zip(cases, refs, emus):
        assert ref == emu, ([getattr(c, "shape", c) for c in case], ref, emu)
