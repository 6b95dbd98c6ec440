"""Workspace sizes, NULL workspaces and executors of other operators, as the real library has them.

Oracles: the sizes below are worked out by hand from the sources (each case says how), not by
pyaclnn's rule; and both backends (the NumPy reference, and the emulator through the acl
backend) must give them.

- What phase 1 reports (pyaclnn/_spec, "workspace sizes"): a composite op, hicann/opbase
  aclOpExecutor::GetWorkspaceSize, the MaxAllocator packing of its kernels' workspaces and the
  intermediates it keeps, each rounded by Align (n + 32, up to a multiple of 512), tensors of
  overlapping lifetimes in different buckets; a generated op, the plain sum of its tiling's
  sizes. GetLibApiWorkSpaceSize() is 16 MiB on A2/A3 and 950; the emulated part has 40 AIV cores.
- Phase 2 (CommonOpExecutorRun, NnopbaseRunWithWorkspace): NULL with workspaceSize > 0 is
  161001; a generated op's workspaceSize below its need is 161002; a composite op's kernels use
  the address they get, so a NULL one is the kernel's AI Core exception at the next synchronize
  (unless its kernels never touch it: MseLossGradV2's is a 0-byte request).
- An executor launched through another operator's function: phase 2 does not know which
  operator made it; one of the same kind runs as its own operator, one of the other kind is
  read as the wrong type (undefined on a device): 561103, naming both.
Before this change the reference reported 0 for all four and the emulator 0 or 1024.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl, errors

MiB16 = 16 << 20
F32, F16 = np.float32, np.float16


def align(n: int) -> int:
    """opbase memory_allocator.cpp Align, written out: n + 32 bytes, up to a multiple of 512."""
    return -(-(n + 32) // 512) * 512


def t(shape: tuple, dtype: Any = F32) -> pyaclnn.Tensor:
    return pyaclnn.Tensor.zeros(shape, dtype)


def mse(g: tuple, s: tuple, dt: Any = F32, out_dt: Any = None) -> tuple:
    full = np.broadcast_shapes(g, s)
    return "MseLossBackward", (t(g, dt), t(s, dt), t(s, dt), 1, t(full, out_dt or dt))


def gn(N: int, C: int, HxW: int, G: int, dt: Any = F32, mask=(True, True, True), gamma: bool = True) -> tuple:
    return "GroupNormBackward", (t((N, C, HxW), dt), t((N, C, HxW), dt), t((N, G), dt), t((N, G), dt),
                                 t((C,), dt) if gamma else None, N, C, HxW, G, ("mask", mask),
                                 t((N, C, HxW), dt) if mask[0] else None, t((C,), dt) if mask[1] else None,
                                 t((C,), dt) if mask[2] else None)


def ce(N: int, C: int, dt: Any = F32) -> tuple:
    return "CrossEntropyLossGrad", (t((), dt), t((N, C), dt), t((N,), np.int64), None, None, None, "mean",
                                    -100, 0.0, 0.0, t((N, C), dt))


def prelu(shape: tuple, dt: Any = F32) -> tuple:
    return "PreluBackward", (t(shape, dt), t(shape, dt), t((shape[1],), dt), t(shape, dt), t((shape[1],), dt))


# (case, expected size on A2/A3) -- each number from the op's sources:
A2A3 = [
    # MseLossGradV2 (equal shapes): an Ascend C kernel whose tiling asks 0 bytes -> Align(0)
    (lambda: mse((4, 5), (4, 5)), 512),
    # ... and out in another dtype: the fp16 gradient (20 * 2 bytes) waits for the Cast, in a bucket of its own
    (lambda: mse((4, 5), (4, 5), F16, F32), 512 + align(40)),
    # broadcasting: MseLossGrad, a TBE kernel (no workspace); nothing else stays
    (lambda: mse((5,), (4, 5)), 0),
    # GroupNormGrad, fp32, N <= 2: GetLibApiWorkSpaceSize only
    (lambda: gn(2, 6, 5, 3), align(MiB16)),
    # N > 2: + 2 copies of ceil(N/2) * C fp32 partials = 2 * 3 * 64 * 4
    (lambda: gn(5, 64, 3, 4), align(MiB16 + 2 * 3 * 64 * 4)),
    # fp16, N <= 2: + 2 * C * 4 for the cast
    (lambda: gn(2, 6, 5, 3, F16), align(MiB16 + 2 * 6 * 4)),
    # gamma NULL: Fill's ones (C fp32) before the kernel; dgamma and dbeta not asked: they stay
    (lambda: gn(2, 6, 5, 3, mask=(True, False, False), gamma=False), align(24) + align(MiB16) + 2 * align(24)),
    # CrossEntropyLossGrad (generated, no Align): CeilAlign(40 * 4, 32) + 16 MiB
    (lambda: ce(3, 5), 160 + MiB16),
    (lambda: ce(3, 5, F16), 160 + MiB16),
    # PreluBackward: the `update` tensor PReluGradUpdate writes for PReluGradReduce
    (lambda: prelu((2, 3, 4)), align(24 * 4)),
    (lambda: prelu((8, 3, 64), F16), align(8 * 3 * 64 * 2)),
]

# NumPy backend only (the emulator follows A2/A3 whatever the SoC):
OTHER_SOCS = [
    ("Ascend950", lambda: ce(3, 5), 40 * 4 * 32 + MiB16),    # totalCoreNum * 4 * blockSize + 16 MiB
    ("Ascend950", lambda: prelu((2, 3, 4)), 512 + align(96)),  # two Ascend C kernels' 0-byte requests share a bucket
    ("Ascend950", lambda: gn(2, 6, 5, 3), align(MiB16 + 2 * 1 * 6 * 4)),
    ("Ascend310P", lambda: mse((4, 5), (4, 5)), 512),        # MseLossGradV2 has a 310P kernel
    ("Ascend910", lambda: mse((4, 5), (4, 5)), 0),           # ... none on 910: MseLossGrad (TBE)
    ("Ascend910", lambda: prelu((2, 3, 4)), align(96)),
]


def phase1(case: Callable[[], tuple]) -> tuple[int, Any, list]:
    """Phase 1 of ``case`` through pyaclnn.acl; returns (workspaceSize, executor, what to close)."""
    op, args = case()
    keep = [a for a in args if isinstance(a, pyaclnn.Tensor)]
    arrays = []
    call = []
    for a in args:
        if isinstance(a, tuple) and a[0] == "mask":
            arrays.append(acl.aclCreateBoolArray(list(a[1]), 3))
            call.append(arrays[-1])
        else:
            call.append(a)
    size, executor = getattr(acl, f"aclnn{op}GetWorkspaceSize")(*call)
    return size, executor, keep + arrays


def close(things: list) -> None:
    for x in things:
        if isinstance(x, pyaclnn.Tensor):
            x.close()
        else:
            acl.aclDestroyBoolArray(x)


def sizes(cases: list) -> list[int]:
    out = []
    with pyaclnn.Device(0):
        for case in cases:
            size, executor, things = phase1(case)
            acl.aclDestroyAclOpExecutor(executor)
            close(things)
            out.append(size)
    return out


@pytest.mark.parametrize("soc", ["Ascend910B", "Ascend910_93"])
def test_workspace_sizes_on_both_backends(soc: str, use_backend: Callable[..., object],
                                          emulator_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    want = [size for _, size in A2A3]
    use_backend("numpy", soc=soc)
    assert sizes([case for case, _ in A2A3]) == want
    monkeypatch.setenv("EMU_SOC_NAME", soc + ("3" if soc == "Ascend910B" else "92"))
    use_backend("acl", home=emulator_home)
    assert sizes([case for case, _ in A2A3]) == want


@pytest.mark.parametrize("soc,case,want", OTHER_SOCS)
def test_workspace_sizes_of_the_other_socs(soc: str, case: Callable[[], tuple], want: int,
                                           use_backend: Callable[..., object]) -> None:
    use_backend("numpy", soc=soc)
    assert sizes([case]) == [want]


def test_empty_tensors_need_no_workspace(backend: str) -> None:
    cases = [lambda: mse((0, 5), (0, 5)), lambda: gn(0, 6, 5, 3), lambda: ce(0, 5), lambda: prelu((0, 3, 4))]
    assert sizes(cases) == [0, 0, 0, 0]


# -- a port that passes a NULL workspace ------------------------------------------------------------
def run(case: Callable[[], tuple], workspace: Any, size: Any = None, op: str | None = None) -> tuple[int, list]:
    """Phase 1 of ``case``, then phase 2 (of ``op``, default the case's) with ``workspace`` and
    ``size`` (default phase 1's), on a stream; returns (phase 1's size, what to close)."""
    need, executor, things = phase1(case)
    stream = acl.aclrtCreateStream()
    things.append(("stream", stream))
    ws = workspace
    if workspace == "malloc":   # the samples: aclrtMalloc(workspaceSize) only when it is > 0
        ws = acl.aclrtMalloc(need, acl.ACL_MEM_MALLOC_HUGE_FIRST) if need > 0 else None
        if ws:
            things.append(("free", ws))
    getattr(acl, f"aclnn{op or case()[0]}")(ws, need if size is None else size, executor, stream)
    acl.aclrtSynchronizeStream(stream)
    return need, things


def close_all(things: list) -> None:
    for x in things:
        if isinstance(x, tuple) and x[0] == "stream":
            acl.aclrtDestroyStream(x[1])
        elif isinstance(x, tuple):
            acl.aclrtFree(x[1])
    close([x for x in things if not isinstance(x, tuple)])


@pytest.mark.parametrize("case", [lambda: gn(2, 6, 5, 3), lambda: ce(3, 5), lambda: prelu((2, 3, 4)),
                                  lambda: mse((4, 5), (4, 5))], ids=["gn", "ce", "prelu", "mse"])
def test_null_workspace_with_its_size_is_161001(backend: str, case: Callable[[], tuple]) -> None:
    with pyaclnn.Device(0):
        stream = acl.aclrtCreateStream()
        need, executor, things = phase1(case)
        op = case()[0]
        with pytest.raises(errors.AclnnParamNullptrError) as info:
            getattr(acl, f"aclnn{op}")(None, need, executor, stream)
        assert info.value.status == 161001 and info.value.api == f"aclnn{op}"
        assert "workspace" in str(info.value)
        if op == "CrossEntropyLossGrad":  # NnopbaseRunWithWorkspace refused it before running it: still live
            acl.aclDestroyAclOpExecutor(executor)
        acl.aclrtDestroyStream(stream)
        close(things)


def test_null_workspace_of_size_0_faults_in_a_composite_ops_kernel(backend: str) -> None:
    """PreluBackward's kernels write and read `update` at the workspace address: NULL faults at
    the next synchronize (CommonOpExecutorRun does not compare the size)."""
    with pyaclnn.Device(0):
        with pytest.raises(errors.AclError) as info:
            run(lambda: prelu((2, 3, 4)), None, 0)
        assert info.value.status == 507015 and info.value.api == "aclrtSynchronizeStream"
        assert "workspace" in str(info.value)


def test_null_workspace_of_size_0_is_161002_for_a_generated_op(backend: str) -> None:
    with pyaclnn.Device(0):
        stream = acl.aclrtCreateStream()
        need, executor, things = phase1(lambda: ce(3, 5))
        with pytest.raises(errors.AclnnParamInvalidError) as info:
            acl.aclnnCrossEntropyLossGrad(None, 0, executor, stream)
        assert info.value.status == 161002 and info.value.api == "aclnnCrossEntropyLossGrad"
        assert f"does not meet the minimum workspace size {need}" in str(info.value)
        acl.aclDestroyAclOpExecutor(executor)  # not run, so still live
        acl.aclrtDestroyStream(stream)
        close(things)


def test_a_workspace_no_kernel_touches_may_be_null(backend: str) -> None:
    """MseLossGradV2 reports 512 bytes for its 0-byte request and never reads them (its kernel
    takes `workspace` and does not use it): a port passing NULL, 0 works, as on a device."""
    rng = np.random.default_rng(3)
    g, x, y = (rng.standard_normal((4, 5)).astype(F32) for _ in range(3))
    with pyaclnn.Device(0):
        tg, tx, ty, out = (pyaclnn.Tensor.from_numpy(a) for a in (g, x, y, np.zeros((4, 5), F32)))
        size, executor = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, 0, out)
        assert size == 512
        stream = acl.aclrtCreateStream()
        acl.aclnnMseLossBackward(None, 0, executor, stream)
        acl.aclrtSynchronizeStream(stream)
        np.testing.assert_allclose(out.numpy(), 2 * (x - y) * g, rtol=1e-6)
        acl.aclrtDestroyStream(stream)


def test_the_samples_allocation_runs(backend: str) -> None:
    """The samples' pattern (aclrtMalloc(workspaceSize) if > 0) runs every op."""
    with pyaclnn.Device(0):
        for case in (lambda: gn(5, 64, 3, 4), lambda: ce(3, 5), lambda: prelu((2, 3, 4)),
                     lambda: mse((4, 5), (4, 5), F16, F32)):
            _, things = run(case, "malloc")
            close_all(things)


# -- an executor launched through another operator's function ------------------------------------------
def test_a_composite_executor_runs_as_its_own_operator_through_another_composite_op(backend: str) -> None:
    """aclnnMseLossBackward(ws, n, <a PreluBackward executor>): CommonOpExecutorRun runs the
    executor's kernels, so PReLU's outputs are written (oracle: torch's prelu backward)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x, dy = rng.standard_normal((2, 3, 4)).astype(F32), rng.standard_normal((2, 3, 4)).astype(F32)
    w = np.array([0.25, -0.5, 2.0], F32)
    xt, wt = torch.from_numpy(x.astype(np.float64)).requires_grad_(), torch.from_numpy(w.astype(np.float64)).requires_grad_()
    torch.nn.functional.prelu(xt, wt).backward(torch.from_numpy(dy.astype(np.float64)))
    with pyaclnn.Device(0):
        tdy, tx, tw = (pyaclnn.Tensor.from_numpy(a) for a in (dy, x, w))
        gx, gw = t((2, 3, 4)), t((3,))
        size, executor = acl.aclnnPreluBackwardGetWorkspaceSize(tdy, tx, tw, gx, gw)
        stream = acl.aclrtCreateStream()
        ws = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        acl.aclnnMseLossBackward(ws, size, executor, stream)
        acl.aclrtSynchronizeStream(stream)
        np.testing.assert_allclose(gx.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gw.numpy(), wt.grad.numpy(), rtol=1e-5, atol=1e-5)
        with pytest.raises(errors.AclError) as info:  # and it was consumed
            acl.aclnnPreluBackward(ws, size, executor, stream)
        assert info.value.status == 561103
        acl.aclrtFree(ws)
        acl.aclrtDestroyStream(stream)


@pytest.mark.parametrize("made_by,launched_by", [("MseLossBackward", "CrossEntropyLossGrad"),
                                                 ("CrossEntropyLossGrad", "PreluBackward")])
def test_an_executor_of_the_other_kind_is_561103_naming_both(backend: str, made_by: str, launched_by: str) -> None:
    case = (lambda: mse((4, 5), (4, 5))) if made_by == "MseLossBackward" else (lambda: ce(3, 5))
    with pyaclnn.Device(0):
        stream = acl.aclrtCreateStream()
        size, executor, things = phase1(case)
        ws = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        with pytest.raises(errors.AclError) as info:
            getattr(acl, f"aclnn{launched_by}")(ws, size, executor, stream)
        assert info.value.status == 561103 and info.value.api == f"aclnn{launched_by}"
        assert f"aclnn{made_by}GetWorkspaceSize" in str(info.value) and f"aclnn{launched_by}" in str(info.value)
        assert "not live" not in str(info.value)
        with pytest.raises(errors.AclError) as again:   # consumed
            getattr(acl, f"aclnn{made_by}")(ws, size, executor, stream)
        assert again.value.status == 561103
        acl.aclrtSynchronizeStream(stream)
        acl.aclrtFree(ws)
        acl.aclrtDestroyStream(stream)
        close(things)


def test_a_failure_of_an_executor_run_through_another_op_names_both(backend: str) -> None:
    with pyaclnn.Device(0):
        stream = acl.aclrtCreateStream()
        size, executor, things = phase1(lambda: prelu((2, 3, 4)))
        with pytest.raises(errors.AclnnParamNullptrError) as info:
            acl.aclnnMseLossBackward(None, size, executor, stream)
        assert info.value.api == "aclnnMseLossBackward" and "aclnnPreluBackward" in str(info.value)
        acl.aclrtDestroyStream(stream)
        close(things)
