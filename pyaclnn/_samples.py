"""The four documented samples, in idiomatic pyaclnn, for ``python -m pyaclnn samples``.

The same computations as ``examples/<op>.py`` (which are not installed with the package):
the data of the CANN documentation's C++ samples (CrossEntropyLossGrad, whose page has none:
N = 4, C = 3, mean, ignore_index -100, with a weight), printed as the samples print them.
Each function takes ``emit`` (one call per printed line) and runs on the active backend.

The CANN pages print no outputs, so ``EXPECTED`` holds each sample's documented formula
(/work/shared/reference/ops.md) evaluated by hand in float64 on the sample's data; the
closed forms are in the comments, and tests/test_samples.py checks every value against
PyTorch CPU. ``run`` prints each value beside its expected one and says OK or MISMATCH.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from . import _env
from ._device import Device
from ._executor import CrossEntropyLossGrad, GroupNormBackward, MseLossBackward, PreluBackward
from ._tensor import Tensor

Emit = Callable[[str], None]

__all__ = ["SAMPLES", "EXPECTED", "NOTES", "ALIASES", "Expected", "run", "resolve", "mse_loss_backward",
           "group_norm_backward", "cross_entropy_loss_grad", "prelu_backward"]

# A float32 result matches when |got - expected| <= ATOL + RTOL * |expected|: float32 rounding
# of values up to ~200, and GroupNorm's cancellation noise (~1e-6) around its exact zeros.
ATOL, RTOL = 1e-5, 1e-5


def _lines(emit: Emit, label: str, tensor: Tensor) -> None:
    for i, value in enumerate(tensor.numpy().ravel()):
        emit("%s[%d] is: %f" % (label, i, value))


def mse_loss_backward(emit: Emit = print) -> None:
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        grad_output = Tensor.from_numpy(np.array([[0, 1], [2, 3]], np.float32))
        input = Tensor.from_numpy(np.array([[0, 1], [2, 3]], np.float32))
        target = Tensor.from_numpy(np.ones((2, 2), np.float32))
        out = Tensor.zeros((2, 2), np.float32)
        MseLossBackward(grad_output, input, target, "mean", out).run(stream)
        stream.synchronize()
        _lines(emit, "result", out)


def group_norm_backward(emit: Emit = print) -> None:
    N, C, HxW, group = 2, 3, 4, 1
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        grad_out = Tensor.from_numpy(np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4))
        input = Tensor.from_numpy(np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4))
        mean = Tensor.from_numpy(np.array([[6.5], [18.5]], np.float32))
        rstd = Tensor.from_numpy(np.array([[0.2896827], [0.2896827]], np.float32))
        gamma = Tensor.from_numpy(np.ones(3, np.float32))
        grad_input = Tensor.zeros((2, 3, 4), np.float32)
        grad_gamma = Tensor.zeros(3, np.float32)
        grad_beta = Tensor.zeros(3, np.float32)
        GroupNormBackward(grad_out, input, mean, rstd, gamma, N, C, HxW, group, (True, True, True),
                          grad_input, grad_gamma, grad_beta).run(stream)
        stream.synchronize()
        _lines(emit, "gradInputResultData", grad_input)
        _lines(emit, "gradGammaOutResultData", grad_gamma)
        _lines(emit, "gradBetaOutResultData", grad_beta)


def cross_entropy_loss_grad(emit: Emit = print) -> None:
    logits = np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0], [2.0, -1.0, 0.0], [0.5, 0.5, 1.5]])
    log_softmax = (logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))).astype(np.float32)
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        grad_loss = Tensor.from_numpy(np.array(1.0, np.float32))  # 0-D for "mean"
        log_prob = Tensor.from_numpy(log_softmax)
        target = Tensor.from_numpy(np.array([1, 2, 0, 2], np.int64))
        weight = Tensor.from_numpy(np.array([0.2, 0.3, 0.5], np.float32))
        out = Tensor.zeros((4, 3), np.float32)
        CrossEntropyLossGrad(grad_loss, log_prob, target, weight, reduction="mean", ignore_index=-100,
                             out=out).run(stream)
        stream.synchronize()
        _lines(emit, "result", out)


def prelu_backward(emit: Emit = print) -> None:
    with Device(_env.device_id()) as device, device.create_stream() as stream:
        input = Tensor.from_numpy(np.arange(8, dtype=np.float32).reshape(4, 2))
        weight = Tensor.from_numpy(np.array([0.5, 0.5], np.float32))
        grad_output = Tensor.from_numpy(np.ones((4, 2), np.float32))
        grad_input = Tensor.zeros((4, 2), np.float32)
        grad_weight = Tensor.zeros(2, np.float32)
        PreluBackward(grad_output, input, weight, grad_input, grad_weight).run(stream)
        stream.synchronize()
        _lines(emit, "gradInput", grad_input)
        _lines(emit, "gradWeight", grad_weight)


# In the order of the specification's documents.
SAMPLES: dict[str, Callable[[Emit], None]] = {
    "MseLossBackward": mse_loss_backward,
    "GroupNormBackward": group_norm_backward,
    "CrossEntropyLossGrad": cross_entropy_loss_grad,
    "PreluBackward": prelu_backward,
}

# Short names accepted on the command line, the names of ``bench --case``.
ALIASES: dict[str, str] = {"mse": "MseLossBackward", "group_norm": "GroupNormBackward",
                           "cross_entropy": "CrossEntropyLossGrad", "prelu": "PreluBackward"}


def resolve(name: str) -> str | None:
    """The sample for a name: MseLossBackward (any case, "aclnn" prefix allowed), the short name
    mse, or the function name mse_loss_backward; None if there is none."""
    key = name.strip().lower()
    key = key[5:] if key.startswith("aclnn") else key
    for full, function in SAMPLES.items():
        if key in (full.lower(), function.__name__):
            return full
    return ALIASES.get(key)


Expected = dict[str, tuple[float, ...]]

_GN_RSTD = 0.2896827  # the sample's rstd (1/std of 1..12, rounded as the page gives it)
EXPECTED: dict[str, Expected] = {
    # mean reduction: gradOutput * 2 * (self - target) / numel, gradOutput = self = [0, 1, 2, 3],
    # target = 1, numel = 4.
    "MseLossBackward": {"result": (0.0, 0.0, 1.0, 3.0)},
    "GroupNormBackward": {
        # gradInput = rstd * gamma * (dy - mean(dy) - xhat * mean(dy * xhat)) per group, with
        # xhat = (x - mean) * rstd. The sample's gradOut equals its input, so dy - mean(dy) =
        # x - mean and mean(dy * xhat) = var * rstd: the bracket is (x - mean)(1 - var * rstd^2),
        # zero up to the rounding of the page's rstd (|value| < 4e-7).
        "gradInputResultData": (0.0,) * 24,
        # gradGamma[c] = rstd * sum over n, hw of dy * (x - mean): -262, 10, 538 times rstd.
        "gradGammaOutResultData": (-262 * _GN_RSTD, 10 * _GN_RSTD, 538 * _GN_RSTD),
        # gradBeta[c] = sum over n, hw of dy: 1+2+3+4 + 13+14+15+16 = 68, then 100, 132.
        "gradBetaOutResultData": (68.0, 100.0, 132.0),
    },
    # (softmax(logProb) - onehot(target)) * weight[target] / sum(weight[target]), with
    # logProb the float32 log_softmax of the sample's logits.
    "CrossEntropyLossGrad": {"result": (
        0.0462447779, -0.0742936569, 0.0280488756, 0.0164371109, 0.0181658152, -0.0346029249,
        -0.020827368, 0.00560134194, 0.015226026, 0.070647182, 0.070647182, -0.141294371)},
    # gradInput = gradOutput where input > 0, else weight * gradOutput (input = 0..7, weight 0.5);
    # gradWeight = sum of gradOutput * input where input <= 0 (only input 0 is): 0.
    "PreluBackward": {"gradInput": (0.5,) + (1.0,) * 7, "gradWeight": (0.0, 0.0)},
}

# Samples whose documented data give trivial values, said before the values are printed.
NOTES: dict[str, str] = {
    "GroupNormBackward": "the documented data are degenerate for gradInput: gradOut equals input, whose "
                         "per-group mean and scale GroupNorm's backward removes, so all 24 gradInput values "
                         "are 0 (printed 0.000000 or -0.000000, float32 rounding noise)",
    "PreluBackward": "the documented data have no negative input, so gradWeight is 0",
}


def run(name: str, emit: Emit = print) -> bool:
    """Run sample ``name`` on the active backend; emit each value with the expected one, then
    ``<name>: OK`` or ``<name>: MISMATCH ...``. True when every value matches."""
    lines: list[str] = []
    SAMPLES[name](lines.append)
    expected = [(label, i, value) for label, values in EXPECTED[name].items() for i, value in enumerate(values)]
    if name in NOTES:
        emit(f"note: {NOTES[name]}")
    bad = []
    for k, line in enumerate(lines):
        if k < len(expected):
            label, i, want = expected[k]
            got = float(line.rsplit(" ", 1)[1])
            ok = line.startswith(f"{label}[{i}] is: ") and abs(got - want) <= ATOL + RTOL * abs(want)
            line += f"  (expected {want:f})" + ("" if ok else "  MISMATCH")
            if not ok:
                bad.append(line.split(" is:")[0])
        emit(line)
    if len(lines) != len(expected):
        bad.append(f"{len(lines)} values printed, {len(expected)} expected")
    if bad:
        emit(f"aclnn{name}: MISMATCH ({len(bad)} of {len(expected)}: {', '.join(bad)})")
    else:
        emit(f"aclnn{name}: OK ({len(expected)} values match the expected within {ATOL:g} + {RTOL:g} * |expected|)")
    return not bad
