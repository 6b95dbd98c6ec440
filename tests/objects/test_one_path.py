"""The NumPy-in/out functions are thin wrappers over the executor on both backends (issue 18
point 3): a first call is phase 1 through the runtime (aclnn<Op>GetWorkspaceSize) and one launch
through pyaclnn._objects.launch; a repeat runs the kernel that executor was planned with. On the NumPy
backend the caller's arrays are the device memory of the call (pyaclnn._functions.hostcall: register_host,
modelled on aclrtHostRegister), given back whatever happens. Oracle: torch's aten kernels."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import pyaclnn
from pyaclnn._objects import backend as _backend
from pyaclnn._objects import executor as _executor
from pyaclnn._numpy import ops as numpy_ops
from pyaclnn._numpy.memory import AddressSpace
from pyaclnn.ops.mse_loss_backward import kernel as mse_kernel

torch = pytest.importorskip("torch")
F32 = np.float32


def aten_mse(g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """torch's mse_loss_backward, reduction none (0)."""
    t = [torch.from_numpy(np.ascontiguousarray(a)) for a in (g, x, y)]
    return torch.ops.aten.mse_loss_backward(t[0], t[1], t[2], 0).numpy()


@pytest.fixture
def counted(use_backend, monkeypatch):
    """The numpy backend, counting phase 1 (the runtime's workspace_size), launches (the one
    launch routine, as the executor calls it) and kernels made (ops.prepare)."""
    runtime = use_backend("numpy").runtime
    calls = {"phase1": 0, "launch": 0, "prepare": 0}

    def counting(name, real):
        def call(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return call
    monkeypatch.setattr(runtime, "workspace_size", counting("phase1", runtime.workspace_size))
    monkeypatch.setattr(_executor, "launch", counting("launch", _executor.launch))
    monkeypatch.setattr(numpy_ops, "prepare", counting("prepare", numpy_ops.prepare))
    return calls


def test_a_first_call_is_phase_1_and_a_launch_and_a_repeat_runs_the_kernel_it_was_planned_with(counted):
    rng = np.random.default_rng(1)
    g, x, y = (rng.standard_normal((3, 5), dtype=F32) for _ in range(3))
    np.testing.assert_array_equal(pyaclnn.mse_loss_backward(g, x, y, "none"), aten_mse(g, x, y))
    assert counted == {"phase1": 1, "launch": 1, "prepare": 1}
    for _ in range(3):  # the memo: the kernel the executor made, on new values of the same metadata
        g, x, y = (rng.standard_normal((3, 5), dtype=F32) for _ in range(3))
        np.testing.assert_array_equal(pyaclnn.mse_loss_backward(g, x, y, "none"), aten_mse(g, x, y))
    assert counted == {"phase1": 1, "launch": 1, "prepare": 1}
    pyaclnn.mse_loss_backward(g[:2], x[:2], y[:2], "none")  # other metadata: the executor again
    assert counted == {"phase1": 2, "launch": 2, "prepare": 2}


def test_a_tensor_argument_goes_through_the_executor_every_call(counted):
    x = np.arange(6, dtype=F32).reshape(2, 3)
    with pyaclnn.Tensor.from_numpy(x) as t:
        for k in range(1, 3):
            np.testing.assert_array_equal(pyaclnn.mse_loss_backward(t, x, x * 0.5, "none"), aten_mse(x, x, x * 0.5))
            assert counted["phase1"] == counted["launch"] == k


def test_the_kernel_uses_the_callers_memory_registered_for_the_call_only(use_backend, monkeypatch):
    memory = use_backend("numpy").runtime.memory
    seen = []
    real = mse_kernel.mse_loss_backward

    def kernel(grad_output, self, target, reduction, out, soc):
        seen.append(((grad_output, self, target, out),
                     [memory.find(a.ctypes.data) for a in (grad_output, self, target, out)]))
        real(grad_output, self, target, reduction, out, soc)
    monkeypatch.setattr(mse_kernel, "mse_loss_backward", kernel)
    g = np.arange(6, dtype=F32).reshape(2, 3)
    x = np.asfortranarray(g * 2)  # strided: registered as the span it covers
    y = np.ones((2, 3), F32)
    got = pyaclnn.mse_loss_backward(g, x, y, "none")
    np.testing.assert_array_equal(got, aten_mse(g, x, y))
    (views, allocs), = seen
    for view, mine in zip(views, (g, x, y, got)):
        assert np.shares_memory(view, mine)  # no copy in, no copy out
    assert [a.kind for a in allocs] == ["registered"] * 4
    assert all(memory.find(a.ctypes.data) is None for a in (g, x, y, got))  # given back
    assert memory.live_allocations() == [a for a in memory.live_allocations() if a.kind != "registered"]


def test_registrations_are_given_back_when_a_call_fails(use_backend):
    runtime = use_backend("numpy").runtime
    x = np.ones((2, 3), F32)
    with pytest.raises(pyaclnn.AclnnParamInvalidError):  # phase 1 refuses
        pyaclnn.mse_loss_backward(x, x, x.astype(np.float16))
    log_prob = np.log(np.full((3, 4), 0.25, F32))
    with pytest.raises(pyaclnn.AclnnParamInvalidError, match="out of range"):  # the kernel refuses, at the synchronize
        pyaclnn.cross_entropy_loss_grad(np.float32(1), log_prob, np.array([0, 9, 1]), reduction="sum")
    assert all(runtime.memory.find(a.ctypes.data) is None for a in (x, log_prob))
    live = runtime.live_counts()
    assert live["tensor"] == live["executor"] == 0
    assert not [a for a in runtime.memory._allocs.values() if a.kind == "registered"]


def test_arguments_that_share_memory(use_backend):
    """One array three times (one registration, counted thrice); views of one buffer that
    overlap in part (the second cannot be registered beside the first: it is copied); an array
    over a Tensor's device memory (device memory already: used as it is, and kept)."""
    runtime = use_backend("numpy").runtime
    x = np.linspace(-1, 1, 12, dtype=F32).reshape(3, 4)
    np.testing.assert_array_equal(pyaclnn.mse_loss_backward(x, x, x * 0, "none"), aten_mse(x, x, x * 0))
    a, b = x[:, :3], x[:, 1:]
    np.testing.assert_array_equal(pyaclnn.mse_loss_backward(a, b, a, "none"), aten_mse(a, b, a))
    with pyaclnn.Tensor.from_numpy(x) as t:
        on_device = np.from_dlpack(t)  # the reference's device memory is host memory
        np.testing.assert_array_equal(pyaclnn.mse_loss_backward(on_device, x, on_device * 0, "none"),
                                      aten_mse(x, x, x * 0))
        assert runtime.memory.find(on_device.ctypes.data).kind == "device"
        np.testing.assert_array_equal(t.numpy(), x)
    assert not [a for a in runtime.memory._allocs.values() if a.kind == "registered"]


def test_a_registration_is_counted():
    space = AddressSpace()
    buf = np.zeros(64, np.uint8)
    base = buf.ctypes.data
    assert space.register(buf) == base and space.register(buf[8:16]) == base + 8  # inside: counted
    assert space.register(np.lib.stride_tricks.as_strided(buf[32:], shape=(64,))) is None  # reaches past it
    frees = space.frees
    space.unregister(base)
    assert space.find(base + 8) is not None and space.frees == frees  # one registration is left
    space.unregister(base + 8)
    assert space.find(base) is None and space.frees == frees + 1  # the last: as a free
    assert space.unwritten((base, base + 64)) is None  # the caller's bytes are data, not poison


def test_threads_sharing_an_array_keep_it_registered(use_backend):
    """An ndarray subclass gets no memo: every call registers. One thread's call giving its
    registration back must not take the shared array away from another's."""
    use_backend("numpy")

    class Sub(np.ndarray):
        pass
    rng = np.random.default_rng(3)
    shared = rng.standard_normal((4, 8), dtype=F32).view(Sub)
    want = {k: aten_mse(shared * F32(k), np.asarray(shared), np.asarray(shared) * 0) for k in range(4)}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            mine = np.asarray(shared) * F32(k)
            for _ in range(40):
                got = pyaclnn.mse_loss_backward(mine, shared, shared * 0, "none")
                np.testing.assert_array_equal(got, want[k])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert not [a for a in _backend.current().runtime.memory._allocs.values() if a.kind == "registered"]


def test_a_packed_records_field(backend):
    """Strides that are no multiple of the itemsize (a field of a packed record) describe no
    tensor: the array is copied contiguous, on both backends."""
    rec = np.zeros(6, dtype=[("a", "<f4"), ("b", "u1")])
    rec["a"] = np.linspace(-1, 1, 6, dtype=F32)
    x = rec["a"]
    assert x.strides == (5,)
    y = np.full(6, 0.25, F32)
    np.testing.assert_array_equal(pyaclnn.mse_loss_backward(x, x, y, "none"), aten_mse(x, x, y))


def test_read_only_arrays_are_registered_in_place(use_backend, monkeypatch):
    """A read-only array (a frozen one, a zero-stride broadcast) is the call's device memory
    too: register_host reads a writable buffer's address through ctypes and a read-only one's
    through numpy (ctypes refuses read-only buffers)."""
    memory = use_backend("numpy").runtime.memory
    kinds = []
    real = mse_kernel.mse_loss_backward

    def kernel(grad_output, self, target, reduction, out, soc):
        kinds.append([memory.find(a.__array_interface__["data"][0]).kind for a in (grad_output, self, target)])
        real(grad_output, self, target, reduction, out, soc)
    monkeypatch.setattr(mse_kernel, "mse_loss_backward", kernel)
    x = np.linspace(-1, 1, 12, dtype=F32).reshape(3, 4)
    x.flags.writeable = False
    g = np.broadcast_to(np.float32(0.5), (3, 4))  # read-only, strides (0, 0)
    y = np.full(4, 0.25, F32)[None].repeat(3, 0)
    np.testing.assert_array_equal(pyaclnn.mse_loss_backward(g, x, y, "none"), aten_mse(g.copy(), x.copy(), y))
    assert kinds == [["registered"] * 3]
    assert not x.flags.writeable and all(memory.find(a.ctypes.data) is None for a in (g, x, y))
    space = AddressSpace()
    frozen = np.zeros(16, np.uint8)
    frozen.flags.writeable = False
    assert space.register(frozen) == frozen.ctypes.data
