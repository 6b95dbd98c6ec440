"""What the reference runtime reuses for a repeated call of the same C arguments (pyaclnn/_numpy/
runtime/opcache.py: the phase-1 entry by its arguments, opcache.Call; the launch template,
opcache.Launch): each test changes one thing such a reuse depends on between two identical calls
and expects what the full path answers (a refusal, a hazard, the new data). Oracles: NumPy's abs
on the bytes copied in, the checks' refusal of the changed metadata, the hazard rules."""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest

import pyaclnn
from conftest import on_device_0
from helpers.port import PortSession  # noqa: E402
from pyaclnn import acl
from pyaclnn.errors import AclnnParamInvalidError

D2D, D2H = acl.ACL_MEMCPY_DEVICE_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
X = np.array([-1.5, 2.0, -3.25, 4.0, -0.5, 6.0, -7.0, 8.5] * 2, np.float32)  # 64 bytes


@pytest.fixture
def port(use_backend: Any) -> Iterator[PortSession]:
    pytest.importorskip("torch")  # aclnnAbs runs on the aten tier
    use_backend("numpy")
    with on_device_0(lambda: PortSession(streams=2)) as p:
        yield p


def _download(addr: int, n: int) -> np.ndarray:
    out = np.empty(n, np.float32)
    acl.aclrtMemcpy(out, out.nbytes, addr, out.nbytes, D2H)
    return out


def _abs(p: PortSession, x: Any, out: Any, stream: Any = None, times: int = 1) -> None:
    """aclnnAbs of the same handles ``times`` times, each waited for (the last one not, with ``stream``)."""
    for i in range(times):
        ws, ex = acl.aclnnAbsGetWorkspaceSize(x, out)
        acl.aclnnAbs(None, ws, ex, stream if stream is not None else p.stream)
        if stream is None or i < times - 1:
            acl.aclrtSynchronizeStream(stream if stream is not None else p.stream)


def _pair(p: PortSession, values: np.ndarray = X) -> tuple[int, Any, int, Any]:
    a, o = p.malloc(values), p.malloc(np.zeros(values.size, np.float32))
    return a, p.vector(a, values.size), o, p.vector(o, values.size)


def test_a_repeated_call_computes_what_the_first_did(port: PortSession) -> None:
    p = port
    _, x, o, out = _pair(p)
    _abs(p, x, out, times=3)
    np.testing.assert_array_equal(_download(o, X.size), np.abs(X))


def test_a_spec_whose_check_now_refuses_is_a_new_key(port: PortSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks are skipped on a hit only while they are the ones that accepted the call."""
    from pyaclnn._numpy import ops
    p = port
    _, x, _, out = _pair(p)
    _abs(p, x, out, times=2)
    spec = ops.spec_of("Abs")

    def refuse(*args: Any) -> bool:
        raise AclnnParamInvalidError("aclnnAbsGetWorkspaceSize", "refused by the replaced check")
    monkeypatch.setattr(spec, "check", refuse)
    with pytest.raises(AclnnParamInvalidError, match="refused by the replaced check"):
        acl.aclnnAbsGetWorkspaceSize(x, out)


def test_a_module_spec_whose_check_now_refuses_is_a_new_key(port: PortSession,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """An exact-tier spec (a module) too: its rules are read again once one is replaced
    (pyaclnn/_numpy/ops.py: ``rules`` keeps them while no attribute of the spec was set)."""
    from pyaclnn._objects.backend import current
    from pyaclnn.ops.mse_loss_backward import spec as mse
    p = port
    _, x, _, out = _pair(p)
    rt = current().runtime
    for _ in range(2):
        rt.destroy_executor(rt.workspace_size("MseLossBackward", (x, x, x, 1, out))[1])

    def refuse(*args: Any) -> bool:
        raise AclnnParamInvalidError("aclnnMseLossBackwardGetWorkspaceSize", "refused by the replaced check")
    monkeypatch.setattr(mse, "check", refuse)
    with pytest.raises(AclnnParamInvalidError, match="refused by the replaced check"):
        rt.workspace_size("MseLossBackward", (x, x, x, 1, out))
    monkeypatch.undo()  # the spec's own check again: accepted again
    rt.destroy_executor(rt.workspace_size("MseLossBackward", (x, x, x, 1, out))[1])


def test_a_replaced_written_or_workspace_rule_is_the_one_that_runs(port: PortSession,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The spec's other rules replaced between two calls of the same arguments: the new ones
    answer (a workspace of their size; their ``written`` asked), not the answers of the old."""
    from pyaclnn._numpy import ops
    from pyaclnn._spec import Workspace
    p = port
    _, x, _, out = _pair(p)
    _abs(p, x, out, times=2)
    spec = ops.spec_of("Abs")
    asked: list[tuple] = []
    monkeypatch.setattr(spec, "written", lambda *metas: asked.append(metas) or None)
    monkeypatch.setattr(spec, "workspace_size", lambda *metas: Workspace(4096, False), raising=False)
    ws, ex = acl.aclnnAbsGetWorkspaceSize(x, out)
    acl.aclDestroyAclOpExecutor(ex)
    assert ws == 4096 and len(asked) == 1


def test_a_handle_of_another_type_is_refused_as_the_first_call_is(port: PortSession) -> None:
    """A float equal to a live aclTensor's handle is an equal key: the repeated call's shortcut
    checks each argument's type, so it is refused as the full phase 1 refuses it."""
    from pyaclnn._objects.backend import current
    p = port
    _, x, _, out = _pair(p)
    _abs(p, x, out, times=2)
    rt = current().runtime
    with pytest.raises(TypeError, match="is no aclTensor handle"):
        rt.workspace_size("Abs", (float(rt.as_int(x)), out))


def test_a_tensor_made_again_under_its_handle_is_checked_again(port: PortSession) -> None:
    """aclInitTensor gives a live handle new metadata: a shape the checks refuse is refused."""
    p = port
    a, x, _, out = _pair(p)
    _abs(p, x, out, times=2)
    acl.aclInitTensor(x, [4], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], 1, a)
    with pytest.raises(AclnnParamInvalidError):
        acl.aclnnAbsGetWorkspaceSize(x, out)


def test_a_destroyed_tensor_is_not_a_live_one_again(port: PortSession) -> None:
    p = port
    a = p.malloc(X)
    x = acl.aclCreateTensor([X.size], 1, acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [X.size], 1, a)
    _, _, _, out = _pair(p)
    _abs(p, x, out, times=2)
    acl.aclDestroyTensor(x)
    with pytest.raises(AclnnParamInvalidError, match="not a live aclTensor"):
        acl.aclnnAbsGetWorkspaceSize(x, out)


def test_an_executor_of_a_repeated_call_is_its_own(port: PortSession) -> None:
    """Each phase 1 makes a new executor: one made repeatable leaves the next single-use."""
    p = port
    _, x, _, out = _pair(p)
    _abs(p, x, out)
    ws, first = acl.aclnnAbsGetWorkspaceSize(x, out)
    acl.aclSetAclOpExecutorRepeatable(first)
    ws, second = acl.aclnnAbsGetWorkspaceSize(x, out)
    assert second != first
    acl.aclnnAbs(None, ws, second, p.stream)
    with pytest.raises(pyaclnn.AclError):  # consumed by its launch
        acl.aclDestroyAclOpExecutor(second)
    acl.aclDestroyAclOpExecutor(first)  # still live
    acl.aclrtSynchronizeStream(p.stream)


def test_memory_freed_between_two_calls_is_found(port: PortSession) -> None:
    """The free (and mallocs that may hand the address out again) between two launches of the
    same handles: a use after free, or (the address not handed out again) a tensor outside any
    allocation; either is a hazard at the launch."""
    p = port
    _, _, _, out = _pair(p)
    old = acl.aclrtMalloc(X.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemcpy(old, X.nbytes, X, X.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    x = p.vector(old, X.size)
    _abs(p, x, out, times=3)  # the second and third launch repeat the first's work
    acl.aclrtFree(old)
    for _ in range(8):
        if p.malloc(np.zeros(X.size, np.float32)) == old:
            break
    with pytest.raises(pyaclnn.HazardError, match="use after free|outside its device allocation"):
        _abs(p, x, out)


def test_memory_made_unwritten_between_two_calls_is_an_uninitialised_read(port: PortSession,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A device-to-device copy of never-written bytes over the input (a hazard itself: let go on
    here) makes it unwritten again."""
    p = port
    a, x, _, out = _pair(p)
    _abs(p, x, out, times=3)
    fresh = acl.aclrtMalloc(X.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    p.allocs.append(fresh)
    monkeypatch.setenv("PYACLNN_HAZARDS", "warn")
    with pytest.warns(pyaclnn.HazardWarning, match="aclrtMemcpy .* never written"):
        acl.aclrtMemcpy(a, X.nbytes, fresh, X.nbytes, D2D)
    with pytest.warns(pyaclnn.HazardWarning, match="aclnnAbs .* never written"):
        _abs(p, x, out)


def test_a_tensor_re_pointed_between_two_calls_is_read_at_its_new_address(port: PortSession) -> None:
    p = port
    _, x, o, out = _pair(p)
    _abs(p, x, out, times=3)
    other = p.malloc(X * 10)
    acl.aclSetRawTensorAddr(x, other)
    _abs(p, x, out)
    np.testing.assert_array_equal(_download(o, X.size), np.abs(X * 10))


def test_a_repeated_call_racing_with_another_stream_is_a_hazard(port: PortSession) -> None:
    p = port
    _, x, _, out = _pair(p)
    _abs(p, x, out, times=3)
    _abs(p, x, out, stream=p.streams[0])  # queued, not waited for
    with pytest.raises(pyaclnn.HazardError, match="no event between the two streams"):
        _abs(p, x, out, stream=p.streams[1])


def test_a_plain_value_of_another_type_is_a_new_key(port: PortSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """1 and True are equal Python keys; the rules see their types (pyaclnn._spec.value_key), so
    True after 1 runs the checks again (the runtime's phase 1, as the C layer calls it)."""
    from pyaclnn._objects.backend import current
    from pyaclnn.ops.mse_loss_backward import spec as mse
    p = port
    _, x, _, out = _pair(p)
    checks: list[tuple] = []
    real = mse.check
    monkeypatch.setattr(mse, "check", lambda *a: checks.append(a) or real(*a))
    rt = current().runtime
    for reduction in (1, 1, True):
        try:
            rt.destroy_executor(rt.workspace_size("MseLossBackward", (x, x, x, reduction, out))[1])
        except pyaclnn.AclError:
            pass  # (a refusal is the checks' too)
    assert [type(c[4]) for c in checks] == [int, bool]


def test_a_record_made_from_its_template_is_the_record() -> None:
    """records.from_values sets each field by name in the class's order (a field added, moved or
    renamed without it: a record with other values in its fields, which this finds)."""
    from dataclasses import fields
    from pyaclnn._numpy.records import ExecutorRecord, from_values, values
    record = ExecutorRecord(*[object() for _ in fields(ExecutorRecord)])
    copy = from_values(values(record))
    assert copy is not record
    assert [getattr(copy, f.name) for f in fields(ExecutorRecord)] == [getattr(record, f.name)
                                                                       for f in fields(ExecutorRecord)]


def test_the_calls_kept_are_bounded_over_all_operators(port: PortSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each operator keeps its Calls apart (opcache.Call), yet at most MAX_CALLS in all: a Call
    holds its tensors' descriptors, which a program making new tensors would otherwise pile up."""
    from pyaclnn._numpy.runtime import opcache
    from pyaclnn._objects.backend import current
    monkeypatch.setattr(opcache, "MAX_CALLS", 4)
    p = port
    rt = current().runtime
    for _ in range(3):  # 6 distinct calls of two operators, then each repeated: the last ones answer
        _, x, _, out = _pair(p)
        for op in ("Abs", "Neg"):
            for _ in range(2):
                rt.destroy_executor(rt.workspace_size(op, (x, out))[1])
        assert sum(len(calls) for _, calls in rt._calls.values()) <= 4


def test_an_output_re_pointed_between_two_runs_of_a_repeatable_executor_is_written_there(port: PortSession) -> None:
    """aclSetOutputTensorAddr between two launches of one repeatable executor: the second writes
    the new address, as the full path does (the first launch's template is over the old one)."""
    p = port
    _, x, o, out = _pair(p)
    ws, ex = acl.aclnnAbsGetWorkspaceSize(x, out)
    acl.aclSetAclOpExecutorRepeatable(ex)
    try:
        for _ in range(2):
            acl.aclnnAbs(None, ws, ex, p.stream)
            acl.aclrtSynchronizeStream(p.stream)
        other = p.malloc(np.zeros(X.size, np.float32))
        acl.aclrtMemcpy(o, X.nbytes, p.malloc(np.zeros(X.size, np.float32)), X.nbytes, D2D)  # the old one cleared
        acl.aclSetOutputTensorAddr(ex, 0, out, other)
        acl.aclnnAbs(None, ws, ex, p.stream)
        acl.aclrtSynchronizeStream(p.stream)
    finally:
        acl.aclDestroyAclOpExecutor(ex)
    np.testing.assert_array_equal(_download(other, X.size), np.abs(X))
    np.testing.assert_array_equal(_download(o, X.size), np.zeros(X.size, np.float32))
