"""Regenerate tests/data/oracle.json: PyTorch CPU's answers for a set of small operator calls.

Usage: python tools/gen_oracle.py [--check]   (needs torch)
--check exits 1 (and writes nothing) when the stored file is not what this generator and torch
give now; a test runs it wherever torch is installed. It compares numbers with a tolerance, never
as text: the inputs pass through NumPy's exp/log (cross-entropy's log_prob), whose last bit
depends on the CPU's SIMD paths, and torch's float64 answers differ in the last bit across CPUs
and thread counts (seen: 9 cross-entropy values, at most 2.2e-16 apart). So --check recomputes
torch's answers on the *stored* inputs and requires them within ANSWER_RTOL/ANSWER_ATOL, and the
regenerated inputs within one unit in the last place of their dtype of the stored ones.

Why stored: .ci/run's oldest-dependencies venv (Python 3.10, numpy 1.24, ml_dtypes 0.4) has no
torch (PyPI has no CPU build of it for Linux x86_64), yet its numerics must be checked against an
independent oracle. tests/reference/test_oracle_stored.py compares pyaclnn there with these answers. The
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
# --check's tolerances: float64 answers of torch (a few ulps of float64, relative, plus an absolute
# floor for values that cancel to ~0), and the inputs (eps of each dtype, relative, plus its tiny).
ANSWER_RTOL, ANSWER_ATOL = 1e-12, 1e-15


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
        g, x, y = t["grad_output"], t["input"], t["target"]
        # The out= overload with an output of the broadcast shape: the plain call allocates it as
        # `input` and resizes it when the inputs broadcast, which torch deprecates with a warning.
        shape = torch.broadcast_shapes(g.shape, x.shape, y.shape)
        out = torch.empty(shape, dtype=torch.float64)
        outs = [torch.ops.aten.mse_loss_backward.grad_input(g, x, y, r, grad_input=out)]
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


def _close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Nested lists (or None) of the same structure whose numbers agree within the tolerance."""
    if a is None or b is None:
        return a is b
    x, y = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))


def differences(stored: list[dict[str, Any]]) -> list[str]:
    """What in the stored cases is not what the generator and torch give now (see the docstring)."""
    fresh = cases()
    if len(fresh) != len(stored):
        return [f"{len(stored)} stored cases, the generator makes {len(fresh)}"]
    problems = []
    for i, (new, old) in enumerate(zip(fresh, stored)):
        where = f"case {i} ({old['op']} {old['dtype']} {old['attrs']})"
        if (new["op"], new["dtype"], new["attrs"]) != (old["op"], old["dtype"], old["attrs"]):
            problems.append(f"{where}: the generator now makes {new['op']} {new['dtype']} {new['attrs']}")
            continue
        import ml_dtypes
        info = ml_dtypes.finfo(_np_dtype(new["dtype"]))  # np.finfo knows no bfloat16
        for name, value in new["inputs"].items():
            if not _close(value, old["inputs"].get(name), float(info.eps), float(info.tiny)):
                problems.append(f"{where}: input {name} is not what the generator makes now")
        answers = torch_answer(old)
        if len(answers) != len(old["expected"]) or not all(
                _close(a, e, ANSWER_RTOL, ANSWER_ATOL) for a, e in zip(answers, old["expected"])):
            problems.append(f"{where}: torch's answer on the stored inputs differs from the stored one")
    return problems


def main(argv: list[str]) -> int:
    if "--check" in argv:
        stored = json.loads(ORACLE.read_text())["cases"] if ORACLE.exists() else []
        problems = differences(stored)
        for line in problems:
            print(line, file=sys.stderr)
        if problems:
            print(f"{ORACLE.relative_to(ROOT)} is out of date: run python tools/gen_oracle.py", file=sys.stderr)
            return 1
        return 0
    text = render()
    ORACLE.write_text(text)
    print(f"wrote {ORACLE.relative_to(ROOT)} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
