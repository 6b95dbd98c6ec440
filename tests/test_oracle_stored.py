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

ROOT = Path(__file__).resolve().parents[1]
CASES = json.loads((ROOT / "tests" / "data" / "oracle.json").read_text())["cases"]
# (rtol, atol) per dtype, as tests/test_ops_public.py: the kernels round once from fp32.
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
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_oracle.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_every_op_and_dtype_is_covered() -> None:
    covered = {(c["op"], c["dtype"]) for c in CASES}
    assert covered == {(op, dt) for op in ("mse_loss_backward", "group_norm_backward", "cross_entropy_loss_grad",
                                           "prelu_backward") for dt in TOL}
