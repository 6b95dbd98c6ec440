"""examples/*.py run as scripts on the reference backend, against independent oracles.

Each documented sample exists twice (``<op>_acl.py``, the line-by-line port of the C++ sample
through ``pyaclnn.acl``; ``<op>.py``, idiomatic pyaclnn); both must print the same lines, and
those numbers must match the documented formula (MSE) or PyTorch CPU autograd / aten backward
ops computed here (GroupNorm, PReLU, CrossEntropy). They also run unchanged on the acl
backend through the CANN ABI emulator (tests/emulator).
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import subprocess_env

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
OPS = ("mse_loss_backward", "group_norm_backward", "prelu_backward", "cross_entropy_loss_grad")
LINE = re.compile(r"^(\w+)\[(\d+)\] is: (-?\d+\.\d{6})$")


def run_script(path: Path) -> str:
    proc = subprocess.run([sys.executable, str(path)], env=subprocess_env(), capture_output=True, text=True,
                          check=False, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, f"{path.name} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert proc.stderr == "", proc.stderr
    return proc.stdout


def parse(stdout: str, backend: str = "numpy") -> dict[str, np.ndarray]:
    """{label: values} from the sample's `label[i] is: %f` lines (every line must be one),
    after the first line, which names the backend that ran."""
    values: dict[str, list[float]] = {}
    first, *lines = stdout.splitlines()
    assert first.startswith(f"backend: {backend} (SoC "), first
    for line in lines:
        m = LINE.match(line)
        assert m, f"unexpected output line {line!r}"
        label, index, value = m.group(1), int(m.group(2)), float(m.group(3))
        got = values.setdefault(label, [])
        assert index == len(got), f"{label}[{index}] out of order"
        got.append(value)
    return {k: np.array(v) for k, v in values.items()}


@pytest.fixture(scope="module")
def outputs() -> dict[str, tuple[str, str]]:
    """{op: (stdout of <op>_acl.py, stdout of <op>.py)}, each script run once."""
    return {op: (run_script(EXAMPLES / f"{op}_acl.py"), run_script(EXAMPLES / f"{op}.py")) for op in OPS}


def close(printed: np.ndarray, oracle, atol: float = 2e-6, rtol: float = 1e-5) -> None:
    """Printed with %f (6 decimals): compare to the oracle within that rounding."""
    oracle = np.asarray(oracle, dtype=np.float64).ravel()
    assert printed.shape == oracle.shape
    np.testing.assert_allclose(printed, oracle, rtol=rtol, atol=atol)


def test_eight_scripts_exist() -> None:
    names = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert names == sorted([f"{op}.py" for op in OPS] + [f"{op}_acl.py" for op in OPS])


@pytest.mark.parametrize("op", OPS)
def test_both_styles_print_the_same_numbers(outputs, op: str) -> None:
    ported, idiomatic = outputs[op]
    assert ported.strip(), "no output"
    assert ported.splitlines() == idiomatic.splitlines()


def test_mse_loss_backward_matches_the_documented_formula(outputs) -> None:
    # grad * (x - y) * 2 / numel for reduction mean: grad = x = [0, 1, 2, 3], y = 1, numel 4.
    got = parse(outputs["mse_loss_backward"][0])
    assert list(got) == ["result"]
    close(got["result"], [0.0, 0.0, 1.0, 3.0])


def test_group_norm_backward_matches_aten(outputs) -> None:
    got = parse(outputs["group_norm_backward"][0])
    assert list(got) == ["gradInputResultData", "gradGammaOutResultData", "gradBetaOutResultData"]
    x = torch.arange(1, 25, dtype=torch.float64).reshape(2, 3, 4)
    dy = x.clone()
    mean = torch.tensor([[6.5], [18.5]], dtype=torch.float64)        # (N, group), as the sample gives
    rstd = torch.tensor([[0.2896827], [0.2896827]], dtype=torch.float64)
    gamma = torch.ones(3, dtype=torch.float64)
    dx, dgamma, dbeta = torch.ops.aten.native_group_norm_backward(dy, x, mean, rstd, gamma, 2, 3, 4, 1,
                                                                 [True, True, True])
    close(got["gradInputResultData"], dx.numpy(), atol=1e-5)  # ~0: float32 cancellation noise
    close(got["gradGammaOutResultData"], dgamma.numpy(), rtol=2e-6, atol=1e-5)
    close(got["gradBetaOutResultData"], dbeta.numpy())
    np.testing.assert_array_equal(got["gradBetaOutResultData"], [68, 100, 132])


def test_prelu_backward_matches_autograd_and_aten(outputs) -> None:
    got = parse(outputs["prelu_backward"][0])
    assert list(got) == ["gradInput", "gradWeight"]
    x = torch.arange(8, dtype=torch.float32).reshape(4, 2).requires_grad_()
    w = torch.tensor([0.5, 0.5]).requires_grad_()
    g = torch.ones(4, 2)
    torch.nn.functional.prelu(x, w).backward(g)
    close(got["gradInput"], x.grad.numpy())
    close(got["gradWeight"], w.grad.numpy())
    gi, gw = torch.ops.aten._prelu_kernel_backward(g, x.detach(), w.detach().reshape(1, 2))
    close(got["gradInput"], gi.numpy())
    close(got["gradWeight"], gw.sum(0).numpy())  # the kernel's gradient is per element


def test_cross_entropy_loss_grad_matches_nll_loss_autograd(outputs) -> None:
    got = parse(outputs["cross_entropy_loss_grad"][0])
    assert list(got) == ["result"]
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0], [2.0, -1.0, 0.0], [0.5, 0.5, 1.5]],
                          dtype=torch.float64)
    log_prob = torch.log_softmax(logits, dim=1).float().requires_grad_()  # the forward's logProb
    target = torch.tensor([1, 2, 0, 2])
    weight = torch.tensor([0.2, 0.3, 0.5])
    # The op's output is the gradient w.r.t. the forward's input: log_softmax_backward(nll_loss_backward).
    loss = torch.nn.functional.nll_loss(torch.log_softmax(log_prob, dim=1), target, weight=weight,
                                        ignore_index=-100, reduction="mean")
    loss.backward(torch.tensor(1.0))
    close(got["result"], log_prob.grad.numpy())
    # Independent check of the same: (softmax - onehot) * w[t] / sum(w[t]).
    p = log_prob.detach().double().exp()
    onehot = torch.nn.functional.one_hot(target, 3).double()
    wt = weight.double()[target]
    close(got["result"], ((p - onehot) * wt[:, None] / wt.sum()).numpy())


@pytest.mark.parametrize("style", ["_acl", ""])
@pytest.mark.parametrize("op", OPS)
def test_examples_run_on_the_acl_backend_through_the_emulator(outputs, emulator_home: Path, op: str,
                                                              style: str) -> None:
    """The same scripts on the acl backend (cffi, the emulated CANN ABI): same lines, same
    numbers up to float32 rounding noise (the emulator's kernels are not the reference's)."""
    home = Path(emulator_home)
    proc = subprocess.run([sys.executable, str(EXAMPLES / f"{op}{style}.py")],
                          env=subprocess_env(PYACLNN_BACKEND="acl", ASCEND_HOME_PATH=str(home),
                                         ASCEND_OPP_PATH=str(home / "opp")),
                          capture_output=True, text=True, check=False, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    got, ref = parse(proc.stdout, backend="acl"), parse(outputs[op][0])
    assert list(got) == list(ref)
    for label in ref:
        close(got[label], ref[label], atol=1e-5)
