"""pyaclnn.testing for CI users: assert_close by CANN's precision standard, and the skip of a test
whose operator the backend cannot run (require_reference, @pytest.mark.aclnn_reference).

The expectations of assert_close are hand-made from the standard's own table (hicann/opbase
docs/zh/ops_precision_standard/mixed_tolerance_standard.md §2.2: rtol = atol = 2^-10 float16,
2^-7 bfloat16, 2^-13 float32; required matched ratio 0.99; max_abs_error_limit "1e-1 / 1e-2 or
32 * ULP", the larger): values just inside and just outside each bound, written as numbers.
"""
from __future__ import annotations

import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn.testing import assert_close, reference_missing, require_reference

pytest_plugins = ["pytester"]

bf16 = ml_dtypes.bfloat16


def fails(actual, golden, rule: str, **kw) -> str:
    with pytest.raises(AssertionError) as info:
        assert_close(actual, golden, **kw)
    assert rule in str(info.value), str(info.value)
    return str(info.value)


def one_off(value: float, n: int = 10, dtype=np.float16, golden: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """n elements equal to the golden but the first, which is ``value``."""
    g = np.full(n, golden, dtype)
    a = g.copy()
    a[0] = value
    return a, g


# -- the element rule |actual - golden| <= atol + rtol * |golden|, per dtype ---------------------
def test_float16_one_element_just_inside_and_just_outside_the_bound():
    # golden 1.0: bound 2^-10 + 2^-10 * 1 = 2^-9 = 0.001953125; float16 steps by 2^-10 there
    assert_close(*one_off(1.001953125))
    message = fails(*one_off(1.0029296875), "matched_ratio 0.9 < 0.99")
    assert "index (0,): actual 1.0029296875, golden 1.0, error 0.0029296875 > threshold 0.001953125" in message


def test_bfloat16_one_element_just_inside_and_just_outside_the_bound():
    # golden 1.0: bound 2^-7 + 2^-7 = 0.015625; bfloat16 steps by 2^-7 there
    assert_close(*one_off(1.015625, dtype=bf16))
    fails(*one_off(1.0234375, dtype=bf16), "matched_ratio")


def test_float32_near_zero_the_absolute_tolerance_decides():
    # golden 0: bound atol = 2^-13 = 0.0001220703125 (no division by zero)
    assert_close(*one_off(0.000122, dtype=np.float32, golden=0.0))
    message = fails(*one_off(0.000123, dtype=np.float32, golden=0.0), "matched_ratio")
    assert "threshold 0.0001220703125" in message


def test_float16_large_values_the_relative_tolerance_decides():
    # golden 1000: bound 2^-10 + 2^-10 * 1000 = 0.9775390625; float16 steps by 0.5 there
    assert_close(*one_off(1000.5, golden=1000.0))
    assert "threshold 0.9775390625" in fails(*one_off(1001.0, golden=1000.0), "matched_ratio")


def test_float32_large_values_the_cap_bites_before_the_relative_tolerance():
    # golden 1000: the element bound 2^-13 + 2^-13 * 1000 = 0.122 is wider than the cap
    # max(1e-2, 32 ULP = 2^-9), so one element off by 0.02 in a hundred fails by the cap
    assert_close(*one_off(1000.005, n=100, dtype=np.float32, golden=1000.0))
    fails(*one_off(1000.02, n=100, dtype=np.float32, golden=1000.0), "max_abs_error rule failed")


# -- the case rules: 99% of the elements, and the hard limit on the largest error ---------------
def test_one_element_in_a_hundred_may_miss_two_may_not():
    a, g = one_off(1.05, n=100)  # 0.05: above the element bound, under the 1e-1 floor
    assert_close(a, g)
    a[1] = 1.05
    message = fails(a, g, "matched_ratio 0.98 < 0.99")
    assert "2 of 100 element(s)" in message


def test_the_largest_error_is_capped_even_when_99_percent_match():
    a, g = one_off(1.1875, n=100)  # error 0.1875 > 1e-1 (float16's floor; 32 ULP at 1.0 is 0.03125)
    message = fails(a, g, "max_abs_error rule failed")
    assert "index (0,): actual 1.1875, golden 1.0, error 0.1875 > threshold 0.1" in message
    a, g = one_off(1.09375, n=100)
    assert_close(a, g)


def test_the_cap_grows_to_32_ulp_at_the_worst_element():
    # float16 at 1000 steps by 0.5: 32 ULP = 16 > 0.1
    a, g = one_off(1015.0, n=100, golden=1000.0)
    assert_close(a, g)
    message = fails(*one_off(1032.0, n=100, golden=1000.0), "max_abs_error rule failed")
    assert "error 32.0 > threshold 16.0" in message
    # float32 at 1000: 32 ULP = 2^-9 < 1e-2, so the floor 1e-2 stays; at 10000 32 ULP = 0.03125
    fails(*one_off(1000.0 + 0.02, n=100, dtype=np.float32, golden=1000.0), "threshold 0.01 ")
    assert_close(*one_off(10000.0 + 0.03, n=100, dtype=np.float32, golden=10000.0))


def test_a_failure_names_the_index_in_the_arrays_shape():
    g = np.ones((3, 4), np.float16)
    a = g.copy()
    a[2, 1] = 2.0
    assert "index (2, 1): actual 2.0, golden 1.0" in fails(a, g, "matched_ratio")


# -- NaN and inf ----------------------------------------------------------------------------
@pytest.mark.parametrize("actual, golden", [(np.nan, np.nan), (np.inf, np.inf), (-np.inf, -np.inf)])
def test_nan_meets_nan_and_inf_the_same_inf(actual, golden):
    assert_close(np.array([actual, 1.0], np.float16), np.array([golden, 1.0], np.float16))


@pytest.mark.parametrize("actual, golden", [(np.inf, -np.inf), (np.nan, 1.0), (1.0, np.nan), (np.inf, 1.0),
                                            (1.0, np.inf), (np.nan, np.inf)])
def test_any_other_pairing_with_nan_or_inf_fails_even_among_many(actual, golden):
    a, g = one_off(actual, n=1000, golden=1.0)
    g[0] = golden
    message = fails(a, g, "NaN/inf rule failed")
    assert "index (0,)" in message


def test_a_golden_beyond_the_output_dtype_is_narrowed_to_inf_first():
    # 70000 rounds to +inf in float16 (its largest finite number is 65504)
    assert_close(np.array([np.inf], np.float16), np.array([70000.0], np.float32))
    fails(np.array([65504.0], np.float16), np.array([70000.0], np.float32), "NaN/inf rule failed")


# -- integers and bool: exact ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.bool_])
def test_integer_and_bool_outputs_must_be_equal(dtype):
    g = np.array([[0, 1], [1, 0]], dtype)
    assert_close(g.copy(), g)
    a = g.copy()
    a[1, 0] = 0
    assert "1 of 4 element(s) differ; first at index (1, 0)" in fails(a, g, "exact")


# -- what it accepts ----------------------------------------------------------------------------
def test_pyaclnn_tensors_are_read_back():
    g = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    with pyaclnn.Tensor.from_numpy(g) as same, pyaclnn.Tensor.from_numpy(g + np.float32(0.01)) as off:
        assert_close(same, g)
        assert_close(g, same)
        fails(off, g, "matched_ratio")


def test_torch_tensors_bfloat16_included():
    torch = pytest.importorskip("torch")
    g = torch.linspace(-2, 2, 256, dtype=torch.bfloat16)
    assert_close(g.clone(), g)
    assert_close(g, g.to(torch.float32))  # a higher-precision golden
    off = g.clone()
    off[3] = off[3] + 1.0  # one in 256: the ratio holds, the cap max(1e-1, 32 * 2^-7) = 0.25 does not
    assert "assert_close (bfloat16" in fails(off, g, "max_abs_error rule failed")


def test_dtype_picks_the_row():
    a, g = one_off(1.01, dtype=np.float32)  # 0.01: outside float32's bound, inside bfloat16's
    fails(a, g, "matched_ratio")
    assert_close(a, g, dtype="bfloat16")
    assert_close(a, g, dtype=pyaclnn.DType.BF16)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"actual has shape \(2,\) and golden \(3,\)"):
        assert_close(np.ones(2, np.float32), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="no rule for float64"):
        assert_close(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="actual must be a NumPy array"):
        assert_close(object(), np.ones(2, np.float32))
    assert_close(np.ones(0, np.float16), np.ones(0, np.float16))


# -- skipping a test whose operator the backend cannot run ----------------------------------------
def test_require_reference_skips_naming_the_operator_on_numpy():
    assert reference_missing("Add") is None and reference_missing("aclnnReduceSum") is None
    with pytest.raises(pytest.skip.Exception) as info:
        require_reference("Add", "NoSuchOp")  # (Softmax has a reference now: the aten tier)
    assert str(info.value.msg).startswith("aclnnNoSuchOp has no reference on the numpy backend: aclnnNoSuchOp is "
                                          "not a known operator")
    require_reference("Add", "aclnnCat")  # does not skip


def test_a_declared_operator_without_reference_skips_on_numpy_and_runs_on_acl(emulator_home, use_backend,
                                                                                 monkeypatch, tmp_path_factory):
    from emulator.build import build_custom_opp
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(build_custom_opp(tmp_path_factory.mktemp("opp"))))
    use_backend("numpy")
    why = reference_missing("AddCustom")
    assert why is not None and "no NumPy reference" in why, why
    use_backend("acl", home=emulator_home)
    assert reference_missing("AddCustom") is None
    assert reference_missing("NoSuchOp") is not None  # declared by no header of the toolkit either


PLUGIN_USER = """
import numpy as np
import pytest
import pyaclnn
from pyaclnn.testing import assert_close


@pytest.mark.aclnn_reference("FlashAttentionScore")
def test_softmax():
    raise AssertionError("ran although FlashAttentionScore has no reference")


@pytest.mark.aclnn_reference("MseLossBackward")
def test_mse_loss_backward():
    grad, x, t = (np.linspace(-1, 1, 8, dtype=np.float16) * k for k in (1, 2, 3))
    assert_close(pyaclnn.mse_loss_backward(grad, x, t, "sum"), 2 * (x - t) * grad)


@pytest.mark.aclnn_reference("Add", "aclnnDropout")
def test_two():
    raise AssertionError("ran although Dropout has no reference")


@pytest.mark.aclnn_reference
def test_no_names():
    pass
"""


def test_the_marker_skips_with_the_operators_name_and_runs_what_has_a_reference(pytester: pytest.Pytester):
    pytester.makepyfile(test_user=PLUGIN_USER)
    result = pytester.runpytest_subprocess("-p", "pyaclnn.testing", "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2, errors=1)
    out = result.stdout.str()
    assert re.search(r"SKIPPED \[1\] test_user.py:\d+: aclnnFlashAttentionScore has no reference on the numpy "
                     r"backend", out), out
    assert "aclnnDropout has no reference on the numpy backend" in out
    assert "@pytest.mark.aclnn_reference needs the operator names" in out
    assert "aclnn_reference(*ops)" in pytester.runpytest_subprocess("-p", "pyaclnn.testing", "--markers").stdout.str()


def test_the_guide_page_shows_the_standard_and_both_helpers():
    page = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "testing.md").read_text()
    assert "mixed_tolerance_standard.md" in page and "2<sup>-10</sup>" in page
    assert "require_reference" in page and "aclnn_reference" in page and "assert_close" in page
