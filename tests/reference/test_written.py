"""Output bytes an operator's kernel never writes stay unwritten on the reference, as on a device.

A launch marks written only what its kernel writes (an op spec's ``written``, recorded in phase 1):
where the device leaves an output, or part of one, as it was, a later kernel or device-to-device
copy reading it reads stale bytes there, so the reference names it (the uninitialised-read
HazardError), while the written part reads clean. The cases, from the sources cited in each spec:

- aclnnForeachMulScalarList: out[i]'s first numel(x[i]) elements; on A2/A3 (Ascend910B) an out
  list longer than x is accepted and its extra tensors are never written;
- aclnnAmpUpdateScale: element 0 of each output (the kernel's GlobalTensors hold 1 element);
- aclnnGroupNormBackward: an output the mask does not ask for is never written, except the
  zero-filled dgamma/dbeta of Ascend950's empty-tensor path.

Values are checked against torch (foreach) and the documented zeros (ops.md §2.2.6).
"""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
import pytest

import pyaclnn
from conftest import on_device_0
from pyaclnn import acl
from pyaclnn._numpy.memory import Runs
from pyaclnn._numpy.runtime import TensorDesc, _written_bytes
from pyaclnn.dtypes import DType

torch = pytest.importorskip("torch")  # the oracle

F32 = np.float32
H2D, D2H, D2D = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST, acl.ACL_MEMCPY_DEVICE_TO_DEVICE
UNWRITTEN = r"reads \[0x[0-9a-f]+, \+{n}\), device memory never written since aclrtMalloc"


class Session:
    """Device memory and handles of one test, released at the end."""

    def __init__(self) -> None:
        self.stream = acl.aclrtCreateStream()
        self.allocs: list[int] = []
        self.release: list[Callable[[], None]] = []

    def malloc(self, nbytes: int) -> int:
        addr = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.allocs.append(addr)
        return addr

    def upload(self, array: np.ndarray) -> int:
        addr = self.malloc(max(array.nbytes, 4))  # an empty tensor's data: 4 bytes nothing reads
        if array.nbytes:
            acl.aclrtMemcpy(addr, array.nbytes, np.ascontiguousarray(array), array.nbytes, H2D)
        return addr

    def tensor(self, addr: int, shape: tuple[int, ...], dtype: int = acl.ACL_FLOAT, owned: bool = True) -> object:
        """An ND contiguous aclTensor on ``addr`` (``owned``: destroyed at the end, not by a list)."""
        t = acl.aclCreateTensor(list(shape), len(shape), dtype, None, 0, acl.ACL_FORMAT_ND, list(shape),
                                len(shape), addr)
        if owned:
            self.release.append(lambda: acl.aclDestroyTensor(t))
        return t

    def launch(self, op: str, *args: object) -> None:
        ws, ex = getattr(acl, f"aclnn{op}GetWorkspaceSize")(*args)
        getattr(acl, f"aclnn{op}")(self.malloc(ws) if ws else None, ws, ex, self.stream)

    def close(self) -> None:
        for release in self.release:
            release()
        for addr in self.allocs:
            acl.aclrtFree(addr)
        acl.aclrtDestroyStream(self.stream)


@pytest.fixture
def session(use_backend: Callable[..., object], request: pytest.FixtureRequest) -> Iterator[Session]:
    use_backend("numpy", soc=getattr(request, "param", "Ascend910B"))
    with on_device_0(Session) as s:
        yield s
        acl.aclrtSynchronizeDevice()


def copy_out(addr: int, nbytes: int) -> np.ndarray:
    """A device-to-device copy of ``nbytes`` at ``addr`` (it reads them), then back to the host."""
    tmp = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    try:
        acl.aclrtMemcpy(tmp, nbytes, addr, nbytes, D2D)
        host = np.empty(nbytes, np.uint8)
        acl.aclrtMemcpy(host, nbytes, tmp, nbytes, D2H)
        return host
    finally:
        acl.aclrtFree(tmp)


def foreach_mul(s: Session, x: np.ndarray, scalar: float, outs: list[tuple[int, tuple[int, ...]]]) -> None:
    """aclnnForeachMulScalarList([x], [scalar], outs) queued on the session's stream."""
    xs = acl.aclCreateTensorList([s.tensor(s.upload(x), x.shape, owned=False)], 1)
    scalars = acl.aclCreateScalarList([acl.aclCreateScalar(scalar, acl.ACL_FLOAT)], 1)
    out = acl.aclCreateTensorList([s.tensor(addr, shape, owned=False) for addr, shape in outs], len(outs))
    s.release += [lambda: acl.aclDestroyTensorList(xs), lambda: acl.aclDestroyScalarList(scalars),
                  lambda: acl.aclDestroyTensorList(out)]
    s.launch("ForeachMulScalarList", xs, scalars, out)


X = np.array([[1.0, -2.0], [0.5, 3.0]], F32)
WANT = torch.mul(torch.from_numpy(X), 2.0).numpy()  # torch's foreach_mul of one tensor: x * s


def test_foreach_extra_out_tensors_stay_unwritten_on_a2(session: Session) -> None:
    """A2/A3 accept an out list longer than x and never write the extra tensors: a later copy of
    one reads stale bytes (HazardError), after a synchronize or queued behind it on the stream."""
    s = session
    out0, extra = s.malloc(16), s.malloc(16)
    foreach_mul(s, X, 2.0, [(out0, (2, 2)), (extra, (2, 2))])
    acl.aclrtSynchronizeStream(s.stream)
    np.testing.assert_array_equal(copy_out(out0, 16).view(F32).reshape(2, 2), WANT)
    with pytest.raises(pyaclnn.HazardError, match=UNWRITTEN.format(n=16)):
        copy_out(extra, 16)
    # a kernel reading it, queued right behind the launch on the same stream
    foreach_mul(s, X, 2.0, [(out0, (2, 2)), (extra, (2, 2))])
    g = s.tensor(s.upload(np.ones((2, 2), F32)), (2, 2))
    with pytest.raises(pyaclnn.HazardError, match="aclnnMseLossBackward at .*test_written.py:.* "
                                                  + UNWRITTEN.format(n=16)):
        s.launch("MseLossBackward", g, s.tensor(extra, (2, 2)), g, 0, s.tensor(s.malloc(16), (2, 2)))
    ok = s.tensor(s.malloc(16), (2, 2))
    s.launch("MseLossBackward", g, s.tensor(out0, (2, 2)), g, 0, ok)  # the written tensor: fine


def test_foreach_writes_only_x_elements_of_a_larger_out(session: Session) -> None:
    """out[0] of 6 elements for x[0] of 4: its first 4 are written, the last 2 never."""
    s = session
    big = s.malloc(24)
    foreach_mul(s, X, 2.0, [(big, (6,))])
    acl.aclrtSynchronizeStream(s.stream)
    np.testing.assert_array_equal(copy_out(big, 16).view(F32), WANT.reshape(-1))
    with pytest.raises(pyaclnn.HazardError, match=UNWRITTEN.format(n=8)):
        copy_out(big, 24)


def test_a_host_write_to_an_extra_out_tensor_races_nothing(session: Session) -> None:
    """The kernel never touches the extra tensors (nor a larger out's tail), so a synchronous host
    write to them while the launch is queued is no race; to the written part it is."""
    s = session
    out0, extra = s.malloc(24), s.malloc(16)
    foreach_mul(s, X, 2.0, [(out0, (6,)), (extra, (2, 2))])
    acl.aclrtMemcpy(extra, 16, X, 16, H2D)
    acl.aclrtMemcpy(out0 + 16, 8, X, 8, H2D)
    with pytest.raises(pyaclnn.HazardError, match="aclrtMemcpy at .* writes .* that aclnnForeachMulScalarList"):
        acl.aclrtMemcpy(out0 + 8, 8, X, 8, H2D)
    acl.aclrtSynchronizeStream(s.stream)
    np.testing.assert_array_equal(copy_out(extra, 16).view(F32).reshape(2, 2), X)


def test_amp_update_scale_writes_element_0_only(session: Session) -> None:
    """updatedScale and updatedGrowthTracker of 2 elements: element 0 of each is written."""
    s = session
    scale, tracker, found = (s.upload(a) for a in (np.array([4.0], F32), np.array([0], np.int32),
                                                   np.array([0.0], F32)))
    new_scale, new_tracker = s.malloc(8), s.malloc(8)
    s.launch("AmpUpdateScale", s.tensor(scale, (1,)), s.tensor(tracker, (1,), acl.ACL_INT32),
             s.tensor(found, (1,)), 2.0, 0.5, 1, s.tensor(new_scale, (2,)), s.tensor(new_tracker, (2,), acl.ACL_INT32))
    acl.aclrtSynchronizeStream(s.stream)
    # growthInterval 1, no inf: torch's _amp_update_scale_ doubles the scale and resets the tracker
    want_scale, want_tracker = torch.tensor([4.0]), torch.tensor([0], dtype=torch.int32)
    torch._amp_update_scale_(want_scale, want_tracker, torch.tensor([0.0]), 2.0, 0.5, 1)
    assert copy_out(new_scale, 4).view(F32)[0] == want_scale.item()
    assert copy_out(new_tracker, 4).view(np.int32)[0] == want_tracker.item()
    for addr in (new_scale, new_tracker):
        with pytest.raises(pyaclnn.HazardError, match=UNWRITTEN.format(n=4)):
            copy_out(addr, 8)


def test_amp_update_scale_writes_element_0_of_a_strided_output(session: Session) -> None:
    """A transposed (2, 2) updatedScale: its element [0, 0] is written (it was lost before: the
    kernel wrote into a copy), the rest stays unwritten."""
    s = session
    scale, tracker, found = (s.upload(a) for a in (np.array([4.0], F32), np.array([0], np.int32),
                                                   np.array([1.0], F32)))
    new_scale, new_tracker = s.malloc(16), s.malloc(4)
    transposed = acl.aclCreateTensor([2, 2], 2, acl.ACL_FLOAT, [1, 2], 0, acl.ACL_FORMAT_ND, [4], 1, new_scale)
    s.release.append(lambda: acl.aclDestroyTensor(transposed))
    s.launch("AmpUpdateScale", s.tensor(scale, (1,)), s.tensor(tracker, (1,), acl.ACL_INT32),
             s.tensor(found, (1,)), 2.0, 0.5, 1, transposed, s.tensor(new_tracker, (1,), acl.ACL_INT32))
    acl.aclrtSynchronizeStream(s.stream)
    # found_inf: torch's _amp_update_scale_ backs the scale off
    want_scale, want_tracker = torch.tensor([4.0]), torch.tensor([0], dtype=torch.int32)
    torch._amp_update_scale_(want_scale, want_tracker, torch.tensor([1.0]), 2.0, 0.5, 1)
    assert copy_out(new_scale, 4).view(F32)[0] == want_scale.item()
    with pytest.raises(pyaclnn.HazardError, match=UNWRITTEN.format(n=12)):
        copy_out(new_scale, 16)


def group_norm_backward(s: Session, n: int, mask: list[bool]) -> tuple[int, int, int]:
    """aclnnGroupNormBackward with N=n, C=2, HxW=2, group=1 and every output passed; their addresses."""
    c, hxw = 2, 2
    rng = np.random.default_rng(0)
    grad_out, x = (s.tensor(s.upload(rng.standard_normal((n, c, hxw)).astype(F32)), (n, c, hxw)) for _ in "ab")
    mean, rstd = (s.tensor(s.upload(np.full((n, 1), v, F32)), (n, 1)) for v in (0.0, 1.0))
    gamma = s.tensor(s.upload(np.ones(c, F32)), (c,))
    dx, dgamma, dbeta = s.malloc(max(n, 1) * c * hxw * 4), s.malloc(c * 4), s.malloc(c * 4)
    bools = acl.aclCreateBoolArray(mask, 3)
    s.release.append(lambda: acl.aclDestroyBoolArray(bools))
    s.launch("GroupNormBackward", grad_out, x, mean, rstd, gamma, n, c, hxw, 1, bools,
             s.tensor(dx, (n, c, hxw)), s.tensor(dgamma, (c,)), s.tensor(dbeta, (c,)))
    acl.aclrtSynchronizeStream(s.stream)
    return dx, dgamma, dbeta


def test_group_norm_outputs_the_mask_does_not_ask_for_stay_unwritten(session: Session) -> None:
    s = session
    dx, dgamma, dbeta = group_norm_backward(s, 1, [True, False, True])
    copy_out(dx, 16)
    copy_out(dbeta, 8)
    with pytest.raises(pyaclnn.HazardError, match=UNWRITTEN.format(n=8)):
        copy_out(dgamma, 8)


@pytest.mark.parametrize("session", ["Ascend950"], indirect=True)
def test_group_norm_950_empty_path_zero_fills_dgamma_and_dbeta_whatever_the_mask(session: Session) -> None:
    """N = 0 on Ascend950: dgamma and dbeta are zero-filled even when the mask does not ask (ops.md §2.2.6)."""
    _, dgamma, dbeta = group_norm_backward(session, 0, [False, False, False])
    for addr in (dgamma, dbeta):
        assert (copy_out(addr, 8).view(F32) == 0).all()


@pytest.mark.parametrize("shape, strides, offset", [((2, 3), (3, 1), 1), ((2, 3), (8, 2), 0), ((3, 2), (1, 3), 2),
                                                    ((2, 2, 2), (1, 4, 2), 0), ((4,), (-1,), 3)])
def test_written_spans_are_the_bytes_of_the_first_elements_in_row_major_order(shape, strides, offset) -> None:
    """For every count, the spans cover exactly the bytes numpy writes through the view's first
    ``count`` elements (np.ndindex order), with a contiguous base of 64 float32s."""
    itemsize, base = 4, 0x1000
    for count in range(1, int(np.prod(shape)) + 1):
        memory = np.zeros(64, F32)
        view = np.lib.stride_tricks.as_strided(memory[offset:], shape, [s * itemsize for s in strides]) \
            if min(strides) > 0 else memory[offset::-1][:shape[0]]
        for index in list(np.ndindex(*shape))[:count]:
            view[index] = 1
        want = set(np.flatnonzero(np.repeat(memory != 0, itemsize)))  # the bytes of the elements set
        desc = TensorDesc(shape, DType.FLOAT, strides, offset, 2, (64,), base)
        access = _written_bytes(desc, count)
        runs = zip(access.starts.tolist(), access.ends.tolist()) if isinstance(access, Runs) else [access]
        got = {b - base for start, end in runs for b in range(start, end)}
        assert got == want, (count, sorted(got), sorted(want))
