"""pyaclnn.Graph: ``with stream.capture() as graph:`` then ``graph.replay()``, on both backends.

Oracle: NumPy on the values put in (an accumulating operator, aclnnInplaceAdd: x += alpha * y),
and the capture statuses CANN returns (hicann/runtime, traced in the capture notes).
"""
from __future__ import annotations

import gc

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl

ALPHA = np.float32(2.0)


@pytest.fixture
def dev(backend):
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        yield device, stream


def _add(x, y, stream):
    """x += ALPHA * y, queued on ``stream`` (phase 1 now, phase 2 by run)."""
    with pyaclnn.Op("InplaceAdd", x, y, ALPHA) as op:
        op.run(stream)


def test_captured_work_runs_only_at_replay_and_each_replay_runs_it_again(dev):
    _, stream = dev
    x0, y = np.arange(4, dtype=np.float32), np.full(4, 0.5, np.float32)
    x, ty = pyaclnn.Tensor.from_numpy(x0), pyaclnn.Tensor.from_numpy(y)
    with stream.capture() as graph:
        _add(x, ty, stream)
        _add(x, ty, stream)
    assert isinstance(graph, pyaclnn.Graph) and graph.launches == 2
    np.testing.assert_array_equal(x.numpy(), x0)                        # captured, not run
    for n in (1, 2, 3):
        graph.replay()
        np.testing.assert_array_equal(x.numpy(), x0 + n * 2 * ALPHA * y)  # numpy() waits for the replay
    graph.close()
    assert graph.closed
    with pytest.raises(pyaclnn.ClosedError):
        graph.replay()


def test_a_replay_sees_inputs_changed_between_replays(dev):
    _, stream = dev
    x, y = pyaclnn.Tensor.zeros(4), pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
    with stream.capture() as graph:
        _add(x, y, stream)
    want = np.zeros(4, np.float32)
    for step in range(3):
        new = np.arange(4, dtype=np.float32) * (step + 1)
        y.copy_from(new)                                                 # into the captured tensor
        graph.replay()
        want += ALPHA * new
        np.testing.assert_array_equal(x.numpy(), want)
    graph.close()


def test_replay_on_another_stream_and_as_a_context_manager(dev):
    device, stream = dev
    x, y = pyaclnn.Tensor.zeros(4), pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
    with stream.capture() as graph:
        _add(x, y, stream)
    with pytest.raises(TypeError, match="stream"):
        graph.replay("s")
    with graph, device.create_stream() as other:
        graph.replay(other)
        other.synchronize()
        np.testing.assert_array_equal(x.numpy(), np.full(4, ALPHA))
    assert graph.closed


def test_a_graph_keeps_the_memory_of_what_it_captured_until_closed(dev, backend):
    """The user closes and drops the captured input; the graph still replays it correctly, and
    its memory is freed only when the graph is closed."""
    _, stream = dev
    x = pyaclnn.Tensor.zeros(4)
    y = pyaclnn.Tensor.from_numpy(np.full(4, 3, np.float32))
    addr = y.data_ptr
    with stream.capture() as graph:
        _add(x, y, stream)
    y.close()
    del y
    gc.collect()
    graph.replay()
    graph.replay()
    np.testing.assert_array_equal(x.numpy(), np.full(4, 2 * ALPHA * 3))
    if backend == "numpy":
        memory = pyaclnn._objects.backend.current().runtime.memory
        assert memory.find(addr) is not None
        graph.close()
        assert memory.find(addr) is None
    else:
        graph.close()


def test_work_refused_in_the_capture_names_the_rule_and_the_line(dev):
    _, stream = dev
    x, y = pyaclnn.Tensor.zeros(4), pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
    other = pyaclnn.Tensor.zeros(4)
    with stream.capture() as graph:
        _add(x, y, stream)
        with pytest.raises(pyaclnn.AclError) as sync:
            stream.synchronize()                                         # 107027
        with pytest.raises(pyaclnn.AclError) as read:
            x.numpy()                                                    # waits for the stream: 107027
        with pytest.raises(pyaclnn.AclError) as write:
            other.copy_from(np.ones(4, np.float32))                      # a synchronous copy: 107030
    assert sync.value.status == read.value.status == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert write.value.status == acl.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
    for info in (sync, read, write):
        assert "graph-capture rule" in str(info.value) and "test_graph.py" in str(info.value)
    graph.replay()                                                       # the capture went on (CANN)
    np.testing.assert_array_equal(x.numpy(), np.full(4, ALPHA))
    graph.close()


def test_relaxed_mode_lets_host_copies_run_once_uncaptured(dev):
    _, stream = dev
    x, y = pyaclnn.Tensor.zeros(4), pyaclnn.Tensor.zeros(4)
    with stream.capture(mode="relaxed") as graph:
        y.copy_from(np.ones(4, np.float32))                              # runs now, not captured
        _add(x, y, stream)
    y.copy_from(np.full(4, 5, np.float32))
    graph.replay()
    np.testing.assert_array_equal(x.numpy(), np.full(4, ALPHA * 5))
    graph.close()


def test_an_error_in_the_block_ends_the_capture(dev):
    _, stream = dev
    with pytest.raises(ZeroDivisionError):
        with stream.capture() as graph:
            1 / 0
    assert graph.closed
    assert acl.aclmdlRICaptureGetInfo(stream)[0] == acl.ACL_MODEL_RI_CAPTURE_STATUS_NONE
    with pytest.raises(ValueError, match="mode"):
        stream.capture(mode="everything").__enter__()


def test_two_stream_capture_with_events(dev):
    """The cross-stream sample (04-02): fork to a side stream by an event, join back."""
    device, s1 = dev
    x, z = pyaclnn.Tensor.zeros(4), pyaclnn.Tensor.zeros(4)
    y = pyaclnn.Tensor.from_numpy(np.ones(4, np.float32))
    fork, join = (acl.aclrtCreateEventExWithFlag(acl.ACL_EVENT_SYNC) for _ in range(2))
    with device.create_stream() as s2:
        with s1.capture() as graph:
            acl.aclrtRecordEvent(fork, s1)
            acl.aclrtStreamWaitEvent(s2, fork)
            _add(x, y, s1)
            _add(z, y, s2)
            acl.aclrtRecordEvent(join, s2)
            acl.aclrtStreamWaitEvent(s1, join)
        graph.replay()
        graph.replay()
        np.testing.assert_array_equal(x.numpy(), np.full(4, 2 * ALPHA))
        np.testing.assert_array_equal(z.numpy(), np.full(4, 2 * ALPHA))
        graph.close()
    for e in (fork, join):
        acl.aclrtDestroyEvent(e)
