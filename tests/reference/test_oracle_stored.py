"""The four NumPy-in/NumPy-out functions against PyTorch's stored answers (tests/data/oracle.json).

These run without torch: in .ci/run's oldest-dependencies venv (Python 3.10, numpy 1.24,
ml_dtypes 0.4, cffi 1.15) they are the torch-oracle check of the numerics, float32, float16 and
bfloat16, on both backends. Where torch is installed, tools/gen_oracle.py --check proves the
stored answers are what torch computes now (so they cannot drift from the oracle).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyaclnn
from pyaclnn._numpy.kernels._parallel import tiled_only
from pyaclnn.dtypes import bfloat16

ROOT = Path(__file__).resolve().parents[2]
CASES = json.loads((ROOT / "tests" / "data" / "oracle.json").read_text())["cases"]
# (rtol, atol) per dtype, as tests/objects/test_ops_public.py: the kernels round once from fp32.
TOL = {"float32": (2e-5, 1e-6), "float16": (4e-3, 1e-3), "bfloat16": (3e-2, 1e-2)}


def _dtype(name: str) -> np.dtype:
    return bfloat16() if name == "bfloat16" else np.dtype(name)


def _call(case: dict) -> list:
    dt = _dtype(case["dtype"])
    arrays = {k: None if v is None else np.array(v, dt) for k, v in case["inputs"].items()}
    if case["op"] == "cross_entropy_loss_grad":
        arrays["target"] = np.array(case["inputs"]["target"], np.int64)  # class indices
        arrays["weight"] = np.array(case["inputs"]["weight"], np.float32)  # float32 whatever the dtype
    result = getattr(pyaclnn, case["op"])(**arrays, **case["attrs"])
    return list(result) if isinstance(result, tuple) else [result]


def _ids(case: dict) -> str:
    return f"{case['op']}-{case['dtype']}-" + "-".join(f"{v}" for v in case["attrs"].values())


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{_ids(c)}" for i, c in enumerate(CASES)])
def test_matches_the_stored_torch_answer(backend, case) -> None:
    """Both backends; on numpy these small inputs take the kernels' direct path."""
    _check(case, _call(case))


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{_ids(c)}" for i, c in enumerate(CASES)])
def test_the_tiled_path_matches_the_stored_torch_answer(use_backend, case) -> None:
    """The reference kernels' tiled path (what large inputs take: layout merging, tiles, the
    thread pool), forced on the same small inputs."""
    use_backend("numpy")
    with tiled_only():
        got = _call(case)
    _check(case, got)


def _check(case: dict, got: list) -> None:
    rtol, atol = TOL[case["dtype"]]
    assert len(got) == len(case["expected"])
    for out, want in zip(got, case["expected"]):
        assert out.dtype == _dtype(case["dtype"])
        want = np.array(want, np.float64)
        np.testing.assert_allclose(out.astype(np.float64), want.reshape(out.shape) if want.size == out.size else want,
                                   rtol=rtol, atol=atol)


def test_the_stored_answers_are_torchs() -> None:
    pytest.importorskip("torch")
    proc = subprocess.run([sys.executable, "-W", "error", str(ROOT / "tools" / "gen_oracle.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Warning" not in proc.stderr, proc.stderr[-2000:]  # torch's C++ warnings bypass -W error


def _gen_oracle():  # tools/ is no package: load the generator as a module
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_oracle", ROOT / "tools" / "gen_oracle.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _nudged(value, ulps: int):
    """``value`` (nested lists of float64) with every number moved ``ulps`` units in the last place."""
    a = np.asarray(value, np.float64)
    for _ in range(ulps):
        a = np.nextafter(a, np.inf)
    return a.tolist()


def test_the_check_tolerates_last_bit_differences_of_torch() -> None:
    """Another CPU (or thread count) gives torch's float64 answers a few ulps apart: no failure."""
    pytest.importorskip("torch")
    gen = _gen_oracle()
    stored = [dict(c, expected=[_nudged(e, 4) for e in c["expected"]]) for c in CASES]
    assert gen.differences(stored) == []


def test_the_check_catches_a_wrong_answer_and_a_changed_input() -> None:
    pytest.importorskip("torch")
    gen = _gen_oracle()
    wrong = [dict(c) for c in CASES]
    k = next(i for i, c in enumerate(CASES) if c["op"] == "cross_entropy_loss_grad")
    expected = np.asarray(wrong[k]["expected"][0], np.float64)
    expected.reshape(-1)[1] *= 1 + 1e-9
    wrong[k] = dict(wrong[k], expected=[expected.tolist()])
    m = next(i for i, c in enumerate(CASES) if c["op"] == "prelu_backward" and c["dtype"] == "float32")
    inputs = dict(wrong[m]["inputs"])
    grad = np.asarray(inputs["grad_output"], np.float64)
    grad.reshape(-1)[0] += 1e-3
    wrong[m] = dict(wrong[m], inputs=dict(inputs, grad_output=grad.tolist()))
    problems = gen.differences(wrong)
    assert len(problems) == 3, problems  # the answer; the input, and torch's answer on it
    assert any(f"case {k} " in p and "torch's answer" in p for p in problems)
    assert any(f"case {m} " in p and "input grad_output" in p for p in problems)


def test_every_op_and_dtype_is_covered() -> None:
    covered = {(c["op"], c["dtype"]) for c in CASES}
    assert covered == {(op, dt) for op in ("mse_loss_backward", "group_norm_backward", "cross_entropy_loss_grad",
                                           "prelu_backward") for dt in TOL}
