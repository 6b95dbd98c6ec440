"""aclnnCat on the NumPy reference: against torch.cat, the CANN page's sample, the statuses of
aclnn_cat.cpp in order, the hazard checks on the tensor list's members, and randomised calls
bit-exact against the C emulator (tests/emulator/src/emu_ops_math.c) with the same statuses."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from conftest import outcome
from pyaclnn import acl
from pyaclnn.ops import samples as _samples
from pyaclnn._spec import TensorMeta
from pyaclnn.dtypes import DType
from pyaclnn.ops.cat import spec as cat_spec
from helpers.data import random_array

torch = pytest.importorskip("torch")

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.float32
OK = None


def cat(tensors, dim, out_dtype=None, out_shape=None, out=None):
    """aclnnCat through pyaclnn.Op on the active backend: the out array, or the AclError raised."""
    if out is None:
        full = [t for t in tensors if t is not None and t.shape != (0,)]
        if out_shape is None:
            out_shape = np.concatenate([np.zeros(t.shape, F32) for t in full], axis=dim).shape
        out = np.zeros(out_shape, out_dtype or np.result_type(*full))
    try:
        with pyaclnn.Op("Cat", list(tensors), dim, out) as op:
            op.run()
            return op["out"].numpy()
    except pyaclnn.AclError as exc:
        return exc


def torch_cat(tensors, dim, out_dtype):
    """torch.cat (its type promotion is PromoteType's), cast to out's dtype."""
    ts = [torch.from_numpy(np.ascontiguousarray(t).view(np.int16)).view(torch.bfloat16) if t.dtype == BF16
          else torch.from_numpy(np.ascontiguousarray(t)) for t in tensors]
    r = torch.cat(ts, dim)
    want = {np.dtype(BF16): torch.bfloat16}.get(np.dtype(out_dtype)) or torch.from_numpy(np.zeros(0, out_dtype)).dtype
    r = r.to(want)
    return r.view(torch.int16).numpy().view(BF16) if want == torch.bfloat16 else r.numpy()


@pytest.mark.parametrize("dtypes, out_dtype", [
    ((F32, F32), F32), ((np.float16, F32), F32), ((np.int32, np.float16), np.float16),
    ((np.int8, np.uint8), np.int16), ((np.bool_, np.int32), np.int64), ((BF16, np.float16), F32),
    ((np.int64, np.int64, np.int64), np.float64), ((np.bool_, np.bool_), np.bool_), ((F32, np.int32), np.complex64),
    ((np.complex64, F32), np.complex64), ((BF16, BF16), BF16), ((np.float64, np.float16), np.float16)])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_against_torch(use_backend, dtypes, out_dtype, dim) -> None:
    use_backend("numpy", soc="Ascend910B")
    rng = np.random.default_rng(len(dtypes) + dim)
    tensors = []
    for k, dt in enumerate(dtypes):
        shape = [2, 3]
        shape[dim] = k + 1
        x = rng.standard_normal(shape) * 300
        tensors.append((x > 0) if np.dtype(dt) == np.bool_ else x.astype(np.float32).astype(dt) if np.dtype(dt).kind != "i"
                       else x.astype(np.int64).astype(dt))
    got = cat(tensors, dim, out_dtype)
    assert not isinstance(got, Exception), got
    want = torch_cat(tensors, dim, out_dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


def test_cat_strided_members_and_empty_members_against_torch(use_backend) -> None:
    use_backend("numpy")
    base = np.arange(48, dtype=F32).reshape(6, 8)
    a, b = base[::2, 1::3], base[1::2, ::4].T.copy().T  # (3, 3) strided, (3, 2)
    legacy, empty = np.zeros(0, np.float16), np.zeros((3, 0), np.int32)
    got = cat([a, legacy, empty, b], 1, F32)
    np.testing.assert_array_equal(got, torch_cat([a, empty, b], 1, F32))  # torch.cat skips (0,) too
    np.testing.assert_array_equal(cat([legacy, a, legacy], -1, np.float64), torch_cat([a], -1, np.float64))


def test_one_non_empty_tensor_is_cast_straight_to_out(use_backend) -> None:
    """ProcessOneTensor casts the tensor to out's dtype without the promoted dtype in between:
    int32 2049 with an empty float16 tensor reaches float64 exactly; with a second non-empty
    tensor it is Cast to the promoted float16 first (2048, ties to even)."""
    use_backend("numpy")
    x = np.array([[2049, 3]], np.int32)
    assert cat([x, np.zeros((0, 2), np.float16)], 0, np.float64).tolist() == [[2049.0, 3.0]]
    assert cat([x, np.ones((1, 2), np.float16)], 0, np.float64).tolist() == [[2048.0, 3.0], [1.0, 1.0]]


def test_cat_sample_prints_the_documented_values(use_backend) -> None:
    use_backend("numpy")
    lines: list[str] = []
    _samples.run("Cat", lines.append)
    assert [float(line.split("is: ")[1].split()[0]) for line in lines if "result[" in line] == list(range(1, 10))


def test_nothing_left_succeeds_without_looking_at_out(use_backend) -> None:
    """EraseDim1EmptyTensor: only (0,) tensors -> success before CheckNotNull (out may be NULL);
    empty tensors of other shapes -> checked, then nothing computed (out untouched)."""
    use_backend("numpy")
    with pyaclnn.Op("Cat", [np.zeros(0, F32), np.zeros(0, np.int8)], 5, None) as op:
        op.run()
    out = np.full((4, 3), 7, F32)
    assert (cat([np.zeros((2, 0), F32), np.zeros((2, 0), F32)], 1, out=out) == 7).all()
    assert cat([np.zeros((2, 0), F32), np.zeros((2, 0), F32)], 2, out=out).status == 161002  # still checked


F16 = np.float16
I8 = np.int8


@pytest.mark.parametrize("soc, call, status, text", [
    ("Ascend910B", lambda: _spec_check([TensorMeta((2,), DType.FLOAT), None], 0, TensorMeta((2,), DType.FLOAT)), 161001,
     "tensors[1] is nullptr"),
    ("Ascend910B", lambda: _spec_check(None, 0, TensorMeta((2,), DType.FLOAT)), 161001, "tensors is nullptr"),
    ("Ascend910B", lambda: _null_out(), 161001, "out is nullptr"),
    ("Ascend910B", lambda: cat([np.ones(2, np.uint16)], 0, F32), 161002, "tensor 0 not implemented for uint16"),
    ("Ascend910", lambda: cat([np.ones(2, BF16)], 0, F32), 161002, "tensor 0 not implemented for bfloat16"),
    ("Ascend310P", lambda: cat([np.ones(2, F32)], 0, BF16), 161002, "out dtype bfloat16 not supported"),
    ("Ascend950", lambda: cat([np.ones(2, np.uint16), np.ones(2, I8)], 0, np.int64), 161002, "can not promote"),
    ("Ascend910B", lambda: cat([np.ones(2, np.complex64), np.ones(2, np.float64)], 0, np.complex64), 161002,
     "promoted to complex128"),
    ("Ascend910B", lambda: cat([np.ones(2, F32), np.ones(2, I8)], 0, np.int32), 161002, "can't be cast"),
    ("Ascend910B", lambda: cat([np.ones((1,) * 9, F32)], 0, F32), 161002, "rank 9 > 8"),
    ("Ascend910B", lambda: cat([np.ones((2, 2), F32)], 2, F32, (2, 2)), 161002, "dimnum 2 exceed"),
    ("Ascend910B", lambda: cat([np.ones((), F32)], 0, F32, ()), 161002, "dimnum 0 exceed"),
    ("Ascend910B", lambda: cat([np.ones((2, 2), F32), np.ones(2, F32)], 0, F32, (4, 2)), 161002, "dimnum of tensor 1"),
    ("Ascend910B", lambda: cat([np.ones((2, 2), F32), np.ones((2, 3), F32)], 0, F32, (4, 2)), 161002, "dim 1 of tensor 1"),
    ("Ascend910B", lambda: cat([np.ones((2, 2), F32), np.ones((1, 2), F32)], 0, F32, (4, 2)), 161002,
     "shape[(3, 2)] is not equal"),
    ("Ascend910B", lambda: cat([np.ones((2, 2), F32), np.ones((0, 2), F32)], 0, F32, (4, 2)), 561103,
     "ViewCopy of the one non-empty tensor"),
    ("Ascend910B", lambda: cat([np.ones((1, 1), F32), np.ones((0, 1), F32)], 0, F32, (1,)), OK, ""),
    ("Ascend950", lambda: cat([np.ones(2, np.uint16), np.ones(2, np.uint16)], 0, np.uint16), OK, ""),
])
def test_cat_statuses(use_backend, soc, call, status, text) -> None:
    use_backend("numpy", soc=soc)
    got = call()
    if status is OK:
        assert not isinstance(got, Exception), got
    else:
        assert isinstance(got, pyaclnn.AclError) and got.status == status and text in str(got), got


def _spec_check(*args):
    """The spec's check on metadata (a NULL list element cannot be made through pyaclnn.Op)."""
    try:
        return cat_spec.check("Ascend910B", *args)
    except pyaclnn.AclError as exc:
        return exc


def _null_out():
    try:
        with pyaclnn.Op("Cat", [np.ones(2, F32)], 0, None) as op:
            op.run()
    except pyaclnn.AclError as exc:
        return exc


def test_a_queued_cat_reads_every_member_and_writes_out(use_backend) -> None:
    """The launch views each member of the list: a write into a member's memory, or a read of
    out's, while the Cat is queued is a hazard; after a synchronize the values are torch's."""
    use_backend("numpy")
    a_host, b_host = np.arange(4, dtype=F32).reshape(2, 2), np.full((1, 2), 9, F32)
    device = pyaclnn.Device(0)
    acl.aclrtSetDevice(0)
    try:
        if True:
            stream = device.create_stream()
            a, b = pyaclnn.Tensor.from_numpy(a_host, device), pyaclnn.Tensor.from_numpy(b_host, device)
            out = pyaclnn.Tensor.zeros((3, 2), F32, device)
            with pyaclnn.Op("Cat", [a, b], 0, out) as op:
                op.run(stream)
                with pytest.raises(pyaclnn.HazardError, match="aclrtMemcpy"):
                    acl.aclrtMemcpy(b.data_ptr, 8, np.zeros(2, F32), 8, acl.ACL_MEMCPY_HOST_TO_DEVICE)
                with pytest.raises(pyaclnn.HazardError, match="aclrtMemcpy"):
                    acl.aclrtMemcpy(np.zeros(6, F32), 24, out.data_ptr, 24, acl.ACL_MEMCPY_DEVICE_TO_HOST)
                stream.synchronize()
            np.testing.assert_array_equal(out.numpy(), torch_cat([a_host, b_host], 0, F32))
            for t in (a, b, out):
                t.close()
            stream.close()
    finally:
        acl.aclrtResetDevice(0)
        device.close()


# -- randomised, bit-exact against the emulator (its Ascend910B branches) --------------------------------
EMULATED = [np.dtype(d) for d in (np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.int32,
                                   np.int64, np.bool_)] + [BF16]


def _random_case(rng: np.random.Generator) -> tuple:
    def array(shape, dt):
        return random_array(rng, shape, dt)

    rank = int(rng.integers(1, 4))
    dim = int(rng.integers(-rank, rank))
    base = [int(d) for d in rng.integers(1, 4, rank)]
    tensors, total = [], 0
    for _ in range(int(rng.integers(1, 5))):
        shape = list(base)
        shape[dim] = int(rng.integers(0, 3))
        if rng.random() < 0.1:
            shape[(dim + 1) % rank] += 1   # usually a mismatch off dim
        if rng.random() < 0.08:
            shape = [0]                    # torch's legacy empty, erased
        elif rng.random() < 0.05:
            shape = shape + [1]            # a rank mismatch
        else:
            total += shape[dim]
        tensors.append(array(tuple(shape), EMULATED[rng.integers(len(EMULATED))]))
    out_shape = list(base)
    out_shape[dim] = total + (1 if rng.random() < 0.1 else 0)
    if rng.random() < 0.05:
        dim += 5
    return tensors, dim, EMULATED[rng.integers(len(EMULATED))], tuple(out_shape)


def test_reference_and_emulator_agree_on_random_cat(reference_then_emulator) -> None:
    rng = np.random.default_rng(18)
    cases = [_random_case(rng) for _ in range(300)]
    refs, emus = reference_then_emulator(lambda: [outcome(cat(ts, dim, dt, shape)) for ts, dim, dt, shape in cases])
    kinds = {(r[0], r[2]) if r[0] == "error" else r[0] for r in refs}
    assert {"ok", ("error", 161002), ("error", 561103)} <= kinds  # the cases reach each outcome
    for case, ref, emu in zip(cases, refs, emus):
        assert ref == emu, (case, ref[:3], emu[:3])
