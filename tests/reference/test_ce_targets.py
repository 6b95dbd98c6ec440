"""Cross-entropy's class targets on the reference backend: a row that is not ignored must have a
target in [0, C) (the device would read out of bounds: refused with 161002 naming the row), at
the int64 extremes too; an ignored row may hold anything (ops.md §3.1)."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn.errors import AclnnParamInvalidError

C = 4
LOG_PROB = np.log(np.full((3, C), 1 / C, np.float32))


@pytest.mark.parametrize("bad", [-1, C, 2**40, -2**63, 2**63 - 1])
def test_a_row_not_ignored_needs_a_class(use_backend, bad):
    use_backend("numpy")
    target = np.array([0, bad, 1], np.int64)
    for _ in range(2):  # and again on a planned call: the values are checked every call
        with pytest.raises(AclnnParamInvalidError, match=rf"target\[1\]={bad} is out of range \[0, {C}\)"):
            pyaclnn.cross_entropy_loss_grad(np.float32(1), LOG_PROB, target, reduction="sum")
    good = pyaclnn.cross_entropy_loss_grad(np.float32(1), LOG_PROB, np.array([0, 3, 1]), reduction="sum")
    np.testing.assert_allclose(good[1], [0.25, 0.25, 0.25, -0.75], rtol=1e-6)


@pytest.mark.parametrize("ignored", [-100, -2**63, 2**40])
def test_an_ignored_row_may_hold_any_target(use_backend, ignored):
    use_backend("numpy")
    got = pyaclnn.cross_entropy_loss_grad(np.float32(1), LOG_PROB, np.array([0, ignored, 3], np.int64),
                                          reduction="sum", ignore_index=ignored)
    np.testing.assert_array_equal(got[1], np.zeros(C, np.float32))
    np.testing.assert_allclose(got[2], [0.25, 0.25, 0.25, -0.75], rtol=1e-6)


def test_on_950_a_negative_ignore_index_says_it_ignores_nothing(use_backend):
    # 950 applies the mask only for ignoreIndex >= 0 (kernel.row_scales): torch's default -100
    # there read "target[1]=-100 ... not ignored (ignore_index=-100)", which looked contradictory
    use_backend("numpy", soc="Ascend950")
    with pytest.raises(AclnnParamInvalidError, match=r"target\[1\]=-100 is out of range \[0, 4\) and not ignored "
                                                     r"\(ignore_index=-100; Ascend950 ignores rows only for an "
                                                     r"ignore_index >= 0\)"):
        pyaclnn.cross_entropy_loss_grad(np.float32(1), LOG_PROB, np.array([0, -100, 1]), reduction="sum")
    with pytest.raises(AclnnParamInvalidError, match=r"target\[1\]=-5 .*\(ignore_index=-100\); the device"):
        pyaclnn.cross_entropy_loss_grad(np.float32(1), LOG_PROB, np.array([0, -5, 1]), reduction="sum")
