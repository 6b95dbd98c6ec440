"""Repeated NumPy-in/NumPy-out calls reuse what the first call with the same metadata worked
out (pyaclnn._functions.hostcall.CallMemo, issue 12): never a result, never a failure, never across
backends or SoCs, and only for argument types whose metadata is all the checks see."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn._objects import backend as _backend
from pyaclnn._functions import hostcall as _hostcall
from pyaclnn._numpy.kernels import _parallel
from pyaclnn.ops.group_norm_backward import kernel as gn_kernel
from pyaclnn.errors import AclnnParamInvalidError

F32 = np.float32


@pytest.fixture
def mse_checks(use_backend, monkeypatch):
    """The numpy backend, with every phase 1 of MseLossBackward counted (the runtime's
    aclnnMseLossBackwardGetWorkspaceSize; its op cache answers a repeat without running the
    spec's checks, as CANN's does: pyaclnn/_numpy/runtime/opcache.py)."""
    from pyaclnn._numpy.runtime.executors import NumpyExecutors
    use_backend("numpy")
    calls: list[tuple] = []
    real = NumpyExecutors.workspace_size

    def counted(self, op, args):
        if op == "MseLossBackward":
            calls.append(args)
        return real(self, op, args)
    monkeypatch.setattr(NumpyExecutors, "workspace_size", counted)
    return calls


def test_a_repeat_skips_phase_1_and_a_failure_always_reruns_it(mse_checks):
    x = np.arange(6, dtype=F32).reshape(2, 3)
    first = pyaclnn.mse_loss_backward(x, x + 1, x, "sum")
    assert len(mse_checks) == 1
    second = pyaclnn.mse_loss_backward(x, x + 1, x, "sum")
    assert len(mse_checks) == 1
    np.testing.assert_array_equal(second, first)
    assert second is not first  # new outputs every call
    messages = []
    for _ in range(2):
        with pytest.raises(AclnnParamInvalidError) as info:
            pyaclnn.mse_loss_backward(x, x, x.astype(np.float16), "sum")
        messages.append(str(info.value))
    assert len(mse_checks) == 3 and messages[0] == messages[1] and "target dtype" in messages[0]


@pytest.mark.parametrize("change", ["strides", "shape", "dtype", "reduction", "reduction type"])
def test_any_change_of_metadata_checks_again(mse_checks, change):
    x = np.arange(6, dtype=F32).reshape(2, 3)
    pyaclnn.mse_loss_backward(x, x, x, "sum")
    other = {"strides": (x, np.ascontiguousarray(x.T).T, x, "sum"),
             "shape": (x[:1], x[:1], x[:1], "sum"),
             "dtype": (x.astype(np.float16), x.astype(np.float16), x.astype(np.float16), "sum"),
             "reduction": (x, x, x, "none"),
             "reduction type": (x, x, x, 2)}[change]
    pyaclnn.mse_loss_backward(*other)
    assert len(mse_checks) == 2


def test_only_the_values_change_the_result(mse_checks):
    """A memo holds no result: new values of the same metadata give their own answer, the one
    a first call (no memo) gives."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((3, 5), dtype=F32) for _ in range(2))
    pyaclnn.mse_loss_backward(a, a, b, "mean")
    memoised = pyaclnn.mse_loss_backward(b, a, a, "mean")
    assert len(mse_checks) == 1
    _backend.current().call_memos.clear()
    np.testing.assert_array_equal(memoised, pyaclnn.mse_loss_backward(b, a, a, "mean"))
    assert len(mse_checks) == 2


def test_equal_but_differently_typed_values_are_not_the_same_call(use_backend):
    """(1, 1, 1) == (True, True, True) and 1 == True in Python; the key tells them apart, so a
    memo never lets through what the first call's argument checks refuse."""
    use_backend("numpy")
    x = np.linspace(-1, 1, 24, dtype=F32).reshape(2, 3, 4)
    stats = (np.zeros(2, F32), np.ones(2, F32))
    pyaclnn.group_norm_backward(x, x, *stats, None, 2, 3, 4, 1, output_mask=(True, True, True))
    with pytest.raises(TypeError, match="output_mask entries must be bools"):
        pyaclnn.group_norm_backward(x, x, *stats, None, 2, 3, 4, 1, output_mask=(1, 1, 1))
    pyaclnn.mse_loss_backward(x, x, x, 1)
    with pytest.raises(TypeError, match="reduction must be"):
        pyaclnn.mse_loss_backward(x, x, x, True)
    # a NumPy integer is its own key (converted to the int64_t once, like a Python int)
    gi, _, _ = pyaclnn.group_norm_backward(x, x, *stats, None, np.int64(2), 3, 4, 1)
    np.testing.assert_array_equal(gi, pyaclnn.group_norm_backward(x, x, *stats, None, 2, 3, 4, 1)[0])


def test_plans_belong_to_their_backend_and_soc(use_backend):
    """bfloat16 passes on Ascend910B and is refused on Ascend910: a memo made on the first must
    not answer for the second."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.ones((2, 3), ml_dtypes.bfloat16)
    use_backend("numpy", soc="Ascend910B")
    pyaclnn.mse_loss_backward(x, x, x)
    use_backend("numpy", soc="Ascend910")
    with pytest.raises(AclnnParamInvalidError):
        pyaclnn.mse_loss_backward(x, x, x)


def test_tensor_and_list_arguments_are_checked_every_call(mse_checks):
    """A pyaclnn Tensor's memory (and a list's items) can change between calls unseen: no memo."""
    x = np.arange(6, dtype=F32).reshape(2, 3)
    t = pyaclnn.Tensor.from_numpy(x)
    for _ in range(2):
        np.testing.assert_array_equal(pyaclnn.mse_loss_backward(t, x, x, "sum"), np.zeros_like(x))
    assert len(mse_checks) == 2
    assert not _backend.current().call_memos
    stats = (np.zeros(2, F32), np.ones(2, F32))
    for _ in range(2):
        pyaclnn.group_norm_backward(x.reshape(2, 3, 1), x.reshape(2, 3, 1), *stats, None, 2, 3, 1, 1,
                                    output_mask=[True, True, True])
    assert not _backend.current().call_memos


def test_torch_tensors_reuse_the_plan_of_their_arrays(mse_checks):
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    first = pyaclnn.mse_loss_backward(x, x + 1, x, "sum")
    np.testing.assert_array_equal(pyaclnn.mse_loss_backward(x, x + 1, x, "sum"), first)
    assert len(mse_checks) == 1


def test_the_kernel_path_is_chosen_at_each_call(use_backend, monkeypatch):
    """tiled_only() (the doctor's and the tests' second path) still applies to a memoised call."""
    use_backend("numpy")
    small = []
    real = gn_kernel._small
    monkeypatch.setattr(gn_kernel, "_small", lambda *a: small.append(1) or real(*a))
    x = np.linspace(-1, 1, 24, dtype=F32).reshape(2, 3, 4)
    args = (x, x, np.zeros(2, F32), np.ones(2, F32), None, 2, 3, 4, 1)
    fast = pyaclnn.group_norm_backward(*args)
    assert len(small) == 1
    with _parallel.tiled_only():
        tiled = pyaclnn.group_norm_backward(*args)
    assert len(small) == 1
    for a, b in zip(fast, tiled):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_the_memo_is_bounded(use_backend, monkeypatch):
    use_backend("numpy")
    monkeypatch.setattr(_hostcall, "MEMOS_MAX", 8)
    for n in range(1, 20):
        x = np.ones(n, F32)
        pyaclnn.mse_loss_backward(x, x, x)
        assert len(_backend.current().call_memos) <= 8


def test_on_a_device_every_call_runs_the_library_phase_1(emulator):
    """The library checks every call: a memo there keeps only pyaclnn's own argument work."""
    x = np.linspace(-1, 1, 6, dtype=F32).reshape(2, 3)
    emulator.reset_counters()
    for _ in range(3):
        np.testing.assert_allclose(pyaclnn.mse_loss_backward(x, x, x * 0.5, "sum"), 2 * (x * 0.5) * x, rtol=1e-6)
    assert emulator.calls("aclnnMseLossBackwardGetWorkspaceSize") == 3
    assert emulator.calls("aclnnMseLossBackward") == 3
