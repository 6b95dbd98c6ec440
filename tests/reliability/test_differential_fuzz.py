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
agree), so an undocumented difference fails. Host-pointer slots take ``HOST_VALUES`` (pinned
memory, past its end, freed, an array's address, buffers of every kind); the cases offline runs
found are kept in ``FOUND``. Offline: ``PYACLNN_FUZZ_SEEDS=1-500 PYACLNN_FUZZ_SCALE=2 pytest
tests/reliability/test_differential_fuzz.py`` (other seeds, larger counts).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import pyaclnn
from pyaclnn import acl
from helpers.backends import Backends, active, side_by_side  # noqa: E402

# The deliberate differences: case kind -> why (docs/reliability.md, "Deliberate differences").
DEVIATIONS: dict[str, str] = {
    "ce-undefined-values": "cross_entropy_loss_grad with labelSmoothing != 0 and a non-ignored target outside "
                           "[0, C): the A2/A3 library accepts it in phase 1 and the kernel reads out of bounds; "
                           "the emulator reports 361001 from phase 2, the reference refuses in phase 1 (161002)",
    "host-int-address": "an int host address outside aclrtMallocHost memory (a NumPy array's .ctypes.data, freed "
                        "or past-the-end pinned memory) where a copy takes host memory: C dereferences it (pageable "
                        "memory is copied, freed memory is a use after free); the reference, which can check only "
                        "memory it allocated, refuses it with 507899 naming the range",
    "tensor-unknown-dtype": "aclCreateTensor (aclInitTensor) with a dataType that is no aclDataType member (-2, "
                            "2**31-1): CANN creates the tensor (opbase aclTensor::aclTensor casts it with "
                            "ToOpDataType, no check) "
                            "and the operator refuses the dtype in phase 1 (161002); the reference's descriptors "
                            "hold only aclDataType members, so it returns NULL at creation (561103), one call earlier",
}

import os

# The suite's seeds and case counts (a few seconds on 2 cores). An offline run takes others:
# PYACLNN_FUZZ_SEEDS="1-200" (a range or a comma list) and PYACLNN_FUZZ_SCALE=10 (case counts x10).
SEEDS = (20261127, 1, 2, 3, 4, 5, 6, 7)
ACL_CASES = 1000
FUNCTION_CASES = 360


def _seeds() -> tuple[int, ...]:
    text = os.environ.get("PYACLNN_FUZZ_SEEDS", "")
    if not text:
        return SEEDS
    if "-" in text:
        lo, hi = text.split("-")
        return tuple(range(int(lo), int(hi) + 1))
    return tuple(int(t) for t in text.split(","))


SCALE = int(os.environ.get("PYACLNN_FUZZ_SCALE", "1"))

# Messages of Python, NumPy or cffi internals, which must never reach the user.
INTERNAL = re.compile(r"an integer is required|can't convert|Unknown format code|Maximum allowed dimension|"
                      r"object of type .* has no len|unsupported operand|not subscriptable|int too big|"
                      r"cannot be interpreted as an integer|initializer for ctype|takes \d+ positional|"
                      r"has no attribute|could not broadcast|operands could not|invalid literal|"
                      r"only integer scalar arrays")


# -- the two backends, side by side ------------------------------------------------------------
@pytest.fixture
def backends(emulator) -> Iterator[Backends]:
    with side_by_side("differential fuzz: the reference side") as both:
        yield both


@dataclass
class Outcome:
    error: BaseException | None = None
    undefined: bool = False  # not run: C's behaviour is undefined (HostValue.undefined)

    @property
    def key(self) -> tuple:
        if self.undefined:
            return ("undefined in C",)
        if self.error is None:
            return ("ok",)
        return (type(self.error).__name__, getattr(self.error, "status", None))

    def __repr__(self) -> str:
        return f"{type(self.error).__name__}: {self.error}" if self.error else self.key[0]


def check_message(api: str, exc: BaseException) -> None:
    """The message names the C function and the argument, never an internal's words."""
    text = str(exc)
    assert not INTERNAL.search(text), f"an internal message reached the user: {type(exc).__name__}: {text}"
    if isinstance(exc, pyaclnn.AclError):
        assert exc.api and exc.api in text and str(exc.status) in text, text
        return
    # BufferError: memory that is not host memory (a torch meta/CUDA tensor), as NumPy and DLPack say it
    assert isinstance(exc, (TypeError, ValueError, BufferError, pyaclnn.NotSupportedError)), \
        f"{type(exc).__name__}: {text}"
    assert api in text or "aclnn" in text, f"the message does not name the call: {text}"


# -- pyaclnn.acl: each function with valid arguments, then one of them made bad -------------------
@dataclass
class Ctx:
    """Per backend: device 0, 64 bytes of device memory, 16 bytes of pinned host memory (and a
    freed pinned address), a stream; what a case made is released."""
    ptr: int = 0
    host: int = 0
    freed_host: int = 0
    pageable: np.ndarray = field(default_factory=lambda: np.zeros(16, np.uint8))
    stream: Any = None
    tensor: Any = None  # an aclTensor for aclInitTensor
    keep: list[Any] = field(default_factory=list)  # host buffers a queued copy uses, until it ran


BAD_INTS = (-1, -2, 2**31, 2**32, 2**40, 2**63, 2**64, -2**63 - 1, 2**70)
BAD_OTHERS = (None, "p", 1.5, True, float("nan"), np.int64(3), np.uint64(2**63), np.array([1]), [], b"x", object())


@dataclass(frozen=True)
class HostValue:
    """A value for a host-pointer slot, made per backend (pinned addresses differ). ``undefined``:
    an int C dereferences although nothing is there (freed, past the end): the acl side would
    read or write the test process's heap (a use after free in C), so only the reference runs it."""
    label: str
    make: Callable[[Ctx], Any]
    undefined: bool = False

    def __repr__(self) -> str:
        return self.label


# What users pass where C takes a host pointer: pinned memory (its int address, a NumPy integer
# of it, past its end, freed), a NumPy array's address, device memory, nullptr, Python and NumPy
# buffers of every kind. An int that is no memory at all is not among them: C (and the emulator)
# would dereference it, a crash as in C.
HOST_VALUES = (
    HostValue("pinned", lambda c: c.host),
    HostValue("np.uint64(pinned)", lambda c: np.uint64(c.host)),
    HostValue("pinned+8", lambda c: c.host + 8, undefined=True),
    HostValue("freed pinned", lambda c: c.freed_host, undefined=True),
    HostValue("array.ctypes.data", lambda c: c.pageable.ctypes.data),
    HostValue("device ptr", lambda c: c.ptr),
    HostValue("0", lambda c: 0),
    HostValue("None", lambda c: None),
    HostValue("bytes(16)", lambda c: bytes(16)),
    HostValue("b'x'", lambda c: b"x"),
    HostValue("bytearray(16)", lambda c: bytearray(16)),
    HostValue("memoryview(bytearray(32))[::2]", lambda c: memoryview(bytearray(32))[::2]),
    HostValue("np.zeros(16, u1)", lambda c: np.zeros(16, np.uint8)),
    HostValue("np.zeros(8, f4)[::2]", lambda c: np.zeros(8, np.float32)[::2]),
    HostValue("read-only np.zeros(4, f4)", lambda c: _read_only(np.zeros(4, np.float32))),
    HostValue("np.zeros(2, f8)", lambda c: np.zeros(2, np.float64)),
    HostValue("np.zeros((), f4)", lambda c: np.zeros((), np.float32)),
    HostValue("bf16 zeros(8)", lambda c: np.zeros(8, _bf16())),
    HostValue("[0]*16", lambda c: [0] * 16),
    HostValue("'p'", lambda c: "p"),
    HostValue("1.5", lambda c: 1.5),
    HostValue("True", lambda c: True),
    HostValue("-1", lambda c: -1),
    HostValue("2**64", lambda c: 2**64),
    HostValue("object()", lambda c: object()),
)


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _bf16() -> Any:
    import ml_dtypes
    return ml_dtypes.bfloat16


# name -> (C function, valid arguments from a Ctx, what to release for a result)
def _acl_specs() -> dict[str, tuple[Callable[..., Any], Callable[[Ctx], list[Any]], Callable[[Any], None] | None]]:
    H2D, D2H, H2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST, acl.ACL_MEMCPY_HOST_TO_HOST
    return {
        "aclrtMalloc": (acl.aclrtMalloc, lambda c: [16, acl.ACL_MEM_MALLOC_HUGE_FIRST], acl.aclrtFree),
        "aclrtFree": (acl.aclrtFree, lambda c: [acl.aclrtMalloc(16, 0)], None),
        "aclrtMallocHost": (acl.aclrtMallocHost, lambda c: [16], acl.aclrtFreeHost),
        "aclrtFreeHost": (acl.aclrtFreeHost, lambda c: [acl.aclrtMallocHost(16)], None),
        "aclrtMemset": (acl.aclrtMemset, lambda c: [c.ptr, 64, 0, 16], None),
        "aclrtMemsetHost": (acl.aclrtMemset, lambda c: [c.host, 16, 0, 16], None),
        "aclrtMemsetAsync": (acl.aclrtMemsetAsync, lambda c: [c.ptr, 64, 0, 16, c.stream], None),
        "aclrtMemcpy": (acl.aclrtMemcpy, lambda c: [c.ptr, 64, np.zeros(16, np.uint8), 16, H2D], None),
        "aclrtMemcpyD2H": (acl.aclrtMemcpy, lambda c: [np.zeros(16, np.uint8), 16, c.ptr, 16, D2H], None),
        "aclrtMemcpyPinned": (acl.aclrtMemcpy, lambda c: [c.ptr, 64, c.host, 16, H2D], None),
        "aclrtMemcpyToPinned": (acl.aclrtMemcpy, lambda c: [c.host, 16, c.ptr, 16, D2H], None),
        "aclrtMemcpyH2H": (acl.aclrtMemcpy, lambda c: [np.zeros(16, np.uint8), 16, c.host, 16, H2H], None),
        "aclrtMemcpyAsync": (acl.aclrtMemcpyAsync, lambda c: [c.ptr, 64, c.ptr + 32, 16, 3, c.stream], None),
        "aclrtMemcpyAsyncPinned": (acl.aclrtMemcpyAsync, lambda c: [c.ptr, 64, c.host, 16, H2D, c.stream], None),
        "aclrtMemcpyAsyncToPinned": (acl.aclrtMemcpyAsync, lambda c: [c.host, 16, c.ptr, 16, D2H, c.stream], None),
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
        "aclrtPeekAtLastError": (acl.aclrtPeekAtLastError, lambda c: [0], None),
        "aclrtCreateEventExWithFlag": (acl.aclrtCreateEventExWithFlag, lambda c: [acl.ACL_EVENT_SYNC],
                                       acl.aclrtDestroyEvent),
        "aclGetDeviceCapability": (acl.aclGetDeviceCapability, lambda c: [0, 0], None),
        "aclDataTypeSize": (acl.aclDataTypeSize, lambda c: [acl.ACL_FLOAT], None),
        "aclCreateBoolArray": (acl.aclCreateBoolArray, lambda c: [[True, False], 2], acl.aclDestroyBoolArray),
        "aclCreateFloatArray": (acl.aclCreateFloatArray, lambda c: [[1.0, 2.5], 2], acl.aclDestroyFloatArray),
        "aclInitTensor": (acl.aclInitTensor, lambda c: [c.tensor, [2, 2], 2, acl.ACL_FLOAT, [2, 1], 0, acl.ACL_FORMAT_ND,
                                                        [4], 1, c.ptr], None),
        "aclInit": (acl.aclInit, lambda c: [None], None),  # repeated: harmless (pyaclnn ignores 100002)
        "aclnnInit": (acl.aclnnInit, lambda c: [None], None),
        "aclmdlRICaptureThreadExchangeMode": (acl.aclmdlRICaptureThreadExchangeMode, lambda c: [0],
                                              acl.aclmdlRICaptureThreadExchangeMode),  # the old mode back
    }


# The slots that take a handle (streams: the handle layer's, not fuzzed here), and the host-pointer
# slots, which take HOST_VALUES (a random int there is a host address C would read: a crash, as in C).
ARITY = {"aclrtMalloc": 2, "aclrtFree": 1, "aclrtMallocHost": 1, "aclrtFreeHost": 1, "aclrtMemset": 4,
         "aclrtMemsetHost": 4, "aclrtMemsetAsync": 4, "aclrtMemcpy": 5, "aclrtMemcpyD2H": 5, "aclrtMemcpyPinned": 5,
         "aclrtMemcpyToPinned": 5, "aclrtMemcpyH2H": 5, "aclrtMemcpyAsync": 5, "aclrtMemcpyAsyncPinned": 5,
         "aclrtMemcpyAsyncToPinned": 5, "aclrtSynchronizeStreamWithTimeout": 2, "aclrtCreateEventWithFlag": 1,
         "aclrtGetDeviceInfo": 2, "aclrtGetMemInfo": 1, "aclrtSetDevice": 1, "aclCreateTensor": 9,
         "aclCreateIntArray": 2, "aclCreateScalar": 2, "aclFloat16ToFloat": 1, "aclFloatToFloat16": 1,
         "aclrtGetLastError": 1, "aclrtPeekAtLastError": 1, "aclrtCreateEventExWithFlag": 1,
         "aclGetDeviceCapability": 2, "aclDataTypeSize": 1, "aclCreateBoolArray": 2, "aclCreateFloatArray": 2,
         "aclInitTensor": 10, "aclmdlRICaptureThreadExchangeMode": 1, "aclInit": 1, "aclnnInit": 1}
FIRST_SLOT = {"aclInitTensor": 1}  # its slot 0 is a handle (the handle layer's)
HOST_POINTERS = {("aclrtMemcpy", 2), ("aclrtMemcpyD2H", 0), ("aclrtMemcpyPinned", 2), ("aclrtMemcpyToPinned", 0),
                 ("aclrtMemcpyH2H", 0), ("aclrtMemcpyH2H", 2), ("aclrtMemcpyAsyncPinned", 2),
                 ("aclrtMemcpyAsyncToPinned", 0), ("aclrtMemsetHost", 0)}


@dataclass
class AclCase:
    name: str
    slot: int
    value: Any

    def __repr__(self) -> str:
        return f"{self.name}(arg {self.slot} = {self.value!r})"


def acl_cases(seed: int, n: int) -> list[AclCase]:
    rng = random.Random(seed)
    names = sorted(ARITY)
    out = []
    for _ in range(n):
        name = rng.choice(names)
        slot = rng.randrange(FIRST_SLOT.get(name, 0), ARITY[name])
        if (name, slot) in HOST_POINTERS:
            out.append(AclCase(name, slot, rng.choice(HOST_VALUES)))
            continue
        pool = BAD_INTS if rng.random() < 0.6 else BAD_OTHERS
        value = rng.choice(pool)
        if name in ("aclrtMalloc", "aclrtMallocHost") and slot == 0 and value in (2**31, 2**32):
            value = 2**40  # 2 and 4 GiB are sizes that work: seconds of page zeroing on each side, no check
        out.append(AclCase(name, slot, value))
    return out


def run_acl_case(case: AclCase, ctx: Ctx) -> Outcome:
    fn, valid, release = _acl_specs()[case.name]
    args = valid(ctx)
    if case.name in ("aclrtFree", "aclrtFreeHost") and case.slot == 0:
        (acl.aclrtFree if case.name == "aclrtFree" else acl.aclrtFreeHost)(args[0])  # replaced: not leaked
    args[case.slot] = case.value.make(ctx) if isinstance(case.value, HostValue) else case.value
    ctx.keep.append(args[case.slot])  # alive until the stream is synchronized (C's rule for async copies)
    try:
        result = fn(*args)
    except Exception as exc:  # noqa: BLE001 - compared and checked by the caller
        if case.name in ("aclrtFree", "aclrtFreeHost") and case.slot != 0:
            (acl.aclrtFree if case.name == "aclrtFree" else acl.aclrtFreeHost)(args[0])
        return Outcome(exc)
    if release is not None:
        release(result)
    return Outcome()


def _setup(ctx: Ctx) -> None:
    acl.aclrtSetDevice(0)
    ctx.ptr = acl.aclrtMalloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemset(ctx.ptr, 64, 0, 64)
    ctx.host = acl.aclrtMallocHost(16)
    acl.aclrtMemset(ctx.host, 16, 0, 16)  # read by the copies from it: written first (else a hazard)
    ctx.freed_host = acl.aclrtMallocHost(16)
    acl.aclrtFreeHost(ctx.freed_host)
    ctx.stream = acl.aclrtCreateStream()
    ctx.tensor = acl.aclCreateTensor([2, 2], 2, acl.ACL_FLOAT, [2, 1], 0, acl.ACL_FORMAT_ND, [4], 1, ctx.ptr)


def _teardown(ctx: Ctx) -> None:
    acl.aclrtSynchronizeStream(ctx.stream)
    acl.aclDestroyTensor(ctx.tensor)
    acl.aclrtDestroyStream(ctx.stream)
    acl.aclrtFree(ctx.ptr)
    acl.aclrtFreeHost(ctx.host)
    acl.aclGetRecentErrMsg()
    acl.aclrtGetLastError(0)
    acl.aclrtResetDevice(0)


def deviation_of(case: Any, ref: Outcome, dev: Outcome) -> str | None:
    """The kind of a documented difference this case's outcomes are, or None."""
    if getattr(case, "kind", "") == "ce" and ref.key == ("AclnnParamInvalidError", 161002) \
            and dev.key == ("AclnnInnerError", 361001) and case.undefined_values:
        return "ce-undefined-values"
    if isinstance(case, AclCase) and isinstance(case.value, HostValue) and ref.key == ("RtDrvInternalError", 507899) \
            and (case.value.undefined or case.value.label == "array.ctypes.data"):
        return "host-int-address"
    if isinstance(case, AclCase) and (case.name, case.slot) in (("aclCreateTensor", 2), ("aclInitTensor", 3)) \
            and dev.key == ("ok",) \
            and ref.key == ("AclnnInnerNullptrError", 561103):
        return "tensor-unknown-dtype"
    return None


def compare(b: Backends, case: Any, run: Callable[[Any, Any], Outcome], ctxs: dict[str, Any],
            api: str, problems: list[str]) -> tuple[Outcome, Outcome]:
    """Run ``case`` on both backends; what is wrong with it is added to ``problems`` (all the
    cases run, so one report lists every difference)."""
    with active(b.numpy):
        ref = run(case, ctxs["numpy"])
    if getattr(getattr(case, "value", None), "undefined", False):
        dev = Outcome(undefined=True)  # C would use the test process's heap: the reference alone
    else:
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


def acl_problems(b: Backends, seed: int, n: int) -> tuple[int, list[str]]:
    """Run ``n`` cases of ``seed`` on both backends: (how many the reference refused, the problems)."""
    ctxs = {"numpy": Ctx(), "acl": Ctx()}
    for name, backend in (("numpy", b.numpy), ("acl", b.acl)):
        with active(backend):
            _setup(ctxs[name])
    refused, problems = 0, []
    try:
        for case in acl_cases(seed, n):
            api = "aclrtMemcpy" if case.name.startswith("aclrtMemcpy") and "Async" not in case.name else \
                "aclrtMemcpyAsync" if case.name.startswith("aclrtMemcpyAsync") else \
                "aclrtMemset" if case.name == "aclrtMemsetHost" else case.name
            ref, _ = compare(b, case, run_acl_case, ctxs, api, problems)
            for name, backend in (("numpy", b.numpy), ("acl", b.acl)):  # the next case's copies wait
                with active(backend):
                    acl.aclrtSynchronizeStream(ctxs[name].stream)
                ctxs[name].keep.clear()
            refused += ref.error is not None
    finally:
        for name, backend in (("numpy", b.numpy), ("acl", b.acl)):
            with active(backend):
                _teardown(ctxs[name])
    return refused, problems


@pytest.mark.parametrize("seed", _seeds())
def test_acl_functions_agree_on_bad_arguments(backends: Backends, seed: int) -> None:
    n = ACL_CASES * SCALE
    refused, problems = acl_problems(backends, seed, n)
    assert not problems, f"{len(problems)} of {n} cases:\n" + "\n".join(problems)
    assert refused > n // 2  # the cases are bad ones



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
        lambda: np.broadcast_to(_array(rng, ()), (10**6, 10**6)),                   # 10^12 elements
        lambda: np.ones(shape + (1,) * 7 + (2,), F32),                              # rank 9+
        lambda: a[..., ::-1] if a.ndim else a,
        lambda: np.full(shape, np.nan, F32),
        lambda: "x",
        lambda: np.ones((0,) + shape, F32),
    ]
    if _TORCH is not None:  # torch tensors, alone or mixed with arrays (torch in, torch out)
        t = _TORCH
        options += [lambda: t.from_numpy(a), lambda: t.from_numpy(a).bfloat16(), lambda: t.from_numpy(a).to(t.int64),
                    lambda: t.from_numpy(a).requires_grad_() if a.ndim else t.from_numpy(a),
                    lambda: t.empty(shape, device="meta")]
    return options[pick % len(options)]()


try:
    import torch as _TORCH
except ImportError:  # the oldest-dependencies run: arrays only
    _TORCH = None


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


def function_problems(b: Backends, seed: int, n: int) -> tuple[int, list[str]]:
    """Run ``n`` cases of ``seed`` on both backends: (how many the reference refused, the problems)."""
    refused, problems = 0, []
    for case in function_cases(seed, n):
        ref, _ = compare(b, case, run_fn_case, {"numpy": None, "acl": None}, "aclnn", problems)
        refused += ref.error is not None
    return refused, problems


@pytest.mark.parametrize("seed", _seeds())
def test_functions_and_op_agree_on_bad_inputs(backends: Backends, seed: int) -> None:
    n = FUNCTION_CASES * SCALE
    refused, problems = function_problems(backends, seed, n)
    assert not problems, f"{len(problems)} of {n} cases:\n" + "\n".join(problems)
    assert refused > n // 3


def test_the_deviation_table_is_the_documented_one() -> None:
    """docs/reliability.md lists exactly the kinds of DEVIATIONS, each with its reason."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "reliability.md").read_text()
    section = text.split("## Deliberate differences", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([\w-]+)` \| (.+?) \|$", section, re.M))
    assert set(rows) == set(DEVIATIONS), (sorted(rows), sorted(DEVIATIONS))


# Cases the offline runs (many seeds, larger counts) found, kept whatever the seeds draw: each
# with the outcome both backends must give (class, status), or the documented deviation's.
FOUND = [
    # a stride array shorter than viewDimsNum: C reads past it (opbase aclTensor::aclTensor), the
    # reference said NULL (561103), acl read garbage: both refuse it now, naming stride
    (AclCase("aclCreateTensor", 3, []), ("AclnnParamInvalidError", 161002)),
    (AclCase("aclCreateTensor", 3, np.array([1])), ("AclnnParamInvalidError", 161002)),
    # bytes iterate as ints (b"x" -> [120]): no int64 array C would mean
    (AclCase("aclCreateTensor", 3, b"x"), ("TypeError", None)),
    (AclCase("aclCreateIntArray", 0, "12"), ("TypeError", None)),
    # an int host address outside pinned memory: reference 507899 (host-int-address)
    (AclCase("aclrtMemcpyToPinned", 0, HOST_VALUES[3]), ("RtDrvInternalError", 507899)),
    (AclCase("aclrtMemcpyAsyncPinned", 2, HOST_VALUES[2]), ("RtDrvInternalError", 507899)),
    (AclCase("aclrtMemcpyPinned", 2, HOST_VALUES[4]), ("RtDrvInternalError", 507899)),
    # an unknown dataType: reference NULL at creation (tensor-unknown-dtype)
    (AclCase("aclCreateTensor", 2, -2), ("AclnnInnerNullptrError", 561103)),
    (AclCase("aclInitTensor", 3, -2), ("AclnnInnerNullptrError", 561103)),
    # unknown flag bits: CANN refuses them (api_error.cc EventCreateEx); the reference created the event
    (AclCase("aclrtCreateEventExWithFlag", 0, 2**31), ("AclInvalidParamError", 100000)),
    # a device id past the count: the acl layer's 100000 (acl.cpp aclGetDeviceCapabilityImpl); the
    # emulator said 107001
    (AclCase("aclGetDeviceCapability", 0, 2**31), ("AclInvalidParamError", 100000)),
    # the capture mode unchecked: the reference kept an ndarray as the thread's mode, cffi overflowed
    (AclCase("aclmdlRICaptureThreadExchangeMode", 0, np.array([1])), ("TypeError", None)),
    (AclCase("aclmdlRICaptureThreadExchangeMode", 0, 2**40), ("ValueError", None)),
    # a value that is no aclDataType: the source's default size, 8 (data_buffer.cpp), not enum's ValueError
    (AclCase("aclDataTypeSize", 0, -2), ("ok",)),
    # configPath: the acl side failed encoding a non-str (AttributeError), the reference ignored it
    (AclCase("aclInit", 0, 1.5), ("TypeError", None)),
    (AclCase("aclnnInit", 0, 2**40), ("TypeError", None)),
    # a repeated aclInit returns 100002 before reading its file (acl.cpp aclInitImpl): the emulator read it
    (AclCase("aclInit", 0, "/nonexistent/acl.json"), ("ok",)),
]


def test_a_first_aclinit_reads_its_config_file(backend: str) -> None:
    """After aclFinalize the next aclInit is a first one: it opens its file (GetStrFromConfigPath)."""
    pyaclnn.mse_loss_backward(np.ones(2, F32), np.ones(2, F32), np.ones(2, F32))  # pyaclnn's session
    acl.aclFinalize()
    with pytest.raises(pyaclnn.AclError) as info:
        acl.aclInit("/nonexistent/acl.json")
    assert info.value.status == 100003 and info.value.api == "aclInit"
    out = pyaclnn.mse_loss_backward(np.ones(2, F32), np.zeros(2, F32), np.ones(2, F32), "sum")  # recovers
    np.testing.assert_array_equal(out, [-2, -2])


def test_found_cases(backends: Backends) -> None:
    ctxs = {"numpy": Ctx(), "acl": Ctx()}
    for name, b in (("numpy", backends.numpy), ("acl", backends.acl)):
        with active(b):
            _setup(ctxs[name])
    try:
        for case, want in FOUND:
            problems: list[str] = []
            api = {"aclrtMemcpyToPinned": "aclrtMemcpy", "aclrtMemcpyPinned": "aclrtMemcpy",
                   "aclrtMemcpyAsyncPinned": "aclrtMemcpyAsync"}.get(case.name, case.name)
            ref, dev = compare(backends, case, run_acl_case, ctxs, api, problems)
            assert not problems, problems
            assert ref.key == want, (case, ref)
            if case.name == "aclDataTypeSize":
                for b in (backends.numpy, backends.acl):
                    with active(b):
                        assert acl.aclDataTypeSize(case.value) == 8
            for name, b in (("numpy", backends.numpy), ("acl", backends.acl)):
                with active(b):
                    acl.aclrtSynchronizeStream(ctxs[name].stream)
                ctxs[name].keep.clear()
    finally:
        for name, b in (("numpy", backends.numpy), ("acl", backends.acl)):
            with active(b):
                _teardown(ctxs[name])
