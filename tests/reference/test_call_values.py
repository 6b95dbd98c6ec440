"""The reference runtime's phase-1 shortcut by C arguments (pyaclnn/_numpy/runtime/opcache.py,
Call, call_key) for calls with plain values: a new aclScalar / aclIntArray of the same value
(the object layer makes one per call) and a float of a double parameter reuse the first call's
answer, and only an exactly equal value does. Each call runs on the same Tensors (the same
aclTensor handles: the shortcut's key) with one value changed, and is compared with torch's own
result (its bits: -0.0 and 0.0, NaN and -NaN apart) or torch's refusal."""
from __future__ import annotations

import struct
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import pyaclnn

torch = pytest.importorskip("torch")  # Sub, Amax and NanToNum run on the aten tier

F32 = np.float32
NAN = float("nan")


@pytest.fixture
def stream(use_backend: Callable[..., object]) -> Iterator[pyaclnn.Stream]:
    use_backend("numpy")
    with pyaclnn.Device(0) as device, device.create_stream() as s:
        yield s


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32 if a.dtype == F32 else np.uint8 if a.dtype == np.bool_ else np.uint64)


def _op(stream: pyaclnn.Stream, name: str, *args: Any) -> np.ndarray:
    with pyaclnn.Op(name, *args) as ex:
        ex.run(stream)
        return ex["out"].numpy()


def _full_phase_1s(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The operators whose phase 1 took the full path (resolved its handles) from now on."""
    from pyaclnn._objects.backend import current
    rt = current().runtime
    seen: list[str] = []
    real = rt._resolve
    monkeypatch.setattr(rt, "_resolve", lambda info, args, api: seen.append(info.name) or real(info, args, api))
    return seen


def test_a_new_scalar_or_array_of_the_same_value_takes_the_shortcut(stream: pyaclnn.Stream,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The object layer makes a new aclScalar / aclIntArray per call: the shortcut keys them by
    what they hold (CANN's op cache hashes their values too: op_cache.cpp AddParamToBuf), and a
    float of a double parameter by its bits (before, such calls always took the full path)."""
    x = np.arange(-8, 8, dtype=F32).reshape(4, 4)
    x[0, 0] = NAN
    with pyaclnn.Tensor.from_numpy(x) as tx, pyaclnn.Tensor.zeros((4, 4), F32) as out, \
            pyaclnn.Tensor.zeros((4,), F32) as o4:
        full = _full_phase_1s(monkeypatch)
        for _ in range(3):
            _op(stream, "Sub", tx, tx, 2.5, out)
            _op(stream, "Amax", tx, [1], False, o4)
            _op(stream, "NanToNum", tx, 1.5, 9.0, -9.0, out)
        assert full == ["Sub", "Amax", "NanToNum"]


@pytest.mark.parametrize("alphas", [(2.5, 2.0, 2.5, 2.0), (0.0, -0.0, 0.0, -0.0), (NAN, -NAN, NAN, -NAN),
                                    (1.5, F32(1.5), 1.5, np.float16(1.5))])
def test_an_alpha_of_another_value_or_bits_computes_its_own_result(stream: pyaclnn.Stream, alphas: tuple) -> None:
    """x - alpha * y for each alpha in turn on the same tensors, bit for bit torch's: 2.0 after
    2.5, -0.0 after 0.0 (x = -0.0, y = 1: -0.0 or +0.0), -NaN after NaN (NaNs of the other sign)."""
    x = np.array([-0.0, 1.5, -2.0, 3.25, 0.0, 7.0], F32)
    y = np.array([1.0, 0.5, 2.0, -1.0, 1.0, 3.0], F32)
    with pyaclnn.Tensor.from_numpy(x) as tx, pyaclnn.Tensor.from_numpy(y) as ty, \
            pyaclnn.Tensor.zeros((6,), F32) as out:
        for alpha in alphas:
            got = _op(stream, "Sub", tx, ty, alpha, out)
            want = torch.sub(torch.from_numpy(x), torch.from_numpy(y), alpha=alpha).numpy()
            np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"alpha={alpha!r}")


@pytest.mark.parametrize("op", ["Sub", "Add"])
def test_1_and_1_0_and_true_are_three_alphas(stream: pyaclnn.Stream, op: str) -> None:
    """Equal Python values, three aclScalar dtypes (INT64, DOUBLE, BOOL): on int32 tensors a
    floating alpha is refused (torch: "alpha must not be a floating point number"; aclnnAdd's
    CheckPromoteType: DOUBLE cannot be cast to INT32), whatever was accepted before it."""
    x, y = np.arange(6, dtype=np.int32), np.full(6, 3, np.int32)
    with pyaclnn.Tensor.from_numpy(x) as tx, pyaclnn.Tensor.from_numpy(y) as ty, \
            pyaclnn.Tensor.zeros((6,), np.int32) as out:
        for alpha in (1, 1.0, 1, True, 1.0, True):
            fn = torch.sub if op == "Sub" else torch.add
            try:
                want = fn(torch.from_numpy(x), torch.from_numpy(y), alpha=alpha).numpy()
            except RuntimeError:
                want = None
            if want is None and not (op == "Add" and alpha is True):  # torch refuses it
                # (aclnnAdd's checks in phase 1; the aten tier's Sub when aten runs, in phase 2)
                with pytest.raises((pyaclnn.AclError, pyaclnn.NotSupportedError)):
                    _op(stream, op, tx, ty, alpha, out)
                continue
            got = _op(stream, op, tx, ty, alpha, out)
            # (aclnnAdd takes a bool alpha, as an integer 1: CheckPromoteType, BOOL casts to INT32)
            np.testing.assert_array_equal(got, want if want is not None else x + y, err_msg=f"alpha={alpha!r}")


def test_an_int_array_of_other_values_computes_its_own_result(stream: pyaclnn.Stream) -> None:
    x = np.random.default_rng(5).standard_normal((8, 8)).astype(F32)
    with pyaclnn.Tensor.from_numpy(x) as tx, pyaclnn.Tensor.zeros((8,), F32) as out:
        for dim in ([1], [0], [1], [-1], [0]):
            got = _op(stream, "Amax", tx, dim, False, out)
            np.testing.assert_array_equal(got, torch.amax(torch.from_numpy(x), dim).numpy(), err_msg=f"dim={dim}")


def test_a_float_value_of_another_value_or_bits_computes_its_own_result(stream: pyaclnn.Stream) -> None:
    """NanToNum's nan, posinf, neginf are C floats (plain values, not aclScalars): 0.0 and -0.0,
    1.5 and 2.5 replace a NaN with other bits."""
    x = np.array([NAN, np.inf, -np.inf, 1.0, -NAN], F32)
    with pyaclnn.Tensor.from_numpy(x) as tx, pyaclnn.Tensor.zeros((5,), F32) as out:
        for nan in (0.0, -0.0, 0.0, 1.5, 2.5, -0.0, 0):
            got = _op(stream, "NanToNum", tx, nan, 9.0, -9.0, out)
            want = torch.nan_to_num(torch.from_numpy(x), nan=float(nan), posinf=9.0, neginf=-9.0).numpy()
            np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"nan={nan!r}")


def test_an_executor_holds_what_its_scalar_and_array_handles_hold(stream: pyaclnn.Stream) -> None:
    """Each executor's resolved aclScalar / aclIntArray is, value for value (type and bits) and
    dtype, what the handles passed to its phase 1 hold: the full phase 1's resolution (2.5 as
    ACL_DOUBLE after 2.5 as ACL_FLOAT, an equal number of another dtype, is not the first's)."""
    from pyaclnn._objects.backend import current
    rt = current().runtime

    def held(value: Any) -> Any:  # a value exactly: its type, a float by its bits, a scalar's dtype too
        if isinstance(value, tuple):
            return tuple(held(v) for v in value)
        if hasattr(value, "dtype") and hasattr(value, "value"):
            return held(value.value), int(value.dtype)
        return type(value), struct.pack("<d", value) if isinstance(value, float) else value

    x = np.ones((4, 4), F32)
    with pyaclnn.Tensor.from_numpy(x) as tx, pyaclnn.Tensor.zeros((4, 4), F32) as out, \
            pyaclnn.Tensor.zeros((4,), F32) as o4:
        for args in [("Sub", tx, tx, F32(2.5), out), ("Sub", tx, tx, 2.5, out), ("Sub", tx, tx, np.float16(2.5), out),
                     ("Sub", tx, tx, 2.5, out), ("Sub", tx, tx, -0.0, out), ("Sub", tx, tx, 0.0, out),
                     ("Amax", tx, [1], False, o4), ("Amax", tx, [0], False, o4), ("Amax", tx, [1], True, o4)]:
            try:
                ex = pyaclnn.Op(*args)
            except pyaclnn.AclError:  # (keepdim with an out of rank 1: refused, by the checks)
                continue
            with ex:
                record = rt._executors[ex.planned.handle]
                for i, kind in enumerate(rt.op_info(args[0]).kinds):
                    if kind in ("scalar", "int_array"):
                        table = rt._scalars if kind == "scalar" else rt._int_arrays
                        assert held(record.args[i]) == held(table[ex._c_args[i]]), (args, i)


def test_a_destroyed_scalar_is_refused_after_a_call_that_took_it(stream: pyaclnn.Stream) -> None:
    """The shortcut reads the handle's value: a handle no longer live is the full phase 1's refusal."""
    from pyaclnn import acl
    from pyaclnn._objects.backend import current
    rt = current().runtime
    with pyaclnn.Tensor.from_numpy(np.ones(4, F32)) as tx, pyaclnn.Tensor.zeros((4,), F32) as out:
        alpha = rt.create_scalar(2.5, int(pyaclnn.DType.DOUBLE))
        for _ in range(2):
            rt.destroy_executor(rt.workspace_size("Sub", (tx.raw, tx.raw, alpha, out.raw))[1])
        rt.destroy_scalar(alpha)
        with pytest.raises(pyaclnn.AclnnParamInvalidError, match="not a live aclScalar"):
            rt.workspace_size("Sub", (tx.raw, tx.raw, alpha, out.raw))
        assert acl is not None
