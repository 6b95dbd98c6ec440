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
  aligned memory): an unaligned one inside an allocation is accepted and computed on;
- a destroyed aclTensor given to aclSet{Input,Output,}TensorAddr is a use after free in C (the
  call first writes the address into it): refused where the NULL tensor is, 561103, nothing
  changed; phase 2 of an executor whose tensor was destroyed likewise (the emulator's model);
- a NumPy-in/NumPy-out call on a Tensor outside its allocation raises the kernel's AI Core
  exception naming the call that failed (aclrtSynchronizeStream on a device, aclnn<Op> on the
  NumPy backend, whose kernels run at once); a DLPack export of it is a BufferError.

Every test runs on the NumPy backend and on the acl backend through the emulator, and asserts
the exception class and status code. Oracle: the statuses of the sources above, and for values
the closed form of MseLossBackward's "none" reduction, 2 * (x - y) * g.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

import pyaclnn
from conftest import on_device_0
from pyaclnn import acl, errors

F32 = np.float32
NONE = 0  # reduction "none"


WORKSPACE = 4096  # bytes: at least what phase 1 asks for MseLossBackward on (2, 2) float32 (512)


class Session:
    """A C-shaped session through pyaclnn.acl: what it makes is released at the end."""

    def __init__(self) -> None:
        self.stream = acl.aclrtCreateStream()
        self.allocs: list[int] = []
        self.tensors: list[object] = []
        # phase 2's workspace, made before any test frees memory (so a later workspace cannot
        # land on a freed address a test means to be invalid)
        self.workspace_slot = self.malloc(WORKSPACE)

    def malloc(self, nbytes: int) -> int:
        addr = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.allocs.append(addr)
        return addr

    def free(self, addr: int) -> None:
        self.allocs.remove(addr)
        acl.aclrtFree(addr)

    def workspace(self, size: int) -> int | None:
        """What a port passes as phase 2's workspace: size bytes of device memory when size > 0, else NULL."""
        assert size <= WORKSPACE, size
        return self.workspace_slot if size > 0 else None

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
    with on_device_0(Session) as session:
        yield session


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
    # "overrun": 16 bytes reaching past an 8-byte allocation and past the block the runtime
    # gives it (rounded up to 32 bytes plus 32: ApiImpl::DevMalloc), where a kernel's read faults
    return s.malloc(8) + 56


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
@pytest.mark.usefixtures("as_a_device")
def test_phase2_on_an_invalid_address_fails_at_synchronize(s: Session, where: str, role: str) -> None:
    """The launch succeeds (opbase's phase 2 does not look at addresses; the kernel launch is
    asynchronous) and the kernel's fault is the next synchronisation's AI Core exception (was
    507015 from phase 2 on the NumPy backend, 361001 from phase 2 on the emulator). A page fault
    puts the device in failure mode until its last reset (hicann/runtime task_manager.cc
    PrintErrorInfo -> ContextManage::SetGlobalFailureErr): every later synchronisation returns
    it and every launch is refused (Context::CheckStatus, CheckTaskSend); synchronous copies
    still run."""
    g, x, y, tg, tx, ty = _mse_inputs(s)
    out_addr = s.malloc(16)
    out = s.tensor(out_addr)
    bad = s.tensor(_outside(s, where))
    args = (tg, bad, ty, NONE, out) if role == "input" else (tg, tx, ty, NONE, bad)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(*args)
    acl.aclnnMseLossBackward(s.workspace(ws), ws, ex, s.stream)  # queued: no error yet
    with pytest.raises(errors.RtAicoreExceptionError) as info:
        acl.aclrtSynchronizeStream(s.stream)
    assert info.value.status == 507015 and info.value.api == "aclrtSynchronizeStream"
    with pytest.raises(errors.RtAicoreExceptionError):
        acl.aclrtSynchronizeStream(s.stream)  # not once: the device is in failure mode
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, out)
    with pytest.raises(errors.AclnnRuntimeError) as launch:
        acl.aclnnMseLossBackward(s.workspace(ws), ws, ex, s.stream)  # the kernel launch is refused
    assert launch.value.status == 361001
    with pytest.raises(errors.RtAicoreExceptionError):
        acl.aclrtMemsetAsync(out_addr, 16, 0, 16, s.stream)
    acl.aclrtMemcpy(out_addr, 16, np.zeros(4, F32), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)  # synchronous: runs


@pytest.mark.usefixtures("as_a_device")
def test_the_fault_is_reported_by_synchronize_device(s: Session) -> None:
    g, x, y, tg, tx, ty = _mse_inputs(s)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, s.tensor(_outside(s, "freed")))
    acl.aclnnMseLossBackward(s.workspace(ws), ws, ex, s.stream)
    with pytest.raises(errors.RtAicoreExceptionError) as info:
        acl.aclrtSynchronizeDevice()
    assert info.value.status == 507015 and info.value.api == "aclrtSynchronizeDevice"


@pytest.mark.usefixtures("as_a_device")
def test_the_object_layer_raises_the_fault_at_synchronize(backend: str) -> None:
    """pyaclnn's own objects: run() queues, Stream.synchronize() raises the AI Core exception,
    and so does every later synchronisation until the device is reset: closing the stream (which
    synchronizes) reports it too, and still destroys the stream."""
    with pyaclnn.Device(0) as device:
        stream = device.create_stream()
        stream.workspace(WORKSPACE)  # run()'s workspace, made before the address below is freed
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
        with pytest.raises(pyaclnn.RtAicoreExceptionError):
            stream.close()
        assert stream.closed


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
        acl.aclnnMseLossBackward(s.workspace(ws), ws, ex, s.stream)
        acl.aclrtSynchronizeStream(s.stream)
        np.testing.assert_array_equal(s.download(out2 + 4, (2, 2)), want)
    finally:
        acl.aclDestroyAclOpExecutor(ex)
    # aclCreateTensor
    out_base = s.malloc(20)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, s.tensor(base + 4), ty, NONE, s.tensor(out_base + 4))
    acl.aclnnMseLossBackward(s.workspace(ws), ws, ex, s.stream)
    acl.aclrtSynchronizeStream(s.stream)
    np.testing.assert_array_equal(s.download(out_base + 4, (2, 2)), want)


# -- 4. aclSet*TensorAddr and phase 2 with a destroyed tensor ----------------------------------------
@pytest.mark.parametrize("api", SETTERS)
@pytest.mark.parametrize("which", ["captured", "other"])
def test_set_tensor_addr_with_a_destroyed_tensor_is_561103(s: Session, api: str, which: str) -> None:
    """opbase acl_op_api.cpp aclSet*TensorAddr: the tensor is checked first (NULL: 561103), then
    tensor->SetStorageAddr(addr), a write into freed memory for a destroyed aclTensor. Both
    backends refuse it there with the NULL tensor's status and change nothing (the NumPy backend
    set the address anyway; the emulator did too for the executor's own tensor)."""
    g, x, y, tg, tx, ty = _mse_inputs(s)
    out_addr = s.malloc(16)
    out = s.tensor(out_addr)
    index = 0 if api == "aclSetOutputTensorAddr" else 1  # out / self (aclSetTensorAddr: inputs first)
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, out)
    acl.aclSetAclOpExecutorRepeatable(ex)
    try:
        if which == "captured":  # the executor's own tensor, destroyed
            dead = out if api == "aclSetOutputTensorAddr" else tx
        else:
            dead = s.tensor(s.malloc(16))
        s.tensors.remove(dead)
        acl.aclDestroyTensor(dead)
        elsewhere = s.malloc(16)
        for executor in (ex, None):  # checked before the executor
            with pytest.raises(errors.AclnnInnerNullptrError) as info:
                getattr(acl, api)(executor, index, dead, elsewhere)
            assert info.value.status == 561103 and info.value.api == api
            assert "destroyed" in str(info.value)
        if which == "other":  # nothing changed: the executor still computes on its own tensors
            acl.aclnnMseLossBackward(s.workspace(ws), ws, ex, s.stream)
            acl.aclrtSynchronizeStream(s.stream)
            np.testing.assert_array_equal(s.download(out_addr, (2, 2)), 2 * (x - y) * g)
    finally:
        acl.aclDestroyAclOpExecutor(ex)


def test_phase2_after_a_captured_tensor_was_destroyed_is_561103(s: Session) -> None:
    """Phase 2 would read the freed aclTensor (use after free): the emulator refuses it with
    561103 and a misuse; the NumPy backend does the same (it ran on the tensor's old address)."""
    g, x, y, tg, tx, ty = _mse_inputs(s)
    out = s.tensor(s.malloc(16))
    ws, ex = acl.aclnnMseLossBackwardGetWorkspaceSize(tg, tx, ty, NONE, out)
    s.tensors.remove(tx)
    acl.aclDestroyTensor(tx)
    with pytest.raises(errors.AclnnInnerNullptrError) as info:
        acl.aclnnMseLossBackward(s.workspace(ws), ws, ex, s.stream)  # consumes the executor all the same
    assert info.value.status == 561103 and info.value.api == "aclnnMseLossBackward"
    assert "destroyed before phase 2" in str(info.value)


# -- 5. NumPy in/out calls and DLPack exports of a tensor at a bad address ---------------------------
@pytest.fixture
def overrun(backend: str) -> Iterator[tuple[pyaclnn.Device, pyaclnn.Tensor]]:
    """A (8, 8) float32 tensor over an 8-byte allocation (an overrun past the 64 bytes the
    runtime pads it to: unlike a freed address, no later allocation of the call can make it
    valid again)."""
    device = pyaclnn.Device(0)
    addr = acl.aclrtMalloc(8, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    tensor = pyaclnn.Tensor.from_address(addr, (8, 8), F32, device=device)
    try:
        yield device, tensor
    finally:
        tensor.close()
        acl.aclrtFree(addr)
        try:
            device.close()  # resets the device, which ends the failure mode of a page fault
        except errors.RtAicoreExceptionError:
            pass  # ... that the close of its streams (they synchronize) reports once more


def test_a_host_call_on_a_bad_tensor_names_the_failing_call(backend: str, overrun, monkeypatch) -> None:
    """mse_loss_backward(...) with a Tensor reaching past its allocation: the kernel's AI Core
    exception on both backends, at the synchronize the call makes after its launch (on both
    backends the call runs through the executor on the default stream: issue 18). By default the
    reference reports the launch first, as for any launch of such a tensor: a HazardError naming
    the tensor and the line."""
    device, bad = overrun
    with pyaclnn.Tensor.from_numpy(np.ones((8, 8), F32)) as t:
        if backend == "numpy":
            with pytest.raises(pyaclnn.HazardError, match=r"aclnnMseLossBackward at test_invalid_addresses\.py:\d+: "
                                                          r"self at 0x[0-9a-f]+ .* reaches outside its device allocation"):
                pyaclnn.mse_loss_backward(t, bad, t, "none")
            monkeypatch.setenv("PYACLNN_HAZARDS", "off")  # the program goes on, as a device would
        with pytest.raises(errors.RtAicoreExceptionError) as info:
            pyaclnn.mse_loss_backward(t, bad, t, "none")
    assert info.value.status == 507015
    assert info.value.api == "aclrtSynchronizeStream" and str(info.value).startswith("aclrtSynchronizeStream: ")


def test_a_dlpack_export_of_a_bad_tensor_is_a_buffer_error(backend: str, overrun) -> None:
    """DLPack's own error for what cannot be exported, on both backends (device memory on acl;
    memory not inside a live allocation on NumPy, which raised the AI Core exception of an
    aclrtSynchronizeStream nothing had called)."""
    device, bad = overrun
    with pytest.raises(BufferError) as info:
        np.from_dlpack(bad)
    assert not isinstance(info.value, errors.AclError)
    if backend == "numpy":
        assert "Tensor.__dlpack__" in str(info.value) and "not inside a live allocation" in str(info.value)
