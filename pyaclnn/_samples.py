"""The four documented samples, in idiomatic pyaclnn, for ``python -m pyaclnn samples``.

The same computations as ``examples/<op>.py`` (which are not installed with the package):
the data of the CANN documentation's C++ samples (CrossEntropyLossGrad, whose page has none:
N = 4, C = 3, mean, ignore_index -100, with a weight), printed as the samples print them.
Each function takes ``emit`` (one call per printed line) and runs on the active backend.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import _env
from ._device import Device
from ._executor import CrossEntropyLossGrad, GroupNormBackward, MseLossBackward, PreluBackward
from ._tensor import Tensor

Emit = Callable[[str], None]

__all__ = ["SAMPLES", "mse_loss_backward", "group_norm_backward", "cross_entropy_loss_grad", "prelu_backward"]


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
