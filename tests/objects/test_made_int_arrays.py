"""An aclIntArray parameter of the generic object (pyaclnn/_objects/arguments.py ``make``) takes
any sequence of integers: a list or tuple of ints is passed as it is, anything else (a generator,
an ndarray, NumPy integers) iterated once and converted element by element. Oracle: NumPy's
amax over the same axes; the live handle counts (nothing made is left)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import pyaclnn


@pytest.mark.parametrize("dims", [
    lambda: [1], lambda: (1,), lambda: (d for d in [1]), lambda: np.array([1]), lambda: [np.int64(1)],
    lambda: iter([-1]), lambda: [0, np.int32(1)]])
def test_amax_dims_of_any_integer_sequence(use_backend: Callable[..., Any], dims: Callable[[], Any]) -> None:
    pytest.importorskip("torch")
    use_backend("numpy")
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    axes = tuple(int(d) for d in dims())
    expected = np.amax(x, axis=axes)
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        before = device.runtime.live_counts()
        out = pyaclnn.Tensor.zeros(expected.shape, np.float32)
        with pyaclnn.Op("Amax", pyaclnn.Tensor.from_numpy(x), dims(), False, out) as ex:
            ex.run(stream)
            got = ex["out"].numpy()
        np.testing.assert_array_equal(got, expected)
        after = device.runtime.live_counts()
        assert after["int_array"] == before["int_array"]
