"""The object layer's repeated path (issue 24 point 7): Op's phase 1, run, Op[name], numpy() and
close do their checks in fewer steps; each check must still fire. The expected values are NumPy's
(np.abs, X + 2 * X) and the reference runtime's own live-handle counters."""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import pyaclnn
from conftest import live_handles
from pyaclnn._objects import backend as _backend
from pyaclnn._objects import resource

X = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)


@pytest.fixture
def dev(use_backend):
    use_backend("numpy")
    with pyaclnn.Device(0) as device:
        yield device


@pytest.fixture
def aten_tier():
    """aclnnAbs runs through the aten tier, which needs torch (the oldest CI stage has none)."""
    pytest.importorskip("torch")


def test_phase_1_refuses_closed_tensors_and_two_devices(dev):
    x, out = pyaclnn.Tensor.from_numpy(X), pyaclnn.Tensor.zeros(X.shape)
    closed = pyaclnn.Tensor.from_numpy(X)
    closed.close()
    before = live_handles()
    with pytest.raises(pyaclnn.ClosedError, match="aclnnAbs: a tensor argument is closed"):
        pyaclnn.Op("Abs", closed, out)
    with pytest.raises(pyaclnn.ClosedError, match="aclnnAbs: a tensor argument is closed"):
        pyaclnn.Op("Abs", x, closed)
    _backend.current().runtime._device_count = 2
    with pyaclnn.Device(1) as d1:
        other = pyaclnn.Tensor.zeros(X.shape, device=d1)
        with pytest.raises(ValueError, match="a tensor is on device 1, the operator's other tensors on device 0"):
            pyaclnn.Op("Abs", x, other)
        other.close()
    assert live_handles() == before  # nothing planned, nothing leaked


def test_run_refuses_closed_tensors_and_streams(dev, aten_tier):
    x, out = pyaclnn.Tensor.from_numpy(X), pyaclnn.Tensor.zeros(X.shape)
    stream = dev.create_stream()
    stream.close()
    with pyaclnn.Op("Abs", x, out) as ex:
        with pytest.raises(pyaclnn.ClosedError, match="the stream is closed"):
            ex.run(stream)
        with pytest.raises(TypeError, match="run takes a pyaclnn.Stream or None, got int"):
            ex.run(3)
        ex.run()  # refused runs did not consume it
        np.testing.assert_array_equal(out.numpy(), np.abs(X))
    with pyaclnn.Op("Abs", x, out) as ex:
        x.close()
        with pytest.raises(pyaclnn.ClosedError, match="planned with is closed"):
            ex.run()


def test_numpy_waits_and_runs_the_frees_that_waited(dev, aten_tier):
    """out.numpy() synchronizes the stream of the launch that wrote ``out``; the free of a
    tensor closed while that launch was queued runs then, not before."""
    with dev.create_stream() as stream:
        out = pyaclnn.Tensor.zeros(X.shape)
        allocs = live_handles()["device_alloc"]
        x = pyaclnn.Tensor.from_numpy(X)
        with pyaclnn.Op("Abs", x, out) as ex:
            ex.run(stream)
        x.close()
        assert live_handles()["device_alloc"] == allocs + 1  # the queued launch reads it
        np.testing.assert_array_equal(out.numpy(), np.abs(X))
        assert live_handles()["device_alloc"] == allocs  # freed by the synchronize numpy() made


def test_a_launch_destroys_the_handles_made_for_it(dev):
    x, out = pyaclnn.Tensor.from_numpy(X), pyaclnn.Tensor.zeros(X.shape)
    stream = dev.create_stream()
    before = live_handles()
    with pyaclnn.Op("Add", x, x, 2.0, out) as ex:
        assert live_handles()["scalar"] == before["scalar"] + 1
        ex.run(stream)
        assert live_handles()["scalar"] == before["scalar"]  # phase 2 returned: its aclScalar goes
        np.testing.assert_array_equal(out.numpy(), X + 2 * X)
    assert live_handles() == before
    stream.close()


def test_op_getitem_inputs_and_outputs(dev, aten_tier):
    x, out = pyaclnn.Tensor.from_numpy(X), pyaclnn.Tensor.zeros(X.shape)
    with pyaclnn.Op("Abs", x, out) as ex:
        assert ex["self"] is x and ex["out"] is out
        assert ex.inputs == [x] and ex.outputs == [out]
        for bad in ("nope", 0, None):
            with pytest.raises(KeyError, match="has no parameter"):
                ex[bad]
    with pyaclnn.Op("Abs", x, out, repeatable=True) as ex:
        other = pyaclnn.Tensor.zeros(X.shape)
        ex.set_output(0, other)
        assert ex.outputs == [other] and ex["out"] is other
        ex.run()
        np.testing.assert_array_equal(other.numpy(), np.abs(X))


def test_numpy_returns_a_new_array(dev):
    t = pyaclnn.Tensor.from_numpy(X)
    a = t.numpy()
    assert a.flags.c_contiguous and a.flags.writeable and a.shape == X.shape and a.dtype == X.dtype
    a[...] = 0
    np.testing.assert_array_equal(t.numpy(), X)  # the host copy is its own memory
    np.testing.assert_array_equal(t.T.numpy(), X.T)  # a strided view: staged, then its elements
    assert pyaclnn.Tensor.zeros((0, 3)).numpy().shape == (0, 3)
    t.close()
    with pytest.raises(pyaclnn.ClosedError):
        t.numpy()


def test_an_interrupt_after_registration_frees_the_executor_once(dev, aten_tier, monkeypatch):
    """KeyboardInterrupt inside _own, once the executor is registered: phase 1's clean-up must
    leave it to close() (destroying it there too would free it twice)."""
    x, out = pyaclnn.Tensor.from_numpy(X), pyaclnn.Tensor.zeros(X.shape)
    before = live_handles()

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(resource, "track_sites", True)
    monkeypatch.setattr(resource._sites, "user_site", interrupted)
    made: list[pyaclnn.Executor] = []
    real_plan = pyaclnn.Executor._plan

    def plan(self, *args):  # keeps the executor the interrupt leaves behind
        made.append(self)
        return real_plan(self, *args)

    monkeypatch.setattr(pyaclnn.Executor, "_plan", plan)
    with pytest.raises(KeyboardInterrupt):
        pyaclnn.Op("Abs", x, out)
    monkeypatch.undo()
    assert live_handles()["executor"] == before["executor"] + 1  # registered: close() frees it
    made[0].close()
    assert live_handles() == before


def test_phase_1_asks_a_new_runtime_about_the_operator(use_backend, aten_tier, monkeypatch):
    """Phase 1 keeps an operator's parameter slots per runtime (arguments.slots_of): after a
    backend reset, the new runtime's op_info answers, for Op and for an operator class alike
    (here: a launch function with a parameter phase 1 lacks, which the object layer alone reads)."""
    use_backend("numpy")
    x, out = pyaclnn.Tensor.from_numpy(X), pyaclnn.Tensor.zeros(X.shape)
    with pyaclnn.Op("Abs", x, out) as ex, pyaclnn.MseLossBackward(x, x, x, "mean", out) as mse:
        ex.run()
        np.testing.assert_array_equal(out.numpy(), np.abs(X))
        mse.run()
    runtime = use_backend("numpy").runtime
    real = runtime.op_info

    def other(op: str) -> Any:  # the same operator, declared with one more launch parameter
        info = real(op)
        extra = dataclasses.replace(info.signature.params[0], name="dst")
        return dataclasses.replace(info, signature=dataclasses.replace(info.signature, launch=(extra,)), cache={})

    monkeypatch.setattr(runtime, "op_info", other)
    x, out = pyaclnn.Tensor.from_numpy(X), pyaclnn.Tensor.zeros(X.shape)
    with pytest.raises(pyaclnn.NotSupportedError, match="aclnnAbs's launch function takes dst"):
        pyaclnn.Op("Abs", x, out)
    with pytest.raises(pyaclnn.NotSupportedError, match="aclnnMseLossBackward's launch function takes dst"):
        pyaclnn.MseLossBackward(x, x, x, "mean", out)
