"""Torch tensors (and other DLPack / __array__ objects) wherever arrays go, on both backends, and
DLPack export of pyaclnn Tensors for host exchange (issue 12, point 7).

The oracle is the same call made with NumPy arrays holding the same values (ml_dtypes.bfloat16
for torch.bfloat16), and torch's own view of the memory it shares."""
from __future__ import annotations

import gc

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl

torch = pytest.importorskip("torch")

F32 = np.float32


def as_numpy(t):
    """The values of a torch CPU tensor as an ndarray (bfloat16 through its bits)."""
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return t.numpy().copy()


def out(a):
    """A function's output as an ndarray: torch tensors in give torch tensors out (test_torch_out.py)."""
    return as_numpy(a) if isinstance(a, torch.Tensor) else a


def same(a, b):
    a, b = np.asarray(out(a)), np.asarray(out(b))
    assert a.shape == b.shape and a.dtype == b.dtype
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(bits), np.ascontiguousarray(b).view(bits))


DTYPES = [torch.float32, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_functions_take_torch_tensors(backend, dtype):
    gen = torch.Generator().manual_seed(0)
    g, x, y = (torch.randn(4, 6, generator=gen).to(dtype) for _ in range(3))
    x = x.T.contiguous().T  # strided: read with its strides
    same(pyaclnn.mse_loss_backward(g, x, y[:1], "mean"),
         pyaclnn.mse_loss_backward(as_numpy(g), as_numpy(x), as_numpy(y[:1]), "mean"))

    N, C, HxW, G = 2, 4, 3, 2
    dy, xi = torch.randn(N, C, HxW, generator=gen).to(dtype), torch.randn(N, C, HxW, generator=gen).to(dtype)
    mean, rstd = torch.randn(N, G, generator=gen).to(dtype), (torch.rand(N, G, generator=gen) + 0.5).to(dtype)
    gamma = torch.randn(C, generator=gen).to(dtype)
    for a, b in zip(pyaclnn.group_norm_backward(dy, xi, mean, rstd, gamma, N, C, HxW, G),
                    pyaclnn.group_norm_backward(*map(as_numpy, (dy, xi, mean, rstd, gamma)), N, C, HxW, G)):
        same(a, b)

    lp = torch.log_softmax(torch.randn(5, 7, generator=gen), dim=1).to(dtype)
    target = torch.tensor([0, 6, 3, 3, 1])
    same(pyaclnn.cross_entropy_loss_grad(torch.tensor(1.5).to(dtype), lp, target, reduction="sum"),
         pyaclnn.cross_entropy_loss_grad(as_numpy(torch.tensor(1.5).to(dtype)), as_numpy(lp), target.numpy(),
                                         reduction="sum"))

    w = torch.rand(4, generator=gen).to(dtype)
    for a, b in zip(pyaclnn.prelu_backward(dy.reshape(2, 4, 3), xi.reshape(2, 4, 3), w),
                    pyaclnn.prelu_backward(as_numpy(dy), as_numpy(xi), as_numpy(w))):
        same(a, b)


def test_bfloat16_torch_inputs_match_torch(backend):
    """The values really are read as bfloat16 (not as 16-bit integers): compare with aten."""
    gen = torch.Generator().manual_seed(1)
    g, x, y = (torch.randn(3, 5, generator=gen, dtype=torch.float64) for _ in range(3))
    got = out(pyaclnn.mse_loss_backward(g.bfloat16(), x.bfloat16(), y.bfloat16(), "sum"))
    assert got.dtype == ml_dtypes.bfloat16
    ref = torch.ops.aten.mse_loss_backward(g.bfloat16().double(), x.bfloat16().double(), y.bfloat16().double(), 2)
    np.testing.assert_allclose(got.astype(np.float64), ref.numpy(), rtol=2 ** -7, atol=1e-6)


def test_requires_grad_tensors_are_read_as_detached(backend):
    g = torch.randn(3, 4, requires_grad=True)
    x = torch.randn(3, 4, requires_grad=True)
    y = torch.randn(3, 4)
    got = pyaclnn.mse_loss_backward(g, x, y, "none")
    same(got, pyaclnn.mse_loss_backward(g.detach().numpy(), x.detach().numpy(), y.numpy(), "none"))
    assert g.grad is None and x.grad is None and g.requires_grad  # nothing recorded, nothing changed
    t = pyaclnn.Tensor.from_numpy(x)
    try:
        same(t.numpy(), x.detach().numpy())
    finally:
        t.close()


@pytest.mark.parametrize("dtype", DTYPES + [torch.int64, torch.bool], ids=str)
def test_tensor_from_dlpack_and_from_numpy_copy_torch_tensors(backend, dtype):
    src = (torch.arange(24, dtype=torch.float32).reshape(4, 6) / 7).to(dtype)[:, 1::2]  # strided
    expect = as_numpy(src)
    with pyaclnn.Tensor.from_dlpack(src) as a, pyaclnn.Tensor.from_numpy(src) as b:
        same(a.numpy(), expect)
        same(b.numpy(), expect)
        src.zero_()  # the tensors own their memory
        same(a.numpy(), expect)
        a.copy_from(torch.ones(3, dtype=torch.float32).to(dtype))  # copy_from takes them too
        same(a.numpy(), np.ones((4, 3), expect.dtype))
    with pytest.raises(TypeError, match="__dlpack__"):
        pyaclnn.Tensor.from_dlpack([1.0, 2.0])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tensor_exports_through_dlpack_on_the_numpy_backend(use_backend, dtype):
    use_backend("numpy")
    src = (torch.arange(24, dtype=torch.float32).reshape(4, 6) / 7).to(dtype)
    with pyaclnn.Tensor.from_dlpack(src) as t:
        assert t.__dlpack_device__() == (1, 0)
        view = t.T[1:, ::2]  # a strided view with an offset
        shared = torch.from_dlpack(view)
        assert shared.dtype == dtype and torch.equal(shared, src.T[1:, ::2])
        assert shared.stride() == view.strides
        shared[0, 0] = 42  # zero copy: writes land in the tensor
        assert float(t.numpy()[0, 1]) == 42
        if dtype != torch.bfloat16:  # NumPy's DLPack importer has no bfloat16 (t.numpy() does)
            arr = np.from_dlpack(view)
            same(arr, view.numpy())
            arr[...] = 0
            assert not t.numpy()[0, 1]
        with pyaclnn.Tensor.empty((0, 3)) as empty:
            assert torch.from_dlpack(empty).shape == (0, 3)
    with pytest.raises(pyaclnn.ClosedError):
        t.__dlpack__()
    del shared
    gc.collect()


def test_tensor_dlpack_export_refused_on_a_device(emulator):
    with pyaclnn.Tensor.from_numpy(np.ones((2, 2), F32)) as t:
        assert t.__dlpack_device__() == (12, t.device.id)  # kDLExtDev: DLPack has no Ascend type
        with pytest.raises(BufferError, match=r"t\.numpy\(\)"):
            torch.from_dlpack(t)
        with pytest.raises(BufferError, match="device memory"):
            t.__dlpack__()
        # where pyaclnn reads a host array from it, the __array__ fallback downloads a copy
        from pyaclnn._objects.interop import host_array
        same(host_array(t), np.ones((2, 2), F32))
        with pytest.raises(BufferError, match="host"):  # but nothing is written into a copy
            host_array(t, in_place=True)


def test_acl_memcpy_host_sides_take_torch_tensors(backend):
    acl.aclrtSetDevice(0)
    try:
        src = torch.arange(8, dtype=torch.bfloat16) / 3
        ptr = acl.aclrtMalloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        try:
            acl.aclrtMemcpy(ptr, 16, src, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
            dst = torch.zeros(8, dtype=torch.bfloat16)
            acl.aclrtMemcpy(dst, 16, ptr, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST)  # lands in dst's memory
            assert torch.equal(dst, src)
        finally:
            acl.aclrtFree(ptr)
    finally:
        acl.aclrtResetDevice(0)


class _OnAnotherDevice:
    """A DLPack producer whose memory is not host memory (as a CUDA tensor's is not)."""

    def __init__(self, with_array: bool) -> None:
        if with_array:
            self.__array__ = lambda dtype=None, copy=None: np.arange(3, dtype=F32)

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA

    def __dlpack__(self, **kwargs):
        raise AssertionError("must not be exported")


class _ArrayLike:
    def __array__(self, dtype=None, copy=None):
        return np.array([1.0, 2.0], F32)


def test_other_devices_and_array_likes(use_backend):
    use_backend("numpy")
    with pytest.raises(BufferError, match=r"DLPack device \(2, 0\)"):
        pyaclnn.mse_loss_backward(_OnAnotherDevice(False), np.zeros(3, F32), np.zeros(3, F32))
    # with __array__ it is read through it (a host copy), as np.asarray would
    same(pyaclnn.mse_loss_backward(_OnAnotherDevice(True), np.ones(3, F32), np.zeros(3, F32), "sum"),
         np.array([0, 2, 4], F32))
    same(pyaclnn.mse_loss_backward(_ArrayLike(), np.ones(2, F32), np.zeros(2, F32), "sum"), np.array([2, 4], F32))
    acl.aclrtSetDevice(0)
    try:
        ptr = acl.aclrtMalloc(12, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        with pytest.raises(BufferError, match="host"):  # a destination copy would lose the write
            acl.aclrtMemcpy(_OnAnotherDevice(True), 12, ptr, 12, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        acl.aclrtFree(ptr)
    finally:
        acl.aclrtResetDevice(0)


def test_imported_bfloat16_memory_outlives_the_producer(use_backend):
    use_backend("numpy")
    from pyaclnn._objects.interop import host_array
    a = host_array((torch.arange(1000, dtype=torch.float32) / 8).bfloat16())
    gc.collect()
    np.testing.assert_array_equal(a, (np.arange(1000, dtype=F32) / 8).astype(ml_dtypes.bfloat16))


class _LegacyProducer:
    """A DLPack producer from before the versioned protocol (no max_version keyword)."""

    def __init__(self, t) -> None:
        self.t = t

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__()


def test_legacy_dlpack_producers_bfloat16_included(use_backend):
    use_backend("numpy")
    from pyaclnn._objects.interop import host_array
    for dtype in (torch.float32, torch.bfloat16):
        t = (torch.arange(6, dtype=torch.float32) / 3).to(dtype).reshape(2, 3)
        a = host_array(_LegacyProducer(t))
        same(a, as_numpy(t))
        same(pyaclnn.mse_loss_backward(_LegacyProducer(t), t, t * 0, "sum"),
             pyaclnn.mse_loss_backward(as_numpy(t), as_numpy(t), as_numpy(t * 0), "sum"))


# Issue 16: torch tensors are read through a converter chosen once per type (Tensor.numpy() for
# the plain ones). Each tricky kind of tensor is checked against torch's own answer on the very
# same tensor (aten handles its views, bits and grad state itself): the oracle is independent of
# how pyaclnn reads the memory.

def aten_mse(g, x, y, reduction=0):
    """torch's MSE backward on the same tensors, as a float64 ndarray (reduction 0: none)."""
    with torch.no_grad():
        return torch.ops.aten.mse_loss_backward(g.double(), x.double(), y.double(), reduction).numpy()


def views(gen, dtype):
    """Non-contiguous or offset views into one tensor's memory."""
    base = torch.randn(6, 8, generator=gen).to(dtype)
    return {"transposed": base[:6, :4].T, "stepped": base[::2, 1::2], "offset": base[1:5, 2:8],
            "expanded": base[2, :6].expand(4, 6), "negative_offset_column": base[3:, 5]}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_torch_views_and_dtypes_are_read_exactly(use_backend, dtype):
    use_backend("numpy")
    gen = torch.Generator().manual_seed(16)
    for name, x in views(gen, dtype).items():
        assert not x.is_contiguous() or x.storage_offset(), name
        g, y = torch.randn(x.shape, generator=gen).to(dtype), torch.randn(x.shape, generator=gen).to(dtype)
        got = out(pyaclnn.mse_loss_backward(g, x, y, "none"))
        assert got.dtype == as_numpy(x).dtype, name
        # the device rounds (x - y) * g * 2 once per step in dtype; aten in float64 is the value
        # the steps approximate: one rounding of dtype per step
        tol = {torch.float32: 1e-6, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]
        np.testing.assert_allclose(got.astype(np.float64), aten_mse(g, x, y), rtol=3 * tol, atol=tol, err_msg=name)
        same(got, pyaclnn.mse_loss_backward(as_numpy(g), as_numpy(x), as_numpy(y), "none"))  # and bit-exact


def test_host_array_views_torch_memory_without_a_copy():
    from pyaclnn._objects.interop import host_array
    t = torch.arange(24, dtype=torch.float32).reshape(4, 6)[1:, ::2]
    a = host_array(t)
    assert a.shape == (3, 3) and a.strides == (24, 8)
    assert a.__array_interface__["data"][0] == t.data_ptr()  # the tensor's memory itself
    t.add_(100)  # so later writes through torch are seen
    np.testing.assert_array_equal(a, t.numpy())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_requires_grad_tensors_and_parameters_are_read_detached(use_backend, dtype):
    use_backend("numpy")
    gen = torch.Generator().manual_seed(3)
    g = torch.nn.Parameter(torch.randn(3, 4, generator=gen).to(dtype))  # a torch.Tensor subclass
    x = torch.randn(4, 3, generator=gen).to(dtype).T.requires_grad_()  # strided, and a view
    y = torch.randn(3, 4, generator=gen).to(dtype) * 2  # a non-leaf without grad
    expect = pyaclnn.mse_loss_backward(as_numpy(g), as_numpy(x), as_numpy(y), "sum")
    same(pyaclnn.mse_loss_backward(g, x, y, "sum"), expect)
    with torch.no_grad():  # numpy() would take them here as they are: the same values
        same(pyaclnn.mse_loss_backward(g, x, y, "sum"), expect)
    assert g.requires_grad and g.grad is None and x.grad is None
    ref = aten_mse(g.detach(), x.detach(), y, 2)
    np.testing.assert_allclose(expect.astype(np.float64), ref, rtol=0.05 if dtype == torch.bfloat16 else 1e-6)


def test_lazy_negative_views_are_read_as_torch_sees_them(backend):
    """``z.conj().imag`` is a view whose neg bit torch applies lazily; its DLPack export carries
    the memory without the bit, so reading the export gives the values un-negated."""
    z = torch.complex(torch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -6.0]]), torch.tensor([[2.0, 5.0, -1.0], [3.0, -0.25, 8.0]]))
    neg = z.conj().imag
    assert neg.is_neg() and torch.equal(neg, -z.imag)
    g, y = torch.full((2, 3), 0.5), torch.ones(2, 3)
    got = pyaclnn.mse_loss_backward(g, neg, y, "none")
    np.testing.assert_array_equal(got, aten_mse(g, neg, y).astype(np.float32))
    t = pyaclnn.Tensor.from_numpy(neg)
    try:
        np.testing.assert_array_equal(t.numpy(), neg.resolve_neg().numpy())
    finally:
        t.close()


def test_lazy_conjugate_views_are_read_as_torch_sees_them(backend):
    z = torch.tensor([1 + 2j, 3 - 4j, -5 + 0.5j], dtype=torch.complex64)
    c = z.conj()
    assert c.is_conj()
    with pyaclnn.Tensor.from_numpy(c) as t:
        np.testing.assert_array_equal(t.numpy(), np.array([1 - 2j, 3 + 4j, -5 - 0.5j], np.complex64))
    from pyaclnn._objects.interop import host_array
    np.testing.assert_array_equal(host_array(c), c.resolve_conj().numpy())
    assert c.is_conj() and z[0] == 1 + 2j  # the caller's tensors are left as they were


def test_lazy_views_are_refused_as_copy_destinations(backend):
    """A destination pyaclnn writes into must be the tensor's memory; a lazy view's values are a copy."""
    acl.aclrtSetDevice(0)
    try:
        ptr = acl.aclrtMalloc(12, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        try:
            z = torch.zeros(3, dtype=torch.complex64)
            with pytest.raises(BufferError, match="negative view"):
                acl.aclrtMemcpy(z.conj().imag, 12, ptr, 12, acl.ACL_MEMCPY_DEVICE_TO_HOST)
            dst = torch.zeros(3)
            acl.aclrtMemcpy(ptr, 12, torch.tensor([1.0, 2.0, 3.0]), 12, acl.ACL_MEMCPY_HOST_TO_DEVICE)
            acl.aclrtMemcpy(dst, 12, ptr, 12, acl.ACL_MEMCPY_DEVICE_TO_HOST)  # a plain one lands in place
            assert dst.tolist() == [1.0, 2.0, 3.0]
        finally:
            acl.aclrtFree(ptr)
    finally:
        acl.aclrtResetDevice(0)


def test_tensors_on_another_torch_device_are_a_clear_error(use_backend):
    """CUDA/NPU memory is not host memory: a BufferError saying so and what to pass (the meta
    device stands in here: this machine has no accelerator)."""
    use_backend("numpy")
    x = torch.empty(2, 3, device="meta")
    for call in (lambda: pyaclnn.mse_loss_backward(x, x, x), lambda: pyaclnn.Tensor.from_numpy(x)):
        with pytest.raises(BufferError, match=r"on meta.*not the CPU.*\.cpu\(\)"):
            call()


def test_read_only_inputs(use_backend):
    """Memory its owner marked read-only is read, never written: a torch tensor over a read-only
    array, and a DLPack 1.x export flagged read-only (NumPy's importer keeps the flag)."""
    use_backend("numpy")
    frozen = np.arange(6, dtype=F32).reshape(2, 3)
    frozen.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        t = torch.from_numpy(frozen)

    class Exporter:  # a DLPack producer that is neither torch nor NumPy
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kwargs):
            return self.a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    from pyaclnn._objects.interop import host_array
    assert not host_array(Exporter(frozen)).flags.writeable
    ones = torch.ones(2, 3)
    for x in (t, Exporter(frozen)):
        got = pyaclnn.mse_loss_backward(ones, x, ones * 0, "none")
        np.testing.assert_array_equal(got, aten_mse(ones, torch.from_numpy(frozen.copy()), ones * 0).astype(F32))
    np.testing.assert_array_equal(frozen, np.arange(6, dtype=F32).reshape(2, 3))


def test_each_call_reads_the_tensor_as_it_is_now(use_backend):
    """What is kept per type is how to read it, never what was read: values written and shapes
    changed in place between two calls are seen by the second."""
    use_backend("numpy")
    g, x, y = torch.ones(2, 3), torch.arange(6, dtype=torch.float32).reshape(2, 3), torch.zeros(2, 3)
    first = pyaclnn.mse_loss_backward(g, x, y, "none")
    np.testing.assert_array_equal(first, aten_mse(g, x, y).astype(F32))
    x.mul_(-3)
    np.testing.assert_array_equal(pyaclnn.mse_loss_backward(g, x, y, "none"), aten_mse(g, x, y).astype(F32))
    for t in (g, x, y):
        t.t_()  # in place: the same tensor objects, now (3, 2) views
    second = pyaclnn.mse_loss_backward(g, x, y, "none")
    assert second.shape == (3, 2)
    np.testing.assert_array_equal(second, aten_mse(g, x, y).astype(F32))


def test_other_dlpack_producers_bfloat16_included(use_backend):
    """A producer that is neither torch nor NumPy (here forwarding a torch tensor's versioned
    export): NumPy's importer where it can, the bfloat16 re-tagging where it cannot."""
    use_backend("numpy")

    class Forwarder:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kwargs):
            return self.t.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    from pyaclnn._objects.interop import host_array
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        t = (torch.arange(12, dtype=torch.float32) / 7).to(dtype).reshape(3, 4)[:, 1::2]
        a = host_array(Forwarder(t))
        same(a, as_numpy(t))
        assert a.__array_interface__["data"][0] == t.data_ptr()  # a view, not a copy
        same(pyaclnn.mse_loss_backward(Forwarder(t), Forwarder(t), Forwarder(t * 0), "sum"),
             pyaclnn.mse_loss_backward(as_numpy(t), as_numpy(t), as_numpy(t * 0), "sum"))


def test_tensors_changed_in_place_between_calls_are_read_anew(use_backend, torch_view):
    """Nothing read from a tensor is kept between calls (issue 16): a cache of views per tensor
    object, or one checking only some of its metadata, gives stale values here (whichever way
    a repeated call views the tensors). Between calls
    the same tensor object gets other memory (``set_``), the same memory negated or re-typed
    (``.data =``: same pointer, shape and strides), a smaller shape (``resize_``), and grad."""
    use_backend("numpy")
    g, y = torch.ones(2, 3), torch.zeros(2, 3)
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)

    def check():
        np.testing.assert_array_equal(pyaclnn.mse_loss_backward(g, x, y, "none"), aten_mse(g, x, y).astype(F32))

    check()
    x.set_(torch.full((2, 3), 7.0))  # another storage, the same shape, strides and dtype
    check()
    ptr = x.data_ptr()
    x.data = torch._neg_view(x)  # the same memory, now read negated by torch
    assert x.is_neg() and x.data_ptr() == ptr and x.shape == (2, 3)
    check()
    x.data = x.resolve_neg()
    x.requires_grad_()
    check()
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    check()
    x.resize_(3)  # smaller: the same storage, another shape
    assert x.shape == (3,)
    check()
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    check()
    ptr = x.data_ptr()
    x.data = x.view(torch.int32)  # the same memory, shape and strides, another dtype: refused now
    assert x.data_ptr() == ptr and x.shape == (2, 3) and x.stride() == (3, 1)
    with pytest.raises(pyaclnn.AclnnParamInvalidError, match="int32"):
        pyaclnn.mse_loss_backward(g, x, y, "none")


@pytest.mark.parametrize("shape", [(), (0, 3)], ids=["0-d", "zero-size"])
def test_0d_and_zero_size_torch_inputs(backend, shape):
    gen = torch.Generator().manual_seed(5)
    g, x, y = (torch.randn(shape, generator=gen) for _ in range(3))
    got = out(pyaclnn.mse_loss_backward(g, x, y, "none"))
    assert got.shape == shape and got.dtype == F32
    np.testing.assert_array_equal(got, aten_mse(g, x, y).astype(F32))
    same(got, pyaclnn.mse_loss_backward(g.numpy(), x.numpy(), y.numpy(), "none"))


def test_zero_tensors_are_read_as_zeros(backend):
    """autograd's lazy zeros (``torch._efficientzerotensor``) have no memory behind them:
    ``numpy()`` refuses them and their DLPack export points at nothing. They read as zeros, as
    torch sees them; as a destination pyaclnn would write into, they are a BufferError."""
    g, x = torch.full((2, 3), 0.5), torch.arange(6, dtype=torch.float32).reshape(2, 3)
    for dtype in (torch.float32, torch.bfloat16):
        zeros = torch._efficientzerotensor((2, 3), dtype=dtype)
        assert zeros._is_zerotensor()
        same(pyaclnn.mse_loss_backward(g.to(dtype), x.to(dtype), zeros, "none"),
             pyaclnn.mse_loss_backward(as_numpy(g.to(dtype)), as_numpy(x.to(dtype)),
                                       as_numpy(torch.zeros(2, 3, dtype=dtype)), "none"))
    acl.aclrtSetDevice(0)
    try:
        ptr = acl.aclrtMalloc(24, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        try:
            with pytest.raises(BufferError, match="ZeroTensor"):
                acl.aclrtMemcpy(torch._efficientzerotensor((6,)), 24, ptr, 24, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        finally:
            acl.aclrtFree(ptr)
    finally:
        acl.aclrtResetDevice(0)


class _TextTensor(torch.Tensor):
    """A torch.Tensor subclass whose numpy() answers text: its arrays are checked like any other's."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.numpy:
            return np.array([["a", "b", "c"]] * 2)
        return super().__torch_function__(func, types, args, kwargs or {})


def test_only_plain_torch_tensors_skip_the_dtype_check(use_backend):
    """torch.Tensor and nn.Parameter go straight from numpy() to the call (their arrays hold
    numbers); a subclass may answer anything, so its arrays are checked every call."""
    use_backend("numpy")
    from pyaclnn._objects.interop import always_numbers
    assert always_numbers(torch.Tensor) and always_numbers(torch.nn.Parameter)
    assert not always_numbers(_TextTensor) and not always_numbers(np.ndarray)
    ones = torch.ones(2, 3)
    text = torch.ones(2, 3).as_subclass(_TextTensor)
    for _ in range(2):  # the first sight of the type, then its kept converter
        with pytest.raises(TypeError, match="input must be a NumPy array .* of numbers, got an array of dtype <U1"):
            pyaclnn.mse_loss_backward(ones, text, ones, "none")


# -- repeated calls: torch tensors viewed inline, with the memo of their arrays (issue 16) -----------

@pytest.fixture(params=["numpy() untested", "after a refusal"])
def torch_view(request, monkeypatch):
    """Both ways functional.call views a plain torch tensor: numpy() itself, and _interop's reader
    (which tests for grad and bfloat16 first), where it goes after numpy() refused a tensor."""
    from pyaclnn._functions import functional as _functional
    from pyaclnn._objects.interop import converter
    pyaclnn.mse_loss_backward(torch.ones(1), torch.ones(1), torch.ones(1))  # torch seen: call knows its types
    view = torch.Tensor.numpy if request.param == "numpy() untested" else converter(torch.Tensor)
    monkeypatch.setattr(_functional, "_TORCH_VIEW", view)
    return view


def _count_arg_calls(monkeypatch):
    """The calls of _arg (the whole path) from the NumPy-in/out functions (functional.call)."""
    from pyaclnn._functions import functional
    calls = []
    real = functional._arg
    monkeypatch.setattr(functional, "_arg", lambda x, *a: calls.append(x) or real(x, *a))
    return calls


def test_a_repeat_on_torch_tensors_takes_the_memo_of_their_arrays(use_backend, torch_view, monkeypatch):
    """A call on torch tensors whose arrays have the metadata of a call that worked (with
    ndarrays or torch tensors) views them inline and runs that memo: no _arg, no new memo.
    Mixed with ndarrays, None and plain values too. Fails when torch tensors are keyed apart
    from their arrays, or converted through the whole path every call."""
    use_backend("numpy")
    from pyaclnn._objects import backend as _backend
    calls = _count_arg_calls(monkeypatch)
    gen = torch.Generator().manual_seed(7)
    g, x, y = (torch.randn(4, 6, generator=gen) for _ in range(3))
    x = x.T.contiguous().T  # strided
    expect = pyaclnn.mse_loss_backward(g.numpy(), x.numpy(), y.numpy(), "sum")
    memos = len(_backend.current().call_memos)
    calls.clear()
    same(pyaclnn.mse_loss_backward(g, x, y, "sum"), expect)
    same(pyaclnn.mse_loss_backward(g, x.numpy(), y, "sum"), expect)  # mixed
    assert calls == [] and len(_backend.current().call_memos) == memos

    N, C, HxW, G = 2, 4, 3, 2
    dy, xi = torch.randn(N, C, HxW, generator=gen), torch.randn(N, C, HxW, generator=gen)
    mean, rstd = torch.randn(N, G, generator=gen), torch.rand(N, G, generator=gen) + 0.5
    args = (dy, xi, mean, rstd, None, N, C, HxW, G, (True, False, True))  # None, ints and a tuple among them
    first = pyaclnn.group_norm_backward(*args)
    calls.clear()
    again = pyaclnn.group_norm_backward(*args)
    assert calls == []
    for a, b in zip(first, again):
        assert (a is None) == (b is None)
        if a is not None:
            same(a, b)
    with pytest.raises(TypeError, match="output_mask entries must be bools"):  # (1, 0, 1) == (True, False, True)
        pyaclnn.group_norm_backward(*args[:9], (1, 0, 1))

    lp = torch.log_softmax(torch.randn(5, 7, generator=gen), dim=1)
    target = torch.tensor([0, 6, 3, 3, 1])
    first = pyaclnn.cross_entropy_loss_grad(torch.tensor(1.5), lp, target, reduction="sum")
    calls.clear()
    same(pyaclnn.cross_entropy_loss_grad(torch.tensor(1.5), lp, target, reduction="sum"), first)
    assert calls == []


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_a_repeat_reads_what_numpy_refuses_as_the_whole_path_does(backend, torch_view, dtype):
    """After a call that left a memo, each tensor numpy() refuses (requiring grad, a Parameter,
    bfloat16, a lazy negative view, a ZeroTensor) is read as the whole path reads it, on both
    backends; another device is its BufferError. Fails when call lets numpy()'s refusal
    through, or runs the memo on anything but the arrays."""
    g, x = torch.full((2, 3), 0.5).to(dtype), torch.arange(6, dtype=torch.float32).reshape(2, 3).to(dtype)
    y = torch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -6.0]]).to(dtype)
    expect = pyaclnn.mse_loss_backward(as_numpy(g), as_numpy(x), as_numpy(y), "none")
    same(pyaclnn.mse_loss_backward(g, x, y, "none"), expect)
    same(pyaclnn.mse_loss_backward(g, x.clone().requires_grad_(), y, "none"), expect)
    same(pyaclnn.mse_loss_backward(g, torch.nn.Parameter(x.clone()), y, "none"), expect)
    if dtype == torch.float32:
        z = torch.complex(torch.zeros(2, 3), -y).conj()  # z.imag: a lazy negative view of -y, reading y
        assert z.imag.is_neg()
        same(pyaclnn.mse_loss_backward(g, x, z.imag, "none"), expect)
    zeros = torch._efficientzerotensor((2, 3), dtype=dtype)
    same(pyaclnn.mse_loss_backward(g, x, zeros, "none"),
         pyaclnn.mse_loss_backward(as_numpy(g), as_numpy(x), np.zeros((2, 3), as_numpy(g).dtype), "none"))
    with pytest.raises(BufferError, match="on meta"):
        pyaclnn.mse_loss_backward(g, torch.empty(2, 3, dtype=dtype, device="meta"), y, "none")


def test_after_numpy_refuses_a_tensor_later_ones_are_tested_first(use_backend, torch_view):
    """numpy()'s refusals are C++ exceptions of ~10 us: after one, call views tensors
    through _interop's reader, which tests for grad and bfloat16 before numpy()."""
    use_backend("numpy")
    from pyaclnn._functions import functional as _functional
    from pyaclnn._objects.interop import converter
    x = torch.ones(2, 3)
    pyaclnn.mse_loss_backward(x, x, x, "none")
    pyaclnn.mse_loss_backward(x, x, x.clone().requires_grad_(), "none")
    assert _functional._TORCH_VIEW is converter(torch.Tensor)


@pytest.mark.parametrize("shape", [(), (0, 3)], ids=["0-d", "zero-size"])
def test_a_repeat_on_0d_and_zero_size_torch_tensors(use_backend, torch_view, shape):
    use_backend("numpy")
    gen = torch.Generator().manual_seed(5)
    g, x, y = (torch.randn(shape, generator=gen) for _ in range(3))
    for _ in range(2):
        got = pyaclnn.mse_loss_backward(g, x, y, "none")
        assert got.shape == shape
        np.testing.assert_array_equal(got, aten_mse(g, x, y).astype(F32))
