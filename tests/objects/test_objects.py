"""Device, Stream, Event, Tensor and executors behave the same on both backends."""
from __future__ import annotations

import gc

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from conftest import live_handles

F32 = np.float32


def mse_inputs():
    g = np.arange(4, dtype=F32).reshape(2, 2)
    return g, g.copy(), np.ones((2, 2), F32)


def test_tensor_round_trip_and_metadata(backend):
    a = np.arange(24, dtype=F32).reshape(2, 3, 4)
    with pyaclnn.Device(0):
        t = pyaclnn.Tensor.from_numpy(a)
        assert t.shape == (2, 3, 4) and t.dtype == F32 and t.strides == (12, 4, 1) and t.offset == 0
        assert t.acl_dtype == pyaclnn.DType.FLOAT and t.handle != 0 and t.data_ptr != 0
        np.testing.assert_array_equal(t.numpy(), a)
        np.testing.assert_array_equal(np.asarray(t), a)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.int64, np.float32])
def test_tensor_dtypes(backend, dtype):
    a = (np.arange(6) - 2).astype(dtype).reshape(2, 3)
    with pyaclnn.Device(0):
        t = pyaclnn.Tensor.from_numpy(a)
        assert t.numpy().dtype == np.dtype(dtype)
        np.testing.assert_array_equal(t.numpy(), a)


def test_views_share_storage_without_copies(backend):
    a = np.arange(12, dtype=F32).reshape(3, 4)
    with pyaclnn.Device(0):
        t = pyaclnn.Tensor.from_numpy(a)
        for view, expect in ((t[1:, ::2], a[1:, ::2]), (t.T, a.T), (t[::-1, 1], a[::-1, 1]),
                             (t[..., None, 2], a[..., None, 2]), (t.transpose(1, 0)[2:], a.T[2:])):
            assert view.storage is t.storage
            np.testing.assert_array_equal(view.numpy(), expect)
        t[1:, ::2].copy_from(np.full((2, 2), -1, F32))
        b = a.copy()
        b[1:, ::2] = -1
        np.testing.assert_array_equal(t.numpy(), b)
        with pytest.raises(TypeError, match="views only"):
            t[[0, 1]]


def test_strided_numpy_input_is_uploaded_with_its_strides(backend):
    base = np.arange(40, dtype=F32).reshape(5, 8)
    view = base[::-2, 1::3]
    with pyaclnn.Device(0):
        t = pyaclnn.Tensor.from_numpy(view)
        assert not t.is_contiguous() and t.strides == (-16, 3)
        np.testing.assert_array_equal(t.numpy(), view)


def test_two_phase_executor_single_use(backend):
    g, x, y = mse_inputs()
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        tg, tx, ty = (pyaclnn.Tensor.from_numpy(v) for v in (g, x, y))
        out = pyaclnn.Tensor.zeros((2, 2))
        ex = pyaclnn.MseLossBackward(tg, tx, ty, "mean", out)
        assert ex.workspace_size >= 0 and not ex.launched
        ex.run(stream)
        stream.synchronize()
        np.testing.assert_allclose(out.numpy(), [[0, 0], [1, 3]])  # the doc sample
        assert ex.launched
        with pytest.raises(pyaclnn.ExecutorConsumedError, match="already launched"):
            ex.run(stream)
        ex.close()
        ex.close()  # idempotent
        with pytest.raises(pyaclnn.ClosedError):
            ex.run(stream)


def test_repeatable_executor_runs_many_times_with_new_tensors(backend):
    g, x, y = mse_inputs()
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        tg, tx, ty = (pyaclnn.Tensor.from_numpy(v) for v in (g, x, y))
        out = pyaclnn.Tensor.zeros((2, 2))
        with pyaclnn.MseLossBackward(tg, tx, ty, "sum", out, repeatable=True) as ex:
            for k in range(3):
                ex.run(stream)
            stream.synchronize()
            np.testing.assert_allclose(out.numpy(), 2 * (x - y) * g)
            x2 = pyaclnn.Tensor.from_numpy(x * 3)
            out2 = pyaclnn.Tensor.zeros((2, 2))
            ex.set_input(1, x2)
            ex.set_output(0, out2)
            ex.run(stream)
            stream.synchronize()
            np.testing.assert_allclose(out2.numpy(), 2 * (3 * x - y) * g)
            np.testing.assert_allclose(tx.numpy(), x)  # the user's tensors were not moved
            with pytest.raises(ValueError, match="keeps its tensors' layout"):
                ex.set_input(0, pyaclnn.Tensor.zeros((4,)))
            with pytest.raises(IndexError):
                ex.set_input(3, x2)
        assert ex.closed


def test_executor_errors_are_raised_in_phase_one(backend):
    g, x, y = mse_inputs()
    with pyaclnn.Device(0):
        tg, tx = pyaclnn.Tensor.from_numpy(g), pyaclnn.Tensor.from_numpy(x)
        ty = pyaclnn.Tensor.from_numpy(np.ones(3, F32))
        with pytest.raises(pyaclnn.AclnnParamInvalidError) as info:
            pyaclnn.MseLossBackward(tg, tx, ty, "mean", pyaclnn.Tensor.zeros((2, 2)))
        assert info.value.status == 161002 and info.value.api == "aclnnMseLossBackwardGetWorkspaceSize"
        with pytest.raises(pyaclnn.AclnnParamNullptrError):
            pyaclnn.MseLossBackward(tg, tx, None, "mean", pyaclnn.Tensor.zeros((2, 2)))


def test_executors_refuse_non_tensors_and_closed_tensors(backend):
    g, x, y = mse_inputs()
    with pyaclnn.Device(0):
        tg, tx, ty = (pyaclnn.Tensor.from_numpy(a) for a in (g, x, y))
        out = pyaclnn.Tensor.zeros(g.shape)
        with pytest.raises(TypeError, match="must be pyaclnn.Tensor or None, got numpy.ndarray"):
            pyaclnn.MseLossBackward(tg, x, ty, "none", out)
        ty.close()
        with pytest.raises(pyaclnn.ClosedError, match="closed"):
            pyaclnn.MseLossBackward(tg, tx, ty, "none", out)


def test_closing_a_device_closes_what_was_made_on_it_and_leaks_nothing(backend):
    before = live_handles()
    g, x, y = mse_inputs()
    with pyaclnn.Device(0) as dev:
        stream = dev.create_stream()
        event = dev.create_event()
        tensors = [pyaclnn.Tensor.from_numpy(v) for v in (g, x, y)]
        view = tensors[0][::2]
        ex = pyaclnn.MseLossBackward(*tensors, "mean", pyaclnn.Tensor.zeros((2, 2)))
    for obj in (stream, event, view, ex, *tensors):
        assert obj.closed
    gc.collect()
    assert live_handles() == before


def test_use_after_close_raises(backend):
    with pyaclnn.Device(0) as dev:
        t = pyaclnn.Tensor.from_numpy(np.ones(3, F32))
        stream = dev.create_stream()
    with pytest.raises(pyaclnn.ClosedError):
        t.numpy()
    with pytest.raises(pyaclnn.ClosedError):
        stream.synchronize()


def test_events_time_work_on_a_stream(backend):
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        start, end = dev.create_event(), dev.create_event()
        start.record(stream)
        pyaclnn.Tensor.zeros((1000,))
        end.record(stream)
        end.synchronize()
        assert start.elapsed_ms(end) >= 0.0


def test_workspace_pool_reuses_one_buffer_per_stream(backend):
    with pyaclnn.Device(0) as dev, dev.create_stream() as stream:
        a = stream.workspace(1024)
        assert stream.workspace(512) == a and stream.workspace(0) == 0
        b = stream.workspace(4096)
        assert b != 0 and stream.workspace(4096) == b
