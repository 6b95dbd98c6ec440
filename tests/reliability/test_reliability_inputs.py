"""Bad input, property-based: whatever the arguments, pyaclnn raises only its documented
exceptions, with clear messages, never crashes or hangs, and both backends agree.

Each generated call runs on the reference backend and on the acl backend (through the CANN
emulator), in the same process: the two backends are built once and swapped in turn as
pyaclnn's current backend. Generated: wrong and unsupported dtypes (float64, ints, bool,
complex, float8, big-endian, strings, objects, datetimes), broadcastable and mismatched
shapes, ranks up to 10, None for required tensors, NaN/inf, zero-size and non-contiguous
(transposed, stepped, reversed) arrays, bad reductions, out-of-range targets, bad attributes.

Rules checked for every example:
- the outcome is success, an ``AclError`` subclass, ``NotSupportedError`` (a dtype NumPy or
  aclDataType cannot express), or pyaclnn's own TypeError for a Python type that has no C
  meaning (text or objects for a tensor, a float or bool reduction), which names the C function
  and the argument; any other exception fails the test;
- an error names its C function and status and says what is wrong;
- numpy and acl give the same outcome: same class and status, or, where both succeed, the same
  result (float32: rtol 1e-5; float16/bfloat16 within their rounding);
- except for the emulator's documented deviations (tests/emulator/README.md), listed in
  ``deviation()`` below: there both must refuse or behave as that README says.

Hypothesis runs derandomized (fixed seed) with a bounded number of examples, so CI is
reproducible and fast; a faulthandler watchdog turns a hang into a failure with a traceback.
"""
from __future__ import annotations

import faulthandler
import gc
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

import pyaclnn
from conftest import live_handles
from helpers.backends import Backends, active, side_by_side  # noqa: E402

F32, F16, BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
FLOATS = (F32, F16, BF16)
WRONG = tuple(np.dtype(d) for d in (np.float64, np.int32, np.int64, np.int8, np.uint8, np.bool_,
                                    np.complex64, ml_dtypes.float8_e5m2))
# Dtypes with no aclDataType: NotSupportedError on both backends; arrays that are not numbers
# (text, objects, dates): TypeError naming the argument.
UNSUPPORTED = tuple(np.dtype(d) for d in (">f4", "<U3", "O", "datetime64[s]", np.longdouble))
EXAMPLES = 300

PROFILE = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                          HealthCheck.data_too_large, HealthCheck.filter_too_much])


# -- the two backends, side by side ------------------------------------------------------------
@pytest.fixture
def backends(emulator) -> Iterator[Backends]:
    faulthandler.dump_traceback_later(300, exit=True)  # a hang fails loudly instead of stalling CI
    try:
        with side_by_side("reliability tests: the reference side") as both:
            yield both
    finally:
        faulthandler.cancel_dump_traceback_later()


@dataclass
class Outcome:
    kind: str                      # "ok", "error" (AclError) or "unsupported" (NotSupportedError)
    value: Any = None
    error: BaseException | None = None

    @property
    def key(self) -> tuple:
        if self.kind == "error":
            return ("error", type(self.error), self.error.status)
        return (self.kind, type(self.error) if self.error else None)

    def __repr__(self) -> str:
        return f"{self.kind}: {self.error!r}" if self.error else f"ok: {self.value!r}"


def run(backend: Any, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome:
    with active(backend):
        try:
            value = fn(*args, **kwargs)
        except pyaclnn.AclError as exc:
            check_clear(exc)
            return Outcome("error", error=exc)
        except pyaclnn.NotSupportedError as exc:
            assert "dtype" in str(exc) and "aclDataType" in str(exc), str(exc)
            return Outcome("unsupported", error=exc)
        except TypeError as exc:  # only pyaclnn's own: "aclnn<Op>GetWorkspaceSize: <argument> must be ..."
            assert str(exc).startswith("aclnn") and "GetWorkspaceSize: " in str(exc) and " must be " in str(exc), \
                str(exc)
            return Outcome("type", error=exc)
        # Anything else (TypeError, IndexError, a crash...) propagates and fails the test.
    return Outcome("ok", value=value)


def check_clear(exc: pyaclnn.AclError) -> None:
    text = str(exc)
    assert exc.api and exc.api in text, text
    assert str(exc.status) in text and exc.name in text, text
    assert exc.detail or exc.cann_message, f"no explanation: {text}"
    assert type(exc) is pyaclnn.errors.class_for_status(exc.status)


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, tuple) else [value]


def same_results(want: Any, got: Any) -> None:
    for w, g in zip(as_list(want), as_list(got), strict=True):
        if w is None or g is None:
            assert w is None and g is None
            continue
        assert w.dtype == g.dtype and w.shape == g.shape, (w.dtype, w.shape, g.dtype, g.shape)
        if w.dtype == F32:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        else:  # half types: the two implementations may round an intermediate differently
            tol = 1e-2 if w.dtype == BF16 else 2e-3
            np.testing.assert_allclose(g.astype(F32), w.astype(F32), rtol=tol, atol=tol)


def compare(b: Backends, fn: Callable[..., Any], args: tuple, kwargs: dict | None = None,
            deviation: Callable[[Outcome, Outcome], bool] | None = None) -> tuple[Outcome, Outcome]:
    kwargs = kwargs or {}
    ref = run(b.numpy, fn, *args, **kwargs)
    dev = run(b.acl, fn, *args, **kwargs)
    if currently_in_test_context():
        note(f"numpy -> {ref!r}\nacl   -> {dev!r}")
        event(" / ".join(f"{o.kind} {getattr(o.error, 'status', '')}".strip() for o in (ref, dev)))
    if ref.key == dev.key:
        if ref.kind == "ok":
            same_results(ref.value, dev.value)
        return ref, dev
    assert deviation is not None and deviation(ref, dev), f"backends disagree:\n numpy: {ref!r}\n acl:   {dev!r}"
    return ref, dev


# -- array generation ----------------------------------------------------------------------------
def chance(data: st.DataObject, k: int, label: str) -> bool:
    """True about once in ``k`` draws. A middle value, not 0 or k-1: Hypothesis favours the
    bounds, which would make the rare branch common."""
    return data.draw(st.integers(0, k - 1), label=label) == k // 2


def values(data: st.DataObject, shape: tuple[int, ...], dtype: np.dtype, special: bool = True,
           positive: bool = False) -> np.ndarray:
    """An array of ``shape`` and ``dtype``: small finite floats, sometimes NaN/inf."""
    n = int(np.prod(shape))
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.5 if positive else -8, 8, n)
    if special and n and chance(data, 3, "nan/inf"):
        idx = rng.integers(0, n, size=max(1, n // 4))
        base[idx] = rng.choice([np.nan, np.inf, -np.inf], size=idx.size)
    if dtype in FLOATS or dtype.kind in "fc":  # also float64, complex, long double, big-endian
        return base.astype(dtype).reshape(shape)
    if dtype.kind in "iub" or dtype.name.startswith("float8"):
        return np.nan_to_num(base, posinf=1, neginf=-1).astype(dtype).reshape(shape)
    if dtype.kind == "U":
        return np.full(shape, "abc", dtype)
    if dtype.kind == "O":
        return np.array(base, dtype=object).reshape(shape)
    return np.arange(n).astype(dtype).reshape(shape)  # datetime64


def layout(data: st.DataObject, array: np.ndarray) -> np.ndarray:
    """The same values as a contiguous, transposed, stepped or reversed (negative-stride) view."""
    how = data.draw(st.sampled_from(["contiguous", "contiguous", "transposed", "stepped", "reversed"]),
                    label="layout")
    if array.ndim == 0 or how == "contiguous":
        return array
    if how == "transposed":
        return np.ascontiguousarray(array.T).T
    if how == "stepped":
        wide = np.empty(array.shape[:-1] + (array.shape[-1] * 2,), array.dtype)
        wide[..., ::2] = array
        return wide[..., ::2]
    flipped = np.ascontiguousarray(array[..., ::-1])
    return flipped[..., ::-1]


def tensor(data: st.DataObject, shape: tuple[int, ...], dtype: np.dtype, *, nullable: bool = True,
           positive: bool = False, label: str = "") -> np.ndarray | None:
    if nullable and chance(data, 40, f"{label} is None"):
        return None
    return layout(data, values(data, shape, dtype, positive=positive))


def dtype_for(data: st.DataObject, base: np.dtype, label: str) -> np.dtype:
    """Usually ``base``; sometimes another float, a wrong dtype or an unsupported one."""
    pick = data.draw(st.integers(0, 29), label=f"{label} dtype pick")
    if pick in (7, 11):
        return data.draw(st.sampled_from(FLOATS + WRONG), label=f"{label} dtype")
    if pick == 13:
        return data.draw(st.sampled_from(UNSUPPORTED), label=f"{label} dtype")
    return base


def base_dtype(data: st.DataObject) -> np.dtype:
    return data.draw(st.sampled_from([F32, F32, F32, F16, BF16]), label="base dtype")


def dims(data: st.DataObject, min_rank: int, max_rank: int, label: str, zero: bool = True) -> tuple[int, ...]:
    rank = data.draw(st.one_of(st.integers(min_rank, max_rank), st.just(9), st.just(10))
                     if chance(data, 15, f"{label} rank>8?")
                     else st.integers(min_rank, max_rank), label=f"{label} rank")
    lo = 0 if zero and chance(data, 10, f"{label} empty?") else 1
    return tuple(data.draw(st.lists(st.integers(lo, 3 if rank <= 4 else 2), min_size=rank, max_size=rank),
                           label=f"{label} shape"))


def broadcast_to_shape(data: st.DataObject, shape: tuple[int, ...], label: str) -> tuple[int, ...]:
    """A shape that broadcasts with ``shape`` (some dims 1, leading dims dropped), or sometimes a
    random one."""
    how = data.draw(st.integers(0, 9), label=f"{label} shape kind")
    if how == 5:
        return dims(data, 0, 4, label)
    out = [1 if chance(data, 4, f"{label} dim to 1") else d for d in shape]
    drop = data.draw(st.integers(0, len(out)), label=f"{label} drop") if how == 3 else 0
    return tuple(out[drop:])


REDUCTIONS = ("none", "mean", "sum", 0, 1, 2, 3, -1, "avg", "", "MEAN", True, 1.5, None)


def reduction(data: st.DataObject) -> Any:
    if chance(data, 6, "bad reduction?"):
        return data.draw(st.sampled_from(REDUCTIONS), label="reduction")
    return data.draw(st.sampled_from(("none", "mean", "sum", 0, 1, 2)), label="reduction")


# -- the properties ------------------------------------------------------------------------------
@PROFILE
@given(data=st.data())
def test_mse_loss_backward_bad_input(backends, data):
    base = base_dtype(data)
    x_shape = dims(data, 0, 4, "self")
    g = tensor(data, broadcast_to_shape(data, x_shape, "gradOutput"), dtype_for(data, base, "g"), label="g")
    x = tensor(data, x_shape, dtype_for(data, base, "self"), label="self")
    t = tensor(data, broadcast_to_shape(data, x_shape, "target"), dtype_for(data, base, "target"), label="t")
    compare(backends, pyaclnn.mse_loss_backward, (g, x, t, reduction(data)))


@PROFILE
@given(data=st.data())
def test_prelu_backward_bad_input(backends, data):
    base = base_dtype(data)
    x_shape = dims(data, 0, 4, "self")
    channels = x_shape[1] if len(x_shape) > 1 else 1
    w_shape = data.draw(st.sampled_from([(channels,), (1,), (), (channels + 1,), (channels, 1)]), label="w shape")
    g = tensor(data, broadcast_to_shape(data, x_shape, "gradOutput"), dtype_for(data, base, "g"), label="g")
    x = tensor(data, x_shape, dtype_for(data, base, "self"), label="self")
    w = tensor(data, w_shape, dtype_for(data, base, "weight"), label="w")
    compare(backends, pyaclnn.prelu_backward, (g, x, w))


@PROFILE
@given(data=st.data())
def test_group_norm_backward_bad_input(backends, data):
    base = base_dtype(data)
    n = data.draw(st.integers(0, 3), label="N")
    group = data.draw(st.integers(1, 3), label="group")
    c = group * data.draw(st.integers(1, 3), label="C/group")
    hxw = data.draw(st.integers(0, 4), label="HxW")
    x_shape = data.draw(st.sampled_from([(n, c, hxw), (n, c, hxw, 1), (n * c * hxw,)]), label="x layout")
    ng = (n, group)
    # mutations of the attributes and of the shapes they must agree with
    attrs = [n, c, hxw, group]
    which = data.draw(st.integers(0, 15), label="mutate attr") - 5
    if 0 <= which < 4:
        attrs[which] = data.draw(st.sampled_from([-2, -1, 0, attrs[which] + 1, 2**31]), label="attr value")
    gamma_shape = data.draw(st.sampled_from([(c,), (c,), (c + 1,), (1, c)]), label="gamma shape")
    mask = data.draw(st.sampled_from([(True, True, True), (True, False, True), (False, False, False),
                                      (False, True, False)]), label="mask")
    dy = tensor(data, x_shape, dtype_for(data, base, "gradOut"), label="dy")
    x = tensor(data, x_shape, dtype_for(data, base, "input"), label="x")
    mean = tensor(data, ng, dtype_for(data, base, "mean"), label="mean")
    rstd = tensor(data, ng, dtype_for(data, base, "rstd"), label="rstd", positive=True)
    gamma = tensor(data, gamma_shape, dtype_for(data, base, "gamma"), label="gamma")
    compare(backends, pyaclnn.group_norm_backward, (dy, x, mean, rstd, gamma, *attrs, mask),
            deviation=gn_deviation)


def gn_deviation(ref: Outcome, dev: Outcome) -> bool:
    # Deviation (emulator README, "Emulator additions"): a negative C or HxW passes every check
    # of the real library; pyaclnn's reference refuses it in phase 1 with 161002 ("pyaclnn
    # refuses"), the emulator with 561002.
    return (ref.kind == "error" and ref.error.status == 161002 and "pyaclnn refuses negative" in str(ref.error)
            and dev.kind == "error" and dev.error.status == 561002)


@PROFILE
@given(data=st.data())
def test_cross_entropy_loss_grad_bad_input(backends, data):
    base = base_dtype(data)
    n = data.draw(st.integers(0, 4), label="N")
    c = data.draw(st.integers(1, 5), label="C")
    lp_shape = data.draw(st.sampled_from([(n, c)] * 10 + [(n, c, 1), (n * c,), (n, c + 1)]), label="logProb shape")
    red = data.draw(st.sampled_from(["none", "mean", "sum", 0, 1, 2] * 3 + ["avg", 5]), label="reduction")
    none = red in ("none", 0)
    gl_shape = data.draw(st.sampled_from([(n,) if none else (1,)] * 4 + [(n,) if none else (), (n + 1,), (1, n)]),
                         label="gradLoss shape")
    ignore_index = data.draw(st.sampled_from([-100, 0, 1, c - 1]), label="ignoreIndex")
    target = rng_targets(data, n, c)
    if chance(data, 8, "target shape mutation"):
        target = data.draw(st.sampled_from([target.reshape(-1, 1), target[:-1], np.append(target, 0)]),
                           label="target shape")
    if chance(data, 8, "target dtype mutation"):
        target = target.astype(data.draw(st.sampled_from([np.int32, np.float32, np.uint8]), label="target dtype"))
    weight = None
    if data.draw(st.booleans(), label="weight?"):
        w_dtype = data.draw(st.sampled_from([F32, F32, F32, F16, np.dtype(np.float64)]), label="weight dtype")
        weight = layout(data, values(data, data.draw(st.sampled_from([(c,), (c,), (c + 1,)]), label="w shape"),
                                     w_dtype, special=False, positive=True))
    smoothing = data.draw(st.sampled_from([0.0] * 8 + [0.1, 1e-46]), label="labelSmoothing")
    log_prob = tensor(data, lp_shape, dtype_for(data, base, "logProb"), label="logProb")
    grad_loss = tensor(data, gl_shape, dtype_for(data, base, "gradLoss"), label="gradLoss")
    compare(backends, pyaclnn.cross_entropy_loss_grad, (grad_loss, log_prob, target, weight),
            dict(reduction=red, ignore_index=ignore_index, label_smoothing=smoothing),
            deviation=ce_deviation(target, ignore_index, smoothing, lp_shape))


def rng_targets(data: st.DataObject, n: int, c: int) -> np.ndarray:
    """int64 class targets, mostly in [0, C), sometimes ignored (-100) or out of range."""
    return np.array([data.draw(st.sampled_from([*range(c)] * 8 + [-100, c, -1, 2**40]), label="target")
                     for _ in range(n)], np.int64)


def ce_deviation(target: np.ndarray, ignore_index: int, smoothing: float, log_prob_shape: tuple) -> Callable:
    """The documented differences between pyaclnn's reference and the emulator for
    CrossEntropyLossGrad on A2/A3 (tests/emulator/README.md, "The four operators")."""
    c = log_prob_shape[1] if len(log_prob_shape) >= 2 else None
    t = np.asarray(target).reshape(-1)
    live = t.astype(np.float32) != np.float32(ignore_index)
    out_of_range = c is None or bool(np.any(live & ((t < 0) | (t >= c))))
    undefined_values = np.float32(smoothing) != 0 or out_of_range

    def allowed(ref: Outcome, dev: Outcome) -> bool:
        if ref.kind != "error" or ref.error.status != 161002:
            return False
        why = str(ref.error)
        phase2 = dev.kind == "error" and dev.error.status == 361001 and dev.error.api == "aclnnCrossEntropyLossGrad"
        # 1. labelSmoothing != 0 and non-ignored targets outside [0, C): the device accepts them
        #    in phase 1 (then returns garbage or hangs / reads out of bounds); the emulator reports
        #    361001 from phase 2, pyaclnn's reference refuses with 161002.
        if "labelSmoothing" in why or "out of range" in why:
            return phase2
        # 2. Shapes the A2/A3 library never checks (logProb not 2-D, target not 1-D, gradLoss
        #    not N elements for 'none'): pyaclnn refuses them with 161002 ("pyaclnn refuses");
        #    the emulator gives 561002 where the kernel would read out of bounds, and runs the
        #    call where it only reads the first N*C elements (e.g. a (N, 1) target) -- and then
        #    may meet case 1 in phase 2.
        if "pyaclnn refuses" in why:
            return dev.kind == "ok" or (dev.kind == "error" and dev.error.status == 561002) \
                or (undefined_values and phase2)
        return False

    return allowed


# -- fixed cases that a generator would rarely hit -----------------------------------------------------
@pytest.mark.parametrize("soc", ["Ascend910", "Ascend310P"])
def test_bf16_on_a_soc_without_it_is_refused_clearly(use_backend, soc):
    """PYACLNN_SOC=Ascend910 / Ascend310P have no bfloat16 kernels: the reference backend refuses
    with 161002 naming the dtype and the SoC (CrossEntropyLossGrad has no kernel at all there:
    161001). Not compared with acl: the emulator only implements the A2/A3 tables (README,
    "Not emulated: Ascend910 and 310P dtype tables")."""
    use_backend("numpy", soc=soc)
    a = np.ones((2, 3), BF16)
    calls = {
        "aclnnMseLossBackwardGetWorkspaceSize": lambda: pyaclnn.mse_loss_backward(a, a, a),
        "aclnnPreluBackwardGetWorkspaceSize": lambda: pyaclnn.prelu_backward(a, a, np.ones(3, BF16)),
        "aclnnGroupNormBackwardGetWorkspaceSize": lambda: pyaclnn.group_norm_backward(
            a, a, np.ones((2, 1), BF16), np.ones((2, 1), BF16), np.ones(3, BF16), 2, 3, 1, 1),
    }
    for api, call in calls.items():
        with pytest.raises(pyaclnn.AclnnParamInvalidError) as info:
            call()
        err = info.value
        assert err.status == 161002 and err.api == api
        assert "bfloat16" in str(err) and soc in str(err), str(err)
        np.testing.assert_array_equal(pyaclnn.mse_loss_backward(a.astype(F32), a.astype(F32), a.astype(F32)),
                                      np.zeros((2, 3), F32))  # float32 is fine there
    with pytest.raises(pyaclnn.AclnnParamNullptrError, match=soc):
        pyaclnn.cross_entropy_loss_grad(np.ones(1, BF16), np.zeros((2, 3), BF16), np.array([0, 1]))


@pytest.mark.parametrize("op", ["mse", "prelu", "gn", "ce"])
def test_none_for_every_required_tensor(backends, op):
    """None (the C nullptr) for each required tensor in turn: 161001 on both backends."""
    a, t = np.ones((2, 3), F32), np.array([0, 2], np.int64)
    full = {"mse": (pyaclnn.mse_loss_backward, [a, a, a]),
            "prelu": (pyaclnn.prelu_backward, [a, a, np.ones(3, F32)]),
            "gn": (lambda *x: pyaclnn.group_norm_backward(*x, np.ones(3, F32), 2, 3, 1, 1),
                   [a, a, np.ones((2, 1), F32), np.ones((2, 1), F32)]),
            "ce": (pyaclnn.cross_entropy_loss_grad, [np.ones(1, F32), np.log(np.full((2, 3), 1 / 3, F32)), t])}
    fn, args = full[op]
    for i in range(len(args)):
        bad = list(args)
        bad[i] = None
        ref, dev = compare(backends, fn, tuple(bad))
        assert ref.kind == "error" and isinstance(ref.error, pyaclnn.AclnnParamNullptrError), ref


def test_nothing_leaks_from_refused_calls(backends):
    """After a burst of refused and unsupported calls, no handle is left on either backend."""
    a, bad = np.ones((2, 3), F32), np.ones(4, F32)
    compare(backends, pyaclnn.mse_loss_backward, (a, a, a))  # the default device and stream exist
    with active(backends.acl):
        gc.collect()
        before_acl = live_handles()
    with active(backends.numpy):
        before_np = live_handles()
    for _ in range(200):
        for args in ((a, a, bad), (a, a, a.astype(">f4")), (a, a, a.astype(np.float64)), (a, None, a),
                     (a, a, np.ones((1,) * 9, F32))):
            compare(backends, pyaclnn.mse_loss_backward, args)
    gc.collect()
    with active(backends.acl):
        assert live_handles() == before_acl
    with active(backends.numpy):
        assert live_handles() == before_np
