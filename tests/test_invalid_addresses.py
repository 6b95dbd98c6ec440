"""Bad device addresses and NULL tensors: both backends report what the real CANN stack reports.

Each behaviour comes from the real sources (cited in the code that implements it):

- a memcpy whose device side is not inside an allocation fails in the driver, which the runtime
  reports as ACL_ERROR_RT_DRV_INTERNAL_ERROR (507899), for aclrtMemcpy and aclrtMemcpyAsync;
- phase 2 of an operator does not look at its tensors' addresses: the launch succeeds and the
  kernel's fault comes back from the next aclrtSynchronizeStream, ACL_ERROR_RT_AICORE_EXCEPTION
  (507015);
- aclSet{Input,Output,}TensorAddr with a NULL tensor is ACLNN_ERR_INNER_NULLPTR (561103),
  checked before the executor; the dynamic variants likewise for a NULL list;
- no host call checks that a device address is 32-byte aligned (aclrtMalloc only hands out
  aligned memory): an unaligned one inside an allocation is accepted and computed on.

Every test runs on the NumPy backend and on the acl backend through the emulator, and asserts
the exception class and status code. Oracle: the statuses of the sources above, and for values
the closed form of MseLossBackward's "none" reduction, 2 * (x - y) * g.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl, errors

F32 = np.float32
NONE = 0  # reduction "none"


class Session:
    """A C-shaped session through pyaclnn.acl: what it makes is released at the end."""

    def __init__(self) -> None:
        self.stream = acl.aclrtCreateStream()
        self.allocs: list[int] = []
        self.tensors: list[object] = []

    def malloc(self, nbytes: int) -> int:
        addr = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.allocs.append(addr)
        return addr

    def free(self, addr: int) -> None:
        self.allocs.remove(addr)
        acl.aclrtFree(addr)

    def upload(self, array: np.ndarray) -> int:
        addr = self.malloc(array.nbytes)
        acl.aclrtMemcpy(addr, array.nbytes, array, array.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        return addr

    def download(self, addr: int, shape: tuple[int, ...]) -> np.ndarray:
        out = np.empty(shape, F32)
        acl.aclrtMemcpy(out, out.nbytes, addr, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        return out

    def tensor(self, addr: int, shape: tuple[int, ...] = (2, 2)) -> object:
        dims = list(shape)
        strides = [int(s) for s in np.cumprod([1, *dims[:0:-1]])[::-1]]
        t = acl.aclCreateTensor(dims, len(dims), acl.ACL_FLOAT, strides, 0, acl.ACL_FORMAT_ND, dims, len(dims), addr)
        self.tensors.append(t)
        return t

    def close(self) -> None:
        for t in self.tensors:
            acl.aclDestroyTensor(t)
        for addr in self.allocs:
            acl.aclrtFree(addr)
        acl.aclrtDestroyStream(self.stream)


@pytest.fixture
def s(backend: str) -> Iterator[Session]:
    with pyaclnn.Device(0):
        acl.aclrtSetDevice(0)
        session = Session()
        try:
            yield session
        finally:
            session.close()
            acl.aclrtResetDevice(0)


def _mse_inputs(s: Session) -> tuple[np.ndarray, np.ndarray, np.ndarray, object, object, object]:
    g = np.array([[1, 2], [3, 4]], F32)
    x = np.array([[0, 1], [2, 3]], F32)
    y = np.ones((2, 2), F32)
    return g, x, y, s.tensor(s.upload(g)), s.tensor(s.upload(x)), s.tensor(s.upload(y))


# -- 1. memcpy outside any allocation -------------------------------------------------------------
def _outside(s: Session, where: str) -> int:
    """A device address whose 16 bytes are not inside one live allocation (make it after the
    other allocations of the test: a later one may reuse freed memory, as on a device)."""
    if where == "freed":
        addr = s.malloc(16)
        s.free(addr)
        return addr
    return s.malloc(8)  # "overrun": 16 bytes from an 8-byte allocation


@pytest.mark.parametrize("where", ["freed", "overrun"])
@pytest.mark.parametrize("call", ["aclrtMemcpy", "aclrtMemcpyAsync"])
@pytest.mark.parametrize("side", ["dst", "src"])
def test_memcpy_outside_an_allocation_is_the_drivers_error(s: Session, where: str, call: str, side: str) -> None:
    """The driver refuses a device range it cannot resolve; the runtime reports it as
    ACL_ERROR_RT_DRV_INTERNAL_ERROR (was 100000 on the NumPy backend, 107000 on the emulator)."""
    bad = _outside(s, where)
    host = np.zeros(4, F32)
    if side == "dst":
        args = (bad, 16, host, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    else:
        args = (host, 16, bad, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    with pytest.raises(errors.RtDrvInternalError) as info:
        if call == "aclrtMemcpy":
            acl.aclrtMemcpy(*args)
        else:
            acl.aclrtMemcpyAsync(*args, s.stream)
    assert info.value.status == 507899 and info.value.api == call
    acl.aclrtSynchronizeStream(s.stream)  # nothing was queued: nothing fails later


# -- 2. a tensor at an invalid address in phase 2 ---------------------------------------------------
@pytest.mark.parametrize("where", ["freed", "overrun"])
@pytest.mark.parametrize("role", ["input", "output"])
def test_phase2_on_an_invalid_address_fails_at_synchronize(s: Session, where: str, role: str) -> None:
    """The launch succeeds (opbase's phase 2 does not look at addresses; the kernel launch is
    asynchronous) and the kernel's fault is the next synchronisation's AI Core exception (was
    507015 from phase 2 on the NumPy backend, 361001 from phase 2 on the emulator)."""
    g, x, y, tg, tx, ty = _mse_inputs(s)
    out_addr = s.malloc(16)
    out = s.tensor(out_addr)
    bad = s.tensor(_outside(s, where))
    args = (tg, bad, ty, NONE, out) if role == "input" else (tg, tx, ty, NONE, bad)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(*args)
    acl.aclnnMseLossBackward(None, ws, ex, s.stream)  # queued: no error yet
    with pytest.raises(errors.RtAicoreExceptionError) as info:
        acl.aclrtSynchronizeStream(s.stream)
    assert info.value.status == 507015 and info.value.api == "aclrtSynchronizeStream"
    acl.aclrtSynchronizeStream(s.stream)  # reported once
    # the stream still works
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, out)
    acl.aclnnMseLossBackward(None, ws, ex, s.stream)
    acl.aclrtSynchronizeStream(s.stream)
    np.testing.assert_array_equal(s.download(out_addr, (2, 2)), 2 * (x - y) * g)


def test_the_fault_is_reported_by_synchronize_device(s: Session) -> None:
    g, x, y, tg, tx, ty = _mse_inputs(s)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, s.tensor(_outside(s, "freed")))
    acl.aclnnMseLossBackward(None, ws, ex, s.stream)
    with pytest.raises(errors.RtAicoreExceptionError) as info:
        acl.aclrtSynchronizeDevice()
    assert info.value.status == 507015 and info.value.api == "aclrtSynchronizeDevice"


def test_the_object_layer_raises_the_fault_at_synchronize(backend: str) -> None:
    """pyaclnn's own objects: run() queues, Stream.synchronize() raises the AI Core exception."""
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        t = pyaclnn.Tensor.from_numpy(np.ones((2, 2), F32))
        out = pyaclnn.Tensor.zeros((2, 2))
        addr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        acl.aclrtFree(addr)
        gone = pyaclnn.Tensor.from_address(addr, (2, 2), F32)
        pyaclnn.MseLossBackward(t, gone, t, "none", out).run(stream)
        with pytest.raises(pyaclnn.RtAicoreExceptionError) as info:
            stream.synchronize()
        assert info.value.status == 507015
        gone.close(), t.close(), out.close()


# -- 3. aclSet*TensorAddr: NULL tensor, and no alignment check --------------------------------------
SETTERS = ["aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr"]


@pytest.mark.parametrize("api", SETTERS)
def test_set_tensor_addr_with_a_null_tensor_is_561103(s: Session, api: str) -> None:
    """opbase acl_op_api.cpp: NNOPBASE_ASSERT_NULLPTR_WITH_RETURN(tensor, ACLNN_ERR_INNER_NULLPTR)
    is the first statement (was accepted on both backends)."""
    g, x, y, tg, tx, ty = _mse_inputs(s)
    out = s.tensor(s.malloc(16))
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, out)
    acl.aclSetAclOpExecutorRepeatable(ex)
    try:
        with pytest.raises(errors.AclnnInnerNullptrError) as info:
            getattr(acl, api)(ex, 0, None, s.malloc(16))
        assert info.value.status == 561103
        assert f"{api} failed because tensor cannot be a NULL pointer" in str(info.value)
        # the tensor is checked before the executor
        with pytest.raises(errors.AclnnInnerNullptrError) as info:
            getattr(acl, api)(None, 0, None, s.malloc(16))
        assert "tensor cannot be a NULL pointer" in str(info.value)
    finally:
        acl.aclDestroyAclOpExecutor(ex)


@pytest.mark.parametrize("which", ["Input", "Output", ""])
def test_set_dynamic_tensor_addr_with_a_null_list_is_561103(s: Session, which: str) -> None:
    """opbase acl_op_api.cpp aclSetDynamic*TensorAddr: a NULL list is 561103, before any check of
    the executor or the indexes (the NumPy backend answered 161002)."""
    g, x, y, tg, tx, ty = _mse_inputs(s)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, s.tensor(s.malloc(16)))
    acl.aclSetAclOpExecutorRepeatable(ex)
    api = f"aclSetDynamic{which}TensorAddr"
    try:
        with pytest.raises(errors.AclnnInnerNullptrError) as info:
            getattr(acl, api)(ex, 0, 0, None, s.malloc(16))
        assert info.value.status == 561103
        assert "tensors cannot be a NULL pointer" in str(info.value)
    finally:
        acl.aclDestroyAclOpExecutor(ex)


def test_an_unaligned_device_address_is_accepted(s: Session) -> None:
    """No host call checks 32-byte alignment (opbase aclCreateTensor, aclSet*TensorAddr and
    aclSetRawTensorAddr store the address as given); aclrtMalloc's memory is aligned. A tensor
    4 bytes into an allocation is accepted and computed on, on both backends."""
    g, x, y, tg, tx, ty = _mse_inputs(s)
    want = 2 * (x - y) * g
    base = s.upload(np.concatenate([[np.float32(7)], x.ravel()]))  # x starts 4 bytes in
    assert base % 32 == 0 and (base + 4) % 32 != 0
    # aclSetInputTensorAddr / aclSetOutputTensorAddr (first: a repeatable executor adds nothing
    # to the op cache, whose entry would make the next phase 1 a wrapper that refuses repeatable)
    out = s.tensor(s.malloc(16))
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, out)
    acl.aclSetAclOpExecutorRepeatable(ex)
    try:
        out2 = s.malloc(20)
        acl.aclSetInputTensorAddr(ex, 1, tx, base + 4)
        acl.aclSetOutputTensorAddr(ex, 0, out, out2 + 4)
        acl.aclnnMseLossBackward(None, ws, ex, s.stream)
        acl.aclrtSynchronizeStream(s.stream)
        np.testing.assert_array_equal(s.download(out2 + 4, (2, 2)), want)
    finally:
        acl.aclDestroyAclOpExecutor(ex)
    # aclCreateTensor
    out_base = s.malloc(20)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, s.tensor(base + 4), ty, NONE, s.tensor(out_base + 4))
    acl.aclnnMseLossBackward(None, ws, ex, s.stream)
    acl.aclrtSynchronizeStream(s.stream)
    np.testing.assert_array_equal(s.download(out_base + 4, (2, 2)), want)
