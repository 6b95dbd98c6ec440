"""The reference runtime's phase-1 op cache (pyaclnn/_numpy/runtime/opcache.py, modelled on opbase's
OpExecCacheManager) and what a launch reuses from the executor before it: an answer from the cache
is the one the rules compute, a refusal is the checks' own every time, and every hazard is still
found at every launch. Oracles: torch's aten kernels, the spec's own rules called directly."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl
from pyaclnn.errors import AclnnParamInvalidError
from pyaclnn.ops.mse_loss_backward import spec as mse

F32 = np.float32


@pytest.fixture
def numpy_backend(use_backend: Callable[..., object]) -> None:
    use_backend("numpy")


def _mse(shape: tuple[int, ...], out_shape: tuple[int, ...] | None = None) -> pyaclnn.Op:
    g = np.ones(shape, F32)
    return pyaclnn.Op("MseLossBackward", g, g * 2, g * 3, 0, np.zeros(out_shape or shape, F32))


def test_the_spec_rules_run_once_per_metadata(numpy_backend: None, monkeypatch: pytest.MonkeyPatch) -> None:
    checks: list[tuple] = []
    sizes: list[tuple] = []
    real_check, real_size = mse.check, mse.workspace_size
    monkeypatch.setattr(mse, "check", lambda *a: checks.append(a) or real_check(*a))
    monkeypatch.setattr(mse, "workspace_size", lambda *a: sizes.append(a) or real_size(*a))
    planned = []
    for _ in range(3):
        with _mse((4, 5)) as op:
            planned.append(op.workspace_size)
    assert len(checks) == 1  # a hit skips the checks, as CANN's L2_DFX_PHASE_1 (op_dfx.h) does
    assert len(sizes) == 1  # the workspace rule once: the cache answers the same metadata
    assert planned == [real_size(*sizes[0]).size] * 3  # ... with what the rule computes
    with _mse((5, 4)) as op:  # other metadata: the checks and the rule again
        assert len(checks) == 2 and len(sizes) == 2 and op.workspace_size == real_size(*sizes[1]).size


def test_a_refusal_is_the_checks_own_every_time(numpy_backend: None) -> None:
    messages = []
    for _ in range(2):
        with _mse((2, 3)):  # accepted, cached
            pass
        with pytest.raises(AclnnParamInvalidError) as info:
            _mse((2, 3), (3, 2))  # the same inputs, an out shape the op refuses
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "hape" in messages[0], messages


def test_minus_zero_alpha_is_not_the_kernel_of_zero_alpha(numpy_backend: None) -> None:
    """0.0 == -0.0 as Python keys, but x - (-0.0) * y is +0.0 where x - 0.0 * y is -0.0."""
    torch = pytest.importorskip("torch")
    x, y = np.full(4, -0.0, F32), np.ones(4, F32)
    for alpha in (0.0, -0.0, 0.0, -0.0):
        with pyaclnn.Op("Sub", x, y, alpha, np.zeros(4, F32)) as op:
            op.run()
            got = op["out"].numpy()
        want = torch.sub(torch.from_numpy(x), torch.from_numpy(y), alpha=alpha).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"alpha={alpha!r}")


def test_a_partial_overlap_is_reported_at_every_launch(numpy_backend: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")  # aclnnAbs runs on the aten tier
    monkeypatch.setenv("PYACLNN_HAZARDS", "warn")
    with pyaclnn.Tensor.from_numpy(np.arange(5, dtype=F32)) as base:
        for _ in range(3):
            with pytest.warns(pyaclnn.HazardWarning, match="partly overlaps"):
                with pyaclnn.Op("Abs", base[:4], base[1:]) as op:
                    op.run()


def test_a_tensor_over_memory_freed_after_earlier_launches_is_found(numpy_backend: None) -> None:
    """Two launches of the same tensors let the next executor reuse their views; after the
    aclrtFree of the input's memory the launch finds it outside its allocation."""
    pytest.importorskip("torch")  # aclnnAbs runs on the aten tier
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        addr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        acl.aclrtMemset(addr, 64, 0, 64)
        stale = pyaclnn.Tensor.from_address(addr, (16,), F32)
        with pyaclnn.Tensor.zeros((16,), F32) as out:
            for _ in range(2):
                with pyaclnn.Op("Abs", stale, out) as op:
                    op.run(stream)
                stream.synchronize()
            acl.aclrtFree(addr)
            with pytest.raises(pyaclnn.HazardError, match="outside its device allocation"):
                with pyaclnn.Op("Abs", stale, out) as op:
                    op.run(stream)
        stale.close()
