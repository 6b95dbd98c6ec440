"""Torch in, torch out: the NumPy-in/out functions given torch CPU tensors return torch tensors
(float32, float16, bfloat16), checked against torch autograd in float64 on the same values; mixed
inputs; NumPy callers never import torch (pyaclnn/_functions/torch_out.py)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import pyaclnn
from conftest import subprocess_env

torch = pytest.importorskip("torch")
F = torch.nn.functional

# rtol/atol of each dtype against float64 autograd on the dtype's own values
TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (4e-3, 4e-3), torch.bfloat16: (3e-2, 3e-2)}
DTYPES = list(TOL)


def check(got, want, dtype):
    """``got`` is a plain torch CPU tensor of ``dtype``, close to the float64 ``want``."""
    assert type(got) is torch.Tensor and got.dtype == dtype and got.device.type == "cpu", type(got)
    assert not got.requires_grad and got.grad_fn is None
    assert got.shape == want.shape, (got.shape, want.shape)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(got.double(), want.double(), rtol=rtol, atol=atol)


def leaf(t):
    """A float64 leaf of ``t``'s values (already rounded to its dtype), for autograd."""
    return t.detach().double().requires_grad_()


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(25)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_mse_loss_backward(backend, gen, dtype, reduction):
    x, y = (torch.randn(3, 5, generator=gen).to(dtype) for _ in range(2))
    g = torch.randn(3, 5, generator=gen).to(dtype) if reduction == "none" else torch.tensor(0.7).to(dtype)
    x64 = leaf(x)
    F.mse_loss(x64, y.double(), reduction=reduction).backward(g.double())
    check(pyaclnn.mse_loss_backward(g, x, y, reduction), x64.grad, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_prelu_backward(backend, gen, dtype):
    x = torch.randn(2, 4, 3, generator=gen).to(dtype)
    w = torch.rand(4, generator=gen).to(dtype)
    g = torch.randn(2, 4, 3, generator=gen).to(dtype)
    x64, w64 = leaf(x), leaf(w)
    F.prelu(x64, w64).backward(g.double())
    grad_input, grad_weight = pyaclnn.prelu_backward(g, x, w)
    check(grad_input, x64.grad, dtype)
    check(grad_weight, w64.grad, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_group_norm_backward(backend, gen, dtype):
    N, C, HxW, G, eps = 2, 4, 6, 2, 1e-5
    x = torch.randn(N, C, HxW, generator=gen).to(dtype)
    gamma, beta = torch.randn(C, generator=gen).to(dtype), torch.randn(C, generator=gen).to(dtype)
    g = torch.randn(N, C, HxW, generator=gen).to(dtype)
    x64, gamma64, beta64 = leaf(x), leaf(gamma), leaf(beta)
    F.group_norm(x64, G, gamma64, beta64, eps).backward(g.double())
    groups = x.double().reshape(N, G, -1)  # the forward's statistics, as the device's forward gives them
    mean = groups.mean(-1).to(dtype)
    rstd = (groups.var(-1, unbiased=False) + eps).rsqrt().to(dtype)
    got = pyaclnn.group_norm_backward(g, x, mean, rstd, gamma, N, C, HxW, G)
    for a, want in zip(got, (x64.grad, gamma64.grad, beta64.grad)):
        check(a, want, dtype)
    # an output not asked for stays None
    dx, dgamma, dbeta = pyaclnn.group_norm_backward(g, x, mean, rstd, gamma, N, C, HxW, G, (True, False, True))
    assert dgamma is None and type(dx) is torch.Tensor and type(dbeta) is torch.Tensor


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_cross_entropy_loss_grad(backend, gen, dtype, reduction):
    n, c = 5, 7
    log_prob = torch.log_softmax(torch.randn(n, c, generator=gen), dim=1).to(dtype)
    target = torch.tensor([0, 6, 3, -100, 1])
    weight = torch.rand(c, generator=gen)  # float32, for every dtype (the operator's rule)
    g = torch.rand(n, generator=gen).to(dtype) if reduction == "none" else torch.tensor(1.5).to(dtype)
    lp64 = leaf(log_prob)
    # the loss's input is log_prob (a log_softmax already): cross_entropy's gradient w.r.t. it is
    # the operator's exp(log_prob) * nll - onehot * nll
    F.cross_entropy(lp64, target, weight=weight.double(), reduction=reduction).backward(g.double())
    check(pyaclnn.cross_entropy_loss_grad(g, log_prob, target, weight, reduction=reduction), lp64.grad, dtype)


def test_repeated_calls_and_parameters(backend, gen):
    """The second call runs the memo (another code path); an nn.Parameter (requires_grad) is read
    detached and gives a plain tensor."""
    x, y, g = (torch.randn(4, 3, generator=gen) for _ in range(3))
    w = torch.nn.Parameter(torch.rand(3, generator=gen))
    first = pyaclnn.prelu_backward(g, x, w)
    second = pyaclnn.prelu_backward(g, x, w)
    for a, b in zip(first, second):
        assert type(a) is torch.Tensor and type(b) is torch.Tensor and torch.equal(a, b)
    assert w.grad is None
    for _ in range(2):
        assert type(pyaclnn.mse_loss_backward(g, x, y, "none")) is torch.Tensor


def test_mixed_inputs_give_torch(backend, gen):
    """Any torch tensor among the tensor arguments: torch out; none: NumPy out."""
    x, y, g = (torch.randn(2, 3, generator=gen) for _ in range(3))
    want = pyaclnn.mse_loss_backward(g, x, y, "none")
    for args in [(g.numpy(), x, y.numpy()), (g, x.numpy(), y.numpy()), (g.numpy(), x.numpy(), y)]:
        got = pyaclnn.mse_loss_backward(*args, "none")
        assert type(got) is torch.Tensor and torch.equal(got, want)
    got_np = pyaclnn.mse_loss_backward(g.numpy(), x.numpy(), y.numpy(), "none")
    assert type(got_np) is np.ndarray and np.array_equal(got_np, want.numpy())
    # only the int64 target is a torch tensor: still torch out
    lp = torch.log_softmax(torch.randn(3, 4, generator=gen), 1)
    out = pyaclnn.cross_entropy_loss_grad(np.float32(1.0), lp.numpy(), torch.tensor([0, 1, 3]))
    assert type(out) is torch.Tensor and out.dtype == torch.float32
    # a pyaclnn Tensor with a torch tensor: torch out
    with pyaclnn.Tensor.from_numpy(x.numpy()) as t:
        got = pyaclnn.mse_loss_backward(g, t, y, "none")
        assert type(got) is torch.Tensor and torch.equal(got, want)


def test_bfloat16_out_keeps_its_bits(backend):
    """The bfloat16 output is the same bits as the NumPy (ml_dtypes) call's, not a conversion."""
    x = (torch.arange(12, dtype=torch.float32).reshape(3, 4) / 7).bfloat16()
    y, g = torch.ones(3, 4, dtype=torch.bfloat16), torch.full((3, 4), 0.3, dtype=torch.bfloat16)
    got = pyaclnn.mse_loss_backward(g, x, y, "sum")
    as_np = pyaclnn.mse_loss_backward(*map(_ml_bf16, (g, x, y)), "sum")
    assert got.dtype == torch.bfloat16
    assert np.array_equal(got.view(torch.int16).numpy(), as_np.view(np.int16))


def _ml_bf16(t):
    import ml_dtypes
    return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)


def test_numpy_callers_never_import_torch():
    """torch is looked up in sys.modules, never imported, when no argument is a torch tensor."""
    code = ("import sys, numpy as np, pyaclnn\n"
            "a = np.ones((2, 3), np.float32)\n"
            "out = pyaclnn.mse_loss_backward(a, a, a, 'none'); pyaclnn.prelu_backward(a, a, np.ones(3, np.float32))\n"
            "assert type(out) is np.ndarray\n"
            "print('torch' in sys.modules)\n")
    run = subprocess.run([sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"
