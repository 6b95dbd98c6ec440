"""Tensor.__getitem__: every basic-indexing form against NumPy's indexing of the same array.

The oracle is NumPy itself: for each key, the Tensor view must have NumPy's shape, strides and
offset (in elements, relative to the same first element) and read back NumPy's values, on the
reference backend and on the acl backend through the emulator. The old implementation applied
the key to a probe array over a 1-byte anchor: all-int keys read that probe (a segfault on a
large shape, a garbage offset on a small one).
"""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import Tensor
from pyaclnn._core.strides import index_view

E = Ellipsis
KEYS = [
    1, -1, (1, 2), (-1, -4), (0, 0, 0), (-2, 1, -1), (2, -3, 4),   # ints, down to 0-d
    slice(None), slice(1, None), slice(None, None, -1), slice(None, None, 2), slice(3, 0, -2),
    slice(-2, None), slice(10, 20), slice(2, 1), slice(None, None, -3),
    (slice(1, 3), 2), (1, slice(None, None, -1)), (slice(None), slice(1, 4, 2), -1),
    None, (None, 1), (1, None, 2), (None, None), (1, 2, 3, None), (None, E, None),
    E, (E, 1), (1, E), (E, -1, 2), (1, E, slice(None, None, -2)), (0, 1, 2, E), (E, None),
    np.int64(2), (np.int32(-1), np.intp(0)),
]


def _numpy_view(a: np.ndarray, key) -> np.ndarray:
    """NumPy's basic indexing as an array (an all-int key gives a scalar copy: add ``...``)."""
    ref = a[key]
    if not isinstance(ref, np.ndarray):
        ref = a[(*(key if isinstance(key, tuple) else (key,)), E)]
    return ref


def _elem_offset(view: np.ndarray, base: np.ndarray) -> int:
    return (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize


def _check(t: Tensor, a: np.ndarray, key) -> None:
    ref = _numpy_view(a, key)
    v = t[key]
    try:
        assert v.shape == ref.shape, key
        if ref.size:
            assert v.strides == tuple(s // a.itemsize for s in ref.strides), key
            assert v.offset == t.offset + _elem_offset(ref, a), key
        np.testing.assert_array_equal(v.numpy(), ref)
    finally:
        v.close()


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_basic_indexing_matches_numpy(backend, key) -> None:
    a = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    with Tensor.from_numpy(a) as t:
        _check(t, a, key)


@pytest.mark.parametrize("key", [1, (1, 2), (-1, 0), (slice(None, None, -1), 1), (E, 0), (None, 1, 1)], ids=repr)
def test_indexing_a_strided_view_matches_numpy(backend, key) -> None:
    """Keys applied to a view with negative and non-unit strides and a non-zero offset."""
    base = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    with Tensor.from_numpy(base) as t, t[::-2, 1::3] as tv:
        a = base[::-2, 1::3]
        ref = _numpy_view(a, key)
        with tv[key] as v:
            assert v.shape == ref.shape
            assert v.strides == tuple(s // 4 for s in ref.strides)
            assert v.offset == tv.offset + _elem_offset(ref, a)
            np.testing.assert_array_equal(v.numpy(), ref)


def test_all_int_key_on_a_large_tensor_is_a_0d_view(backend) -> None:
    # The reported crash: Tensor.zeros((4096, 4096))[4000, 5] segfaulted in __getitem__.
    with Tensor.zeros((4096, 4096)) as t:
        t[4000, 5].copy_from(7.0)
        with t[4000, 5] as v:
            assert (v.shape, v.strides, v.offset) == ((), (), 4000 * 4096 + 5)
            assert v.numpy() == 7.0
        with t[-96, -4091] as v:  # the same element through negative indices
            assert v.offset == 4000 * 4096 + 5 and v.numpy() == 7.0


def test_a_0d_integer_array_indexes_like_an_int(backend) -> None:
    # NumPy copies for a[np.array(1)] (advanced indexing) with a[1]'s values; a Tensor gives the view.
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    with Tensor.from_numpy(a) as t, t[np.array(1)] as v, t[1] as w:
        assert (v.shape, v.strides, v.offset) == (w.shape, w.strides, w.offset)
        np.testing.assert_array_equal(v.numpy(), a[np.array(1)])


def test_0d_tensor_indexing(backend) -> None:
    with Tensor.from_numpy(np.array(3.5, np.float32)) as t:
        for key in ((), E, None, (None, E)):
            _check(t, np.array(3.5, np.float32), key)
        with pytest.raises(IndexError, match="too many indices"):
            t[0]


@pytest.mark.parametrize("key, match", [
    (4, "index 4 is out of bounds for axis 0 with size 4"),
    (-5, "index -5 is out of bounds for axis 0 with size 4"),
    ((0, 5), "index 5 is out of bounds for axis 1 with size 5"),
    ((E, -7), "index -7 is out of bounds for axis 2 with size 6"),
    ((0, 0, 0, 0), "too many indices: the tensor is 3-dimensional, but 4 were indexed"),
    ((E, 0, E), "single ellipsis"),
], ids=repr)
def test_out_of_range_is_an_index_error(backend, key, match) -> None:
    a = np.zeros((4, 5, 6), np.float32)
    with pytest.raises(IndexError):
        a[key]  # NumPy agrees it is an IndexError
    with Tensor.from_numpy(a) as t:
        with pytest.raises(IndexError, match=match):
            t[key]


@pytest.mark.parametrize("key", [True, np.bool_(False), 1.0, [0, 1], np.array([0, 1]), "a", (0, 1.5)], ids=repr)
def test_non_basic_keys_are_a_type_error(backend, key) -> None:
    with Tensor.zeros((4, 5)) as t:
        with pytest.raises(TypeError, match="ints, slices, ... or None"):
            t[key]


def test_zero_step_is_a_value_error(backend) -> None:
    with Tensor.zeros((4, 5)) as t:
        with pytest.raises(ValueError, match="slice step cannot be zero"):
            t[::0]


def test_huge_shapes_are_pure_arithmetic() -> None:
    """Shapes far larger than memory: the view is computed from shape and strides alone."""
    n = 2 ** 40
    assert index_view((n, n), (n, 1), (n - 1, -1)) == ((), (), (n - 1) * n + n - 1)
    assert index_view((n, n), (n, 1), (slice(None, None, -2), None, 7)) == ((n // 2, 1), (-2 * n, 0), (n - 1) * n + 7)
    assert index_view((n, 3), (3, 1), (E, 1)) == ((n,), (3,), 1)


def test_indexing_a_view_larger_than_memory(backend) -> None:
    """A broadcast (zero-stride) view of 2**80 elements over one float: indexing it allocates
    nothing and reads nothing; the old probe array gave a scalar's garbage address as offset."""
    n = 2 ** 40
    with Tensor.from_numpy(np.array([7.0], np.float32)) as base:
        huge = Tensor(base.storage, (n, n), np.float32, (0, 0), 0)
        with huge, huge[n - 1, -5] as v, huge[::-3, None, 12345] as w:
            assert (v.shape, v.strides, v.offset) == ((), (), 0)
            assert v.numpy() == 7.0
            assert (w.shape, w.strides, w.offset) == (((n + 2) // 3, 1), (0, 0), 0)
