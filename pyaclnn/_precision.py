"""``assert_close``: CANN's precision standard for comparing an operator's output with a golden.

The standard is hicann/opbase ``docs/zh/ops_precision_standard/mixed_tolerance_standard.md``
(生态算子开源精度标准, "the ecosystem operators' open-source precision standard"; it was
``experimental_standard.md`` until mid 2026), as of commit 233ee24 with the clarification of
opbase PR #924 (merged 2026-09-23). For floating-point outputs it says:

- an element passes when ``|actual - golden| <= atol + rtol * |golden|`` (§2.1.1: atol covers
  goldens near zero, so nothing divides by zero; rtol covers large values);
- a case passes when both ``matched_ratio >= 0.99`` (the share of passing elements) and
  ``max_abs_error <= max_abs_error_limit`` hold (§2.1.2, §2.3);
- ``max_abs_error`` is taken over the elements where actual and golden are both finite;
  ``max_abs_error_limit = max(floor, 32 * ULP(g_low))``, ``g_low`` the golden of the worst element
  narrowed to the output dtype (§2.1.2 after PR #924: "or" in the table is the larger of the two);
- the table (§2.2): rtol = atol = 2^-10 for float16, 2^-7 for bfloat16, 2^-13 for float32,
  2^-3 for float8 e4m3, 2^-2 for float8 e5m2 (HiFLOAT32 has no NumPy dtype); floors 1e-1, 1e-1,
  1e-2, 1e-0, 1e-0.

±inf and NaN are left out of ``max_abs_error`` and compared "by the narrowing rule" (PR #924,
§2.3), whose full text was not available here; this module follows what CANN's own test kit
(hicann/ops-test-kit ``ttk/core_modules/comparison/mix_tolerance.py``) and the third-party
readings of that rule do: the golden is first narrowed (rounded to nearest) to the output dtype,
so a golden beyond its range is ±inf; NaN matches NaN and inf matches inf of the same sign;
any other pairing with a NaN or an inf fails the comparison.

Integer and bool outputs are outside the standard (§0 leaves integer and data-movement operators
to per-operator rules); they are compared exactly, as the earlier commercial standard (§4.3,
"bitwise identical") and the test kit's ``binary`` route do.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

__all__ = ["assert_close", "Tolerance", "STANDARD", "SOURCE"]

SOURCE = "hicann/opbase docs/zh/ops_precision_standard/mixed_tolerance_standard.md"
REQUIRED_MATCHED_RATIO = 0.99  # §2.2, every dtype
ULPS = 32  # §2.2: the limit's "32 * ULP"


class Tolerance(NamedTuple):
    """One column of the standard's table (§2.2)."""
    rtol: float
    atol: float
    floor: float  # the fixed part of max_abs_error_limit


STANDARD: dict[str, Tolerance] = {
    "float16": Tolerance(2.0 ** -10, 2.0 ** -10, 1e-1),
    "bfloat16": Tolerance(2.0 ** -7, 2.0 ** -7, 1e-1),
    "float32": Tolerance(2.0 ** -13, 2.0 ** -13, 1e-2),
    "float8_e4m3fn": Tolerance(2.0 ** -3, 2.0 ** -3, 1e-0),
    "float8_e5m2": Tolerance(2.0 ** -2, 2.0 ** -2, 1e-0),
}


def _host(value: Any, name: str) -> np.ndarray:
    """``value`` as an ndarray: a pyaclnn Tensor is read back, torch and DLPack objects viewed."""
    from ._tensor import Tensor
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (int, float, bool, list, tuple, np.generic)):
        return np.asarray(value)
    from ._interop import host_array
    try:
        array = host_array(value)
    except Exception:  # noqa: BLE001 - named for the caller, whatever the object refused
        array = None
    if array is None or array.dtype.kind not in "biuf" and array.dtype.name not in STANDARD:
        raise TypeError(f"assert_close: {name} must be a NumPy array, a pyaclnn.Tensor or a torch tensor, "
                        f"not {type(value).__name__}")
    return array


def _dtype(dtype: Any) -> np.dtype:
    if isinstance(dtype, str) and dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        import ml_dtypes
        return np.dtype(getattr(ml_dtypes, dtype))
    from .dtypes import DType, to_numpy
    if isinstance(dtype, DType):
        return to_numpy(dtype)
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"assert_close: dtype must be a NumPy dtype, a dtype name or a pyaclnn.DType, "
                        f"not {dtype!r}") from None


def _ulp(value: float, dtype: np.dtype) -> float:
    """The spacing of ``dtype``'s numbers at ``value`` (its binade; the subnormal step near zero)."""
    import ml_dtypes
    info = ml_dtypes.finfo(dtype)
    exponent = math.frexp(abs(value))[1] - 1 if value else info.minexp
    return math.ldexp(1.0, max(exponent, info.minexp) - info.nmant)


def _at(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def assert_close(actual: Any, golden: Any, dtype: Any = None) -> None:
    """Assert that ``actual`` meets CANN's precision standard against ``golden``.

    The standard is hicann/opbase ``docs/zh/ops_precision_standard/mixed_tolerance_standard.md``
    (see ``pyaclnn._precision`` for what it says and the version read): each element passes when
    ``|actual - golden| <= atol + rtol * |golden|``; at least 99% of the elements must pass, and
    the largest error among finite elements must stay within ``max(floor, 32 * ULP(golden))``
    at that element. rtol = atol = 2^-10 (float16), 2^-7 (bfloat16), 2^-13 (float32); floors
    1e-1, 1e-1, 1e-2. NaN must meet NaN and inf an inf of the same sign (the golden is first
    rounded to the output dtype, so an overflowing golden is inf). Integer and bool outputs must
    be equal.

    Args:
        actual: the output under test (a device's, say): a NumPy array, a ``pyaclnn.Tensor``
            (read back) or a torch tensor, bfloat16 included (``ml_dtypes.bfloat16``).
        golden: the expected values, of the same shape, in the same or a higher precision (the
            reference backend's output, a CPU computation).
        dtype: the output dtype whose row of the table applies (a NumPy dtype, a name such as
            ``"bfloat16"``, or a ``pyaclnn.DType``); by default ``actual``'s.

    Raises:
        AssertionError: a rule failed; the message names the rule, the worst element's index,
            its actual and golden values, its error and the threshold.
        ValueError: the shapes differ, or no rule covers the dtype (float64, complex).
        TypeError: an argument is not an array.
    """
    a = _host(actual, "actual")
    g = _host(golden, "golden")
    out = _dtype(dtype) if dtype is not None else a.dtype
    if a.shape != g.shape:
        raise ValueError(f"assert_close: actual has shape {a.shape} and golden {g.shape}; they must be equal")
    if out.kind in "biu":
        _exact(a, g, out)
        return
    tolerance = STANDARD.get(out.name)
    if tolerance is None:
        raise ValueError(f"assert_close: CANN's precision standard ({SOURCE}) has no rule for {out.name}: "
                         f"it covers {', '.join(STANDARD)}, integers and bool; pass dtype= to pick a row")
    if a.size == 0:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        av = a.astype(np.float64).ravel()
        gv = g.astype(out).astype(np.float64).ravel()  # narrowed to the output dtype (PR #924)
    _compare(av, gv, a.shape, out.name, tolerance)


def _exact(a: np.ndarray, g: np.ndarray, out: np.dtype) -> None:
    differ = np.flatnonzero(a.ravel() != g.ravel())
    if differ.size:
        i = int(differ[0])
        raise AssertionError(f"assert_close ({out.name}: exact): {differ.size} of {a.size} element(s) differ; "
                             f"first at index {_at(i, a.shape)}: actual {a.ravel()[i].item()!r}, golden {g.ravel()[i].item()!r} "
                             f"(integer and bool outputs must be equal)")


def _compare(a: np.ndarray, g: np.ndarray, shape: tuple[int, ...], name: str, tol: Tolerance) -> None:
    head = f"assert_close ({name}, {SOURCE})"
    finite = np.isfinite(a) & np.isfinite(g)
    same_special = (np.isnan(a) & np.isnan(g)) | (np.isinf(a) & np.isinf(g) & (np.sign(a) == np.sign(g)))
    special = ~finite & ~same_special
    if special.any():
        i = int(np.flatnonzero(special)[0])
        raise AssertionError(f"{head}: NaN/inf rule failed at {int(special.sum())} element(s); first at index "
                             f"{_at(i, shape)}: actual {float(a[i])!r}, golden {float(g[i])!r} (NaN must meet NaN and inf an inf "
                             f"of the same sign)")
    with np.errstate(invalid="ignore"):
        error = np.where(finite, np.abs(a - g), 0.0)
    allowed = tol.atol + tol.rtol * np.abs(g)
    failing = finite & (error > allowed)
    ratio = 1.0 - int(failing.sum()) / a.size
    if ratio < REQUIRED_MATCHED_RATIO:
        i = int(np.argmax(np.where(failing, error - allowed, -np.inf)))
        raise AssertionError(f"{head}: matched_ratio {ratio:.6g} < {REQUIRED_MATCHED_RATIO}: {int(failing.sum())} of "
                             f"{a.size} element(s) exceed atol + rtol * |golden| (atol = rtol = {tol.rtol!r}); worst "
                             f"at index {_at(i, shape)}: actual {float(a[i])!r}, golden {float(g[i])!r}, error {float(error[i])!r} > "
                             f"threshold {float(allowed[i])!r}")
    if finite.any():
        i = int(np.argmax(error))
        limit = max(tol.floor, ULPS * _ulp(float(g[i]), _dtype(name)))
        if error[i] > limit:
            raise AssertionError(f"{head}: max_abs_error rule failed: the largest error is at index {_at(i, shape)}: "
                                 f"actual {float(a[i])!r}, golden {float(g[i])!r}, error {float(error[i])!r} > threshold {limit!r} "
                                 f"(max({tol.floor}, 32 * ULP(golden)))")
