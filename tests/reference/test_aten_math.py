"""The aten tier's element-wise family (table/math.py) against the tests' own NumPy expressions:
binary operators with broadcasting, tensor-scalar forms, comparisons into bool outputs,
bitwise operators on integers and bools, and the in-place forms writing their ...Ref tensor."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

pytest.importorskip("torch")

import pyaclnn  # noqa: E402
from aten_support import aten_backend, bf16, call, status_of  # noqa: E402

F32, F16, I32, I64 = np.float32, np.float16, np.int32, np.int64
RNG = np.random.default_rng(7)


@pytest.fixture
def aten(use_backend: Callable[..., object], tmp_path: Path) -> object:
    return aten_backend(use_backend, tmp_path)


def f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float64)


BINARY_FLOAT = {
    "LogAddExp": np.logaddexp, "LogAddExp2": np.logaddexp2, "Atan2": np.arctan2,
    "XLogYTensor": lambda a, b: np.where(a == 0, 0.0, a * np.log(b)),
    "FmodTensor": np.fmod, "RemainderTensorTensor": np.remainder, "FloorDivide": np.floor_divide,
    "Div": np.divide, "Maximum": np.maximum, "Minimum": np.minimum,
}


@pytest.mark.parametrize("op", sorted(BINARY_FLOAT))
def test_binary_float_broadcast(aten: object, op: str) -> None:
    a = RNG.uniform(0.5, 4, (3, 1, 4)).astype(F32)
    b = RNG.uniform(0.5, 4, (2, 1)).astype(F32)
    got = call(op, a, b, np.zeros((3, 2, 4), F32))
    np.testing.assert_allclose(got, BINARY_FLOAT[op](f64(a), f64(b)), rtol=2e-6, atol=1e-6)


def test_power_forms(aten: object) -> None:
    a, e = RNG.uniform(0.5, 2, (2, 3)).astype(F32), RNG.uniform(-2, 2, (3,)).astype(F32)
    np.testing.assert_allclose(call("PowTensorTensor", a, e, np.zeros((2, 3), F32)), f64(a) ** e, rtol=1e-5)
    np.testing.assert_allclose(call("PowTensorScalar", a, 3, np.zeros((2, 3), F32)), f64(a) ** 3, rtol=1e-5)
    np.testing.assert_allclose(call("PowScalarTensor", 2.0, e, np.zeros(3, F32)), 2.0 ** f64(e), rtol=1e-5)
    i = np.array([2, 3, -4], I32)
    np.testing.assert_array_equal(call("PowTensorScalar", i, 2, np.zeros(3, I32)), i.astype(I64) ** 2)


def test_integer_division_and_remainders_follow_python_and_c(aten: object) -> None:
    a, b = np.array([7, -7, 7, -7], I32), np.array([2, 2, -2, -2], I32)
    np.testing.assert_array_equal(call("FloorDivide", a, b, np.zeros(4, I32)), a // b)        # floor
    np.testing.assert_array_equal(call("RemainderTensorTensor", a, b, np.zeros(4, I32)), a % b)  # Python's sign
    np.testing.assert_array_equal(call("FmodTensor", a, b, np.zeros(4, I32)), np.fmod(a, b))    # C's sign
    np.testing.assert_array_equal(call("FloorDivides", a, 3, np.zeros(4, I32)), a // 3)
    np.testing.assert_array_equal(call("RemainderTensorScalar", a, 3, np.zeros(4, I32)), a % 3)
    np.testing.assert_array_equal(call("RemainderScalarTensor", 7, b, np.zeros(4, I64)), 7 % b.astype(I64))
    np.testing.assert_array_equal(call("FmodScalar", a, 3, np.zeros(4, I32)), np.fmod(a, 3))
    np.testing.assert_array_equal(call("Gcd", np.array([12, -18, 0], I64), np.array([8, 12, 5], I64),
                                       np.zeros(3, I64)), np.gcd([12, -18, 0], [8, 12, 5]))


CMP = {"Eq": np.equal, "Ne": np.not_equal, "Ge": np.greater_equal, "Gt": np.greater, "Le": np.less_equal,
       "Lt": np.less}


@pytest.mark.parametrize("name", sorted(CMP))
@pytest.mark.parametrize("dtype", [F32, F16, I32, np.int8])
def test_comparisons_write_bool(aten: object, name: str, dtype: type) -> None:
    a = RNG.integers(-3, 3, (4, 3)).astype(dtype)
    b = RNG.integers(-3, 3, (3,)).astype(dtype)
    np.testing.assert_array_equal(call(f"{name}Tensor", a, b, np.zeros((4, 3), bool)), CMP[name](a, b))
    np.testing.assert_array_equal(call(f"{name}Scalar", a, 1, np.zeros((4, 3), bool)), CMP[name](a, 1))
    # the same comparison cast to a float out: 1.0 / 0.0
    np.testing.assert_array_equal(call(f"{name}Tensor", a, b, np.zeros((4, 3), F32)), CMP[name](a, b).astype(F32))


def test_comparisons_of_bf16(aten: object) -> None:
    a, b = bf16(np.array([1.0, 2.0, 3.0])), bf16(np.array([1.0, 2.5, 2.0]))
    np.testing.assert_array_equal(call("LtTensor", a, b, np.zeros(3, bool)), [False, True, False])


@pytest.mark.parametrize("dtype", [I32, np.uint8, np.int16, bool])
def test_bitwise(aten: object, dtype: type) -> None:
    a = RNG.integers(0, 100, (5,)).astype(dtype)
    b = RNG.integers(0, 100, (5,)).astype(dtype)
    for op, fn in (("And", np.bitwise_and), ("Or", np.bitwise_or), ("Xor", np.bitwise_xor)):
        np.testing.assert_array_equal(call(f"Bitwise{op}Tensor", a, b, np.zeros(5, dtype)), fn(a, b))
    np.testing.assert_array_equal(call("BitwiseNot", a, np.zeros(5, dtype)), np.invert(a))
    if dtype is not bool:
        np.testing.assert_array_equal(call("BitwiseAndScalar", a, 6, np.zeros(5, dtype)), np.bitwise_and(a, 6))


def test_logical_on_mixed_dtypes(aten: object) -> None:
    a, b = np.array([0, 1, 2, 0], I32), np.array([0.0, 0.0, 3.0, 1.0], F32)
    np.testing.assert_array_equal(call("LogicalOr", a, b, np.zeros(4, bool)), np.logical_or(a, b))
    np.testing.assert_array_equal(call("LogicalXor", a, b, np.zeros(4, bool)), np.logical_xor(a, b))


def test_scalar_forms_with_alpha(aten: object) -> None:
    x = RNG.uniform(-2, 2, (2, 3)).astype(F32)
    y = RNG.uniform(-2, 2, (2, 3)).astype(F32)
    np.testing.assert_allclose(call("Adds", x, 1.5, 2.0, np.zeros_like(x)), f64(x) + 3.0, rtol=1e-6)
    np.testing.assert_allclose(call("Subs", x, 1.5, 2.0, np.zeros_like(x)), f64(x) - 3.0, rtol=1e-6)
    np.testing.assert_allclose(call("Rsubs", x, 1.5, 2.0, np.zeros_like(x)), 1.5 - 2 * f64(x), rtol=1e-6)
    np.testing.assert_allclose(call("Rsub", x, y, 0.5, np.zeros_like(x)), f64(y) - 0.5 * x, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(call("Muls", x, -3, np.zeros_like(x)), -3 * f64(x), rtol=1e-6)
    np.testing.assert_allclose(call("Divs", x, 4.0, np.zeros_like(x)), f64(x) / 4, rtol=1e-6)
    i = np.array([1, 2, 3], I32)
    np.testing.assert_array_equal(call("Adds", i, 2, 3, np.zeros(3, I32)), i + 6)


def test_ternary_and_interpolation(aten: object) -> None:
    s, t1, t2 = (RNG.uniform(1, 2, (2, 3)).astype(F32) for _ in range(3))
    np.testing.assert_allclose(call("Addcdiv", s, t1, t2, 0.5, np.zeros_like(s)), s + 0.5 * f64(t1) / t2, rtol=1e-6)
    np.testing.assert_allclose(call("Addcmul", s, t1, t2, 2, np.zeros_like(s)), s + 2 * f64(t1) * t2, rtol=1e-6)
    np.testing.assert_allclose(call("Lerp", s, t1, t2, np.zeros_like(s)), s + f64(t2) * (t1 - f64(s)), rtol=1e-5)
    np.testing.assert_allclose(call("Lerps", s, t1, 0.25, np.zeros_like(s)), s + 0.25 * (t1 - f64(s)), rtol=1e-6)


def test_clamps_and_nan_to_num(aten: object) -> None:
    x = np.array([-3.0, -0.5, 0.5, 3.0, np.nan, np.inf, -np.inf], F32)
    np.testing.assert_array_equal(call("Clamp", x[:4], -1.0, 1.0, np.zeros(4, F32)), np.clip(x[:4], -1, 1))
    np.testing.assert_array_equal(call("Clamp", x[:4], None, 1.0, np.zeros(4, F32)), np.minimum(x[:4], 1))
    np.testing.assert_array_equal(call("ClampMin", x[:4], 0.0, np.zeros(4, F32)), np.maximum(x[:4], 0))
    np.testing.assert_array_equal(call("ClampMax", x[:4], 0.0, np.zeros(4, F32)), np.minimum(x[:4], 0))
    lo, hi = np.full(4, -1.0, F32), np.array([0.0, 0.0, 1.0, 2.0], F32)
    np.testing.assert_array_equal(call("ClampTensor", x[:4], lo, hi, np.zeros(4, F32)), np.clip(x[:4], lo, hi))
    np.testing.assert_array_equal(call("ClampMaxTensor", x[:4], hi, np.zeros(4, F32)), np.minimum(x[:4], hi))
    np.testing.assert_array_equal(call("NanToNum", x, 0.0, 9.0, -9.0, np.zeros(7, F32)),
                                  np.nan_to_num(x, nan=0.0, posinf=9.0, neginf=-9.0))
    got = call("IsClose", np.array([1.0, 1.0001, np.nan], F32), np.array([1.0, 1.0, np.nan], F32), 1e-5, 1e-8, True,
               np.zeros(3, bool))
    np.testing.assert_array_equal(got, np.isclose([1.0, 1.0001, np.nan], [1.0, 1.0, np.nan], 1e-5, 1e-8, True))


def test_unary_predicates_and_more(aten: object) -> None:
    x = np.array([-1.5, -0.0, 0.0, 2.0, np.inf, -np.inf, np.nan], F32)
    np.testing.assert_array_equal(call("IsFinite", x, np.zeros(7, bool)), np.isfinite(x))
    np.testing.assert_array_equal(call("IsPosInf", x, np.zeros(7, bool)), np.isposinf(x))
    np.testing.assert_array_equal(call("IsNegInf", x, np.zeros(7, bool)), np.isneginf(x))
    np.testing.assert_array_equal(call("Signbit", x, np.zeros(7, bool)), np.signbit(x))
    y = RNG.uniform(-0.9, 0.9, 6).astype(F32)
    for op, fn in (("Acos", np.arccos), ("Asinh", np.arcsinh), ("Atan", np.arctan), ("Atanh", np.arctanh),
                   ("Frac", lambda v: v - np.trunc(v))):
        np.testing.assert_allclose(call(op, y, np.zeros_like(y)), fn(f64(y)), rtol=2e-6, atol=1e-7)
    for op, fn in (("Cosh", np.cosh), ("Sinh", np.sinh), ("Tan", np.tan), ("Trunc", np.trunc),
                   ("Square", np.square), ("Log10", np.log10), ("Log2", np.log2), ("Sinc", np.sinc),
                   ("Lgamma", np.vectorize(math.lgamma)), ("Erfc", np.vectorize(math.erfc))):
        z = np.abs(y) + 0.05 if op in ("Log10", "Log2", "Lgamma") else y
        np.testing.assert_allclose(call(op, z, np.zeros_like(z)), fn(f64(z)), rtol=5e-6, atol=1e-7)
    np.testing.assert_allclose(call("Heaviside", np.array([-1, 0, 2], F32), np.array([0.5, 0.5, 0.5], F32),
                                    np.zeros(3, F32)), np.heaviside([-1, 0, 2], 0.5))


def test_complex_from_parts_and_back(aten: object) -> None:
    re, im = np.array([1.0, -2.0], F32), np.array([0.5, 3.0], F32)
    got = call("Complex", re, im, np.zeros(2, np.complex64))
    np.testing.assert_array_equal(got, re + 1j * im)
    polar = call("Polar", np.array([2.0], F32), np.array([math.pi / 2], F32), np.zeros(1, np.complex64))
    np.testing.assert_allclose(polar, [2j], atol=1e-6)


INPLACE_UNARY = {"InplaceExp": np.exp, "InplaceNeg": np.negative, "InplaceFloor": np.floor, "InplaceTanh": np.tanh,
                 "InplaceSigmoid": lambda v: 1 / (1 + np.exp(-v)), "InplaceCos": np.cos}


def run_inplace(op: str, x: np.ndarray, *rest: object) -> np.ndarray:
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        t = pyaclnn.Tensor.from_numpy(x)
        with pyaclnn.Op(op, t, *rest) as ex:
            ex.run(stream)
        stream.synchronize()
        return t.numpy()


@pytest.mark.parametrize("op", sorted(INPLACE_UNARY))
def test_inplace_unary(aten: object, op: str) -> None:
    x = RNG.uniform(-2, 2, (3, 4)).astype(F32)
    np.testing.assert_allclose(run_inplace(op, x), INPLACE_UNARY[op](f64(x)), rtol=2e-6, atol=1e-7)


def test_inplace_binary_broadcasts_into_self_and_keeps_its_dtype(aten: object) -> None:
    x = RNG.uniform(-2, 2, (3, 4)).astype(F32)
    o = RNG.uniform(-2, 2, (4,)).astype(F32)
    np.testing.assert_allclose(run_inplace("InplaceMul", x, o), f64(x) * o, rtol=1e-6)
    np.testing.assert_allclose(run_inplace("InplaceSub", x, o, 2.0), f64(x) - 2 * f64(o), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(run_inplace("InplaceGtScalar", x, 0.0), (x > 0).astype(F32))  # 1.0 / 0.0
    i = np.array([5, 7, 9], I32)
    np.testing.assert_array_equal(run_inplace("InplaceFloorDivides", i, 2), i // 2)
    # the other operand's shape may not grow self: (3,) op (2, 3) would need a (2, 3) selfRef
    assert status_of("InplaceMul", np.zeros(3, F32), np.zeros((2, 3), F32)) == 161002
    # a float result into an int32 selfRef: refused (CanCast)
    assert status_of("InplaceDiv", np.zeros(3, I32), np.ones(3, F32)) == 161002


def _inplace_pairs() -> list[tuple[str, str]]:
    """(InplaceX, X) of the table whose C parameters are X's with its self as selfRef and no out,
    the others tensors, scalars or floats."""
    from pyaclnn._registry import Registry, reference_sources
    from pyaclnn.ops._aten import entries
    table, registry = entries(), Registry(reference_sources())
    pairs = []
    for op, e in table.items():
        base = table.get(op[len("Inplace"):]) if op.startswith("Inplace") else None
        if base is None or e.params[0] != "selfRef" or base.params[0] != "self" or base.out != ("out",):
            continue
        info = registry.get(op)
        if info is None or any(k not in ("tensor", "scalar", "float") for k in info.kinds):
            continue
        if e.params[1:] == tuple(n for n in base.params[1:] if n != "out"):
            pairs.append((op, base.op))
    return sorted(pairs)


INPLACE_PAIRS = _inplace_pairs()


def test_the_in_place_forms_are_paired() -> None:
    assert len(INPLACE_PAIRS) >= 40


@pytest.mark.parametrize("inplace,functional", INPLACE_PAIRS)
def test_an_in_place_form_writes_what_its_functional_form_computes(aten: object, inplace: str,
                                                                 functional: str) -> None:
    """The functional forms are checked against NumPy above; this checks that each in-place form
    reads and writes its selfRef as that one reads self and writes out (the other operands: in
    range, of the first dtype the entry takes of float32 and int32)."""
    from pyaclnn.ops._aten import entries
    info = pyaclnn._backend.current().runtime.registry.get(inplace)  # type: ignore[attr-defined]
    e = entries()[functional]
    floats = not isinstance(e.dtypes, tuple) or pyaclnn.DType.FLOAT in e.dtypes
    dt = F32 if floats else I32
    x = (RNG.uniform(0.2, 0.8, (3, 3)) if floats else RNG.integers(1, 9, (3, 3))).astype(dt)
    rest: list[object] = []
    for kind in info.kinds[1:]:
        if kind == "tensor":
            rest.append((RNG.uniform(0.2, 0.8, (3,)) if floats else RNG.integers(1, 9, (3,))).astype(dt))
        else:
            rest.append(0.5 if floats else 2)
    want = call(functional, x, *rest, np.zeros_like(x))
    np.testing.assert_array_equal(run_inplace(inplace, x, *rest), want)
