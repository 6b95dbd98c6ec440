"""Output bytes an operator's kernel never writes stay unwritten on the reference, as on a device.

A launch marks written only what its kernel writes (an op spec's ``written``, recorded in phase 1):
where the device leaves an output, or part of one, as it was, a later kernel or device-to-device
copy reading it reads stale bytes there, so the reference names it (the uninitialised-read
HazardError), while the written part reads clean. The cases, from the sources cited in each spec:

- aclnnForeachMulScalarList: out[i]'s first numel(x[i]) elements; on A2/A3 (Ascend910B) an out
  list longer than x is accepted and its extra tensors are never written;
- aclnnAmpUpdateScale: element 0 of each output (the kernel's GlobalTensors hold 1 element);
- aclnnGroupNormBackward: an output the mask does not ask for is never written, except the
  zero-filled dgamma/dbeta of Ascend950's empty-tensor path;
- any strided output: the bytes of its elements, not the gaps between them (a device's kernel
  writes element by element); a strided input is read the same way, so its gaps may be stale.

Values are checked against torch (foreach, MseLossBackward's autograd) and the documented zeros
(ops.md §2.2.6); the written bytes against NumPy writing through the same strided view.
"""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyaclnn
from conftest import on_device_0
from pyaclnn import acl
from pyaclnn._numpy.memory import Access, AddressSpace, Elements
from pyaclnn._numpy.records import TensorDesc
from pyaclnn._numpy.footprint import written_bytes
from pyaclnn._core.strides import dense
from pyaclnn.dtypes import DType

torch = pytest.importorskip("torch")  # the oracle

F32 = np.float32
H2D, D2H, D2D = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST, acl.ACL_MEMCPY_DEVICE_TO_DEVICE
UNWRITTEN = r"reads \[0x[0-9a-f]+, \+{n}\), device memory never written since aclrtMalloc"


def gap_at(addr: int, n: int) -> str:
    """The uninitialised-read message naming the first unwritten bytes: ``n`` at ``addr``."""
    return rf"reads \[{addr:#x}, \+{n}\), device memory never written since aclrtMalloc"


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
        got = {b - base for b in bytes_of(written_bytes(desc, count))}
        assert got == want, (count, sorted(got), sorted(want))


# -- strided tensors: the bytes of their elements, exactly -------------------------------------------
def strided(s: Session, addr: int, shape: tuple[int, ...], strides: tuple[int, ...], offset: int = 0,
            storage: int = 16) -> object:
    """A float32 aclTensor view of ``storage`` elements at ``addr`` (strides in elements)."""
    t = acl.aclCreateTensor(list(shape), len(shape), acl.ACL_FLOAT, list(strides), offset, acl.ACL_FORMAT_ND,
                            [storage], 1, addr)
    s.release.append(lambda: acl.aclDestroyTensor(t))
    return t


G4, X4, Y4 = (np.random.default_rng(i).standard_normal((4, 2)).astype(F32) for i in range(3))


def mse_grad(g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """torch's gradient of mse_loss(x, y, reduction="none") for the upstream gradient g."""
    xt = torch.from_numpy(x.copy()).requires_grad_()
    torch.nn.functional.mse_loss(xt, torch.from_numpy(y), reduction="none").backward(torch.from_numpy(g))
    return xt.grad.numpy()


def even_columns(s: Session, base: int) -> object:
    """aclnnMseLossBackward queued with its output the even columns of a (4, 4) float32 at ``base``."""
    g, x, y = (s.tensor(s.upload(a), (4, 2)) for a in (G4, X4, Y4))
    out = strided(s, base, (4, 2), (4, 2))
    s.launch("MseLossBackward", g, x, y, 0, out)
    return out


def read_kernel(s: Session, t: object, shape: tuple[int, ...]) -> int:
    """aclnnMseLossBackward reading ``t`` (as g, x and y) into a fresh output; its address."""
    res = s.malloc(4 * int(np.prod(shape)))
    s.launch("MseLossBackward", t, t, t, 0, s.tensor(res, shape))
    return res


def download(addr: int, nbytes: int) -> np.ndarray:
    host = np.empty(nbytes // 4, F32)
    acl.aclrtMemcpy(host, nbytes, addr, nbytes, D2H)
    return host


def test_a_strided_outputs_gaps_stay_unwritten(session: Session) -> None:
    """A kernel writing the even columns of a fresh (4, 4) leaves the odd ones stale: a kernel
    reading the first 3 columns reads element [0, 1] unwritten, queued right behind the write
    (which fills only its elements) or after it ran; a copy of the whole base too."""
    s = session
    base = s.malloc(64)
    even_columns(s, base)
    cols3 = strided(s, base, (4, 3), (4, 1))
    # the launch is two helpers deep: both callers are named, this test's line last
    with pytest.raises(pyaclnn.HazardError, match=r"aclnnMseLossBackward at test_written.py:\d+ \(called from "
                                                  r"test_written.py:\d+, test_written.py:\d+\) "
                                                  + gap_at(base + 4, 4)):
        read_kernel(s, cols3, (4, 3))
    acl.aclrtSynchronizeStream(s.stream)
    with pytest.raises(pyaclnn.HazardError, match=gap_at(base + 4, 4)):
        read_kernel(s, cols3, (4, 3))
    with pytest.raises(pyaclnn.HazardError, match="aclrtMemcpy at .*" + gap_at(base + 4, 4)):
        copy_out(base, 64)


def test_reading_what_a_strided_output_wrote_is_no_hazard(session: Session) -> None:
    """The written view itself (and its first element alone) reads clean, with torch's values;
    a transposed input whose elements are all written is one span, read clean too."""
    s = session
    base = s.malloc(64)
    even_columns(s, base)
    res = read_kernel(s, strided(s, base, (4, 2), (4, 2)), (4, 2))  # queued behind the write
    acl.aclrtSynchronizeStream(s.stream)
    written = mse_grad(G4, X4, Y4)
    np.testing.assert_allclose(download(base, 64).reshape(4, 4)[:, ::2], written, rtol=1e-6)
    np.testing.assert_allclose(download(res, 32).reshape(4, 2), mse_grad(written, written, written), rtol=1e-6)
    copy_out(base, 4)
    with pytest.raises(pyaclnn.HazardError, match=gap_at(base + 4, 4)):
        copy_out(base, 8)
    full = s.upload(np.arange(16, dtype=F32))
    read_kernel(s, strided(s, full, (4, 4), (1, 4)), (4, 4))


def test_gaps_written_by_earlier_copies_read_clean(session: Session) -> None:
    """The odd columns copied in (one H2D copy per element) before the kernel writes the even
    ones: all of the base is written, and a kernel reads it whole with the values of both; with
    one of those copies left out, that element is what it names."""
    s = session
    base = s.malloc(64)
    odd = np.arange(8, dtype=F32).reshape(4, 2) + 100
    for r in range(4):
        for c in range(2):
            if (r, c) != (3, 0):
                acl.aclrtMemcpy(base + (4 * r + 2 * c + 1) * 4, 4, odd[r, c:c + 1], 4, H2D)
    even_columns(s, base)
    whole = strided(s, base, (4, 4), (4, 1))
    with pytest.raises(pyaclnn.HazardError, match=gap_at(base + 13 * 4, 4)):  # element [3, 1]
        read_kernel(s, whole, (4, 4))
    acl.aclrtSynchronizeStream(s.stream)  # (a host write inside a queued output's span is a race)
    acl.aclrtMemcpy(base + 13 * 4, 4, odd[3, 0:1], 4, H2D)
    res = read_kernel(s, whole, (4, 4))
    acl.aclrtSynchronizeStream(s.stream)
    want = np.empty((4, 4), F32)
    want[:, ::2], want[:, 1::2] = mse_grad(G4, X4, Y4), odd
    np.testing.assert_allclose(download(base, 64).reshape(4, 4), want, rtol=1e-6)
    np.testing.assert_allclose(download(res, 64).reshape(4, 4), mse_grad(want, want, want), rtol=1e-6)


def test_a_copy_of_a_strided_write_keeps_its_gaps_unwritten(session: Session,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """As a device (PYACLNN_HAZARDS=off) a device-to-device copy of the base carries the stale
    odd columns along: in the copy they stay unwritten, its even columns are written."""
    s = session
    base, dst = s.malloc(64), s.malloc(64)
    acl.aclrtMemcpy(dst, 64, np.zeros(16, F32), 64, H2D)  # written whole before the copy
    even_columns(s, base)
    acl.aclrtSynchronizeStream(s.stream)
    monkeypatch.setenv("PYACLNN_HAZARDS", "off")
    acl.aclrtMemcpy(dst, 64, base, 64, D2D)
    monkeypatch.setenv("PYACLNN_HAZARDS", "raise")
    copy_out(dst, 4)
    with pytest.raises(pyaclnn.HazardError, match=gap_at(dst + 4, 4)):
        copy_out(dst, 64)
    with pytest.raises(pyaclnn.HazardError, match=gap_at(dst + 12, 4)):
        copy_out(dst + 8, 8)
    read_kernel(s, strided(s, dst, (4, 2), (4, 2)), (4, 2))  # the copied elements: written


def test_a_partly_written_strided_output_of_many_runs_is_exact(session: Session) -> None:
    """ForeachMulScalarList with x of 100 elements and out every other float of 260 (130
    elements): its first 100 elements are written, 100 runs apart; the gaps between them and the
    last 30 elements stay unwritten (NumPy writing the same view says which bytes)."""
    s = session
    x = np.arange(100, dtype=F32) - 50
    xs = acl.aclCreateTensorList([s.tensor(s.upload(x), (100,), owned=False)], 1)
    scalars = acl.aclCreateScalarList([acl.aclCreateScalar(2.0, acl.ACL_FLOAT)], 1)
    out_addr = s.malloc(260 * 4)
    out = acl.aclCreateTensor([130], 1, acl.ACL_FLOAT, [2], 0, acl.ACL_FORMAT_ND, [260], 1, out_addr)
    outs = acl.aclCreateTensorList([out], 1)
    s.release += [lambda: acl.aclDestroyTensorList(xs), lambda: acl.aclDestroyScalarList(scalars),
                  lambda: acl.aclDestroyTensorList(outs)]
    s.launch("ForeachMulScalarList", xs, scalars, outs)
    acl.aclrtSynchronizeStream(s.stream)
    np.testing.assert_array_equal(download(out_addr, 800)[::2], torch.mul(torch.from_numpy(x), 2.0).numpy())
    copy_out(out_addr + 99 * 8, 4)  # the last element written
    for gap in (out_addr + 4, out_addr + 97 * 8 + 4, out_addr + 100 * 8):
        with pytest.raises(pyaclnn.HazardError, match=gap_at(gap, 4)):
            copy_out(gap, 4)
    model = np.zeros(260, F32)
    model[::2][:130][:100] = 1  # the elements the kernel writes, through the same view
    want = set(np.flatnonzero(np.repeat(model == 0, 4)))  # unwritten bytes
    memory = pyaclnn._objects.backend.current().runtime.memory
    assert {b for b in range(260 * 4) if memory.unwritten((out_addr + b, out_addr + b + 1))} == want


# -- the pieces: the bytes of strided tensors and the written set, against brute force -------------
def bytes_of(access: Access) -> set[int]:
    """The addresses an access names: a span's, or each box's ``first + sum(i_k * stride_k)``
    over every index (a plain loop)."""
    if not isinstance(access, Elements):
        return set(range(*access))
    got = set()
    for first, dims in access.boxes:
        for index in np.ndindex(*(d for _, d in dims)):
            got.add(first + sum(i * s for i, (s, _) in zip(index, dims)))
    assert min(got) == access.start and max(got) == access.end - 1
    return got


DTYPES = {1: DType.INT8, 2: DType.FLOAT16, 4: DType.FLOAT, 8: DType.INT64}  # by itemsize
layouts = st.integers(0, 4).flatmap(lambda nd: st.tuples(st.lists(st.integers(1, 4), min_size=nd, max_size=nd),
                                                          st.lists(st.integers(-6, 6), min_size=nd, max_size=nd)))


def offsets(shape: tuple[int, ...], strides: tuple[int, ...]) -> list[int]:
    """The element offsets of a view in np.ndindex (row-major) order."""
    return [sum(i * s for i, s in zip(ix, strides)) for ix in np.ndindex(*shape)]


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(layout=layouts, itemsize=st.sampled_from([1, 2, 4, 8]), data=st.data())
def test_the_bytes_of_a_strided_tensor_are_those_numpy_indexes(layout, itemsize, data) -> None:
    """All elements, or the first ``count`` in np.ndindex order: the access names exactly their
    bytes; ``dense`` says whether they fill the extent."""
    shape, strides = tuple(layout[0]), tuple(layout[1])
    numel = int(np.prod(shape))
    count = data.draw(st.one_of(st.none(), st.integers(1, numel)))
    every = offsets(shape, strides)
    first = 1000 * itemsize  # the view's first element, with room below it for negative strides
    want = {first + o * itemsize + k for o in every[:numel if count is None else count] for k in range(itemsize)}
    desc = TensorDesc(shape, DTYPES[itemsize],
                      strides, 1000, len(shape), (4000,), 0)
    if count is None and strides == tuple(np.cumprod((1, *shape[:0:-1]))[::-1]):
        return  # (contiguous: the launch takes its span, never asks)
    assert bytes_of(written_bytes(desc, count)) == want
    unique = sorted(set(every))
    assert dense(shape, strides) == (len(unique) == numel and unique[-1] - unique[0] + 1 == numel)


SIZE = 96  # bytes
spans = st.tuples(st.integers(0, SIZE - 1), st.integers(1, SIZE)).map(lambda t: (t[0], max(t[0] + 1, t[1])))
small_layouts = st.integers(1, 3).flatmap(
    lambda nd: st.tuples(st.lists(st.integers(1, 4), min_size=nd, max_size=nd),
                         st.lists(st.integers(-3, 3), min_size=nd, max_size=nd), st.sampled_from(sorted(DTYPES)))
).filter(lambda l: max(offsets(tuple(l[0]), tuple(l[1]))) - min(offsets(tuple(l[0]), tuple(l[1]))) < SIZE // l[2])


@st.composite
def tensors(draw) -> tuple[int, tuple[int, ...], tuple[int, ...], int, int | None]:
    """A view inside the SIZE bytes: (offset in elements, shape, strides, itemsize, count)."""
    shape, strides, itemsize = draw(small_layouts)
    every = offsets(tuple(shape), tuple(strides))
    offset = draw(st.integers(-min(every), SIZE // itemsize - 1 - max(every)))
    return offset, tuple(shape), tuple(strides), itemsize, draw(st.one_of(st.none(), st.integers(1, len(every))))


def elements(base: int, tensor) -> tuple[Access, np.ndarray]:
    """The access of a launch to ``tensor`` at ``base``, and its bytes as a model mask (from the
    offsets NumPy's order gives, not from the access)."""
    offset, shape, strides, itemsize, count = tensor
    desc = TensorDesc(shape, DTYPES[itemsize], strides, offset, len(shape), (SIZE // itemsize,), base)
    model = np.zeros(SIZE, bool)
    for o in offsets(shape, strides)[:count]:
        model[(offset + o) * itemsize:(offset + o + 1) * itemsize] = True
    return written_bytes(desc, count if count is not None else int(np.prod(shape))), model


def first_run(mask: np.ndarray, base: int) -> tuple[int, int] | None:
    """The first run of True in ``mask`` (a plain loop), as addresses from ``base``."""
    at = [i for i, m in enumerate(mask.tolist()) if m]
    if not at:
        return None
    end = at[0]
    while end < mask.size and mask[end]:
        end += 1
    return base + at[0], base + end


steps = st.one_of(st.tuples(st.just("span"), spans), st.tuples(st.just("elements"), tensors()),
                  st.tuples(st.just("copy"), st.tuples(st.integers(0, SIZE - 1), st.integers(0, SIZE - 1),
                                                       st.integers(1, SIZE))))


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(program=st.lists(steps, max_size=12), query=spans, probe=tensors(),
       later=st.lists(st.one_of(spans, tensors()), max_size=3))
def test_the_written_set_is_a_set_of_bytes(program, query, probe, later) -> None:
    """mark_written, mark_elements (a strided tensor's) and copy_written against a byte-per-byte
    model of one allocation; unwritten then names the model's first unwritten run of a span or of
    a strided tensor's elements, also counting what queued tasks will write (``later``)."""
    space = AddressSpace()
    base = space.allocate(SIZE, "device", "test")
    model = np.zeros(SIZE, bool)
    for kind, arg in program:
        if kind == "span":
            space.mark_written(base + arg[0], base + arg[1])
            model[arg[0]:arg[1]] = True
        elif kind == "elements":
            access, bits = elements(base, arg)
            if isinstance(access, Elements):
                space.mark_elements(access)
            else:  # (a contiguous tensor's first elements: a span)
                space.mark_written(*access)
            model |= bits
        else:
            dst, src, n = arg
            n = min(n, SIZE - dst, SIZE - src)
            space.copy_written(base + dst, base + src, n)
            model[dst:dst + n] = model[src:src + n].copy()
    queried = np.zeros(SIZE, bool)
    queried[query[0]:query[1]] = True
    assert space.unwritten((base + query[0], base + query[1])) == first_run(queried & ~model, base)
    access, bits = elements(base, probe)
    assert space.unwritten(access) == first_run(bits & ~model, base)
    queued, will = [], model.copy()
    for item in later:
        if isinstance(item[0], int) and len(item) == 2:
            queued.append((base + item[0], base + item[1]))
            will[item[0]:item[1]] = True
        else:
            a, b = elements(base, item)
            queued.append(a)
            will |= b
    assert space.unwritten((base + query[0], base + query[1]), lambda _: queued) == first_run(queried & ~will, base)
    assert space.unwritten(access, lambda _: queued) == first_run(bits & ~will, base)


@settings(max_examples=200, derandomize=True, deadline=None, database=None)
@given(written=st.one_of(st.none(), spans), query=spans, later=st.lists(spans, max_size=3))
def test_one_written_run_is_checked_without_a_mask(written, query, later) -> None:
    """The usual case, memory written in one run (or not at all) and spans read, queued writes
    counted: the model's first unwritten run, and no mask made for it."""
    space = AddressSpace()
    base = space.allocate(SIZE, "device", "test")
    will = np.zeros(SIZE, bool)
    if written is not None:
        space.mark_written(base + written[0], base + written[1])
        will[written[0]:written[1]] = True
    for s, e in later:
        will[s:e] = True
    queried = np.zeros(SIZE, bool)
    queried[query[0]:query[1]] = True
    got = space.unwritten((base + query[0], base + query[1]), lambda _: [(base + s, base + e) for s, e in later])
    assert got == first_run(queried & ~will, base)
    assert space.find(base).mask is None
