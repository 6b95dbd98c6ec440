"""The aten tier's element-wise families of the ops-math list (ew_unary, ew_binary, ew_compare,
ew_composed, ew_grad, ew_reduce; issue 24) through ``pyaclnn.Op`` on the NumPy backend.

Every entry of those families runs here (``test_every_entry_is_exercised`` checks it) with
float32 and one other dtype. Expected values are NumPy (float64), Python's math, or torch
called directly (autograd for the gradients), written here: never the table's mapping.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pyaclnn  # noqa: E402
from aten_support import aten_backend, bf16, call, status_of  # noqa: E402
from pyaclnn.ops._aten import entries  # noqa: E402

F32, F16, F64, I32, I64, I8, U8, B = np.float32, np.float16, np.float64, np.int32, np.int64, np.int8, np.uint8, np.bool_
I16 = np.int16
RNG = np.random.default_rng(2024)
FAMILIES = {"ew_unary", "ew_binary", "ew_compare", "ew_composed", "ew_grad", "ew_reduce"}
MINE = sorted(op for op, e in entries().items() if e.family in FAMILIES)
EXERCISED: set[str] = set()


@pytest.fixture
def aten(use_backend: Callable[..., object], tmp_path: Path) -> object:
    return aten_backend(use_backend, tmp_path)


def rand(*shape: int, dtype: Any = F32, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype(dtype)


def close(got: np.ndarray, want: Any, dtype: Any = F32, tol: float | None = None) -> None:
    tol = tol or {F32: 1e-5, F16: 3e-3, F64: 1e-10}.get(dtype, 1e-2)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    np.testing.assert_allclose(np.asarray(got, F64), np.asarray(want, F64), rtol=tol, atol=tol)


def vec(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    return np.vectorize(fn, otypes=[F64])


# -- unary: (C name, domain, NumPy expectation of the float64 input) -----------------------------
UNARY: dict[str, tuple[tuple[float, float], Callable[[np.ndarray], np.ndarray]]] = {
    "Acos": ((-0.9, 0.9), np.arccos), "Acosh": ((1.1, 3.0), np.arccosh), "Asin": ((-0.9, 0.9), np.arcsin),
    "Asinh": ((-2, 2), np.arcsinh), "AsinhV2": ((-2, 2), np.arcsinh), "Atan": ((-2, 2), np.arctan),
    "Atanh": ((-0.9, 0.9), np.arctanh), "Cosh": ((-2, 2), np.cosh), "Sinh": ((-2, 2), np.sinh),
    "Tan": ((-1.2, 1.2), np.tan), "Lgamma": ((0.2, 4), vec(math.lgamma)), "Erfc": ((-2, 2), vec(math.erfc)),
    "Digamma": ((0.3, 4), lambda x: torch.special.digamma(torch.from_numpy(x)).numpy()),
    "Frac": ((-3, 3), lambda x: x - np.trunc(x)), "Log10": ((0.1, 5), np.log10), "Log2": ((0.1, 5), np.log2),
    "Sinc": ((-2, 2), np.sinc), "Square": ((-2, 2), np.square), "Trunc": ((-3, 3), np.trunc),
}
INPLACE_UNARY: dict[str, tuple[str, tuple[float, float], Callable[[np.ndarray], np.ndarray]]] = {
    "InplaceAcos": ("inputRef", (-0.9, 0.9), np.arccos), "InplaceAcosh": ("selfRef", (1.1, 3), np.arccosh),
    "InplaceAsin": ("selfRef", (-0.9, 0.9), np.arcsin), "InplaceAsinh": ("inputRef", (-2, 2), np.arcsinh),
    "InplaceAtan": ("inputRef", (-2, 2), np.arctan), "InplaceAtanh": ("inputRef", (-0.9, 0.9), np.arctanh),
    "InplaceCeil": ("selfRef", (-3, 3), np.ceil), "InplaceCos": ("inputRef", (-3, 3), np.cos),
    "InplaceCosh": ("selfRef", (-2, 2), np.cosh), "InplaceErf": ("selfRef", (-2, 2), vec(math.erf)),
    "InplaceErfc": ("selfRef", (-2, 2), vec(math.erfc)), "InplaceExp": ("selfRef", (-2, 2), np.exp),
    "InplaceExp2": ("selfRef", (-2, 2), np.exp2), "InplaceExpm1": ("selfRef", (-2, 2), np.expm1),
    "InplaceFloor": ("selfRef", (-3, 3), np.floor), "InplaceFrac": ("inputRef", (-3, 3), lambda x: x - np.trunc(x)),
    "InplaceLog": ("selfRef", (0.1, 5), np.log), "InplaceLog10": ("selfRef", (0.1, 5), np.log10),
    "InplaceLog1p": ("selfRef", (-0.5, 3), np.log1p), "InplaceLog2": ("selfRef", (0.1, 5), np.log2),
    "InplaceNeg": ("selfRef", (-3, 3), np.negative), "InplaceReciprocal": ("selfRef", (0.5, 3), np.reciprocal),
    "InplaceRound": ("selfRef", (-3, 3), np.round), "InplaceRsqrt": ("selfRef", (0.1, 4), lambda x: 1 / np.sqrt(x)),
    "InplaceSin": ("selfRef", (-3, 3), np.sin), "InplaceSinc": ("selfRef", (-2, 2), np.sinc),
    "InplaceSinh": ("selfRef", (-2, 2), np.sinh), "InplaceSqrt": ("self", (0.1, 4), np.sqrt),
    "InplaceTan": ("selfRef", (-1.2, 1.2), np.tan), "InplaceTanh": ("selfRef", (-2, 2), np.tanh),
    "InplaceTrunc": ("selfRef", (-3, 3), np.trunc),
}


@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("dtype", [F32, F16])
def test_unary(aten: object, op: str, dtype: Any, use_backend: Callable[..., object], tmp_path: Path) -> None:
    EXERCISED.add(op)
    if op == "Square":  # aclnn_square.cpp: Ascend950 only
        aten_backend(use_backend, tmp_path / "950", soc="Ascend950")
    (lo, hi), fn = UNARY[op]
    x = rand(3, 4, dtype=dtype, lo=lo, hi=hi)
    tol = 2e-2 if op == "Digamma" and dtype == F16 else None
    close(call(op, x, np.zeros_like(x)), fn(x.astype(F64)), dtype, tol=tol)


@pytest.mark.parametrize("op", sorted(INPLACE_UNARY))
@pytest.mark.parametrize("dtype", [F32, F16])
def test_in_place_unary(aten: object, op: str, dtype: Any) -> None:
    EXERCISED.add(op)
    name, (lo, hi), fn = INPLACE_UNARY[op]
    x = rand(2, 5, dtype=dtype, lo=lo, hi=hi)
    close(call(op, x.copy(), outputs=(name,)), fn(x.astype(F64)), dtype)


def test_unary_integer_inputs_promote_to_float(aten: object) -> None:
    EXERCISED.update({"Acos", "Log2", "Square", "Erfc"})
    i = np.array([[-1, 0, 1]], I32)
    close(call("Acos", i, np.zeros((1, 3), F32)), np.arccos(i.astype(F64)))
    close(call("Log2", np.array([1, 2, 8], U8), np.zeros(3, F32)), [0, 1, 3])
    close(call("Erfc", np.array([True, False]), np.zeros(2, F32)), [math.erfc(1), 1.0])
    # an integer tensor cannot hold an in-place acos (the result is float): 161002
    assert status_of("InplaceAcos", np.array([0, 1], I32)) == 161002
    # Frac takes integers (aclnn_frac.cpp): their fraction is 0; floats keep their sign
    np.testing.assert_array_equal(call("Frac", np.array([-3, 5], I32), np.zeros(2, I32)), [0, 0])
    np.testing.assert_array_equal(call("InplaceFrac", np.array([7], I8), outputs=("inputRef",)), [0])
    close(call("Frac", np.array([-2.25, 1.5], F32), np.zeros(2, F32)), [-0.25, 0.5])
    # AsinhV2 writes float16 or float32 only (aclnn_asinh_v2.cpp: float32 for a float64 x)
    close(call("AsinhV2", np.array([0.5, -2.0], F64), np.zeros(2, F32)), np.arcsinh([0.5, -2.0]))
    assert status_of("AsinhV2", np.array([0.5], F64), np.zeros(1, F64)) == 161002


def test_same_dtype_and_soc_rules(aten: object, use_backend: Callable[..., object], tmp_path: Path) -> None:
    """The sources' OP_CHECK_DTYPE_NOT_MATCH (out's dtype is the input's) and SoC checks: 161002."""
    x = rand(2, 3)
    assert status_of("Digamma", x, np.zeros((2, 3), F64)) == 161002  # aten would cast; the device refuses
    assert status_of("Digamma", x, np.zeros((2, 3), F32)) == 0
    assert status_of("Acos", x, np.zeros((2, 3), F64)) == 0  # Acos's out may be any float
    assert status_of("Lerp", x, x.astype(F16), x, np.zeros_like(x)) == 161002  # end's dtype differs
    assert status_of("TanhBackward", x, x.astype(F16), np.zeros_like(x)) == 161002
    assert status_of("MaxDim", x, 1, False, np.zeros(2, F16), np.zeros(2, I64)) == 161002
    assert status_of("IsNegInf", x, np.zeros((2, 3), F32)) == 161002  # out must be bool
    assert status_of("NanToNum", x, 0.0, 1.0, -1.0, np.zeros_like(x)) == 0
    assert status_of("Square", x, np.zeros_like(x)) == 161002  # Ascend950 only
    aten_backend(use_backend, tmp_path / "910", soc="Ascend910")
    assert status_of("NanToNum", x, 0.0, 1.0, -1.0, np.zeros_like(x)) == 161002  # 910B, 910_93, 950 only
    assert status_of("AddN", (x, x), np.zeros_like(x)) == 161002
    assert status_of("IsNegInf", x, np.zeros((2, 3), B)) == 161002
    aten_backend(use_backend, tmp_path / "950", soc="Ascend950")
    np.testing.assert_array_equal(call("Square", np.array([-3, 4], I64), np.zeros(2, I64)), [9, 16])
    assert status_of("Square", x, np.zeros((2, 3), F16)) == 161002  # out's dtype is self's
    assert status_of("IsPosInf", x, np.zeros((2, 3), B)) == 161002  # "910B/910C class" devices


def test_float_predicates(aten: object) -> None:
    EXERCISED.update({"Signbit", "IsFinite", "IsNegInf", "IsPosInf"})
    x = np.array([-0.0, 0.0, -1.5, 2, np.inf, -np.inf, np.nan], F32)
    for op, fn in (("Signbit", np.signbit), ("IsFinite", np.isfinite), ("IsNegInf", np.isneginf),
                   ("IsPosInf", np.isposinf)):
        np.testing.assert_array_equal(call(op, x, np.zeros(7, B)), fn(x), err_msg=op)
    h = x.astype(F16)
    np.testing.assert_array_equal(call("IsFinite", h, np.zeros(7, B)), np.isfinite(h))
    np.testing.assert_array_equal(call("Signbit", np.array([-3, 0, 4], I32), np.zeros(3, B)), [True, False, False])
    np.testing.assert_array_equal(call("IsPosInf", np.array([1, 2], I16), np.zeros(2, B)), [False, False])
    # IsFinite takes integers too (aclnn_is_finite.cpp, though its doc names the floats); out is bool
    np.testing.assert_array_equal(call("IsFinite", np.array([1, -4], I32), np.zeros(2, B)), [True, True])
    assert status_of("IsFinite", x, np.zeros(7, F32)) == 161002


def test_bitwise_not_nan_to_num_round_decimals_one(aten: object) -> None:
    EXERCISED.update({"BitwiseNot", "NanToNum", "InplaceNanToNum", "InplaceRoundDecimals", "InplaceOne",
                      "InplaceLogicalNot"})
    i = np.array([0, 5, -7], I32)
    np.testing.assert_array_equal(call("BitwiseNot", i, np.zeros_like(i)), np.invert(i))
    b = np.array([True, False])
    np.testing.assert_array_equal(call("BitwiseNot", b, np.zeros_like(b)), [False, True])
    x = np.array([np.nan, np.inf, -np.inf, 1.5], F32)
    want = np.nan_to_num(x.astype(F64), nan=2.0, posinf=100.0, neginf=-100.0)
    close(call("NanToNum", x, 2.0, 100.0, -100.0, np.zeros_like(x)), want)
    close(call("InplaceNanToNum", x.astype(F16), 2.0, 100.0, -100.0, outputs=("selfRef",)), want, F16)
    y = np.array([1.234, -5.678, 0.125], F32)
    close(call("InplaceRoundDecimals", y.copy(), 1, outputs=("selfRef",)), [1.2, -5.7, 0.1])
    close(call("InplaceRoundDecimals", y.astype(F64), 2, outputs=("selfRef",)), [1.23, -5.68, 0.12], F64)
    np.testing.assert_array_equal(call("InplaceOne", rand(2, 3), outputs=("selfRef",)), np.ones((2, 3)))
    np.testing.assert_array_equal(call("InplaceOne", np.zeros(3, I8), outputs=("selfRef",)), np.ones(3, I8))
    np.testing.assert_array_equal(call("InplaceLogicalNot", np.array([0.0, 2.0], F32), outputs=("selfRef",)), [1, 0])
    np.testing.assert_array_equal(call("InplaceLogicalNot", b.copy(), outputs=("selfRef",)), [False, True])


# -- binary arithmetic ------------------------------------------------------------------------
def _xlogy(x: np.ndarray, y: Any) -> np.ndarray:
    x, y = np.broadcast_arrays(np.asarray(x, F64), np.asarray(y, F64))
    return np.where(x == 0, 0.0, x * np.log(np.where(x == 0, 1.0, y)))


# (C name, first input, second input, extra C arguments after them, expectation (a, b) -> float64)
POS = dict(lo=0.5, hi=3.0)
BINARY: dict[str, tuple[str, str, tuple, Callable[[Any, Any], Any]]] = {
    "Adds": ("t", "s", (2,), lambda a, b: a + 2 * b), "Subs": ("t", "s", (3,), lambda a, b: a - 3 * b),
    "Muls": ("t", "s", (), np.multiply), "Divs": ("t", "s", (), np.true_divide),
    "Rsub": ("t", "t", (2,), lambda a, b: b - 2 * a), "Rsubs": ("t", "s", (0.5,), lambda a, b: b - 0.5 * a),
    "FmodScalar": ("t", "s", (), np.fmod), "FmodTensor": ("t", "t", (), np.fmod),
    "RemainderTensorScalar": ("t", "s", (), np.remainder), "RemainderTensorTensor": ("t", "t", (), np.remainder),
    "RemainderScalarTensor": ("s", "t", (), np.remainder),
    "PowTensorScalar": ("t", "s", (), np.power), "PowTensorTensor": ("t", "t", (), np.power),
    "PowScalarTensor": ("s", "t", (), np.power),
    "XLogYTensor": ("t", "t", (), _xlogy), "XLogYScalarOther": ("t", "s", (), _xlogy),
    "XLogYScalarSelf": ("s", "t", (), _xlogy),
    "LogAddExp": ("t", "t", (), np.logaddexp), "LogAddExp2": ("t", "t", (), np.logaddexp2),
    "ClampMin": ("t", "s", (), np.maximum), "ClampMax": ("t", "s", (), np.minimum),
    "ClampMinTensor": ("t", "t", (), np.maximum), "ClampMaxTensor": ("t", "t", (), np.minimum),
    "MulNoNan": ("t", "t", (), lambda a, b: np.where(b == 0, 0, np.where(b == 0, 1, a) * b)),
}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dtype", [F32, F16])
def test_binary(aten: object, op: str, dtype: Any) -> None:
    EXERCISED.add(op)
    first, second, extra, fn = BINARY[op]
    a = rand(2, 1, 3, dtype=dtype, **POS) if first == "t" else 1.5
    b = rand(4, 1, dtype=dtype, **POS) if second == "t" else 1.75
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    if op == "MulNoNan":  # a zero beside a NaN and an inf
        a, b = np.array([np.nan, np.inf, 2.0], dtype), np.array([0.0, 0.0, 3.0], dtype)
        shape = (3,)
    outs = ("z",) if op == "MulNoNan" else ("out",)
    got = call(op, a, b, *extra, np.zeros(shape, dtype), outputs=outs)
    want = fn(np.asarray(a, F64), np.asarray(b, F64))
    close(got, want, dtype, tol=1e-2 if dtype == F16 and op.startswith(("Pow", "XLogY")) else None)


INPLACE_BINARY: dict[str, tuple[str, tuple, Callable[[Any, Any], Any]]] = {
    "InplaceAdds": ("s", (2,), lambda a, b: a + 2 * b), "InplaceSub": ("t", (2,), lambda a, b: a - 2 * b),
    "InplaceSubs": ("s", (1,), np.subtract), "InplaceMul": ("t", (), np.multiply),
    "InplaceMuls": ("s", (), np.multiply), "InplaceDiv": ("t", (), np.true_divide),
    "InplaceDivs": ("s", (), np.true_divide), "InplaceFmodScalar": ("s", (), np.fmod),
    "InplaceFmodTensor": ("t", (), np.fmod), "InplaceRemainderTensorScalar": ("s", (), np.remainder),
    "InplaceRemainderTensorTensor": ("t", (), np.remainder), "InplacePowTensorScalar": ("s", (), np.power),
    "InplacePowTensorTensor": ("t", (), np.power), "InplaceXLogYTensor": ("t", (), _xlogy),
    "InplaceXLogYScalarOther": ("s", (), _xlogy), "InplaceClampMax": ("s", (), np.minimum),
    "InplaceClampMaxTensor": ("t", (), np.minimum), "InplaceClampMinTensor": ("t", (), np.maximum),
}


@pytest.mark.parametrize("op", sorted(INPLACE_BINARY))
@pytest.mark.parametrize("dtype", [F32, F16])
def test_in_place_binary(aten: object, op: str, dtype: Any) -> None:
    EXERCISED.add(op)
    second, extra, fn = INPLACE_BINARY[op]
    a = rand(3, 4, dtype=dtype, **POS)
    b = rand(1, 4, dtype=dtype, **POS) if second == "t" else 1.25
    name = "self" if op.startswith("InplacePow") else "selfRef"
    got = call(op, a.copy(), b, *extra, outputs=(name,))
    close(got, fn(a.astype(F64), np.asarray(b, F64)), dtype, tol=1e-2 if dtype == F16 else None)


def test_integer_arithmetic_keeps_integers(aten: object) -> None:
    EXERCISED.update({"Adds", "Muls", "RemainderTensorTensor", "FmodTensor", "InplaceMuls", "InplaceDiv"})
    a, b = np.array([7, -7, 9], I32), np.array([2, 2, -4], I32)
    np.testing.assert_array_equal(call("Adds", a, 3, 2, np.zeros(3, I32)), a + 6)
    np.testing.assert_array_equal(call("RemainderTensorTensor", a, b, np.zeros(3, I32)), np.remainder(a, b))
    np.testing.assert_array_equal(call("FmodTensor", a, b, np.zeros(3, I32)), np.fmod(a, b))
    np.testing.assert_array_equal(call("InplaceMuls", np.array([100, 3], I8), 3, outputs=("selfRef",)),
                                  (np.array([100, 3]) * 3).astype(I8))  # wraps
    close(call("Adds", a, 0.5, 1, np.zeros(3, F32)), a + 0.5)  # a float scalar makes the result float
    assert status_of("InplaceDiv", a.copy(), b) == 161002  # true division cannot be written to int32
    assert status_of("Subs", np.array([True]), 1, 1, np.zeros(1, I64)) == 161002  # no bool subtraction


@pytest.mark.parametrize("dtype", [F32, I32])
def test_rounding_division(aten: object, dtype: Any) -> None:
    EXERCISED.update({"DivMod", "DivMods", "InplaceDivMod", "InplaceDivMods", "DivV3"})
    a, b = np.array([7, -7, 9, -9], dtype), np.array([2, 2, -4, -4], dtype)
    q = a.astype(F64) / b
    for mode, want in ((0, q), (1, np.trunc(q)), (2, np.floor(q))):
        out_dt = F32 if mode == 0 else dtype
        close(call("DivMod", a, b, mode, np.zeros(4, out_dt)), want, out_dt)
        close(call("DivMods", a, 2, mode, np.zeros(4, out_dt)), a.astype(F64) / 2 if mode == 0 else
              (np.trunc if mode == 1 else np.floor)(a.astype(F64) / 2), out_dt)
        if mode:
            close(call("InplaceDivMod", a.copy(), b, mode, outputs=("selfRef",)), want, dtype)
            close(call("InplaceDivMods", a.copy(), -4, mode, outputs=("selfRef",)),
                  (np.trunc if mode == 1 else np.floor)(a.astype(F64) / -4), dtype)
        # DivV3 divides in float32 and casts back to the inputs' dtype (integers too, mode 0 included)
        close(call("DivV3", a, b, mode, np.zeros(4, dtype)), want.astype(dtype), dtype)
    assert status_of("DivMod", a, b, 3, np.zeros(4, F32)) == 161002  # no fourth mode
    assert status_of("DivV3", a, b, 3, np.zeros(4, dtype)) == 161002


def test_addcmul_addcdiv_lerp_gcd(aten: object) -> None:
    EXERCISED.update({"Addcmul", "Addcdiv", "InplaceAddcmul", "InplaceAddcdiv", "Lerp", "Lerps", "InplaceLerp",
                      "InplaceLerps", "Gcd"})
    s, t1, t2 = rand(2, 3), rand(2, 3), rand(1, 3, lo=0.5, hi=2)
    s64, t164, t264 = s.astype(F64), t1.astype(F64), t2.astype(F64)
    close(call("Addcmul", s, t1, t2, 0.5, np.zeros_like(s)), s64 + 0.5 * t164 * t264)
    close(call("Addcdiv", s, t1, t2, 2.0, np.zeros_like(s)), s64 + 2 * t164 / t264)
    close(call("InplaceAddcmul", s.copy(), t1, t2, 3.0, outputs=("selfRef",)), s64 + 3 * t164 * t264)
    close(call("InplaceAddcdiv", s.astype(F16), t1.astype(F16), t2.astype(F16), 1.0, outputs=("selfRef",)),
          s64 + t164 / t264, F16, tol=1e-2)
    i = np.array([1, 2, 3], I32)
    np.testing.assert_array_equal(call("Addcmul", i, i, i, 2, np.zeros(3, I32)), i + 2 * i * i)
    end, w = rand(2, 3), rand(2, 3, lo=0, hi=1)
    close(call("Lerp", s, end, w, np.zeros_like(s)), s64 + w * (end.astype(F64) - s64))
    close(call("Lerps", s, end, 0.25, np.zeros_like(s)), s64 + 0.25 * (end.astype(F64) - s64))
    close(call("InplaceLerp", s.copy(), end, w, outputs=("selfRef",)), s64 + w * (end.astype(F64) - s64))
    close(call("InplaceLerps", s.astype(F16), end.astype(F16), 0.5, outputs=("selfRef",)),
          (s64 + end) / 2, F16, tol=1e-2)
    a, b = np.array([12, -18, 0, 7], I64), np.array([8, 12, 5, 0], I64)
    np.testing.assert_array_equal(call("Gcd", a, b, np.zeros(4, I64)), np.gcd(a, b))
    np.testing.assert_array_equal(call("Gcd", a.astype(np.int16), b.astype(np.int16), np.zeros(4, np.int16)),
                                  np.gcd(a, b))
    assert status_of("Gcd", rand(2), rand(2), np.zeros(2, F32)) == 161002  # integers only
    assert status_of("Gcd", a.astype(I8), a.astype(I8), np.zeros(4, I8)) == 161002  # 910B: int16/32/64


def test_bitwise_and_shifts(aten: object) -> None:
    ops = {"BitwiseAndScalar": np.bitwise_and, "BitwiseOrScalar": np.bitwise_or, "BitwiseXorScalar": np.bitwise_xor}
    tensor_ops = {"BitwiseAndTensor": np.bitwise_and, "BitwiseAndTensorOut": np.bitwise_and,
                  "BitwiseOrTensor": np.bitwise_or, "BitwiseXorTensor": np.bitwise_xor}
    EXERCISED.update(ops, tensor_ops)
    a, b = np.array([[12, -3, 255]], I32), np.array([[10], [7]], I32)
    for op, fn in tensor_ops.items():
        np.testing.assert_array_equal(call(op, a, b, np.zeros((2, 3), I32)), fn(a, b), err_msg=op)
        np.testing.assert_array_equal(call(op, a.astype(U8), b.astype(U8), np.zeros((2, 3), U8)),
                                      fn(a.astype(U8), b.astype(U8)), err_msg=op)
    for op, fn in ops.items():
        got = call(op, a.astype(np.int16), 6, np.zeros((1, 3), np.int16))
        np.testing.assert_array_equal(got, fn(a, 6), err_msg=op)
    t, f = np.array([True, True, False]), np.array([True, False, False])
    np.testing.assert_array_equal(call("BitwiseXorTensor", t, f, np.zeros(3, B)), t ^ f)
    assert status_of("BitwiseAndTensor", rand(3), rand(3), np.zeros(3, F32)) == 161002  # no float bits
    inplace = {"InplaceBitwiseAndScalar": ("s", np.bitwise_and), "InplaceBitwiseAndTensor": ("t", np.bitwise_and),
               "InplaceBitwiseAndTensorOut": ("t", np.bitwise_and), "InplaceBitwiseOrScalar": ("s", np.bitwise_or),
               "InplaceBitwiseOrTensor": ("t", np.bitwise_or), "InplaceBitwiseXorScalar": ("s", np.bitwise_xor),
               "InplaceBitwiseXorTensor": ("t", np.bitwise_xor)}
    EXERCISED.update(inplace)
    x = np.array([5, 12, -1], I64)
    for op, (kind, fn) in inplace.items():
        other = np.array([3, 10, 6], I64) if kind == "t" else 6
        name = "self" if op.endswith("TensorOut") else "selfRef"
        np.testing.assert_array_equal(call(op, x.copy(), other, outputs=(name,)), fn(x, other), err_msg=op)
        np.testing.assert_array_equal(call(op, x.astype(I8), np.asarray(other).astype(I8) if kind == "t" else 6,
                                           outputs=(name,)), fn(x, other).astype(I8), err_msg=op)
    EXERCISED.update({"LeftShift", "LeftShifts"})
    v, s = np.array([1, 3, -2, 5], I32), np.array([0, 2, 3, 31], I32)
    np.testing.assert_array_equal(call("LeftShift", v, s, np.zeros(4, I32)), np.left_shift(v, s))
    np.testing.assert_array_equal(call("LeftShifts", v.astype(I16), 3, np.zeros(4, I16)),
                                  np.left_shift(v.astype(I16), 3))


def test_logical(aten: object) -> None:
    EXERCISED.update({"LogicalOr", "LogicalXor", "InplaceLogicalAnd", "InplaceLogicalOr"})
    a, b = np.array([0.0, 1.5, 0.0, -2.0], F32), np.array([0, 0, 3, 4], I32)
    np.testing.assert_array_equal(call("LogicalOr", a, b, np.zeros(4, B)), np.logical_or(a, b))
    np.testing.assert_array_equal(call("LogicalXor", a, b, np.zeros(4, B)), np.logical_xor(a, b))
    np.testing.assert_array_equal(call("LogicalXor", a.astype(F16), a.astype(F16), np.zeros(4, F32)), np.zeros(4))
    np.testing.assert_array_equal(call("InplaceLogicalAnd", a.copy(), b, outputs=("selfRef",)),
                                  np.logical_and(a, b).astype(F32))
    t = np.array([True, False, False])
    np.testing.assert_array_equal(call("InplaceLogicalOr", t.copy(), np.array([False, False, True]),
                                       outputs=("selfRef",)), [True, False, True])


def test_clamps_and_hardtanh(aten: object) -> None:
    EXERCISED.update({"Clamp", "ClampTensor", "Hardtanh", "InplaceHardtanh"})
    x = rand(3, 4, lo=-3, hi=3)
    x64 = x.astype(F64)
    close(call("Clamp", x, -1.0, 0.5, np.zeros_like(x)), np.clip(x64, -1, 0.5))
    close(call("Clamp", x, None, 0.5, np.zeros_like(x)), np.minimum(x64, 0.5))  # a nullptr bound: no bound
    close(call("Clamp", x, -0.5, None, np.zeros_like(x)), np.maximum(x64, -0.5))
    lo, hi = rand(1, 4, lo=-2, hi=-1), rand(3, 1, lo=0, hi=1)
    close(call("ClampTensor", x, lo, hi, np.zeros_like(x)), np.minimum(np.maximum(x64, lo), hi))
    close(call("ClampTensor", x, None, hi, np.zeros_like(x)), np.minimum(x64, hi))
    i = np.array([-5, 0, 5], I32)
    np.testing.assert_array_equal(call("Clamp", i, -2, 3, np.zeros(3, I32)), [-2, 0, 3])
    close(call("Hardtanh", x, -1.0, 1.0, np.zeros_like(x)), np.clip(x64, -1, 1))
    close(call("InplaceHardtanh", x.astype(F16), -0.5, 2.0, outputs=("selfRef",)), np.clip(x64, -0.5, 2), F16)
    np.testing.assert_array_equal(call("Hardtanh", i, -1, 1, np.zeros(3, I32)), [-1, 0, 1])


# -- comparisons -------------------------------------------------------------------------------
COMPARE = {"Eq": np.equal, "Ne": np.not_equal, "Ge": np.greater_equal, "Gt": np.greater, "Le": np.less_equal,
           "Lt": np.less}


@pytest.mark.parametrize("name", sorted(COMPARE))
@pytest.mark.parametrize("dtype", [F32, I32, F16])
def test_comparisons(aten: object, name: str, dtype: Any) -> None:
    EXERCISED.update({f"{name}Tensor", f"{name}Scalar"})
    fn = COMPARE[name]
    a = np.array([[1, 2, 3, 4]], dtype)
    b = np.array([[2], [3]], dtype)
    np.testing.assert_array_equal(call(f"{name}Tensor", a, b, np.zeros((2, 4), B)), fn(a, b))
    np.testing.assert_array_equal(call(f"{name}Scalar", a, 3, np.zeros((1, 4), B)), fn(a, 3))
    # the result written to a numeric out: true is 1
    np.testing.assert_array_equal(call(f"{name}Scalar", a, 2.5, np.zeros((1, 4), F32)), fn(a, 2.5).astype(F32))


def test_comparison_dtypes(aten: object) -> None:
    t = np.array([True, False])
    np.testing.assert_array_equal(call("EqTensor", t, np.array([True, True]), np.zeros(2, B)), [True, False])
    assert status_of("GeTensor", t, t, np.zeros(2, B)) == 161002  # Ge's 910B list has no bool
    assert status_of("GtTensor", t, t, np.zeros(2, B)) == 0
    c = np.array([1 + 2j], np.complex64)
    np.testing.assert_array_equal(call("NeTensor", c, c, np.zeros(1, B)), [False])
    assert status_of("LtTensor", c, c, np.zeros(1, B)) == 161002


# -- compositions ------------------------------------------------------------------------------
def test_add_v3_add_n_equal(aten: object) -> None:
    EXERCISED.update({"AddV3", "AddN", "Equal"})
    o = rand(2, 3)
    close(call("AddV3", 1.5, o, 2.0, np.zeros_like(o)), 1.5 + 2 * o.astype(F64))
    i = np.array([1, 2, 3], I32)
    np.testing.assert_array_equal(call("AddV3", 10, i, 3, np.zeros(3, I32)), 10 + 3 * i)
    xs = [rand(2, 3) for _ in range(4)]
    close(call("AddN", tuple(xs), np.zeros((2, 3), F32)), np.sum([x.astype(F64) for x in xs], 0))
    hs = tuple(x.astype(F16) for x in xs)
    close(call("AddN", hs, np.zeros((2, 3), F16)), np.sum([h.astype(F64) for h in hs], 0), F16)
    np.testing.assert_array_equal(call("AddN", (i, i), np.zeros(3, I32)), 2 * i)
    assert status_of("AddN", (xs[0], rand(3, 2)), np.zeros((2, 3), F32)) == 161002  # shapes differ
    a = rand(2, 3)
    assert call("Equal", a, a.copy(), np.zeros(1, B)).tolist() == [True]
    b = a.copy()
    b[1, 2] += 1
    assert call("Equal", a, b, np.zeros(1, B)).tolist() == [False]
    assert call("Equal", a, a.reshape(3, 2), np.zeros(1, B)).tolist() == [False]  # shapes differ
    assert call("Equal", np.array([np.nan], F32), np.array([np.nan], F32), np.zeros(1, B)).tolist() == [False]
    assert call("Equal", i, i.copy(), np.zeros(1, B)).tolist() == [True]
    assert status_of("Equal", a, a, np.zeros(2, B)) == 161002  # out must have shape [1]
    assert status_of("Equal", a, a, np.zeros(1, F32)) == 161002  # ... and dtype bool


def test_fused_element_wise(aten: object) -> None:
    EXERCISED.update({"ApproximateEqual", "AddMatMatElements", "AddMatMatElementsPlus", "FusedMulAddN"})
    x1, x2 = rand(3, 4), rand(3, 4)
    x2[0] = x1[0] + 0.05
    np.testing.assert_array_equal(call("ApproximateEqual", x1, x2, 0.1, np.zeros((3, 4), B), outputs=("y",)),
                                  np.abs(x1.astype(F64) - x2) < 0.1)
    assert status_of("ApproximateEqual", x1, rand(1, 4), 0.1, np.zeros((3, 4), B)) == 161002  # no broadcast
    a, b, c = rand(2, 3), rand(2, 3), rand(2, 3)
    want = c.astype(F64) * 0.5 + 2.0 * a.astype(F64) * b
    close(call("AddMatMatElements", a, b, c, 2.0, 0.5, np.zeros_like(c), outputs=("cOut",)), want)
    close(call("AddMatMatElements", a.astype(F16), b.astype(F16), c.astype(F16), 2.0, 0.5, np.zeros((2, 3), F16),
               outputs=("cOut",)), want, F16, tol=1e-2)
    beta, alpha = np.array([0.5], F32), np.array([2.0], F32)
    close(call("AddMatMatElementsPlus", c, a, b, beta, alpha, np.zeros_like(c), outputs=("cOut",)), want)
    assert status_of("AddMatMatElementsPlus", c, a, b, rand(2), alpha, np.zeros_like(c)) == 161002
    x3 = np.array([3.0], F32)
    close(call("FusedMulAddN", a, b, x3, np.zeros_like(a), outputs=("y",)), a.astype(F64) * 3 + b)
    i = np.array([1, -2, 3], I32)
    np.testing.assert_array_equal(call("FusedMulAddN", i, i, np.array([4], I32), np.zeros(3, I32), outputs=("y",)),
                                  5 * i)


def test_in_place_atan2_leaves_other(aten: object) -> None:
    EXERCISED.add("InplaceAtan2")
    y, x = rand(2, 3), rand(2, 3)
    got, other = call("InplaceAtan2", y.copy(), x.copy(), outputs=("selfRef", "other"))
    close(got, np.arctan2(y.astype(F64), x))
    np.testing.assert_array_equal(other, x)
    close(call("InplaceAtan2", y.astype(F16), x.astype(F16), outputs=("selfRef",)), np.arctan2(y, x), F16)


def _segsum_naive(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    out = np.zeros(x.shape + (n,))
    for i in range(n):
        for j in range(n):
            out[..., i, j] = np.exp(x[..., j + 1:i + 1].sum(-1)) if j <= i else 0.0
    return out


@pytest.mark.parametrize("dtype", [F32, F16])
def test_exp_segsum_and_its_backward(aten: object, dtype: Any) -> None:
    EXERCISED.update({"ExpSegsum", "ExpSegsumBackward"})
    x = rand(2, 3, 5, dtype=dtype, lo=-0.5, hi=0.5)
    got = call("ExpSegsum", x, np.zeros((2, 3, 5, 5), dtype))
    close(got, _segsum_naive(x.astype(F64)), dtype)
    # the backward against autograd of the naive forward (float64)
    t = torch.tensor(x.astype(F64)[None], requires_grad=True)  # 4-D input, 5-D output
    n = 5
    ys = torch.stack([torch.stack([t[..., j + 1:i + 1].sum(-1).exp() if j <= i else t[..., 0] * 0
                                   for j in range(n)], -1) for i in range(n)], -2)
    g = rand(1, 2, 3, 5, 5, dtype=dtype)
    (want,) = torch.autograd.grad(ys, t, torch.tensor(g.astype(F64)))
    got = call("ExpSegsumBackward", g, ys.detach().numpy().astype(dtype), np.zeros((1, 2, 3, 5), dtype),
               outputs=("gradInput",))
    close(got, want.numpy(), dtype, tol=2e-2 if dtype == F16 else 1e-4)
    assert status_of("ExpSegsum", rand(5, dtype=dtype), np.zeros((5, 5), dtype)) == 161002  # 3-D or 4-D only


# -- gradients ---------------------------------------------------------------------------------
GRADS: dict[str, tuple[str, tuple[float, float], Callable[[Any], Any], tuple[str, ...]]] = {
    # C name: (output name, domain, forward in torch, C inputs: x the forward's input, y its output)
    "AcosGrad": ("x_grad", (-0.9, 0.9), torch.acos, ("dy", "x")),
    "AcosGradV2": ("z", (-0.9, 0.9), torch.acos, ("x", "dy")),
    "AsinhGrad": ("z", (-2, 2), torch.asinh, ("y", "dy")),
    "AtanGrad": ("dx", (-2, 2), torch.atan, ("x", "dy")),
    "TanhBackward": ("gradInput", (-2, 2), torch.tanh, ("dy", "y")),
}


@pytest.mark.parametrize("op", sorted(GRADS))
@pytest.mark.parametrize("dtype", [F32, F16])
def test_unary_gradients_against_autograd(aten: object, op: str, dtype: Any) -> None:
    EXERCISED.add(op)
    out, (lo, hi), forward, order = GRADS[op]
    x = rand(3, 4, dtype=dtype, lo=lo, hi=hi)
    dy = rand(3, 4, dtype=dtype)
    t = torch.tensor(x.astype(F64), requires_grad=True)
    y = forward(t)
    (want,) = torch.autograd.grad(y, t, torch.tensor(dy.astype(F64)))
    values = {"x": x, "dy": dy, "y": y.detach().numpy().astype(dtype)}
    got = call(op, *(values[n] for n in order), np.zeros_like(x), outputs=(out,))
    close(got, want.numpy(), dtype, tol=1e-2 if dtype == F16 else 1e-4)
    if op != "TanhBackward":  # these take equal shapes only (their sources' CheckShape)
        args = [values[n] for n in order]
        args[1] = args[1][:1]
        assert status_of(op, *args, np.zeros_like(x)) == 161002


def test_grouped_bias_add_grad(aten: object) -> None:
    EXERCISED.update({"GroupedBiasAddGrad", "GroupedBiasAddGradV2"})
    g = rand(10, 4)
    ends = np.array([3, 3, 7, 10], I64)
    want = np.stack([g[s:e].astype(F64).sum(0) for s, e in zip([0, 3, 3, 7], ends)])
    close(call("GroupedBiasAddGrad", g, ends, np.zeros((4, 4), F32)), want)
    close(call("GroupedBiasAddGradV2", g, ends.astype(I32), 0, np.zeros((4, 4), F32)), want)
    close(call("GroupedBiasAddGradV2", g, np.array([3, 0, 4, 3], I32), 1, np.zeros((4, 4), F32)), want)
    g3 = rand(5, 6, 4, dtype=F16)
    close(call("GroupedBiasAddGrad", g3, None, np.zeros((5, 4), F16)), g3.astype(F64).sum(1), F16, tol=1e-2)
    assert status_of("GroupedBiasAddGrad", g, None, np.zeros((10, 4), F32)) == 161002  # 2-D needs groupIdx
    assert status_of("GroupedBiasAddGradV2", g, ends, 2, np.zeros((4, 4), F32)) == 161002


# -- reductions --------------------------------------------------------------------------------
@pytest.mark.parametrize("index_dtype", [I64, I32])
def test_max_min_dim(aten: object, index_dtype: Any) -> None:
    EXERCISED.update({"MaxDim", "MinDim"})
    x = np.array([[1, 5, 5, 0], [7, 2, 7, -1], [3, 3, 3, 3]], F32)
    v, i = call("MaxDim", x, 1, False, np.zeros(3, F32), np.zeros(3, index_dtype), outputs=("out", "indices"))
    np.testing.assert_array_equal(v, x.max(1))
    np.testing.assert_array_equal(i, x.argmax(1))  # the first of equal maxima
    assert i.dtype == index_dtype
    v, i = call("MinDim", x.astype(F16), 0, True, np.zeros((1, 4), F16), np.zeros((1, 4), index_dtype),
                outputs=("out", "indices"))
    np.testing.assert_array_equal(v, x.min(0, keepdims=True))
    np.testing.assert_array_equal(i, x.argmin(0)[None])
    assert status_of("MaxDim", x, 2, False, np.zeros(3, F32), np.zeros(3, I64)) == 161002  # dim out of range
    assert status_of("MaxDim", x.astype(I32), 0, False, np.zeros(4, I32), np.zeros(4, I64)) == 161002


def test_onnx_style_reductions(aten: object) -> None:
    EXERCISED.update({"MaxV2", "ReduceLogSum"})
    x = rand(2, 3, 4, lo=0.1, hi=2)
    x64 = x.astype(F64)
    close(call("MaxV2", x, [0, 2], False, False, np.zeros(3, F32)), x64.max((0, 2)))
    close(call("MaxV2", x, [-1], True, False, np.zeros((2, 3, 1), F32)), x64.max(-1, keepdims=True))
    close(call("MaxV2", x, [], False, False, np.zeros((), F32)), x64.max())  # empty dims: every axis
    close(call("MaxV2", x, [], False, True, np.zeros_like(x)), x64)  # ... or none (noopWithEmptyDims)
    np.testing.assert_array_equal(call("MaxV2", np.array([[1, 9], [4, 2]], I8), [1], False, False, np.zeros(2, I8)),
                                  [9, 4])
    close(call("ReduceLogSum", x, [1], False, False, np.zeros((2, 4), F32), outputs=("reduce",)),
          np.log(x64.sum(1)))
    close(call("ReduceLogSum", x.astype(F16), [0, 1], True, False, np.zeros((1, 1, 4), F16), outputs=("reduce",)),
          np.log(x64.sum((0, 1), keepdims=True)), F16)
    close(call("ReduceLogSum", x, [], False, False, np.zeros((), F32), outputs=("reduce",)), np.log(x64.sum()))
    close(call("ReduceLogSum", x, [], True, True, np.zeros_like(x), outputs=("reduce",)), x64)
    assert status_of("ReduceLogSum", x, [1, -2], False, False, np.zeros((2, 4), F32)) == 161002  # repeated axis
    assert status_of("MaxV2", x, [1], False, False, np.zeros((2, 3), F32)) == 161002  # wrong out shape


# -- phase 1: statuses ---------------------------------------------------------------------------
def test_statuses(aten: object, use_backend: Callable[..., object], tmp_path: Path) -> None:
    x = rand(2, 3)
    assert status_of("Acos", None, np.zeros_like(x)) == 161001
    assert status_of("Acos", x, None) == 161001
    assert status_of("Adds", x, None, 1, np.zeros_like(x)) == 161001  # the aclScalar other
    assert status_of("AddN", None, np.zeros_like(x)) == 161001
    assert status_of("MulNoNan", x, None, np.zeros_like(x)) == 161001
    assert status_of("InplaceAcos", None) == 161001
    assert status_of("Acos", x, np.zeros((3, 2), F32)) == 161002  # wrong out shape
    assert status_of("EqTensor", x, rand(3), np.zeros((2, 2), B)) == 161002
    assert status_of("AsinhGrad", x, x, np.zeros((2, 2), F32)) == 161002
    assert status_of("Acos", np.zeros((1,) * 9, F32), np.zeros((1,) * 9, F32)) == 161002  # rank 9
    assert status_of("Trunc", x.astype(F64), np.zeros_like(x, F64)) == 161002  # its source: f32, f16, bf16
    assert status_of("Trunc", bf16(x), np.zeros_like(bf16(x))) == 0
    aten_backend(use_backend, tmp_path / "910", soc="Ascend910")  # no bf16 there
    assert status_of("Trunc", bf16(x), np.zeros_like(bf16(x))) == 161002


def test_every_entry_is_exercised() -> None:
    """Runs after the tests above that call the operators (pytest keeps the file's order): every
    entry of the families ran."""
    missing = sorted(set(MINE) - EXERCISED)
    if not EXERCISED:
        pytest.skip("run with the whole module")
    assert len(MINE) >= 120
    assert not missing, f"entries no test of this module ran: {missing}"


def test_one_operator_has_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The element-wise operators are the ew_* families' (traced one by one), and a second module
    naming an operator that has an entry is an error (table/__init__.py): no module takes
    another's operators over."""
    import pkgutil
    import sys
    import types

    from pyaclnn.ops._aten import table
    from pyaclnn.ops._aten.table._entry import E
    loaded = table.load()
    assert loaded["Acos"].family == "ew_unary" and loaded["Softmax"].family == "nn"
    assert loaded["Hardtanh"].family == "ew_binary" and loaded["MaxDim"].family == "ew_reduce"
    module = types.ModuleType(f"{table.__name__}.zz_generic")
    module.ENTRIES = [E("Fakezz", "aten::abs.default", "self out", ("self",))]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    real = pkgutil.iter_modules
    monkeypatch.setattr(table.pkgutil, "iter_modules",
                        lambda path: list(real(path)) + [pkgutil.ModuleInfo(None, "zz_generic", False)])  # type: ignore[arg-type]
    assert table.load()["Fakezz"].family == "zz_generic"
    module.ENTRIES.append(E("Acosh", "aten::acosh.default", "self out", ("self",)))  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="Acosh is in ew_unary.py and zz_generic.py"):
        table.load()


def test_same_dtype_and_socs_name_parameters_and_socs() -> None:
    """Every entry's same_dtype names its C parameters, its socs pyaclnn's SoCs."""
    from pyaclnn._core.env import SOCS
    for op, entry in entries().items():
        assert set(entry.same_dtype) <= set(entry.params), op
        assert set(entry.socs) <= set(SOCS), op
