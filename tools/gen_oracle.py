"""Regenerate tests/data/oracle.json: PyTorch CPU's answers for a set of small operator calls.

Usage: python tools/gen_oracle.py [--check]   (needs torch)
--check exits 1 (and writes nothing) when the stored file differs from what torch computes now;
a test runs it wherever torch is installed.

Why stored: .ci/run's oldest-dependencies venv (Python 3.10, numpy 1.24, ml_dtypes 0.4) has no
torch (PyPI has no CPU build of it for Linux x86_64), yet its numerics must be checked against an
independent oracle. tests/test_oracle_stored.py compares pyaclnn there with these answers. The
inputs are stored too (as float64 values exactly representable in their dtype), so nothing
depends on a random generator's stream across NumPy versions.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ORACLE = ROOT / "tests" / "data" / "oracle.json"
DTYPES = ("float32", "float16", "bfloat16")


def _np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, lo: float = -2, hi: float = 2) -> list:
    """Values rounded to ``dtype`` (so the stored float64 is exactly the input), as nested lists."""
    return rng.uniform(lo, hi, shape).astype(np.float32).astype(_np_dtype(dtype)).astype(np.float64).tolist()


def cases() -> list[dict[str, Any]]:
    """The calls: op, dtype, inputs (lists of float64, or ints for targets), attributes."""
    rng = np.random.default_rng(20261123)
    out: list[dict[str, Any]] = []
    for dtype in DTYPES:
        for shapes in (((2, 3), (2, 3), (2, 3)), ((4, 1, 3), (2, 3), (1, 3)), ((), (5,), (5,))):
            for reduction in ("mean", "none"):
                g, x, y = (_rand(rng, s, dtype) for s in shapes)
                out.append({"op": "mse_loss_backward", "dtype": dtype,
                            "inputs": {"grad_output": g, "input": x, "target": y}, "attrs": {"reduction": reduction}})
        for N, C, HxW, G, gamma in ((2, 6, 5, 3, True), (3, 4, 7, 2, False)):
            inputs = {"grad_out": _rand(rng, (N, C, HxW), dtype), "input": _rand(rng, (N, C, HxW), dtype),
                      "mean": _rand(rng, (N, G), dtype, -0.5, 0.5), "rstd": _rand(rng, (N, G), dtype, 0.5, 2),
                      "gamma": _rand(rng, (C,), dtype) if gamma else None}
            out.append({"op": "group_norm_backward", "dtype": dtype, "inputs": inputs,
                        "attrs": {"N": N, "C": C, "HxW": HxW, "group": G}})
        for reduction in ("mean", "sum", "none"):
            N, C = 6, 5
            logits = rng.standard_normal((N, C))
            log_prob = (logits - np.log(np.exp(logits).sum(1, keepdims=True))).astype(_np_dtype(dtype))
            target = rng.integers(0, C, N)
            target[2] = -100  # ignored
            inputs = {"grad_loss": _rand(rng, (N,) if reduction == "none" else (), dtype, 0.5, 1.5),
                      "log_prob": log_prob.astype(np.float64).tolist(), "target": target.tolist(),
                      "weight": rng.uniform(0.5, 2, C).astype(np.float32).astype(np.float64).tolist()}
            out.append({"op": "cross_entropy_loss_grad", "dtype": dtype, "inputs": inputs,
                        "attrs": {"reduction": reduction, "ignore_index": -100}})
        for shape, wsize in (((4, 3, 5), 3), ((2, 6), 1)):
            x = np.array(_rand(rng, shape, dtype))
            x.reshape(-1)[0] = 0  # x == 0 takes the weight branch (strict > 0)
            out.append({"op": "prelu_backward", "dtype": dtype,
                        "inputs": {"grad_output": _rand(rng, shape, dtype), "input": x.tolist(),
                                   "weight": _rand(rng, (wsize,), dtype, 0.1, 0.9)}, "attrs": {}})
    return out


def torch_answer(case: dict[str, Any]) -> list:
    """PyTorch CPU in float64 (aten backward ops or autograd): the expected outputs, as lists."""
    import torch
    F = torch.nn.functional
    classes = case["op"] == "cross_entropy_loss_grad"  # its target holds class indices
    t = {k: None if v is None else torch.tensor(v, dtype=torch.int64 if classes and k == "target" else torch.float64)
         for k, v in case["inputs"].items()}
    a = case["attrs"]
    if case["op"] == "mse_loss_backward":
        r = {"none": 0, "mean": 1, "sum": 2}[a["reduction"]]
        outs = [torch.ops.aten.mse_loss_backward(t["grad_output"], t["input"], t["target"], r)]
    elif case["op"] == "group_norm_backward":
        C = a["C"]
        gamma = t["gamma"] if t["gamma"] is not None else torch.ones(C, dtype=torch.float64)
        outs = list(torch.ops.aten.native_group_norm_backward(t["grad_out"], t["input"], t["mean"], t["rstd"], gamma,
                                                              a["N"], C, a["HxW"], a["group"], [True, True, True]))
    elif case["op"] == "cross_entropy_loss_grad":
        # The op's output is the gradient w.r.t. the forward's input: log_softmax_backward(nll_loss_backward).
        z = t["log_prob"].clone().requires_grad_()
        loss = F.cross_entropy(z, t["target"], weight=t["weight"], ignore_index=a["ignore_index"],
                               reduction=a["reduction"])
        loss.backward(t["grad_loss"].reshape(loss.shape))
        outs = [z.grad]
    else:
        x, w = t["input"].clone().requires_grad_(), t["weight"].clone().requires_grad_()
        F.prelu(x, w).backward(t["grad_output"])
        outs = [x.grad, w.grad]
    return [o.detach().numpy().tolist() for o in outs]


def render() -> str:
    data = []
    for case in cases():
        data.append({**case, "expected": torch_answer(case)})
    return json.dumps({"generator": "tools/gen_oracle.py", "oracle": "PyTorch CPU, float64", "cases": data},
                      indent=None, separators=(",", ":")) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not ORACLE.exists() or ORACLE.read_text() != text:
            print(f"{ORACLE.relative_to(ROOT)} is out of date: run python tools/gen_oracle.py", file=sys.stderr)
            return 1
        return 0
    ORACLE.write_text(text)
    print(f"wrote {ORACLE.relative_to(ROOT)} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
