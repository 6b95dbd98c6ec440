"""Differential fuzz: random bad arguments, the same answer on both backends.

Fixed seeds drive random bad inputs to the four NumPy-in/out functions, ``pyaclnn.Op("Add")`` and
``Op("Cat")``, and the C-shaped functions of ``pyaclnn.acl``. Each case runs on the reference
backend and on the acl backend (through the CANN emulator, the model of CANN), swapped in turn as
pyaclnn's current backend in one process, and must give:

- the same outcome: success, or the same exception class and (for an AclError) status;
- a message that names the argument: an AclError names its C function and status; a
  TypeError/ValueError starts with the C function (``aclrtMalloc: size (size_t) ...``) or the
  operator's phase 1 and names the parameter; no Python, NumPy or cffi internal message.

A difference is allowed only when its kind is in ``DEVIATIONS``, the one table of deliberate
differences (the same table, with its reasons, is in docs/reliability.md; the test checks the two
agree), so an undocumented difference fails.
"""
from __future__ import annotations

import random
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl
from pyaclnn._objects import backend as _backend

# The deliberate differences: case kind -> why (docs/reliability.md, "Deliberate differences").
DEVIATIONS: dict[str, str] = {
    "ce-undefined-values": "cross_entropy_loss_grad with labelSmoothing != 0 and a non-ignored target outside "
                           "[0, C): the A2/A3 library accepts it in phase 1 and the kernel reads out of bounds; "
                           "the emulator reports 361001 from phase 2, the reference refuses in phase 1 (161002)",
}

SEED = 20261127
ACL_CASES = 240
FUNCTION_CASES = 120

# Messages of Python, NumPy or cffi internals, which must never reach the user.
INTERNAL = re.compile(r"an integer is required|can't convert|Unknown format code|Maximum allowed dimension|"
                      r"object of type .* has no len|unsupported operand|not subscriptable|int too big|"
                      r"cannot be interpreted as an integer|initializer for ctype|takes \d+ positional|"
                      r"has no attribute|could not broadcast|operands could not|invalid literal|"
                      r"only integer scalar arrays")


# -- the two backends, side by side ------------------------------------------------------------
@dataclass
class Backends:
    numpy: Any
    acl: Any


@contextmanager
def active(backend: Any) -> Iterator[None]:
    saved = _backend.active
    _backend.active = backend
    try:
        yield
    finally:
        _backend.active = saved


@pytest.fixture
def backends(emulator) -> Iterator[Backends]:
    """The acl backend on the emulator (the current one) and a reference backend of the SoC
    whose tables the emulator implements (Ascend910B)."""
    acl_backend = _backend.current()
    numpy_backend = _backend._numpy_backend("differential fuzz: the reference side")
    assert numpy_backend.soc == acl_backend.soc == "Ascend910B"
    try:
        yield Backends(numpy_backend, acl_backend)
    finally:
        numpy_backend.shutdown()


@dataclass
class Outcome:
    error: BaseException | None = None

    @property
    def key(self) -> tuple:
        if self.error is None:
            return ("ok",)
        return (type(self.error).__name__, getattr(self.error, "status", None))

    def __repr__(self) -> str:
        return f"{type(self.error).__name__}: {self.error}" if self.error else "ok"


def check_message(api: str, exc: BaseException) -> None:
    """The message names the C function and the argument, never an internal's words."""
    text = str(exc)
    assert not INTERNAL.search(text), f"an internal message reached the user: {type(exc).__name__}: {text}"
    if isinstance(exc, pyaclnn.AclError):
        assert exc.api and exc.api in text and str(exc.status) in text, text
        return
    assert isinstance(exc, (TypeError, ValueError, pyaclnn.NotSupportedError)), f"{type(exc).__name__}: {text}"
    assert api in text or "aclnn" in text, f"the message does not name the call: {text}"


# -- pyaclnn.acl: each function with valid arguments, then one of them made bad -------------------
@dataclass
class Ctx:
    """Per backend: device 0, 64 bytes of device memory, a stream; what a case made is released."""
    ptr: int = 0
    stream: Any = None
    made: list[Callable[[], None]] = field(default_factory=list)


BAD_INTS = (-1, -2, 2**31, 2**32, 2**40, 2**63, 2**64, -2**63 - 1, 2**70)
BAD_OTHERS = (None, "p", 1.5, True, float("nan"), np.int64(3), np.uint64(2**63), np.array([1]), [], b"x", object())


# name -> (C function, valid arguments from a Ctx, what to release for a result)
def _acl_specs() -> dict[str, tuple[Callable[..., Any], Callable[[Ctx], list[Any]], Callable[[Any], None] | None]]:
    H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
    return {
        "aclrtMalloc": (acl.aclrtMalloc, lambda c: [16, acl.ACL_MEM_MALLOC_HUGE_FIRST], acl.aclrtFree),
        "aclrtFree": (acl.aclrtFree, lambda c: [acl.aclrtMalloc(16, 0)], None),
        "aclrtMallocHost": (acl.aclrtMallocHost, lambda c: [16], acl.aclrtFreeHost),
        "aclrtMemset": (acl.aclrtMemset, lambda c: [c.ptr, 64, 0, 16], None),
        "aclrtMemsetAsync": (acl.aclrtMemsetAsync, lambda c: [c.ptr, 64, 0, 16, c.stream], None),
        "aclrtMemcpy": (acl.aclrtMemcpy, lambda c: [c.ptr, 64, np.zeros(16, np.uint8), 16, H2D], None),
        "aclrtMemcpyD2H": (acl.aclrtMemcpy, lambda c: [np.zeros(16, np.uint8), 16, c.ptr, 16, D2H], None),
        "aclrtMemcpyAsync": (acl.aclrtMemcpyAsync, lambda c: [c.ptr, 64, c.ptr + 32, 16, 3, c.stream], None),
        "aclrtSynchronizeStreamWithTimeout": (acl.aclrtSynchronizeStreamWithTimeout, lambda c: [c.stream, 100],
                                              None),
        "aclrtCreateEventWithFlag": (acl.aclrtCreateEventWithFlag, lambda c: [acl.ACL_EVENT_SYNC],
                                     acl.aclrtDestroyEvent),
        "aclrtGetDeviceInfo": (acl.aclrtGetDeviceInfo, lambda c: [0, 0], None),
        "aclrtGetMemInfo": (acl.aclrtGetMemInfo, lambda c: [acl.ACL_HBM_MEM], None),
        "aclrtSetDevice": (acl.aclrtSetDevice, lambda c: [0], lambda _: acl.aclrtResetDevice(0)),
        "aclCreateTensor": (acl.aclCreateTensor, lambda c: [[2, 2], 2, acl.ACL_FLOAT, [2, 1], 0, acl.ACL_FORMAT_ND,
                                                            [4], 1, c.ptr], acl.aclDestroyTensor),
        "aclCreateIntArray": (acl.aclCreateIntArray, lambda c: [[1, 2, 3], 3], acl.aclDestroyIntArray),
        "aclCreateScalar": (acl.aclCreateScalar, lambda c: [1.5, acl.ACL_FLOAT], acl.aclDestroyScalar),
        "aclFloat16ToFloat": (acl.aclFloat16ToFloat, lambda c: [0x3C00], None),
        "aclFloatToFloat16": (acl.aclFloatToFloat16, lambda c: [1.0], None),
        "aclrtGetLastError": (acl.aclrtGetLastError, lambda c: [0], None),
    }


@dataclass
class AclCase:
    name: str
    slot: int
    value: Any

    def __repr__(self) -> str:
        return f"{self.name}(arg {self.slot} = {self.value!r})"


HOST_POINTERS = {("aclrtMemcpy", 2), ("aclrtMemcpyD2H", 0)}


def acl_cases(seed: int, n: int) -> list[AclCase]:
    rng = random.Random(seed)
    specs = _acl_specs()
    names = sorted(specs)
    arity = {"aclrtMalloc": 2, "aclrtFree": 1, "aclrtMallocHost": 1, "aclrtMemset": 4, "aclrtMemsetAsync": 4,
             "aclrtMemcpy": 5, "aclrtMemcpyD2H": 5, "aclrtMemcpyAsync": 5, "aclrtSynchronizeStreamWithTimeout": 2,
             "aclrtCreateEventWithFlag": 1, "aclrtGetDeviceInfo": 2, "aclrtGetMemInfo": 1, "aclrtSetDevice": 1,
             "aclCreateTensor": 9, "aclCreateIntArray": 2, "aclCreateScalar": 2, "aclFloat16ToFloat": 1,
             "aclFloatToFloat16": 1, "aclrtGetLastError": 1}
    out = []
    for _ in range(n):
        name = rng.choice(names)
        slot = rng.randrange(arity[name])  # the handle slots (streams) are the handle layer's: not fuzzed here
        pool = BAD_INTS if rng.random() < 0.6 else BAD_OTHERS
        if (name, slot) in HOST_POINTERS:  # an int there is a host address: C would read it (a crash, as in C)
            pool = tuple(v for v in BAD_OTHERS if not isinstance(v, (int, np.integer)))
        out.append(AclCase(name, slot, rng.choice(pool)))
    return out


def run_acl_case(case: AclCase, ctx: Ctx) -> Outcome:
    fn, valid, release = _acl_specs()[case.name]
    args = valid(ctx)
    if case.name == "aclrtFree" and case.slot == 0:
        acl.aclrtFree(args[0])  # the valid allocation is replaced: not leaked
    args[case.slot] = case.value
    try:
        result = fn(*args)
    except Exception as exc:  # noqa: BLE001 - compared and checked by the caller
        if case.name == "aclrtFree" and case.slot != 0:
            acl.aclrtFree(args[0])
        return Outcome(exc)
    if release is not None:
        release(result)
    return Outcome()


def _setup(ctx: Ctx) -> None:
    acl.aclrtSetDevice(0)
    ctx.ptr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemset(ctx.ptr, 64, 0, 64)
    ctx.stream = acl.aclrtCreateStream()


def _teardown(ctx: Ctx) -> None:
    acl.aclrtSynchronizeStream(ctx.stream)
    acl.aclrtDestroyStream(ctx.stream)
    acl.aclrtFree(ctx.ptr)
    acl.aclGetRecentErrMsg()
    acl.aclrtGetLastError(0)
    acl.aclrtResetDevice(0)


def deviation_of(case: Any, ref: Outcome, dev: Outcome) -> str | None:
    """The kind of a documented difference this case's outcomes are, or None."""
    if getattr(case, "kind", "") == "ce" and ref.key == ("AclnnParamInvalidError", 161002) \
            and dev.key == ("AclnnInnerError", 361001) and case.undefined_values:
        return "ce-undefined-values"
    return None


def compare(b: Backends, case: Any, run: Callable[[Any, Any], Outcome], ctxs: dict[str, Any],
            api: str, problems: list[str]) -> tuple[Outcome, Outcome]:
    """Run ``case`` on both backends; what is wrong with it is added to ``problems`` (all the
    cases run, so one report lists every difference)."""
    with active(b.numpy):
        ref = run(case, ctxs["numpy"])
    with active(b.acl):
        dev = run(case, ctxs["acl"])
    for side, o in (("numpy", ref), ("acl", dev)):
        if o.error is not None:
            try:
                check_message(api, o.error)
            except AssertionError as exc:
                problems.append(f"{case!r} on {side}: {exc}")
    if ref.key != dev.key and deviation_of(case, ref, dev) not in DEVIATIONS:
        problems.append(f"{case!r}: backends disagree (no documented deviation)\n numpy: {ref!r}\n acl:   {dev!r}")
    return ref, dev


def test_acl_functions_agree_on_bad_arguments(backends: Backends) -> None:
    ctxs = {"numpy": Ctx(), "acl": Ctx()}
    for name, b in (("numpy", backends.numpy), ("acl", backends.acl)):
        with active(b):
            _setup(ctxs[name])
    try:
        refused, problems = 0, []
        for case in acl_cases(SEED, ACL_CASES):
            api = "aclrtMemcpy" if case.name == "aclrtMemcpyD2H" else case.name
            ref, _ = compare(backends, case, run_acl_case, ctxs, api, problems)
            for name, b in (("numpy", backends.numpy), ("acl", backends.acl)):  # the next case's copies wait
                with active(b):
                    acl.aclrtSynchronizeStream(ctxs[name].stream)
            refused += ref.error is not None
        assert not problems, f"{len(problems)} of {ACL_CASES} cases:\n" + "\n".join(problems)
        assert refused > ACL_CASES // 2  # the cases are bad ones
    finally:
        for name, b in (("numpy", backends.numpy), ("acl", backends.acl)):
            with active(b):
                _teardown(ctxs[name])


# -- the NumPy-in/out functions and Op("Add"/"Cat") -------------------------------------------
F32 = np.float32


@dataclass
class FnCase:
    kind: str
    call: Callable[[], Any]
    what: str
    undefined_values: bool = False

    def __repr__(self) -> str:
        return f"{self.kind}: {self.what}"


def _array(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = F32) -> np.ndarray:
    return rng.uniform(-2, 2, shape).astype(dtype)


def _bad_array(rng: np.random.Generator, shape: tuple[int, ...], pick: int) -> Any:
    """A bad version of an array of ``shape``: one of the shapes, dtypes and objects users pass."""
    a = _array(rng, shape)
    options: list[Callable[[], Any]] = [
        lambda: a.reshape(()) if a.size == 1 else a.reshape(-1)[:1].reshape(()),   # 0-d
        lambda: np.ma.masked_array(a, mask=np.zeros(a.shape, bool)),               # a masked array
        lambda: a.astype(np.float64),
        lambda: a.astype(np.int32),
        lambda: a.astype(">f4"),
        lambda: None,
        lambda: a.tolist(),
        lambda: np.broadcast_to(_array(rng, (1,) * max(a.ndim, 1)), (10**6, 10**6)),  # 10^12 elements
        lambda: np.ones(shape + (1,) * 7 + (2,), F32),                              # rank 9+
        lambda: a[..., ::-1] if a.ndim else a,
        lambda: np.full(shape, np.nan, F32),
        lambda: "x",
        lambda: np.ones((0,) + shape, F32),
    ]
    return options[pick % len(options)]()


def function_cases(seed: int, n: int) -> list[FnCase]:
    rng = np.random.default_rng(seed)
    out: list[FnCase] = []
    for i in range(n):
        kind = ("mse", "prelu", "gn", "ce", "add", "cat")[i % 6]
        pick, slot = int(rng.integers(0, 1000)), int(rng.integers(0, 3))
        if kind == "mse":
            args = [_array(rng, (2, 3)) for _ in range(3)]
            args[slot] = _bad_array(rng, (2, 3), pick)
            out.append(FnCase(kind, lambda a=args: pyaclnn.mse_loss_backward(*a), f"arg {slot} pick {pick}"))
        elif kind == "prelu":
            args = [_array(rng, (2, 3)), _array(rng, (2, 3)), _array(rng, (3,))]
            args[slot] = _bad_array(rng, args[slot].shape, pick)
            out.append(FnCase(kind, lambda a=args: pyaclnn.prelu_backward(*a), f"arg {slot} pick {pick}"))
        elif kind == "gn":
            args = [_array(rng, (2, 4, 3)), _array(rng, (2, 4, 3)), _array(rng, (2, 2)),
                    np.abs(_array(rng, (2, 2))) + 0.5, _array(rng, (4,))]
            which = pick % 7
            attrs: list[Any] = [2, 4, 3, 2]
            if which < 5:
                args[which] = _bad_array(rng, args[which].shape, pick // 7)
            else:
                attrs[slot] = (-1, 0, 2**31, 2**63, 1.5, None, "2")[pick % 7]
            out.append(FnCase(kind, lambda a=args, t=attrs: pyaclnn.group_norm_backward(*a, *t),
                              f"which {which} pick {pick}"))
        elif kind == "ce":
            n_, c = 3, 4
            target = np.array([0, 1, 3], np.int64)
            smoothing: Any = 0.0
            args = [np.ones(1, F32), np.log(np.full((n_, c), 1 / c, F32)), target]
            which = pick % 5
            if which == 0:
                smoothing = (float("nan"), 0.1, -1.0, 2.0, "0.1", None)[pick // 5 % 6]
            elif which == 1:
                target = np.array([0, (c, -1, 2**40, -100)[pick // 5 % 4], 1], np.int64)
                args[2] = target
                smoothing = (0.0, 0.1)[pick // 20 % 2]
            else:
                args[which - 2] = _bad_array(rng, np.shape(args[which - 2]), pick // 5)
            live = target[target != -100] if isinstance(target, np.ndarray) else target
            undefined = bool(smoothing not in (0.0,) and isinstance(smoothing, float)
                             and np.any((live < 0) | (live >= c)))
            out.append(FnCase(kind, lambda a=args, s=smoothing: pyaclnn.cross_entropy_loss_grad(
                *a, reduction="mean", label_smoothing=s), f"which {which} pick {pick} smoothing {smoothing!r}",
                undefined))
        elif kind == "add":
            args = [_array(rng, (2, 3)), _array(rng, (2, 3)), 1.0, np.zeros((2, 3), F32)]
            if slot == 2:
                args[2] = (float("nan"), "1", None, [1.0], 2**70, True)[pick % 6]
            else:
                args[(0, 1, 3)[slot]] = _bad_array(rng, (2, 3), pick)
            out.append(FnCase(kind, lambda a=args: pyaclnn.Op("Add", *a).close(), f"slot {slot} pick {pick}"))
        else:
            parts = [_array(rng, (2, 3)), _array(rng, (1, 3))]
            dim: Any = 0
            outp: Any = np.zeros((3, 3), F32)
            if slot == 0:
                parts[pick % 2] = _bad_array(rng, parts[pick % 2].shape, pick // 2)
            elif slot == 1:
                dim = (-3, 2, 2**40, 2**63, 1.5, None, "0")[pick % 7]
            else:
                outp = _bad_array(rng, (3, 3), pick)
            out.append(FnCase(kind, lambda p=parts, d=dim, o=outp: pyaclnn.Op("Cat", p, d, o).close(),
                              f"slot {slot} pick {pick}"))
    return out


def run_fn_case(case: FnCase, _ctx: Any) -> Outcome:
    try:
        case.call()
    except Exception as exc:  # noqa: BLE001 - compared and checked by the caller
        return Outcome(exc)
    return Outcome()


def test_functions_and_op_agree_on_bad_inputs(backends: Backends) -> None:
    refused, problems = 0, []
    for case in function_cases(SEED, FUNCTION_CASES):
        ref, _ = compare(backends, case, run_fn_case, {"numpy": None, "acl": None}, "aclnn", problems)
        refused += ref.error is not None
    assert not problems, f"{len(problems)} of {FUNCTION_CASES} cases:\n" + "\n".join(problems)
    assert refused > FUNCTION_CASES // 3


def test_the_deviation_table_is_the_documented_one() -> None:
    """docs/reliability.md lists exactly the kinds of DEVIATIONS, each with its reason."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "reliability.md").read_text()
    section = text.split("## Deliberate differences", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([\w-]+)` \| (.+?) \|$", section, re.M))
    assert set(rows) == set(DEVIATIONS), (sorted(rows), sorted(DEVIATIONS))
