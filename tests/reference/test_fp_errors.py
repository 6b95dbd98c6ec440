"""The reference kernels reproduce the device's inf/NaN results without NumPy's floating-point
warnings (the device warns of nothing), and leave the caller's error state as it was."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import pyaclnn
from pyaclnn._numpy.kernels import _parallel

F32 = np.float32


def _overflow() -> np.ndarray:
    return np.array([3e38], F32) * F32(10)


def test_quietly_silences_then_restores_the_callers_state():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isinf(_parallel.quietly(_overflow))[0]
        with pytest.raises(RuntimeWarning, match="overflow"):
            _overflow()
    with np.errstate(all="raise"):
        assert np.isinf(_parallel.quietly(_overflow))[0]
        with pytest.raises(FloatingPointError):
            _overflow()
        assert np.geterr()["over"] == "raise"
    # and after an exception inside
    with pytest.raises(ZeroDivisionError):
        _parallel.quietly(lambda: 1 / 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            _overflow()


def test_quietly_takes_numpy_2s_fast_path():
    """On NumPy 2 it sets np.errstate's context variable (the variable must be found, or every
    small call pays ~1 us more); NumPy 1 has none and uses np.errstate itself."""
    assert (_parallel._ERRSTATE is not None) == (int(np.__version__.split(".")[0]) >= 2)


def _calls():
    x = np.array([[np.inf, -np.inf, 3e38, -1.0], [0.0, 2.0, -3e38, np.nan]], F32)
    g = np.array([[3e38, 1.0, 3e38, np.inf], [1.0, -np.inf, 2.0, 1.0]], F32)
    lp = np.log(np.full((2, 4), 0.25, F32))
    lp[0, 0] = np.inf
    return {
        "mse": lambda: pyaclnn.mse_loss_backward(g, x, -x, "mean"),
        "group_norm": lambda: pyaclnn.group_norm_backward(g.reshape(2, 4, 1), x.reshape(2, 4, 1),
                                                          np.array([np.inf, 0.0, 1.0, -1.0], F32),
                                                          np.array([3e38, 1.0, 1.0, 2.0], F32),
                                                          np.array([3e38, 1.0, 0.0, np.inf], F32), 2, 4, 1, 2),
        "cross_entropy": lambda: pyaclnn.cross_entropy_loss_grad(np.array([3e38, np.inf], F32), lp,
                                                                 np.array([0, 1]), reduction="none"),
        "cross_entropy_all_ignored": lambda: pyaclnn.cross_entropy_loss_grad(np.float32(1), lp, np.array([-100, -100])),
        "prelu": lambda: pyaclnn.prelu_backward(g, x, np.array([3e38, np.inf, -1.0, 0.5], F32)),
    }


@pytest.mark.parametrize("name", list(_calls()))
def test_special_values_raise_no_warning_on_either_kernel_path(use_backend, name):
    use_backend("numpy")
    call = _calls()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = call()
        with _parallel.tiled_only():
            tiled = call()
    small = small if isinstance(small, tuple) else (small,)
    tiled = tiled if isinstance(tiled, tuple) else (tiled,)
    assert any(not np.isfinite(a).all() for a in small)  # the special values did reach the outputs
    for a, b in zip(small, tiled):
        np.testing.assert_array_equal(a, b)  # the same numbers, NaN and inf in the same places
